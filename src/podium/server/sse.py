"""Server-sent events of a run: stored events first (from any ``Last-Event-ID``), then live ones from the bus.

Every frame that comes from a stored event carries ``id: <seq>``, so a client that reconnects with
``Last-Event-ID`` gets exactly the events it missed. The stream opens with ``metadata`` and then, per requested
``stream_mode``:

- ``values``: the thread's values (messages in LangChain form, the task stack) after each change, with
  ``__interrupt__`` when the run stops to ask;
- ``updates``: what each step added, by agent name (``__interrupt__`` for a question);
- ``messages-tuple`` (event ``messages``): ``[message, metadata]`` pairs, model tokens as ``AIMessageChunk``;
- ``custom``: side-channel notes and artifacts;
- ``events``: every typed Podium event as stored (its JSON form).

A run that fails ends with an ``error`` frame. A stream whose run a shutdown stopped just ends, after the frames of
what the run did: the run goes on at the server's next start (or in another process), where the client rejoins it
with ``Last-Event-ID``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from podium.errors import SubscriberLagged
from podium.events import (
    Artifact,
    Event,
    InterruptRaised,
    MessageAdded,
    RunEnded,
    SideChannel,
    TaskStackChanged,
    TokenDelta,
    event_to_dict,
)
from podium.messages import AIMessage
from podium.runtime.bus import Subscription
from podium.server._convert import Values, interrupt_out, message_id, message_out

if TYPE_CHECKING:
    from podium.server._state import ServerState

__all__ = ["STREAM_MODES", "frame", "stream_run"]

STREAM_MODES = ("values", "updates", "messages-tuple", "custom", "events")
"""The stream modes a run can be streamed with."""


def frame(event: str, data: Any, id: int | None = None) -> bytes:
    """One SSE frame."""
    head = f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n"
    return (head + (f"id: {id}\n" if id else "") + "\n").encode()


class _Renderer:
    """Turns one run's events into frames for the requested modes."""

    def __init__(self, modes: Sequence[str], values: Values, run_id: str) -> None:
        self.modes = set(modes)
        self.values = values
        self.run_id = run_id
        self.streamed: set[str] = set()

    def _meta(self, event: Event) -> dict[str, Any]:
        node = event.path[-1] if event.path else ""
        return {"run_id": event.run_id, "langgraph_node": node, "podium_path": list(event.path)}

    def render(self, event: Event) -> list[bytes]:
        out: list[bytes] = []
        seq = event.seq or None
        if "events" in self.modes:
            out.append(frame("events", event_to_dict(event), seq))
        if isinstance(event, TokenDelta):
            if "messages-tuple" in self.modes and event.namespace == "":  # a reply to the thread's history only
                chunk_id = f"{event.run_id}-{self.values.last_seq + 1}"
                self.streamed.add(chunk_id)
                chunk = {"type": "AIMessageChunk", "content": event.text, "id": chunk_id, "tool_call_chunks": []}
                out.append(frame("messages", [chunk, self._meta(event)]))
            return out
        changed = self.values.add(event) if seq else False
        node = event.path[-1] if event.path else "agent"
        if isinstance(event, MessageAdded) and event.namespace == "":
            message = message_out(event.message, message_id(event))
            if "messages-tuple" in self.modes and not (
                isinstance(event.message, AIMessage) and message["id"] in self.streamed and not message["tool_calls"]
            ):
                out.append(frame("messages", [message, self._meta(event)], seq))
            if "updates" in self.modes:
                out.append(frame("updates", {node: {"messages": [message]}}, seq))
        elif isinstance(event, TaskStackChanged) and changed and "updates" in self.modes:
            out.append(frame("updates", {node: {"task_stack": event.stack}}, seq))
        elif isinstance(event, InterruptRaised) and "updates" in self.modes:
            out.append(frame("updates", {"__interrupt__": [interrupt_out(event.interrupt, self.values.calls)]}, seq))
        elif isinstance(event, SideChannel | Artifact) and "custom" in self.modes:
            body = (
                {"text": event.text, "channel": event.channel}
                if isinstance(event, SideChannel)
                else {"content": event.content, "title": event.title}
            )
            out.append(frame("custom", {"kind": event.kind, "path": list(event.path), **body}, seq))
        if "values" in self.modes and (changed or isinstance(event, RunEnded)):
            interrupted = isinstance(event, RunEnded) and event.status == "interrupted"
            out.append(frame("values", self.values.to_dict(with_interrupts=interrupted), seq))
        if isinstance(event, RunEnded) and event.status in ("failed", "limit_exceeded"):
            out.append(frame("error", {"error": event.status, "message": event.reason}, seq))
        return out


async def stream_run(
    state: ServerState,
    thread_id: str,
    run_id: str,
    modes: Sequence[str],
    *,
    after: int,
    subscription: Subscription | None = None,
) -> AsyncIterator[bytes]:
    """The frames of a run from the thread's event ``after`` on, until the run stops executing here (or the server
    stops it: :attr:`~podium.server._executor.Executor.halted`).

    Pass a ``subscription`` of the thread taken before the run was submitted (:meth:`Executor.watch
    <podium.server._executor.Executor.watch>`) to see its first streamed-only events (model tokens) too.
    """
    yield frame("metadata", {"run_id": run_id, "thread_id": thread_id, "attempt": 1})
    store, executor = state.store, state.executor
    values = Values()
    renderer = _Renderer(modes, values, run_id)
    last = after
    live = subscription is not None  # everything after ``after`` waits in the subscription: read it first
    subscription = subscription or executor.watch(thread_id)
    try:
        for event in await store.read_events(thread_id):
            if event.seq <= after:
                values.add(event)
        while True:
            final = False
            stored = [] if live else await store.read_events(thread_id, after=last)
            for event in stored:
                last = event.seq
                if event.run_id != run_id:
                    values.add(event)
                    continue
                for chunk in renderer.render(event):
                    yield chunk
                final = isinstance(event, RunEnded) and await executor.is_final(run_id, event)
            if not live and (final or executor.halted.is_set() or not await executor.queued(run_id)):
                await executor.wait(thread_id, run_id)
                return
            live = False
            try:
                async for event in subscription:
                    if event.seq and event.seq <= last:
                        continue
                    if event.seq and event.seq > last + 1:
                        break  # a gap: read it from the store
                    last = event.seq or last
                    if event.run_id != run_id:
                        if event.seq:
                            values.add(event)
                        continue
                    for chunk in renderer.render(event):
                        yield chunk
                    if isinstance(event, RunEnded) and await executor.is_final(run_id, event):
                        await executor.wait(thread_id, run_id)
                        break
            except SubscriberLagged:  # read what it missed from the store, then follow again
                subscription.close()
                subscription = executor.watch(thread_id)
    finally:
        subscription.close()
