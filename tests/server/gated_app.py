"""A test app whose runs stay busy as long as a test wants: its second tool call waits for a gate file.

Its model is a :class:`~podium.testing.FunctionModel` (offline by construction; the empty cassette only satisfies
:class:`~podium.app.App`). Each run calls ``step(1)`` then ``step(2)``, then answers ``finished: <input>`` (the input ``fail`` makes the model raise). Every
step appends its number to the file named by ``PODIUM_TEST_LOG`` (so a test can count executions) and ``step(2)``
waits until the file named by ``PODIUM_TEST_GATE`` exists. Served by path: ``podium serve tests/server/gated_app.py``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from podium import AIMessage, HumanMessage, Message, ModelRequest, ReactAgent, ToolMessage
from podium.app import App
from podium.models.base import Model
from podium.testing import FunctionModel, tool_call


async def step(n: int) -> str:
    """One step of the work.

    Args:
        n: which step.
    """
    log, gate = os.environ.get("PODIUM_TEST_LOG"), os.environ.get("PODIUM_TEST_GATE")
    if log:
        with open(log, "a", encoding="utf-8") as file:
            file.write(f"{n}\n")
    while n == 2 and gate and not os.path.exists(gate):  # noqa: ASYNC110, ASYNC240 - a file another process makes
        await asyncio.sleep(0.02)
    return f"step {n} done"


def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    """Call step 1, then step 2, then answer with the human's text."""
    human = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    if human.content == "fail":
        raise RuntimeError("the model broke")
    done = sum(1 for m in messages[messages.index(human) :] if isinstance(m, ToolMessage))
    if done < 2:
        return AIMessage(tool_calls=[tool_call("step", {"n": done + 1})])
    return AIMessage(content=f"finished: {human.content}")


def build(model: Model) -> ReactAgent:
    """The agent (``model`` is ignored: the function model is the point)."""
    return ReactAgent("gated", FunctionModel(reply), [step])


app = App(name="gated", build=build, cassette=Path(__file__).parent / "cassettes" / "empty.json")
