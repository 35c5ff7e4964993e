"""The responder agent: a message transformer with three native responders.

- :meth:`ResponderAgent.llm_response`: the model's reply to the message, given the system prompt and the agent's
  history (updated on every call);
- :meth:`ResponderAgent.agent_response`: runs the handlers of the tools in a model's message (several at once), or,
  when the model should have used a tool and did not, the configured reaction (``on_no_tool``);
- :meth:`ResponderAgent.user_response`: asks the human through :meth:`podium.RunContext.ask`, a durable interrupt
  (or answers with a default, for unattended runs).

All three take an :class:`AgentSession` (the agent's view of one task invocation) and the pending message, and
return a message or ``None``. Subclasses may override any of them. Every effect goes through the run context, so a
task tree is resumable after a restart.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from podium.errors import UsageError
from podium.events import Expectation
from podium.messages import AIMessage, HumanMessage, Message, SystemMessage, ToolCall, ToolMessage
from podium.models.base import Model, ModelRequest, ModelSettings
from podium.orchestration.tasks.tools import handler_tool, tool_guide
from podium.orchestration.tasks.types import (
    AGENT,
    LLM,
    TASK,
    USER,
    USER_QUIT_STRINGS,
    AgentState,
    TaskMessage,
    parse_address,
    parse_done,
    parse_pass,
)
from podium.runtime.context import RunContext
from podium.tools import Tool, ToolSpec

__all__ = ["AgentSession", "NoToolReaction", "ResponderAgent"]

NoToolReaction: TypeAlias = (
    Literal["nudge", "finish", "user"]
    | Callable[[TaskMessage], "str | TaskMessage | Awaitable[str | TaskMessage | None] | None"]
    | None
)
"""What the agent does when its model answered without the tool it should have used."""

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(slots=True, kw_only=True)
class AgentSession:
    """An agent's view of one task invocation: its run context, history, state and tools."""

    task: str
    """The task's name."""
    ctx: RunContext[Any]
    """The task's run context (its namespace is this agent's history)."""
    namespace: str
    """The history this agent's model turns and inputs are recorded in."""
    history: list[Message]
    """The agent's messages (without the system prompt), updated on every model call."""
    handlers: Mapping[str, Tool]
    """Tools this agent handles, by name."""
    specs: list[ToolSpec]
    """Tools this agent's model may use."""
    system: SystemMessage | None
    """The system prompt (with the tools' instructions and examples)."""
    state: AgentState | None = None
    """The agent's state, when one of its handlers takes it."""
    user_default: str | None = None
    """Answer the user responder gives without asking (unattended runs)."""
    histories: dict[str, list[Message]] = field(default_factory=dict)
    """Every history of the task tree loaded in this run, by namespace (tool results go to the caller's)."""
    value_types: Mapping[str, Any] = field(default_factory=dict)
    """Types that rebuild handler values from JSON, by tool name."""


def _dangling(history: list[Message]) -> list[ToolCall]:
    """The tool calls of the last model turn that have no result yet."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if isinstance(message, AIMessage):
            answered = {m.tool_call_id for m in history[index + 1 :] if isinstance(m, ToolMessage)}
            return [c for c in message.tool_calls if c.id not in answered]
        if isinstance(message, HumanMessage):
            return []
    return []


class ResponderAgent:
    """An agent with an optional model, tools with handlers, and the three native responders."""

    def __init__(
        self,
        name: str,
        model: Model | None = None,
        *,
        prompt: str = "",
        tools: Sequence[Tool | Callable[..., Any]] = (),
        use_only: Sequence[Tool | Callable[..., Any]] = (),
        handle_only: Sequence[Tool | Callable[..., Any]] = (),
        on_no_tool: NoToolReaction = None,
        handle_errors: bool = True,
        user_default: str | None = None,
        user_expectation: Expectation | None = None,
        state: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
        description: str = "",
        recognize_recipient_in_content: bool = True,
        respond_tools_only: bool = False,
    ) -> None:
        """Build the agent.

        Args:
            name: the agent's name (letters, digits, ``_`` or ``-``), set on its model's replies.
            model: the model of the LLM responder (``None``: the agent has no LLM responder).
            prompt: the instructions the model gets as its system message; the tools' instructions and examples
                are appended.
            tools: tools the model may use and the agent handles.
            use_only: tools the model may use that another agent handles.
            handle_only: tools the agent handles that its own model is not told about.
            on_no_tool: the reaction when the model answered without a tool: ``"nudge"`` (remind it, counted as
                an error), ``"finish"`` (end the task with the text), ``"user"`` (hand the text to the human), a
                callable of the message returning the response, or ``None`` (no reaction).
            handle_errors: answer a handler's exception to the model (True) or let it end the run (False).
            user_default: the user responder answers this without asking (unattended runs).
            user_expectation: the answer the user responder expects (for clients rendering choices).
            state: the initial state handed to handlers that take :class:`AgentState`.
            settings: request options for the model.
            description: what the agent does.
            recognize_recipient_in_content: read ``TO[name]:`` / ``@name`` at the start of the model's text as an
                address (False: the text stays as written, and only the structured field addresses).
            respond_tools_only: as a sub-task, take only messages calling a tool this agent's tree handles.

        Raises:
            UsageError: a bad name, an unknown reaction, or two tools with one name.
        """
        if not _NAME.fullmatch(name):
            raise UsageError(f"agent name {name!r} is not valid: use 1-64 letters, digits, '_' or '-'")
        if not (on_no_tool is None or callable(on_no_tool) or on_no_tool in ("nudge", "finish", "user")):
            raise UsageError(f"on_no_tool must be 'nudge', 'finish', 'user', a callable or None, not {on_no_tool!r}")
        self.name = name
        self.model = model
        self.prompt = prompt
        self.on_no_tool = on_no_tool
        self.handle_errors = handle_errors
        self.user_default = user_default
        self.user_expectation = user_expectation
        self.initial_state = dict(state or {})
        self.settings = settings or ModelSettings()
        self.description = description
        self.recognize_recipient_in_content = recognize_recipient_in_content
        self.respond_tools_only = respond_tools_only
        self.handlers: dict[str, Tool] = {}
        """Tools this agent handles, by name."""
        self.usable: dict[str, Tool] = {}
        """Tools this agent's model may use, by name."""
        self.stateful = False
        """True when a handler takes the agent's state."""
        for group, use, handle in ((tools, True, True), (use_only, True, False), (handle_only, False, True)):
            for item in group:
                made, takes_state = handler_tool(item)
                if made.name in self.handlers or made.name in self.usable:
                    raise UsageError(f"agent {name!r} has two tools named {made.name!r}")
                self.stateful = self.stateful or (takes_state and handle)
                if handle:
                    self.handlers[made.name] = made
                if use:
                    self.usable[made.name] = made
        self.specs = [t.spec for t in self.usable.values()]
        self.value_types = {
            n: t.metadata.result_type for n, t in self.handlers.items() if t.metadata.result_type is not None
        }

    def __repr__(self) -> str:
        return f"ResponderAgent({self.name!r})"

    def handles(self, tool_name: str) -> bool:
        """Whether this agent runs a handler for ``tool_name``."""
        return tool_name in self.handlers

    def system_message(self, extra: Sequence[Tool] = ()) -> SystemMessage | None:
        """The system prompt, with the instructions and examples of the tools the model may use (and ``extra``)."""
        guide = tool_guide([*self.usable.values(), *extra])
        text = "\n\n".join(part for part in (self.prompt, guide) if part)
        return SystemMessage(content=text) if text else None

    # -- the three native responders ------------------------------------------------------------------------------
    async def llm_response(self, session: AgentSession, message: TaskMessage) -> TaskMessage | None:
        """The model's reply to ``message`` (``None`` without a model, or for an empty reply)."""
        if self.model is None:
            return None
        await self._feed(session, message)
        history = session.history
        messages = [session.system, *history] if session.system is not None else list(history)
        request = ModelRequest(messages=messages, tools=session.specs, settings=self.settings)
        reply = (await session.ctx.call_model(self.model, request, name=self.name)).message
        history.append(reply)
        return self.parse_reply(reply, session.namespace, addresses=self.recognize_recipient_in_content)

    async def agent_response(self, session: AgentSession, message: TaskMessage) -> TaskMessage | None:
        """Run the handlers of ``message``'s tool calls; or react to the model forgetting to use a tool."""
        if message.tool_calls:
            if not any(call.name in session.handlers for call in message.tool_calls):
                return None
            return await self._handle_tools(session, message)
        if message.sender == LLM and self.on_no_tool is not None:
            return await self.handle_no_tool(session, message)
        return None

    async def user_response(self, session: AgentSession, message: TaskMessage) -> TaskMessage | None:
        """The human's answer to ``message``: a durable interrupt, or the default answer when one is set.

        An empty answer is no response. The answer may signal ``DONE`` or address someone (``@name``); one of
        :data:`USER_QUIT_STRINGS` (``q``, ``x``, ``quit``, ``exit``, ``bye``) ends the task with it.
        """
        answer = session.user_default if session.user_default is not None else self.user_default
        if answer is None:
            prompt = message.content or f"{session.task}: your input?"
            answer = await session.ctx.ask(prompt, expectation=self.user_expectation, data={"task": session.task})
        if answer.strip() in USER_QUIT_STRINGS:
            return TaskMessage(content=answer.strip(), sender=USER, done=True)
        recipient, text = parse_address(answer.strip())
        if not text and recipient is None:
            return None
        rest = parse_done(text)
        return TaskMessage(
            content=text if rest is None else rest, sender=USER, recipient=recipient, done=rest is not None
        )

    # -- helpers --------------------------------------------------------------------------------------------------
    @staticmethod
    def parse_reply(reply: AIMessage, namespace: str, *, addresses: bool = True) -> TaskMessage | None:
        """The model's reply as a pending message: tool calls, recipient, done and pass signals parsed once.

        ``addresses``: read a leading ``TO[name]:`` / ``@name`` as the recipient.
        """
        if not reply.content.strip() and not reply.tool_calls:
            return None
        recipient, content = parse_address(reply.content) if addresses else (None, reply.content)
        structured = reply.metadata.get("recipient")
        rest = parse_done(content)
        passed, pass_to = parse_pass(content) if not reply.tool_calls else (False, None)
        return TaskMessage(
            content=content if rest is None else rest,
            sender=LLM,
            recipient=structured if isinstance(structured, str) else (pass_to or recipient),
            tool_calls=list(reply.tool_calls),
            namespace=namespace,
            done=rest is not None,
            passed=passed,
        )

    async def _feed(self, session: AgentSession, message: TaskMessage) -> None:
        """Put ``message`` in the history: as results of the model's open tool calls, or as a user message."""
        history, ctx = session.history, session.ctx
        open_calls = _dangling(history)
        if open_calls:
            for call in open_calls:
                answer = ToolMessage(
                    content=message.content, tool_call_id=call.id, name=call.name, is_error=message.is_error
                )
                history.append(await ctx.add_message(answer))
            return
        if message.tool_results and message.namespace == session.namespace:
            return  # the results of this model's calls are in its history already
        name = message.sender if message.sender not in (USER, AGENT, LLM, TASK) else None
        history.append(await ctx.add_message(HumanMessage(content=message.content, name=name)))

    async def _handle_tools(self, session: AgentSession, message: TaskMessage) -> TaskMessage:
        ctx = session.ctx
        target = message.namespace or f"{session.namespace}:tools"
        saved = ctx.namespace
        ctx.namespace = target  # results answer the calls in the history of the model that made them
        if session.state is not None:
            ctx.provide(session.state)  # handlers annotated AgentState receive it (injected like the run context)
        try:
            results = await ctx.call_tools(session.handlers, message.tool_calls, handle_errors=self.handle_errors)
        finally:
            ctx.namespace = saved
        history = session.histories.get(target)
        if history is None and target == session.namespace:
            history = session.history
        if history is not None:
            history.extend(results)
        if self.stateful and session.state is not None:
            snapshot = dict(session.state.data)

            async def keep() -> dict[str, Any]:
                return snapshot

            session.state.data = dict(await ctx.step(keep))
        return self._results_message(session, results, target)

    def _results_message(self, session: AgentSession, results: list[ToolMessage], namespace: str) -> TaskMessage:
        response = TaskMessage(sender=AGENT, namespace=namespace, tool_results=results)
        response.is_error = all(r.is_error for r in results)
        values: list[Any] = []
        chosen: ToolMessage | None = None
        for result in results:
            value = result.value
            value_type = session.value_types.get(result.name)
            if value_type is not None and value is not None:
                from pydantic import TypeAdapter

                value = TypeAdapter(value_type).validate_python(value)
            signal = result.signal
            if signal is not None:
                if signal.passed:
                    response.passed, response.done = True, signal.end is not None
                    response.pass_input = signal.pass_input
                elif signal.end == "all" or (signal.end == "task" and not response.final):
                    response.final = response.final or signal.end == "all"
                    response.done = True
                    response.value, chosen = value, result
                if signal.tool_calls:  # a tool for another responder: its results go to that one
                    response.tool_calls.extend(signal.tool_calls)
                    response.namespace, response.tool_results = "", []
                if signal.recipient:
                    response.recipient = signal.recipient
            values.append(value)
        if chosen is not None:
            response.content = chosen.content
            return response
        # A handler's text may signal done or pass too, as any responder's may.
        said = next((r for r in results if parse_done(r.content) is not None), None)
        if said is not None:
            response.done = True
            response.value = values[results.index(said)]
            response.content = parse_done(said.content) or ""
        elif len(results) == 1:
            response.content, response.value = results[0].content, values[0]
        else:
            response.content = "\n".join(f"{r.name}: {r.content}" for r in results)
            response.value = values
        if not response.passed and len(results) == 1:
            response.passed, to = parse_pass(response.content)
            response.recipient = to or response.recipient
        return response

    async def handle_no_tool(self, session: AgentSession, message: TaskMessage) -> TaskMessage | None:
        """The reaction to a model message without a tool call (see ``on_no_tool``)."""
        reaction = self.on_no_tool
        if reaction == "nudge":
            names = ", ".join(sorted(self.usable)) or "none"
            text = (
                f"You did not use a tool. Use one of these tools: {names}. "
                "If you are finished, say so with the done tool or start your reply with DONE."
            )
            return TaskMessage(content=text, sender=AGENT, recipient=LLM, is_error=True)
        if reaction == "finish":
            return TaskMessage(content=message.content, sender=AGENT, done=True, value=message.value)
        if reaction == "user":
            return TaskMessage(content=message.content, sender=AGENT, recipient=USER)
        if callable(reaction):
            result = reaction(message)
            if inspect.isawaitable(result):
                result = await result
            if result is None:
                return None
            if isinstance(result, TaskMessage):
                result.sender = AGENT
                return result
            return TaskMessage(content=str(result), sender=AGENT)
        return None
