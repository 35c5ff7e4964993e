"""What every agent is: something that turns an input message into a result inside a run context.

Any agent can be used as a tool of another agent (:meth:`Agent.as_tool`): the inner agent runs in a child context
(its path extends the caller's, so its interrupts surface with the full path), with a history of its own that
starts fresh for each call.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from podium.messages import HumanMessage, Message
from podium.runtime.context import RunContext
from podium.tools import Tool, ToolMetadata

__all__ = ["Agent", "AgentResult", "Toolset"]


@dataclass(slots=True, kw_only=True)
class AgentResult:
    """What an agent produced for one input."""

    output: str
    """The final answer's text."""
    messages: list[Message] = field(default_factory=list)
    """The messages this invocation added (input first)."""
    data: Any = None
    """A structured result, for agents that produce one."""


@runtime_checkable
class Toolset(Protocol):
    """Tools that may change while an agent lives (an MCP server's): the agent reads them before each model call."""

    def list_tools(self) -> Sequence[Tool]:
        """The tools as they are now."""
        ...


class Agent(ABC):
    """Base class of agents. Subclasses implement :meth:`invoke`."""

    name: str
    """The agent's name (used in paths, on its messages, and as its default tool name)."""
    description: str = ""
    """What the agent does, for a model choosing among agents."""

    @abstractmethod
    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        """Answer ``input``; every effect goes through ``ctx`` so the run is durable."""

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: ToolMetadata | None = None,
    ) -> Tool:
        """This agent as a tool taking ``text`` (the request) and returning the agent's answer."""
        agent = self

        async def run_agent(ctx: RunContext[Any], text: str) -> str:
            """Delegate a request to the agent.

            Args:
                text: the request, with everything the agent needs to know.
            """
            inner = ctx.child(agent.name)
            inner.namespace = "/".join(inner.path)
            result = await agent.invoke(inner, HumanMessage(content=text))
            return result.output

        return Tool(
            run_agent,
            name=name or self.name,
            description=description if description is not None else (self.description or f"Ask agent '{self.name}'."),
            metadata=metadata,
            timeout=None,  # an agent is bounded by the run's limits, as it would be on its own
        )
