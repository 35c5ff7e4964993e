"""Stand-ins for the runtime calls the server is written against, until they land in :mod:`podium.runtime`.

The contract (``Runtime.run(run_id=...)``, ``Runtime.cancel``, ``Runtime(store, bus=...)``, ``podium.runtime.bus``)
is implemented here as thinly as possible on today's runtime. Everything the server needs from it goes through
this module, so switching to the real calls is a small change: delete this file and call the runtime.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from podium.errors import PodiumError, ThreadWaiting, UsageError
from podium.events import Event, RunEnded
from podium.messages import HumanMessage, message_to_dict
from podium.runtime.runtime import RunResult, Runtime
from podium.store.base import RunRecord

if TYPE_CHECKING:
    from podium.agents.base import Agent
    from podium.store.base import Store


class SubscriberLagged(PodiumError):
    """A subscriber fell too far behind; re-read stored events from the store by ``seq``."""


class Subscription:
    """Events published after subscribing, as an async iterator; ``async with`` unsubscribes."""

    def __init__(self, bus: InProcessBus, thread_id: str | None, size: int) -> None:
        self._bus = bus
        self.thread_id = thread_id
        self.queue: asyncio.Queue[Event] = asyncio.Queue(size)
        self.lagged = False

    def offer(self, event: Event) -> None:
        if self.lagged:
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.lagged = True

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event:
        if self.lagged and self.queue.empty():
            raise SubscriberLagged("the subscriber fell behind; re-read stored events")
        return await self.queue.get()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._bus.subscribers.discard(self)


class EventBus(ABC):
    """Where the runtime publishes every event after storing it."""

    @abstractmethod
    async def publish(self, thread_id: str, event: Event) -> None:
        """Hand ``event`` to the subscribers of its thread."""

    @abstractmethod
    def subscribe(self, thread_id: str | None = None) -> Subscription:
        """Follow one thread's events (all threads when ``None``)."""


class InProcessBus(EventBus):
    """Subscribers in this process, each a bounded queue."""

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self.subscribers: set[Subscription] = set()

    async def publish(self, thread_id: str, event: Event) -> None:
        self.publish_nowait(thread_id, event)

    def publish_nowait(self, thread_id: str, event: Event) -> None:
        for subscriber in list(self.subscribers):
            if subscriber.thread_id in (None, thread_id):
                subscriber.offer(event)

    def subscribe(self, thread_id: str | None = None) -> Subscription:
        subscription = Subscription(self, thread_id, self.size)
        self.subscribers.add(subscription)
        return subscription


@dataclass(frozen=True, slots=True)
class Cancelled:
    """What :func:`cancel` did."""

    run_id: str
    thread_id: str
    status: Literal["cancelled", "already_ended"]


def make_runtime(store: Store) -> tuple[Runtime, InProcessBus]:
    """A runtime on ``store`` and the bus its runs publish to."""
    return Runtime(store), InProcessBus()


def _publisher(bus: InProcessBus, thread_id: str) -> Callable[[Event], None]:
    return lambda event: bus.publish_nowait(thread_id, event)


async def run(
    runtime: Runtime, bus: InProcessBus, agent: Agent, text: str, *, thread_id: str, run_id: str
) -> RunResult:
    """``runtime.run(agent, text, thread_id=..., run_id=...)``: a new run whose id the caller chose."""
    store = runtime.store
    await store.create_thread(thread_id, {"agent": agent.name})
    owner = await runtime._acquire(thread_id, "fail", 0)
    try:
        last = await store.last_run(thread_id)
        if last is not None and last.status in ("interrupted", "running"):
            raise ThreadWaiting(thread_id, [])
        message = HumanMessage(content=text)
        record = RunRecord(id=run_id, thread_id=thread_id, input=message_to_dict(message), agent=agent.name)
        await store.create_run(record)
        return await runtime._execute(agent, record, {}, owner, None, None, _publisher(bus, thread_id))
    finally:
        await store.release_thread(thread_id, owner)


async def resume(
    runtime: Runtime, bus: InProcessBus, agent: Agent, thread_id: str, answer: str | dict[str, str] | None
) -> RunResult:
    """``runtime.resume(agent, thread_id, answer)``."""
    return await runtime.resume(agent, thread_id, answer, on_event=_publisher(bus, thread_id))


async def cancel(runtime: Runtime, bus: InProcessBus, run_id: str, task: asyncio.Task[Any] | None) -> Cancelled:
    """``runtime.cancel(run_id)``: stop the run (its task, when it executes here) and record its end once."""
    store = runtime.store
    record = await store.get_run(run_id)
    if record is None:
        raise UsageError(f"no run {run_id!r}")
    if task is not None and not task.done():
        task.cancel()
        await asyncio.wait([task])
    record = await store.get_run(run_id)
    assert record is not None
    ended = record.status == "cancelled" and record.result is not None
    if ended or record.status not in ("running", "interrupted", "cancelled"):
        return Cancelled(run_id, record.thread_id, "already_ended")
    owner = await runtime._acquire(record.thread_id, "wait", 10.0)
    try:
        seq = await store.last_seq(record.thread_id) + 1
        event = RunEnded(status="cancelled", reason="cancelled by request", run_id=run_id, seq=seq)
        await store.append_events(record.thread_id, [event])
        await store.update_run(run_id, "cancelled", {"status": "cancelled", "reason": event.reason})
        bus.publish_nowait(record.thread_id, event)
    finally:
        await store.release_thread(record.thread_id, owner)
    return Cancelled(run_id, record.thread_id, "cancelled")
