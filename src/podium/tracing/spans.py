"""OpenTelemetry spans from a run's typed events, named and attributed by the GenAI semantic conventions.

:class:`RunTracer` is an event sink (``Runtime.run(..., on_event=tracer)``). It keeps each run's events and, when the
run ends, writes one trace for it with the times the events carry:

- ``invoke_workflow <agent>``: the run (the root span; status, run id, total usage);
- ``invoke_agent <name>``: each agent of the tree (the path tells which agent ran inside which), with its usage;
- ``chat``: each model call (input and output tokens, finish reason), from the moment the agent last did something
  to the reply;
- ``execute_tool <name>``: each tool call, from its start (or the reply that asked for it) to its result; an agent
  running inside a tool call is a child of it. An error result sets the span's status to error.

Questions to the human and error notes become span events. Only ``opentelemetry-api`` is needed (a core
dependency, imported when a tracer is made); spans go wherever the application's tracer provider sends them, and
nowhere when none is configured.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from podium.events import ErrorEvent, Event, InterruptRaised, MessageAdded, RunEnded, RunStarted, ToolStarted
from podium.messages import AIMessage, ToolMessage

__all__ = ["RunTracer"]

_NS = 1_000_000_000


def _ns(ts: float) -> int:
    return int(ts * _NS)


@dataclass
class _Node:
    """One agent or tool call of the run: a span to write."""

    path: tuple[str, ...]
    kind: str  # "agent" or "tool"
    name: str
    start: float
    end: float
    parent: _Node | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, float, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


class RunTracer:
    """Writes one OpenTelemetry trace per run from the run's events."""

    def __init__(self, tracer_provider: Any = None, *, capture_content: bool = False) -> None:
        """Trace with ``tracer_provider`` (default: the global one OpenTelemetry is configured with).

        Args:
            tracer_provider: an OpenTelemetry ``TracerProvider``.
            capture_content: also record the run's input and output text (off: they may hold personal data).
        """
        from opentelemetry import trace

        self._tracer = trace.get_tracer("podium", tracer_provider=tracer_provider)
        self.capture_content = capture_content
        self._runs: dict[str, list[Event]] = defaultdict(list)
        self._parents: dict[str, Any] = {}

    def __call__(self, event: Event) -> None:
        """Take one event of a run (the ``on_event`` sink)."""
        if event.kind == "token":
            return
        if isinstance(event, RunStarted):
            from opentelemetry import context

            self._parents[event.run_id] = context.get_current()  # a run started inside a span joins its trace
        self._runs[event.run_id].append(event)
        if isinstance(event, RunEnded):
            events = self._runs.pop(event.run_id)
            self._write(events, self._parents.pop(event.run_id, None))

    # building ----------------------------------------------------------------------------------------------------
    def _write(self, events: list[Event], parent_context: Any) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import Status, StatusCode

        started = next((e for e in events if isinstance(e, RunStarted)), events[0])
        ended = events[-1]
        assert isinstance(ended, RunEnded)
        nodes, chats = _tree(events)
        top = next((n for n in nodes.values() if n.parent is None and n.kind == "agent"), None)
        workflow = top.path[-1] if top is not None else "run"
        usage = [sum(c.input_tokens for c in chats), sum(c.output_tokens for c in chats)]
        root_attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.workflow.name": workflow,
            "podium.run.id": ended.run_id,
            "podium.run.status": ended.status,
            "podium.run.attempt": started.attempt if isinstance(started, RunStarted) else 1,
            "gen_ai.usage.input_tokens": usage[0],
            "gen_ai.usage.output_tokens": usage[1],
        }
        if self.capture_content:
            if isinstance(started, RunStarted) and started.input is not None:
                root_attributes["podium.run.input"] = str(started.input.content)
            if ended.output is not None:
                root_attributes["podium.run.output"] = ended.output
        root = self._tracer.start_span(
            f"invoke_workflow {workflow}",
            context=parent_context,
            kind=trace.SpanKind.INTERNAL,
            start_time=_ns(started.ts),
            attributes=root_attributes,
        )
        if ended.status not in ("completed", "interrupted"):
            root.set_status(Status(StatusCode.ERROR, ended.reason or ended.status))
        spans: dict[int, Any] = {}

        def open_span(node: _Node) -> Any:
            if id(node) in spans:
                return spans[id(node)]
            parent = open_span(node.parent) if node.parent is not None else root
            span = self._tracer.start_span(
                node.name,
                context=trace.set_span_in_context(parent),
                start_time=_ns(node.start),
                attributes=node.attributes,
            )
            spans[id(node)] = span
            return span

        for node in [*nodes.values(), *chats]:
            span = open_span(node)
            if node.kind != "tool" and (node.input_tokens or node.output_tokens):
                span.set_attribute("gen_ai.usage.input_tokens", node.input_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", node.output_tokens)
            for name, ts, attributes in node.events:
                span.add_event(name, attributes, timestamp=_ns(ts))
            if node.error is not None:
                span.set_status(Status(StatusCode.ERROR, node.error))
                span.set_attribute("error.type", "tool_error" if node.kind == "tool" else node.error)
        for node in reversed([*nodes.values(), *chats]):  # children end before their parents
            spans[id(node)].end(end_time=_ns(node.end))
        root.end(end_time=_ns(ended.ts))


def _tree(events: list[Event]) -> tuple[dict[tuple[str, ...], _Node], list[_Node]]:
    """The run's agents and tool calls (by path) and its model calls, with their times and attributes."""
    call_ids: dict[str, tuple[str, float]] = {}  # tool call id -> (tool name, when asked)
    agents: set[tuple[str, ...]] = set()
    for event in events:
        if isinstance(event, MessageAdded) and isinstance(event.message, AIMessage):
            for call in event.message.tool_calls:
                call_ids.setdefault(call.id, (call.name, event.ts))
            if event.message.name and event.path and event.path[-1] == event.message.name:
                agents.add(event.path)
    nodes: dict[tuple[str, ...], _Node] = {}

    def node_for(path: tuple[str, ...], ts: float) -> _Node | None:
        """The span owning events at ``path``: the deepest agent or tool call on it (created on first sight)."""
        owner: _Node | None = None
        for depth in range(1, len(path) + 1):
            prefix, segment = path[:depth], path[depth - 1]
            found = nodes.get(prefix)
            if found is None:
                if segment in call_ids:
                    tool, asked = call_ids[segment]
                    found = _Node(
                        prefix, "tool", f"execute_tool {tool}", asked, ts, owner, _tool_attributes(tool, segment)
                    )
                elif depth == 1 or prefix in agents:
                    found = _Node(prefix, "agent", f"invoke_agent {segment}", ts, ts, owner, _agent_attributes(prefix))
                else:
                    continue  # a context that is neither (a task, an invocation): its events belong to the owner
                nodes[prefix] = found
            owner = found
            owner.start, owner.end = min(owner.start, ts), max(owner.end, ts)
        return owner

    chats: list[_Node] = []
    last_seen: dict[tuple[str, ...], float] = {}
    for event in events:
        if isinstance(event, RunStarted | RunEnded) or not event.path:
            continue
        owner = node_for(event.path, event.ts)
        if owner is None:  # pragma: no cover - every path has a first segment, an agent
            continue
        previous = last_seen.get(owner.path, owner.start)
        last_seen[owner.path] = event.ts
        if isinstance(event, MessageAdded) and isinstance(event.message, AIMessage) and event.usage is not None:
            chat = _Node(owner.path, "chat", "chat", previous, event.ts, owner, _chat_attributes(event))
            chat.input_tokens, chat.output_tokens = event.usage.input_tokens, event.usage.output_tokens
            chats.append(chat)
            walk: _Node | None = owner
            while walk is not None:
                if walk.kind == "agent":
                    walk.input_tokens += chat.input_tokens
                    walk.output_tokens += chat.output_tokens
                walk = walk.parent
        elif isinstance(event, MessageAdded) and isinstance(event.message, ToolMessage):
            tool = nodes.get((*event.path, event.message.tool_call_id))
            if tool is None:  # a tool that ran no nested step: its span starts when the model asked for it
                name, asked = call_ids.get(event.message.tool_call_id, (event.message.name, previous))
                tool = _Node(
                    (*event.path, event.message.tool_call_id),
                    "tool",
                    f"execute_tool {name}",
                    asked,
                    event.ts,
                    owner,
                    _tool_attributes(name, event.message.tool_call_id),
                )
                nodes[tool.path] = tool
            tool.end = max(tool.end, event.ts)
            if event.message.is_error:
                tool.error = event.message.content[:500]
        elif isinstance(event, ToolStarted):
            tool = nodes.get((*event.path, event.tool_call_id))
            if tool is None:
                tool = _Node(
                    (*event.path, event.tool_call_id),
                    "tool",
                    f"execute_tool {event.name}",
                    event.ts,
                    event.ts,
                    owner,
                    _tool_attributes(event.name, event.tool_call_id),
                )
                nodes[tool.path] = tool
            tool.start = event.ts
        elif isinstance(event, InterruptRaised):
            owner.events.append(("podium.interrupt", event.ts, {"podium.interrupt.prompt": event.interrupt.prompt}))
        elif isinstance(event, ErrorEvent):
            owner.events.append(("podium.error", event.ts, {"error.type": event.error, "podium.error": event.message}))
    for tool in nodes.values():  # a tool span covers the agents that ran inside it
        walk = tool.parent
        while walk is not None:
            walk.start, walk.end = min(walk.start, tool.start), max(walk.end, tool.end)
            walk = walk.parent
    return dict(sorted(nodes.items(), key=lambda item: (item[1].start, len(item[0])))), chats


def _agent_attributes(path: tuple[str, ...]) -> dict[str, Any]:
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": path[-1], "podium.path": "/".join(path)}


def _tool_attributes(name: str, call_id: str) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
    }


def _chat_attributes(event: MessageAdded) -> dict[str, Any]:
    message = event.message
    assert isinstance(message, AIMessage)
    usage = event.usage
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.agent.name": message.name or "",
        "gen_ai.usage.input_tokens": usage.input_tokens if usage else 0,
        "gen_ai.usage.output_tokens": usage.output_tokens if usage else 0,
        "gen_ai.response.finish_reasons": ["tool_calls" if message.tool_calls else "stop"],
        "podium.path": "/".join(event.path),
    }
