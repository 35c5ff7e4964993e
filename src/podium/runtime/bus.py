"""The event bus: every event of every run, published after it is stored, for whoever listens.

The runtime publishes each stored event (``seq`` > 0) once it is in the store, and each streamed-only event (token
deltas, tool starts: ``seq`` 0) as it happens. A subscriber reads them from a bounded queue: a slow or vanished
subscriber never blocks or fails a run. When its queue overflows it is marked *lagged*, and its iterator raises
:class:`~podium.errors.SubscriberLagged` so the consumer can re-read the stored events from the store by ``seq``.

:class:`InProcessBus` (the default) serves subscribers of the same process.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from types import TracebackType

from podium.errors import SubscriberLagged, UsageError
from podium.events import Event

__all__ = ["EventBus", "InProcessBus", "Subscription"]


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

    @abstractmethod
    async def publish(self, thread_id: str, event: Event) -> None:
        """Hand ``event`` of ``thread_id`` to every matching subscriber. Never blocks on a subscriber."""

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
