"""A test app for several server processes on one PostgreSQL: each run calls ``work(1)``, ``work(2)``, ``work(3)``.

Its model is an async :class:`~podium.testing.FunctionModel` that answers after ``PODIUM_TEST_MODEL_DELAY`` seconds
(default 0.05, a fast hosted model); each ``work`` step takes ``PODIUM_TEST_STEP_DELAY`` seconds (default 0) and
appends ``start``/``done`` lines with the process id and the run to the file ``PODIUM_TEST_LOG`` names, so a test
can tell which process executed what, and whether a completed step ever ran twice. Step 2 also waits while the
file ``PODIUM_TEST_HOLD`` names exists. Its result names the process:
``step N by PID``. Served by path: ``podium serve tests/server/scale_app.py``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from podium import AIMessage, HumanMessage, Message, ModelRequest, ReactAgent, RunContext, ToolMessage
from podium.app import App
from podium.models.base import Model
from podium.testing import FunctionModel, tool_call

STEPS = 3


def _log(line: str) -> None:
    path = os.environ.get("PODIUM_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(line + "\n")


async def work(ctx: RunContext[Any], n: int) -> str:
    """One step of the work.

    Args:
        n: which step.
    """
    _log(f"start {os.getpid()} {ctx.run_id} {n}")
    await asyncio.sleep(float(os.environ.get("PODIUM_TEST_STEP_DELAY", "0")))
    hold = os.environ.get("PODIUM_TEST_HOLD")
    while n == 2 and hold and os.path.exists(hold):  # noqa: ASYNC110, ASYNC240 - a file the test removes
        await asyncio.sleep(0.05)
    _log(f"done {os.getpid()} {ctx.run_id} {n}")
    return f"step {n} by {os.getpid()}"


async def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    """Call the steps in turn, then answer ``done: <input>``."""
    await asyncio.sleep(float(os.environ.get("PODIUM_TEST_MODEL_DELAY", "0.05")))
    human = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    done = sum(1 for m in messages[messages.index(human) :] if isinstance(m, ToolMessage))
    if done < STEPS:
        return AIMessage(tool_calls=[tool_call("work", {"n": done + 1})])
    return AIMessage(content=f"done: {human.content}")


def build(model: Model) -> ReactAgent:
    """The agent (``model`` is ignored: the function model is the point)."""
    return ReactAgent("scale", FunctionModel(reply), [work])


app = App(name="scale", build=build, cassette=Path(__file__).parent / "cassettes" / "empty.json")
