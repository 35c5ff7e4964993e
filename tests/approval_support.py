"""A ReAct agent whose money transfer waits for the human's approval, shared by the approval tests."""

from __future__ import annotations

from typing import Any

from podium import AIMessage, Message, ModelRequest, ReactAgent, Tool, ToolMessage
from podium.testing import FunctionModel, tool_call


def transfer_agent(sent: list[dict[str, Any]], name: str = "banker", description: str = "") -> ReactAgent:
    """The agent: its model asks to transfer 100 to Ada (a new call id per human message), then reports the
    result as ``done: <result>``; each transfer that runs is appended to ``sent``."""

    def transfer(amount: int, to: str) -> str:
        """Transfer money.

        Args:
            amount: how much.
            to: to whom.
        """
        sent.append({"amount": amount, "to": to})
        return f"sent {amount} to {to}"

    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"done: {messages[-1].content}")
        return AIMessage(tool_calls=[tool_call("transfer", {"amount": 100, "to": "Ada"}, id=f"c{len(messages)}")])

    return ReactAgent(name, FunctionModel(reply), [Tool(transfer, approval=True)], description=description)
