"""The ReAct agent: call the model with the tools; run the tools it asks for (concurrently); repeat until it answers.

Errors in tool calls (unknown tool, bad JSON, invalid arguments, a tool raising) go back to the model as tool
messages so it can correct itself; after ``max_tool_retries`` consecutive rounds where every call failed the agent
gives up with :class:`ToolRetriesExceeded`. ``max_steps`` bounds the model calls of one invocation.

An empty reply (no text, no tool calls) gets one nudge: the model is asked again, shown a system note that its last
reply was empty (the empty reply stays in the log but out of later histories). A second empty reply in a row is
accepted as the answer, the empty string.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import FunctionType
from typing import Any, cast

from podium.agents.base import Agent, AgentResult, Toolset
from podium.errors import StepLimitExceeded, ToolRetriesExceeded, UsageError
from podium.messages import AIMessage, HumanMessage, Message, SystemMessage, ToolCall, ToolMessage
from podium.models.base import Model, ModelRequest, ModelSettings, cut_off
from podium.runtime.context import RunContext
from podium.tools import Tool, ToolSpec, as_tool, valid_name

__all__ = ["ReactAgent"]

_NUDGE = "Your last reply was empty. Answer the user's last message, or call one of the tools."

Prompt = str | Callable[[list[Message]], str | None] | None
"""A system prompt, or a function of the history that returns one."""


class ReactAgent(Agent):
    """A model-and-tools loop."""

    def __init__(
        self,
        name: str,
        model: Model,
        tools: Sequence[Tool | Callable[..., Any] | Toolset] = (),
        *,
        prompt: Prompt = None,
        description: str = "",
        max_steps: int = 25,
        max_tool_retries: int = 3,
        handle_tool_errors: bool = True,
        settings: ModelSettings | None = None,
    ) -> None:
        """Build the agent.

        Args:
            name: the agent's name, set on its replies.
            model: the model it calls.
            tools: tools, plain functions (each function's one read-only tool, shared by the agents given it, so
                building an agent costs no tool construction) and toolsets (read again before each model call);
                handoff tools (``create_handoff_tool``) are kept in ``handoffs`` for a swarm to offer.
            prompt: the system prompt, or a function of the history returning it.
            description: what the agent does, for a caller choosing among agents.
            max_steps: model calls allowed per invocation before :class:`StepLimitExceeded`.
            max_tool_retries: consecutive all-failing tool rounds allowed before :class:`ToolRetriesExceeded`.
            handle_tool_errors: answer a tool's exception to the model (True) or let it end the run (False).
            settings: request options (temperature, parallel tool calls ...).

        Raises:
            UsageError: a name that is not valid as a tool's (1-64 letters, digits, '_' or '-': the agent's name
                becomes a tool name and a path), a model that is not a :class:`Model`, tools that are not a list
                (a single function), duplicate tool names or a non-positive limit.
            ToolDefinitionError: an item of ``tools`` cannot be made into a tool (not callable ...).
        """
        if max_steps < 1 or max_tool_retries < 0:
            raise UsageError("max_steps must be at least 1 and max_tool_retries at least 0")
        if not valid_name(name):
            raise UsageError(f"agent name {name!r} is not valid: use 1-64 letters, digits, '_' or '-'")
        if not isinstance(model, Model):
            raise UsageError(
                f"agent {name!r} needs a model (a podium Model: OpenAIModel, FunctionModel, ...), not {model!r}"
            )
        if isinstance(tools, str | bytes | Tool) or callable(tools) or not isinstance(tools, Iterable):
            raise UsageError(
                f"agent {name!r}: tools must be a list of tools and functions, not {tools!r}; for one tool, "
                f"pass [{getattr(tools, '__name__', 'it')}]"
            )
        self.name = name
        self.model = model
        self.prompt = prompt
        self.description = description
        self.max_steps = max_steps
        self.max_tool_retries = max_tool_retries
        self.handle_tool_errors = handle_tool_errors
        self._settings = settings  # the default is made on first use: construction stays cheap
        self.tools: dict[str, Tool] = {}
        self.toolsets: list[Toolset] = []
        self.handoffs: list[Any] = []
        """Handoff tools given with the tools: kept apart, for a swarm to offer (the agent alone does not)."""
        for item in tools:
            if type(item) is FunctionType:  # the common case first: a plain function's (shared) tool
                made = as_tool(item)
            elif not isinstance(item, Tool) and isinstance(item, Toolset):  # the structural check is slow
                self.toolsets.append(item)
                continue
            elif getattr(item, "kind", None) == "handoff":  # a handoff tool, read by orchestrations above this layer
                self.handoffs.append(item)
                continue
            else:
                made = as_tool(item)
            if made.name in self.tools:
                raise UsageError(f"agent {name!r} has two tools named {made.name!r}")
            self.tools[made.name] = made
        self._specs: list[ToolSpec] | None = None  # made on first use: construction stays cheap

    @property
    def settings(self) -> ModelSettings:
        """Request options (temperature, parallel tool calls ...) sent with each model call."""
        if self._settings is None:
            self._settings = ModelSettings()
        return self._settings

    @settings.setter
    def settings(self, value: ModelSettings) -> None:
        self._settings = value

    def current_tools(self) -> dict[str, Tool]:
        """The agent's tools now: its own and its toolsets' current ones.

        Raises:
            UsageError: a toolset's tool has the name of another tool.
        """
        if not self.toolsets:
            return self.tools
        merged = dict(self.tools)
        for toolset in self.toolsets:
            for item in toolset.list_tools():
                if item.name in merged:
                    raise UsageError(f"agent {self.name!r} has two tools named {item.name!r}")
                merged[item.name] = item
        return merged

    def _system(self, messages: list[Message]) -> list[Message]:
        prompt = self.prompt(messages) if callable(self.prompt) else self.prompt
        return [SystemMessage(content=prompt)] if prompt else []

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        messages = await ctx.history()
        start = len(messages)
        messages.append(await ctx.add_message(input))
        added = await self.loop(ctx, messages)
        return AgentResult(output=added[-1].content, messages=messages[start:])

    async def loop(
        self,
        ctx: RunContext[Any],
        messages: list[Message],
        *,
        shown: Callable[[list[Message]], list[Message]] | None = None,
        after_model: Callable[[AIMessage], AIMessage] | None = None,
    ) -> list[Message]:
        """Run the model-and-tools loop on ``messages`` (extended in place); return the messages it added.

        The last message returned is the answer (a reply without tool calls). Orchestrations running the agent on a
        history of their own adjust the loop with:

        Args:
            ctx: the context the steps are journaled in (and the history recorded to).
            messages: the history to continue.
            shown: what the model is shown of the history (a context policy); default: all of it.
            after_model: applied to each reply before it joins the history (the recorded reply is the model's).

        Raises:
            StepLimitExceeded: ``max_steps`` model calls without an answer.
            ToolRetriesExceeded: more consecutive all-failing tool rounds than ``max_tool_retries``.
        """
        start = len(messages)
        failing_rounds = 0
        nudged = nudge = False
        for _ in range(self.max_steps):
            view = messages if shown is None else shown(messages)
            if nudge:
                view = [*view, SystemMessage(content=_NUDGE)]
            tools = self.current_tools()
            if tools is not self.tools:
                specs = [t.spec for t in tools.values()]
            else:
                if self._specs is None:
                    self._specs = [t.spec for t in tools.values()]
                specs = self._specs
            request = ModelRequest(messages=self._system(view) + view, tools=specs, settings=self.settings)
            reply = (await ctx.call_model(self.model, request, name=self.name)).message
            if after_model is not None:
                reply = after_model(reply)
            nudge = not reply.tool_calls and not reply.content and not nudged
            if nudge:  # an empty reply gets one nudge; another one is accepted as the (empty) answer
                nudged = True
                continue
            messages.append(reply)
            if not reply.tool_calls:
                return messages[start:]
            if cut_off(reply):  # arguments cut short by the length limit: never run them, tell the model
                results = [cast(ToolMessage, await ctx.add_message(_cut_off_call(c))) for c in reply.tool_calls]
            else:
                results = await ctx.call_tools(
                    tools, reply.tool_calls, handle_errors=self.handle_tool_errors, check_answers=True
                )
            messages.extend(results)
            if all(r.is_error for r in results):
                failing_rounds += 1
                if failing_rounds > self.max_tool_retries:
                    raise ToolRetriesExceeded(self.name, self.max_tool_retries, results[-1].content)
            else:
                failing_rounds = 0
        raise StepLimitExceeded(self.name, self.max_steps)


def _cut_off_call(call: ToolCall) -> ToolMessage:
    return ToolMessage(
        content=f"Your reply was cut off by the length limit (max_tokens) before the call of {call.name} was "
        "complete, so it was not run. Call it again with shorter arguments.",
        tool_call_id=call.id,
        name=call.name,
        is_error=True,
    )
