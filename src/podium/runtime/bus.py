"""The event bus: every event of every run, published after it is stored, for whoever listens.

The runtime publishes each stored event (``seq`` > 0) once it is in the store, and each streamed-only event (token
deltas, tool starts: ``seq`` 0) as it happens. A subscriber reads them from a bounded queue: a slow or vanished
subscriber never blocks or fails a run. When its queue overflows it is marked *lagged*, and its iterator raises
:class:`~podium.errors.SubscriberLagged` so the consumer can re-read the stored events from the store by ``seq``.

:class:`InProcessBus` (the default) serves subscribers of the same process, called directly by the run. A bus of your
own (one that forwards events over a network) is never awaited by a run, and its code never runs inside one:
:class:`Outlet` hands it the events in order from a task of the runtime's, with a context of its own, bounding each
:meth:`EventBus.publish` by :attr:`EventBus.publish_timeout` and the events waiting for it by
:attr:`EventBus.max_backlog`. A bus that stalls costs its followers events (they re-read the store by ``seq``), never
a run its progress or its cancellation; a timeout or a context variable it sets stays in the bus.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Any

from podium.errors import SubscriberLagged, UsageError
from podium.events import Event, RunEnded

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
    """Events the runtime keeps waiting for this bus while it is behind; more are dropped for it until it catches
    up (a warning logged then says how many), apart from each run's ``RunEnded``, which always waits its turn."""

    @abstractmethod
    async def publish(self, thread_id: str, event: Event) -> None:
        """Hand ``event`` of ``thread_id`` to every matching subscriber.

        A run never waits on this, and this never runs inside a run: the runtime calls it for each event in order
        from a task of its own, which runs in a copy of the context the :class:`~podium.runtime.Runtime` was made
        in, so an ``asyncio.timeout`` or ``wait_for`` it sets bounds only the bus, and a context variable it sets
        (a tracing span) is seen by neither the run's tools nor the caller of ``Runtime.run``. The events that come
        while one call waits queue behind it (at most :attr:`max_backlog`; past it they are dropped for this bus
        and a warning is logged with the count, except each run's ``RunEnded``, which is always queued, so a
        follower waiting for a run's end gets it). A call that takes longer than :attr:`publish_timeout` is
        cancelled and its event dropped for this bus; one that raises is logged. Either way the events stay in the
        store, and a follower that sees a gap in ``seq`` re-reads them there (``Runtime.events(thread_id,
        after=seq)``). An event still waiting when the event loop stops is lost to the bus (not to the store).

        A plain ``def publish`` is accepted too: it is called in that task, on the event loop, so it must not
        block (hand slow work to a task or a thread of its own).
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
    ``publish_nowait`` itself: no coroutine, no task, on the per-step path. Any other bus is handed the events by a
    task of the outlet's, apart from every run: its code (even up to its first ``await``) never runs in a run's task
    or context, so a timeout it sets or a context variable it changes stays in the bus. The task runs in a copy of
    the context the outlet was made in (the runtime's), and lasts while events wait for the bus.
    """

    __slots__ = ("_backlog", "_context", "_dropped", "_failed", "_task", "bus", "put", "quiet")

    def __init__(self, bus: EventBus, context: contextvars.Context | None = None) -> None:
        """Hand events to ``bus``, from a task running in a copy of ``context`` (default: the current one)."""
        self.bus = bus
        self.quiet = bus.quiet
        """The bus's :meth:`EventBus.quiet`."""
        self.put: Callable[[str, Event], None]
        """Hand ``event`` of ``thread_id`` to the bus now or, behind events still under way, soon (never waits)."""
        if isinstance(bus, InProcessBus) and type(bus).publish is InProcessBus.publish:
            self.put = bus.publish_nowait
        else:
            self.put = self._put
        self._context = context if context is not None else contextvars.copy_context()
        self._backlog: deque[tuple[str, Event]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._dropped: dict[str, int] = {}
        """Events dropped past the backlog since the bus last caught up, by thread."""
        self._failed = 0
        """Publishes that failed or timed out since one last succeeded."""

    @property
    def context(self) -> contextvars.Context:
        """The context the bus's task runs a copy of."""
        return self._context

    def _put(self, thread_id: str, event: Event) -> None:
        task = self._task
        if task is not None and task.get_loop() is not asyncio.get_running_loop():  # left by a loop that ended
            self._task = task = None
            self._backlog.clear()
        if len(self._backlog) < self.bus.max_backlog or isinstance(event, RunEnded):
            # (a run's end is kept past the backlog: a follower waiting for it is never left waiting for ever)
            self._backlog.append((thread_id, event))
        else:
            self._dropped[thread_id] = self._dropped.get(thread_id, 0) + 1
        if task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._drain(), name="podium-bus", context=self._context.copy()
            )

    async def _drain(self) -> None:
        """Hand the waiting events to the bus one at a time, in order, until none is left."""
        backlog = self._backlog
        try:
            while backlog:
                thread_id, event = backlog.popleft()
                await self._publish(thread_id, event)
                if not backlog and self._dropped:  # caught up
                    self._report_dropped()
        finally:
            self._task = None
            if self._dropped:
                self._report_dropped()
            if backlog:  # the loop stops (the task was cancelled): what is left never reaches the bus
                _log.warning(
                    "the event bus %s missed the last %d events: they still waited for it when the event loop "
                    "stopped (they are in the store)",
                    type(self.bus).__name__,
                    len(backlog),
                )
                backlog.clear()

    async def _publish(self, thread_id: str, event: Event) -> None:
        bus = self.bus
        limit = asyncio.timeout(bus.publish_timeout)
        try:
            async with limit:
                outcome: Any = bus.publish(thread_id, event)
                if inspect.isawaitable(outcome):  # (a plain ``def publish`` has done its work already)
                    await outcome
        except TimeoutError:
            if not limit.expired():
                self._failure(thread_id, event, exc_info=True)
            elif not self._failed:
                self._failed = 1
                _log.warning(
                    "the event bus %s did not take event #%d of thread %s within its publish_timeout of %s s; the "
                    "event is dropped for it (followers re-read the store by seq)",
                    type(bus).__name__,
                    event.seq,
                    thread_id,
                    bus.publish_timeout,
                )
            else:
                self._failed += 1
        except Exception:
            self._failure(thread_id, event, exc_info=True)
        else:
            if self._failed > 1:
                _log.warning(
                    "the event bus %s takes events again, after %d more that failed or timed out",
                    type(bus).__name__,
                    self._failed - 1,
                )
            self._failed = 0

    def _failure(self, thread_id: str, event: Event, *, exc_info: bool) -> None:
        """Log the first failure of a series in full, and count the ones after it (told once the bus recovers)."""
        self._failed += 1
        if self._failed == 1:
            _log.error(
                "the event bus %s failed to publish event #%d of thread %s; live followers may miss it (it is in the "
                "store: they re-read it by seq); further failures are counted until a publish succeeds",
                type(self.bus).__name__,
                event.seq,
                thread_id,
                exc_info=exc_info,
            )

    def _report_dropped(self) -> None:
        dropped, self._dropped = self._dropped, {}
        threads = ", ".join(f"{count} of thread {thread_id}" for thread_id, count in dropped.items())
        _log.warning(
            "the event bus %s missed %d events (%s): more than its max_backlog of %d waited for it; they are in the "
            "store, and each run's end was still handed to it: followers re-read what they missed by seq "
            "(Runtime.events(thread_id, after=seq))",
            type(self.bus).__name__,
            sum(dropped.values()),
            threads,
            self.bus.max_backlog,
        )
