"""Doubles shared by the runtime's stream and bus tests."""

from __future__ import annotations

import asyncio
from typing import Any

from podium import AIMessage, Message, ModelRequest, ReactAgent, ToolMessage
from podium.testing import FunctionModel, tool_call


def slow_agent(wait: float = 30) -> ReactAgent:
    """An agent whose one tool call takes ``wait`` seconds; the input "quick" gets a reply without a tool."""

    async def slow(n: int) -> str:
        """Take a while."""
        await asyncio.sleep(wait)
        return "ok"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content="done")
        if messages[-1].content == "quick":
            return AIMessage(content="quick reply")
        return AIMessage(tool_calls=[tool_call("slow", {"n": 1}, id="s")])

    return ReactAgent("a", FunctionModel(model), [slow])


async def taken(bus: Any, count: int, step: float = 0.01) -> None:
    """Wait (at most 300 steps) until ``bus.taken`` holds ``count`` stored events (a seq other than 0)."""
    for _ in range(300):
        if len([t for t in bus.taken if t[1]]) >= count:
            return
        await asyncio.sleep(step)
