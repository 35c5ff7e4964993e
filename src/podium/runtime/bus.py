"""The event bus: every event of every run, published after it is stored, for whoever listens.

The runtime publishes each stored event (``seq`` > 0) once it is in the store, and each streamed-only event (token
deltas, tool starts: ``seq`` 0) as it happens. A subscriber reads them from a bounded queue: a slow or vanished
subscriber never blocks or fails a run. When its queue overflows it is marked *lagged*, and its iterator raises
:class:`~podium.errors.SubscriberLagged` so the consumer can re-read the stored events from the store by ``seq``.

:class:`InProcessBus` (the default) serves subscribers of the same process. A bus of your own (one that forwards
events over a network) is never awaited by a run: :class:`Outlet` hands it the events in order from a task of the
runtime's, bounding each :meth:`EventBus.publish` by :attr:`EventBus.publish_timeout`, so a bus that stalls costs
its followers events (they re-read the store by ``seq``), never a run its progress or its cancellation.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any

from podium._eager import first_step
from podium.errors import SubscriberLagged, UsageError
from podium.events import Event

__all__ = ["EventBus", "InProcessBus", "Subscription"]

_log = logging.getLogger("podium.runtime")


class Subscription(ABC):
    """A subscriber's view of a bus: an async iterator of events and an async context manager that unsubscribes."""

    thread_id: str | None
    """The thread it follows (``None``: all threads)."""

    @abstractmethod
    async def next(self) -> Event:
        """The next event (waits for one).

        Raises:
            SubscriberLagged: the subscriber fell behind and events were dropped.
            StopAsyncIteration: the subscription was closed.
        """

    @abstractmethod
    def close(self) -> None:
        """Stop receiving events (idempotent)."""

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        return await self.next()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class EventBus(ABC):
    """Carries run events from the runtime to subscribers."""

    publish_timeout: float = 5.0
    """Seconds one :meth:`publish` call may take before the runtime gives it up (the event is dropped for this
    bus, with a warning logged)."""
    max_backlog: int = 1000
    """Events the runtime keeps waiting for this bus while a :meth:`publish` is under way; more are dropped for it
    (with a warning logged) until it catches up."""

    @abstractmethod
    async def publish(self, thread_id: str, event: Event) -> None:
        """Hand ``event`` of ``thread_id`` to every matching subscriber.

        A run never waits on this: the runtime calls it for each event in order, and one call that has to wait
        (a network send) is finished from a task of the runtime's while the run goes on, with the events that
        follow queued behind it (at most :attr:`max_backlog`). A call that takes longer than
        :attr:`publish_timeout` is cancelled and its event dropped for this bus; one that raises is logged. Either
        way the events stay in the store, and a follower that misses some re-reads them there by ``seq``. The
        events of one runtime reach the bus in the order they happened; one still being handed over when the
        event loop stops is lost to the bus (not to the store).
        """

    @abstractmethod
    def subscribe(self, thread_id: str | None = None) -> Subscription:
        """Follow one thread's events (``None``: every thread's), from now on."""

    def quiet(self, thread_id: str) -> bool:
        """Whether an event of ``thread_id`` published now would reach nobody, so the runtime may skip publishing it.

        The default says no: every event is published. A bus that forwards events elsewhere must keep it so.
        """
        return False


_CLOSED = object()


class _QueueSubscription(Subscription):
    __slots__ = ("_bus", "_closed", "_last_seq", "_queue", "lagged", "thread_id")

    def __init__(self, bus: InProcessBus, thread_id: str | None, max_queue: int) -> None:
        self._bus = bus
        self.thread_id = thread_id
        self._queue: asyncio.Queue[object] = asyncio.Queue(max_queue)
        self._closed = False
        self._last_seq = 0
        self.lagged = False
        """Set when the queue overflowed; the iterator raises :class:`SubscriberLagged` once drained."""

    def offer(self, event: Event) -> None:
        if self.lagged or self._closed:
            return
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self.lagged = True

    async def next(self) -> Event:
        while True:
            if self._queue.empty():
                if self._closed:
                    raise StopAsyncIteration
                if self.lagged:
                    self.close()
                    raise SubscriberLagged(self._last_seq)
            item = await self._queue.get()
            if item is _CLOSED:
                continue
            assert isinstance(item, Event)
            if item.seq:
                self._last_seq = item.seq
            return item

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._bus._remove(self)
        try:  # wake a reader that waits on an empty queue
            self._queue.put_nowait(_CLOSED)
        except asyncio.QueueFull:
            pass


class InProcessBus(EventBus):
    """A bus for subscribers in this process: one bounded queue per subscriber."""

    def __init__(self, *, max_queue: int = 1000) -> None:
        """Give each subscriber a queue of ``max_queue`` events.

        Raises:
            UsageError: ``max_queue`` is not positive.
        """
        if max_queue < 1:
            raise UsageError(f"max_queue must be at least 1, not {max_queue}")
        self.max_queue = max_queue
        self._by_thread: dict[str | None, list[_QueueSubscription]] = {}

    async def publish(self, thread_id: str, event: Event) -> None:
        """Hand ``event`` to the subscribers of ``thread_id`` and of all threads (never waits)."""
        self.publish_nowait(thread_id, event)

    def quiet(self, thread_id: str) -> bool:
        """Nobody follows ``thread_id`` or all threads here."""
        return thread_id not in self._by_thread and None not in self._by_thread

    def publish_nowait(self, thread_id: str, event: Event) -> None:
        """:meth:`publish` without a coroutine (the runtime's hot path)."""
        if not self._by_thread:
            return
        for key in (thread_id, None):
            for subscription in self._by_thread.get(key, ()):
                subscription.offer(event)

    def subscribe(self, thread_id: str | None = None) -> Subscription:
        """Follow ``thread_id`` (or all threads) from now on."""
        subscription = _QueueSubscription(self, thread_id, self.max_queue)
        self._by_thread.setdefault(thread_id, []).append(subscription)
        return subscription

    def _remove(self, subscription: _QueueSubscription) -> None:
        subscribers = self._by_thread.get(subscription.thread_id, [])
        if subscription in subscribers:
            subscribers.remove(subscription)
        if not subscribers:
            self._by_thread.pop(subscription.thread_id, None)


class Outlet:
    """How a runtime hands events to its bus: in order, and never making a run wait (see :meth:`EventBus.publish`).

    :meth:`put` is the whole interface. For an :class:`InProcessBus` (whose ``publish`` never waits) it is the bus's
    ``publish_nowait`` itself: no coroutine, no task, on the per-step path. For any other bus each call of its
    ``publish`` runs at once in the caller until it first waits; one that finishes there costs nothing more, one
    that waits is finished by a task of the outlet's (bounded by :attr:`EventBus.publish_timeout`), and the events
    put meanwhile queue behind it (at most :attr:`EventBus.max_backlog`), so they reach the bus in order.
    """

    __slots__ = ("_backlog", "_dropped", "_task", "bus", "put", "quiet")

    def __init__(self, bus: EventBus) -> None:
        """Hand events to ``bus``."""
        self.bus = bus
        self.quiet = bus.quiet
        """The bus's :meth:`EventBus.quiet`."""
        self.put: Callable[[str, Event], None]
        """Hand ``event`` of ``thread_id`` to the bus now or, behind events still under way, soon (never waits)."""
        if isinstance(bus, InProcessBus) and type(bus).publish is InProcessBus.publish:
            self.put = bus.publish_nowait
        else:
            self.put = self._put
        self._backlog: deque[tuple[str, Event]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._dropped = 0

    def _put(self, thread_id: str, event: Event) -> None:
        task = self._task
        if task is not None and task.get_loop() is not asyncio.get_running_loop():  # left by a loop that ended
            self._task = task = None
            self._backlog.clear()
        if task is not None:  # a publish is under way: queue behind it
            if len(self._backlog) < self.bus.max_backlog:
                self._backlog.append((thread_id, event))
            else:
                if not self._dropped:
                    _log.warning(
                        "the event bus %s is behind by %d events; dropping more until it catches up "
                        "(followers re-read the store by seq)",
                        type(self.bus).__name__,
                        len(self._backlog),
                    )
                self._dropped += 1
            return
        going = self._start(thread_id, event)
        if going is not None:
            self._task = asyncio.get_running_loop().create_task(self._drain(going), name="podium-bus")

    def _start(self, thread_id: str, event: Event) -> Awaitable[Any] | None:
        """Run the bus's ``publish`` of ``event`` until it first waits: what goes on with it then, if anything."""
        try:
            finished, going = first_step(self.bus.publish(thread_id, event))
        except Exception:
            _log.exception("publishing an event of thread %s failed; live followers may miss it", thread_id)
            return None
        return None if finished else going

    async def _drain(self, going: Awaitable[Any] | None) -> None:
        """Finish the publish under way, then hand over the events queued behind it, one at a time."""
        try:
            while True:
                if going is not None:
                    await self._finish(going)
                if not self._backlog:
                    return
                thread_id, event = self._backlog.popleft()
                going = self._start(thread_id, event)
        finally:
            self._task = None
            if self._backlog:  # the loop stops (the task was cancelled): what is left never reaches the bus
                self._dropped += len(self._backlog)
                self._backlog.clear()
            if self._dropped:
                _log.warning("the event bus %s missed %d events", type(self.bus).__name__, self._dropped)
                self._dropped = 0

    async def _finish(self, going: Awaitable[Any]) -> None:
        timeout = self.bus.publish_timeout
        try:
            async with asyncio.timeout(timeout):
                await going
        except TimeoutError:
            _log.warning(
                "the event bus %s did not take an event within its publish_timeout of %s s; the event is dropped "
                "for it (followers re-read the store by seq)",
                type(self.bus).__name__,
                timeout,
            )
        except Exception:
            _log.exception("publishing an event failed; live followers may miss it")
