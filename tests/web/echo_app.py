"""A test app for the pages: it streams its replies and repeats what it was told, markup and all.

``weather in <city>`` makes it call a tool first (a folded call in the chat), ``approve <thing>`` calls a tool that
notes its progress and asks a yes/no question, ``pay <n> to <name>`` calls a tool that waits for approval, ``fail`` makes its model raise (the run fails); anything else is answered ``You said: <text>``. Its model is a :class:`~podium.testing.FunctionModel` streaming replies in small, spaced pieces.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from podium import (
    AIMessage,
    Expectation,
    HumanMessage,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    ToolMessage,
    tool,
)
from podium.app import App
from podium.models.base import Model
from podium.testing import FunctionModel, tool_call


def get_weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: the city's name.
    """
    return f"{city}: 24 °C, sunny."


async def approve(ctx: RunContext[Any], thing: str) -> str:
    """Do a thing once the human approved it.

    Args:
        thing: what to do.
    """
    await ctx.progress(f"Asking about {thing}...")
    answer = await ctx.ask(f"May I {thing}?", expectation=Expectation(type="choice", options=["yes", "no"]))
    return f"{thing}: {'done' if answer == 'yes' else 'not done'}"


@tool(approval=True)
def transfer(amount: int, to: str) -> str:
    """Send money once the human approved the call.

    Args:
        amount: how much.
        to: to whom.
    """
    return f"sent {amount} to {to}"


def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    """Call the weather tool when asked about weather, then answer; otherwise repeat the human's text."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(content=f"Here it is: {last.content}")
    human = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    if human.content == "fail":
        raise RuntimeError("the model broke")
    if human.content.lower().startswith("approve "):
        return AIMessage(tool_calls=[tool_call("approve", {"thing": human.content[8:]})])
    paying = re.fullmatch(r"pay (\d+) to (\w+)", human.content, re.I)
    if paying:
        return AIMessage(tool_calls=[tool_call("transfer", {"amount": int(paying[1]), "to": paying[2]})])
    if human.content.lower().startswith("weather in "):
        return AIMessage(tool_calls=[tool_call("get_weather", {"city": human.content[11:]})])
    return AIMessage(content=f"You said: {human.content}")


def build(model: Model) -> ReactAgent:
    """The agent (``model`` is ignored: the function model is the point)."""
    return ReactAgent("echo", FunctionModel(reply, stream_chunk=3, stream_delay=0.02), [get_weather, approve, transfer])


app = App(name="echo", build=build, cassette=Path(__file__).parent.parent / "server" / "cassettes" / "empty.json")
