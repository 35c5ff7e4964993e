"""How a specialist says it could not do its step: the ``cannot_do_step`` tool, and the runner's reading of it.

A step's outcome must not be read from the wording of the agent's answer ("I could not ...", "Unfortunately ..."):
a model phrases a refusal a hundred ways, and a text marker in prose is easy to miss or to trigger by accident. So
every model-driven specialist of a plan (a :class:`~podium.agents.react.ReactAgent`) is given one more tool,
:data:`CANNOT_DO`, which it calls instead of doing the step when a detail is missing, no tool fits, or a tool failed.
The call is an explicit, structured outcome: :func:`not_done` finds it among the messages the agent added, and the
plan marks the step ``failed`` with the reason given (docs/plan.md). An agent that is not model-driven says so by
raising an exception, which fails the step the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from podium.messages import AIMessage, Message
from podium.tools import Tool

__all__ = ["CANNOT_DO", "cannot_do_step", "not_done"]

CANNOT_DO = "cannot_do_step"
"""The name of the tool a specialist calls when it could not do its step."""


def _cannot_do_step(reason: str) -> str:
    """Call this INSTEAD of answering when you could not do the step: a detail it needs is missing (who, when, how
    many), none of your tools fits, or a tool failed or refused. The step is then marked failed with your reason, and
    the human is asked how to go on. Never call it when the step was done.

    Args:
        reason: what stopped you, in one sentence a person can act on (for example which details are missing).
    """
    return f"Noted: the step is marked as not done ({reason}). Now tell the human in one sentence what is missing."


cannot_do_step = Tool(_cannot_do_step, name=CANNOT_DO)
"""The tool a plan gives each model-driven specialist (see the module docstring)."""


def not_done(messages: Iterable[Message]) -> str | None:
    """The reason a specialist gave by calling :data:`CANNOT_DO` among ``messages``, or ``None`` if it did not."""
    reason = None
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            if call.name != CANNOT_DO:
                continue
            try:
                arguments = json.loads(call.arguments or "{}")
            except json.JSONDecodeError:
                arguments = {}
            given = arguments.get("reason") if isinstance(arguments, dict) else None
            reason = str(given).strip() if given else "the agent could not do the step and gave no reason"
    return reason
