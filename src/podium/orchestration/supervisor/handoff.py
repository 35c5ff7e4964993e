"""Handoffs between agents: the tools a model calls to delegate, the bookkeeping messages, and history validity.

A supervisor (or a swarm agent) delegates by calling a *handoff tool*, ``transfer_to_<agent>`` by default, described
as "Ask agent '<agent>' for help". Handoff tools are data, not functions: the orchestrator recognises
their calls by name and runs the agent itself. A handoff tool may carry a ``task`` argument, the request written
for the agent (the ``scoped`` context policy uses it).

Strict providers refuse a history in which a tool call is not answered by exactly one tool message placed right
after the call. :func:`history_problems` checks that rule and :func:`repair_history` restores it on a history read
back from the store (a run cut short by a limit, handoff calls hidden with ``add_handoff_messages=False``).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from podium.errors import UsageError
from podium.messages import AIMessage, Message, ToolCall, ToolMessage, valid_history
from podium.tools import Tool, ToolArgumentsError, ToolSpec, as_tool

__all__ = [
    "FORWARD_MESSAGE",
    "ForwardMessageTool",
    "HandoffTool",
    "canonical_calls",
    "create_forward_message_tool",
    "create_handoff_tool",
    "error_result",
    "forward_answer",
    "forward_message_spec",
    "handoff_back_messages",
    "history_problems",
    "normalize_agent_name",
    "only_call",
    "repair_history",
    "supervisor_tools",
    "without_calls",
]

FORWARD_MESSAGE = "forward_message"
"""Name of the tool that passes a worker's answer to the user verbatim."""

TASK_DESCRIPTION = (
    "The request for the agent, written so it can act on it alone: the user's question and every fact, number or "
    "earlier result it needs."
)

_WHITESPACE = re.compile(r"\s+")
_BACK_IDS = uuid.UUID("6f1c9a52-7d0e-4b8e-9a51-0c2f3e5d7a10")


def normalize_agent_name(name: str) -> str:
    """``name`` as it appears in a tool name: trimmed, lower case, runs of whitespace made ``_``."""
    return _WHITESPACE.sub("_", name.strip()).lower()


@dataclass(frozen=True, slots=True, kw_only=True)
class HandoffTool:
    """A tool the model calls to hand control to an agent; the orchestrator runs the agent when it is called."""

    agent: str
    """Name of the agent it hands off to."""
    name: str
    """The tool's name (``transfer_to_<agent>`` by default)."""
    description: str
    """What the model is told ("Ask agent '<agent>' for help" by default)."""
    task: bool = False
    """Whether the call carries a ``task`` argument: the request written for the agent."""
    task_description: str = TASK_DESCRIPTION
    """The description of the ``task`` argument."""
    kind: Literal["handoff"] = "handoff"
    """Tag telling handoff tools apart from ordinary tools."""

    @property
    def spec(self) -> ToolSpec:
        """What a model is told about this tool."""
        if not self.task:
            return ToolSpec(self.name, self.description, {"properties": {}, "type": "object"})
        parameters = {
            "properties": {"task": {"description": self.task_description, "type": "string"}},
            "required": ["task"],
            "type": "object",
        }
        return ToolSpec(self.name, self.description, parameters)

    def task_of(self, call: ToolCall) -> str | None:
        """The task a call carries (``None`` for a tool without one).

        Raises:
            ToolArgumentsError: the arguments are not a JSON object, or the task is missing or empty.
        """
        try:
            arguments = call.parsed_arguments()
        except ValueError:
            raise ToolArgumentsError(
                f"The arguments for tool '{self.name}' are not a JSON object. Call it again with a JSON object."
            ) from None
        if not self.task:
            return None
        task = arguments.get("task")
        if not isinstance(task, str) or not task.strip():
            raise ToolArgumentsError(
                f"Tool '{self.name}' needs a non-empty 'task' string: the request for {self.agent}, with every fact "
                "it needs. Call it again with one."
            )
        return task


def create_handoff_tool(
    agent: str | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    task: bool = False,
    prefix: str | None = None,
    agent_name: str | None = None,
) -> HandoffTool:
    """A handoff tool to ``agent``.

    Args:
        agent: the name of the agent to hand off to.
        name: the tool's name (default ``<prefix><agent>``).
        description: for the model (default "Ask agent '<agent>' for help").
        task: give the tool a ``task`` argument carrying the request for the agent.
        prefix: the name's prefix when ``name`` is not given (default ``transfer_to_``).
        agent_name: ``agent`` by its other common keyword.

    Raises:
        UsageError: no agent, or two different ones.
    """
    if agent is None or (agent_name is not None and agent_name != agent):
        if agent is not None or agent_name is None:
            raise UsageError("create_handoff_tool needs the agent's name: create_handoff_tool('agent')")
        agent = agent_name
    return HandoffTool(
        agent=agent,
        name=name or f"{prefix or 'transfer_to_'}{normalize_agent_name(agent)}",
        description=description if description is not None else f"Ask agent '{agent}' for help",
        task=task,
    )


def supervisor_tools(
    agents: Sequence[str],
    tools: Iterable[Tool | HandoffTool | Callable[..., Any]],
    *,
    prefix: str | None,
    task: bool,
    forward: bool,
) -> tuple[dict[str, Tool], dict[str, HandoffTool], list[ToolSpec]]:
    """A supervisor's ordinary tools, its handoff tools by name, and every tool's spec in the order offered.

    ``tools`` come first (custom handoff tools among them), then ``transfer_to_<agent>`` for each agent without a
    custom one, then ``forward_message`` when ``forward`` is set.

    Raises:
        UsageError: a handoff tool names an unknown agent, or two tools share a name.
    """
    ordinary: dict[str, Tool] = {}
    handoffs: dict[str, HandoffTool] = {}
    specs: list[ToolSpec] = []
    for item in tools:
        if isinstance(item, HandoffTool):
            if item.agent not in agents:
                raise UsageError(f"handoff tool {item.name!r} names an unknown agent {item.agent!r}")
            handoffs[item.name] = item
            specs.append(item.spec)
        else:
            made = as_tool(item)
            ordinary[made.name] = made
            specs.append(made.spec)
    covered = {h.agent for h in handoffs.values()}
    for agent in agents:
        if agent not in covered:
            made_handoff = create_handoff_tool(agent, prefix=prefix, task=task)
            handoffs[made_handoff.name] = made_handoff
            specs.append(made_handoff.spec)
    if forward:
        specs.append(forward_message_spec())
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise UsageError(f"two of the supervisor's tools have the same name: {sorted(names)}")
    return ordinary, handoffs, specs


@dataclass(frozen=True, slots=True)
class ForwardMessageTool:
    """The ``forward_message`` tool given in a supervisor's ``tools`` (same as ``forward_message=True``)."""

    kind: Literal["forward_message"] = "forward_message"
    """Tag telling it apart from ordinary tools."""


def create_forward_message_tool(supervisor_name: str = "supervisor") -> ForwardMessageTool:
    """The ``forward_message`` tool, for ``create_supervisor(..., tools=[...])`` (docs/migrating.md).

    ``supervisor_name`` is accepted for the same call shape; the supervisor's own name is used.
    """
    return ForwardMessageTool()


def forward_message_spec() -> ToolSpec:
    """The ``forward_message`` tool: pass an agent's latest answer to the user without changes."""
    return ToolSpec(
        FORWARD_MESSAGE,
        "Forwards the latest message from the specified agent to the user without any changes. Use this to preserve "
        "information fidelity, avoid misinterpretation of questions or responses, and save time.",
        {"properties": {"from_agent": {"type": "string"}}, "required": ["from_agent"], "type": "object"},
    )


def forward_answer(
    view: Sequence[Message], call: ToolCall, handoffs: Iterable[HandoffTool], supervisor: str
) -> tuple[str | None, ToolMessage]:
    """The latest answer of the agent a ``forward_message`` call names, and the call's result.

    An answer is an AI message of that agent without tool calls (``shared``), or the result of a handoff to it
    (``scoped``). When there is none, the result is an error telling the model which agents answered.
    """
    try:
        wanted = str(call.parsed_arguments().get("from_agent", "")).strip()
    except ValueError:
        wanted = ""
    key = wanted.lower()
    agents = {h.name: h.agent.lower() for h in handoffs}
    for message in reversed(view):
        spoke = isinstance(message, AIMessage) and not message.tool_calls and (message.name or "").lower() == key
        returned = (  # a scoped handoff's result
            isinstance(message, ToolMessage)
            and not message.is_error
            and agents.get(message.name) == key
            and not message.content.startswith("Successfully transferred to ")
        )
        if not (spoke or returned):
            continue
        text = message.content
        done = f"Forwarded the answer of {wanted} to the user."
        return text, ToolMessage(content=done, tool_call_id=call.id, name=call.name)
    names = sorted({m.name for m in view if isinstance(m, AIMessage) and m.name and m.name != supervisor})
    return None, error_result(call, f"Could not find a message from agent {wanted!r}. Agents that answered: {names}")


def error_result(call: ToolCall, text: str) -> ToolMessage:
    """An error answer to ``call``, for the model to act on."""
    return ToolMessage(content=text, tool_call_id=call.id, name=call.name, is_error=True)


def without_calls(message: AIMessage, ids: set[str]) -> AIMessage:
    """``message`` without the tool calls whose ids are in ``ids``."""
    kept = [c for c in message.tool_calls if c.id not in ids]
    return AIMessage(content=message.content, tool_calls=kept, name=message.name, metadata=message.metadata)


def only_call(message: AIMessage, call: ToolCall) -> AIMessage:
    """``message`` with ``call`` as its only tool call (what one of several parallel handoffs shows its agent)."""
    return AIMessage(content=message.content, tool_calls=[call], name=message.name, metadata=message.metadata)


def handoff_back_messages(agent: str, supervisor: str, call_id: str) -> tuple[AIMessage, ToolMessage]:
    """The pair recording that ``agent`` handed control back to ``supervisor`` (the shared layout, docs/migrating.md).

    The call's id is derived from ``call_id`` (the handoff that started the agent), so a run executed again after
    an interrupt or a crash, and a recorded cassette, see the same id.
    """
    back_id = str(uuid.uuid5(_BACK_IDS, f"{call_id}/{agent}"))
    tool_name = f"transfer_back_to_{normalize_agent_name(supervisor)}"
    return (
        AIMessage(
            content=f"Transferring back to {supervisor}",
            tool_calls=[ToolCall(id=back_id, name=tool_name, arguments="{}")],
            name=agent,
            metadata={"handoff_back": True},
        ),
        ToolMessage(
            content=f"Successfully transferred back to {supervisor}",
            tool_call_id=back_id,
            name=tool_name,
            metadata={"handoff_back": True},
        ),
    )


def _canonical_arguments(text: str) -> str:
    if text == "{}":
        return text
    try:
        value: Any = json.loads(text or "{}")
    except json.JSONDecodeError:
        return text
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else text


def canonical_calls(message: AIMessage) -> AIMessage:
    """``message`` with its tool calls' arguments re-serialised as compact JSON (``" {}"`` becomes ``"{}"``).

    Models write arguments with stray whitespace; the shared history shows them re-serialised, as
    the shared layout does (docs/migrating.md). Invalid JSON is kept as written. The message is copied only when
    something changes.
    """
    calls = message.tool_calls
    if not calls:
        return message
    fixed = [_canonical_arguments(c.arguments) for c in calls]
    if all(new == c.arguments for new, c in zip(fixed, calls, strict=True)):
        return message
    return AIMessage(
        content=message.content,
        tool_calls=[ToolCall(id=c.id, name=c.name, arguments=a) for c, a in zip(calls, fixed, strict=True)],
        name=message.name,
        metadata=message.metadata,
    )


def history_problems(messages: Sequence[Message]) -> list[str]:
    """What makes ``messages`` invalid for a strict provider (an empty list when it is valid).

    Every tool call must be answered by exactly one tool message; the answers must come right after the message
    that made the calls, in the order of the calls; no tool message may answer a call that was not made.
    """
    problems: list[str] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if isinstance(message, ToolMessage):
            problems.append(f"message {index - 1}: tool result {message.tool_call_id!r} answers no pending call")
            continue
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        expected = [c.id for c in message.tool_calls]
        answered: list[str] = []
        while index < len(messages) and isinstance(messages[index], ToolMessage):
            answered.append(messages[index].tool_call_id)  # type: ignore[union-attr]
            index += 1
        if answered != expected:
            problems.append(f"message {index - len(answered) - 1}: calls {expected} answered by {answered}")
    return problems


def repair_history(messages: Sequence[Message]) -> list[Message]:
    """``messages`` made valid (:func:`podium.messages.valid_history`), with canonical tool-call arguments.

    A history read back from the store may hold calls without answers (a run stopped by a limit, handoff calls
    hidden by ``add_handoff_messages=False``); this view drops them, so the next model request is valid.
    """
    return [canonical_calls(m) if isinstance(m, AIMessage) else m for m in valid_history(list(messages))]
