"""The journal and the lease: what all contexts of one run execution share, and how an event is recorded.

Every step with an effect is recorded by :meth:`RunState.record` as the next event of the thread's log (the
journal is that log's keyed events; see docs/architecture.md, "The journal is the event log"). Recorded events
are stored by :meth:`RunState.flush` before the run's next effect (model call, tool round, step) in one call, so a
round's events share one transaction. The store writes them only while the run holds the thread's write lease
(fencing); :meth:`RunState.keep_lease` renews the lease on a timer while the run executes, so a long tool call keeps
its thread, and a run whose lease another process took over all the same writes nothing more. The live callbacks get
every event at once; the bus gets recorded ones once stored, and streamed-only ones (token deltas, tool starts) in
their place among them. Neither can fail or stall the run: the bus is handed events through an
:class:`~podium.runtime.bus.Outlet`, which never makes the run wait (a bus of your own is called from a task of the
runtime's, never inside the run, bounded in time); a callback runs on the event loop, so slow work in one
belongs in the awaitable it returns (run as a task of its own).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from podium._eager import firm, first_step
from podium.errors import LeaseLost, LimitReached, StoreError, UsageError
from podium.events import Event
from podium.messages import Usage

if TYPE_CHECKING:
    from podium.runtime._history import HistoryCache
    from podium.runtime.bus import Outlet
    from podium.store.base import RunStatus, Store

    RunOutcome = tuple[RunStatus, dict[str, Any]]
    """A run's status and result, recorded at its end."""

_log = logging.getLogger("podium.runtime")

FLUSH_RETRIES = (0.05, 0.25, 1.0)
"""Pauses (seconds) before each new attempt to store a run's events after the store failed (a lock held past the
busy timeout, a dropped connection): a passing fault costs a wait, not the results of the effects that completed."""

__all__ = ["Budget", "Limits", "RunState"]


@dataclass(slots=True, kw_only=True)
class Limits:
    """Bounds of one run; reaching one ends the run with status ``limit_exceeded`` and says which."""

    max_model_calls: int | None = 200
    """Model calls in the whole run, all agents together."""
    max_tokens: int | None = None
    """Input plus output tokens in the whole run."""
    timeout: float | None = None
    """Wall-clock seconds for one execution of the run."""

    def __post_init__(self) -> None:
        """Refuse bounds that cannot be met (``UsageError``): negative counts, a timeout that is not positive."""
        for name in ("max_model_calls", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise UsageError(f"Limits.{name} must be a whole number, 0 or more (or None), not {value!r}")
        timeout = self.timeout
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf
        ):
            raise UsageError(f"Limits.timeout must be a number of seconds above zero (or None), not {timeout!r}")


@dataclass(slots=True)
class Budget:
    """The bounds of one part of a run (a context given its own :class:`Limits`), counted apart from the run's.

    The model calls made in that context and below it count against it; reaching a bound ends the run with status
    ``limit_exceeded``, like the run's own limits, with a reason naming the part.
    """

    limits: Limits
    owner: str
    """Whose budget it is (the context's path), for the reason of the outcome."""
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0

    def count(self, usage: Usage) -> None:
        """Add one model call's usage."""
        self.usage = self.usage + usage
        self.model_calls += 1

    def check(self) -> None:
        """Raise :class:`LimitReached` if the next model call would exceed this budget."""
        limits = self.limits
        if limits.max_model_calls is not None and self.model_calls >= limits.max_model_calls:
            raise LimitReached("model_calls", f"{self.owner} made its limit of {limits.max_model_calls} model calls")
        if limits.max_tokens is not None and self.usage.total_tokens >= limits.max_tokens:
            raise LimitReached(
                "tokens",
                f"{self.owner} used {self.usage.total_tokens} tokens, reaching its budget of {limits.max_tokens}",
            )


@dataclass(slots=True, kw_only=True)
class RunState:
    """What all contexts of one run execution share."""

    store: Store
    thread_id: str
    run_id: str
    journal: dict[str, Event]
    seq: int
    head: tuple[int, str] = (0, "")
    """The thread's log head when the execution began (:meth:`~podium.store.Store.log_head`)."""
    limits: Limits
    owner: str
    lease_ttl: float
    sinks: list[Callable[[Event], Any]] = field(default_factory=list)
    bus: Outlet | None = None
    """Where the run's events go for the bus (never awaited: see :class:`~podium.runtime.bus.Outlet`)."""
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    stream_tokens: bool = False
    lost_to: str | None = None
    """Set when another owner took the thread over; the run must not write again."""
    store_fault: Exception | None = None
    """Set when storing the recorded events failed: the run stops, unfinished and resumable."""
    histories: HistoryCache | None = None
    """The runtime's incremental histories (``None``: read the whole history at each turn)."""
    pending: list[Event] = field(default_factory=list)
    """Recorded events not stored yet (see :meth:`flush`)."""
    stored: list[Event] = field(default_factory=list)
    """The events this execution stored, in order."""
    unpublished: list[Event] = field(default_factory=list)
    """Events waiting for their turn on the bus: the pending ones, and streamed-only ones queued behind them."""
    release_at_end: bool = False
    """Give the lease back with the run's recorded end, in the same write (its renewals stop first)."""
    released: bool = False
    """The lease was given back with the run's end (the caller need not release it)."""
    _busy: bool = False
    """A flush is under way (storing, then publishing)."""
    _idle: asyncio.Future[None] | None = None
    """Set when the flush under way ends, for flushes waiting for it (made when one waits)."""
    _keeper: _LeaseKeeper | None = None

    async def record(self, event: Event) -> None:
        """Make ``event`` the next entry of the thread's log: journaled now, stored at the next :meth:`flush`.

        The live callbacks get it at once; the bus once it is stored.

        Raises:
            LeaseLost: another process took the thread over; nothing more will be written.
        """
        event.run_id = self.run_id
        if self.lost_to is not None:
            raise LeaseLost(self.thread_id, self.owner, self.lost_to)
        self.seq += 1
        event.seq = self.seq
        self.pending.append(event)
        if event.key is not None:
            self.journal[event.key] = event
        if self.sinks:
            self._to_sinks(event)
        self.unpublished.append(event)

    async def flush(self, *, outcome: RunOutcome | None = None, wait: bool = True) -> None:
        """Store the recorded events not stored yet, in one call (one transaction), then publish them on the bus.

        Called before every effect (a model call, a round of tool calls, a step's function) and when the run stops:
        what completed before an effect is stored before the effect starts, so a crash repeats only the effects in
        flight, as before, while the events of a round (a model's reply, the results of its tool calls) share one
        transaction instead of one each.

        A store that fails is tried again after each pause of :data:`FLUSH_RETRIES`; if it still fails, the events
        stay pending, :attr:`store_fault` is set and the error propagates: the run stops unfinished (its status stays
        ``running``), and :meth:`Runtime.resume` continues it.

        ``outcome`` (the run's status and result, at its end) is recorded with the events, in the same transaction
        where the store can (:meth:`~podium.store.Store.end_run`).

        ``wait=False`` (before a model call): stored with :meth:`~podium.store.Store.append_events_soon`, answered
        once committed; where a sync follows the commit (SQLite at durability ``full``) it is started, not waited
        for, and the next flush that waits covers it. Before a tool round, a step and the run's end the flush waits,
        so no side effect or answer rests on a decision a power cut could lose.

        Raises:
            LeaseLost: another process took the thread over; nothing was written.
            StoreError: the store kept failing.
        """
        if self._busy:
            await self._idle_wait()
        batch = self.pending
        if not batch:
            assert outcome is None, "a run's outcome goes with its recorded end"
            return  # nothing recorded since the last flush, or a flush under way stored it meanwhile
        if self.lost_to is not None:
            raise LeaseLost(self.thread_id, self.owner, self.lost_to)
        self._busy = True
        self.pending = []
        try:
            writing: asyncio.Future[None] | None = None
            try:
                writing = self._write(batch, outcome, wait)
                if writing is not None:
                    await writing
            except asyncio.CancelledError:  # (a firm write has ended before its awaiting run sees the cancellation)
                if writing is None or writing.cancelled() or writing.exception() is not None:
                    self.pending = batch + self.pending
                raise
            except LeaseLost as lost:
                self.lost_to = lost.holder or "nobody"
                raise
            except Exception as exc:  # nothing was stored: the run stops here, left resumable
                self.pending = batch + self.pending
                self.store_fault = exc
                raise
            self.stored += batch
            unpublished = self.unpublished
            if unpublished and unpublished[-1] is batch[-1]:  # the common case: nothing recorded or streamed behind it
                ready, self.unpublished = unpublished, []
            else:
                last = batch[-1].seq
                count = 0
                for event in unpublished:
                    if event.seq > last:
                        break
                    count += 1
                ready, self.unpublished = unpublished[:count], unpublished[count:]
            bus = self.bus
            if bus is not None and not bus.quiet(self.thread_id):
                self._to_bus(ready)
        finally:
            self._busy = False
            if self._idle is not None:
                idle, self._idle = self._idle, None
                idle.set_result(None)

    async def _idle_wait(self) -> None:
        """Wait until no flush is under way: one flush at a time, so events are stored and published in order."""
        while self._busy:
            if self._idle is None:
                self._idle = asyncio.get_running_loop().create_future()
            await asyncio.wait((self._idle,))  # (a waiter cancelled here leaves the shared future alone)

    def _write(self, batch: list[Event], outcome: RunOutcome | None, wait: bool) -> asyncio.Future[None] | None:
        """Store ``batch`` (see :meth:`flush`): ``None`` once stored, or a task storing it that cannot be cancelled.

        A write that finishes without waiting (the in-memory store; SQLite on the loop's connection) costs no task.
        One that waits goes on in a firm task: a cancelled run learns how its write ended before it numbers its end
        after what is stored, else the two would claim the same sequence numbers. A store that fails is tried again
        in that task after each pause of :data:`FLUSH_RETRIES`.
        """
        try:
            finished, going = first_step(self._attempt(batch, outcome, wait))
        except LeaseLost:
            raise
        except StoreError as exc:
            return firm(self._retry(exc, batch, outcome, wait))
        return None if finished else firm(self._until_stored(going, batch, outcome, wait))

    def _attempt(self, batch: list[Event], outcome: RunOutcome | None, wait: bool) -> Coroutine[Any, Any, Any]:
        if outcome is not None:
            return self._end(batch, outcome)
        if wait:
            return self.store.append_events(self.thread_id, batch, owner=self.owner)
        return self.store.append_events_soon(self.thread_id, batch, owner=self.owner)

    async def _end(self, batch: list[Event], outcome: RunOutcome) -> None:
        if self.release_at_end and self._keeper is not None:
            await self._keeper.stop()  # no renewal may take the lease again after the end gives it back
        self.released = await self.store.end_run(
            self.thread_id, batch, self.run_id, *outcome, owner=self.owner, release=self.release_at_end
        )

    async def _until_stored(
        self, going: Awaitable[Any], batch: list[Event], outcome: RunOutcome | None, wait: bool
    ) -> None:
        try:
            await going
        except LeaseLost:
            raise
        except StoreError as exc:
            await self._retry(exc, batch, outcome, wait)

    async def _retry(self, error: StoreError, batch: list[Event], outcome: RunOutcome | None, wait: bool) -> None:
        for pause in FLUSH_RETRIES:
            _log.warning("storing events of run %s failed (%s); trying again in %s s", self.run_id, error, pause)
            await asyncio.sleep(pause)
            try:
                await self._attempt(batch, outcome, wait)
                return
            except LeaseLost:
                raise
            except StoreError as exc:
                error = exc
        raise error

    def keep_lease(self) -> Callable[[], Awaitable[None]]:
        """Renew the thread's lease every third of its time to live, for as long as the run executes; the function
        returned stops the renewals (awaiting one under way: a store call is never cut short).

        A run whose tool or model call outlives the lease keeps its thread; if another process took the thread over
        all the same (this process stalled), ``lost_to`` is set and the store refuses the run's next write. The
        renewals are due on one timer shared by the runs of the event loop: a run shorter than the interval costs no
        timer of its own.
        """
        self._keeper = _LeaseKeeper(self)
        return self._keeper.stop

    async def publish(self, event: Event) -> None:
        """Hand ``event`` to the live subscribers only: the run's ``on_event`` callbacks and the bus.

        A subscriber cannot fail the run: a callback that raises is logged and dropped, one that returns an
        awaitable has it run as a separate task, and the bus never waits on a subscriber. A callback itself runs on
        the event loop: one that blocks (``time.sleep``) holds every run of the loop, so slow work belongs in the
        awaitable it returns. On the bus the event keeps its place behind recorded events not stored yet.
        """
        event.run_id = self.run_id
        if self.sinks:
            self._to_sinks(event)
        if self.unpublished:
            self.unpublished.append(event)
        elif self.bus is not None and not self.bus.quiet(self.thread_id):
            self._to_bus((event,))

    def listened(self) -> bool:
        """Whether an event :meth:`publish` is handed now can reach anyone: an ``on_event`` callback, a subscriber
        of the bus, or one that subscribes before the recorded events it would queue behind are stored (callers
        skip building a streamed-only event nobody gets)."""
        return bool(self.sinks or self.unpublished) or (self.bus is not None and not self.bus.quiet(self.thread_id))

    def _to_bus(self, events: Sequence[Event]) -> None:
        """Hand ``events`` to the bus, in order, without waiting (see :class:`~podium.runtime.bus.Outlet`)."""
        assert self.bus is not None
        put, thread_id = self.bus.put, self.thread_id
        for event in events:
            try:
                put(thread_id, event)
            except Exception:  # the event is stored (or streamed only): a bus in trouble must not fail the run
                _log.exception("publishing an event of run %s failed; live followers may miss it", self.run_id)

    def _to_sinks(self, event: Event) -> None:
        for sink in self.sinks:
            try:
                outcome = sink(event)
            except Exception:
                _log.exception("an on_event callback of run %s raised; it gets no more events", self.run_id)
                self.sinks = [s for s in self.sinks if s is not sink]
                continue
            if outcome is not None and inspect.isawaitable(outcome):
                _spawn(outcome, self.run_id)

    def count_model_call(self, usage: Usage) -> None:
        """Add a model call's usage to the run's totals."""
        self.usage = self.usage + usage
        self.model_calls += 1

    def check_limits(self) -> None:
        """Raise :class:`LimitReached` if the next model call would exceed a limit."""
        limits = self.limits
        if limits.max_model_calls is not None and self.model_calls >= limits.max_model_calls:
            raise LimitReached("model_calls", f"the run made its limit of {limits.max_model_calls} model calls")
        if limits.max_tokens is not None and self.usage.total_tokens >= limits.max_tokens:
            raise LimitReached(
                "tokens", f"the run used {self.usage.total_tokens} tokens, reaching its budget of {limits.max_tokens}"
            )


_background: set[asyncio.Task[Any]] = set()


class _Renewals:
    """The lease renewals of the runs executing on one event loop, due on one timer.

    A run registers when it starts and leaves when it ends; the timer is made once and left running while runs
    come and go, so a run shorter than the renewal interval costs a dictionary entry, not a timer of its own (a
    cancelled timer stays in the loop's heap until the loop gets round to it). Nothing in it refers to its loop (it
    runs on it, and holds its timer weakly), so a loop that ends is freed with its renewals.
    """

    __slots__ = ("_due", "_timer", "_timer_at")

    def __init__(self) -> None:
        self._due: dict[_LeaseKeeper, float] = {}
        self._timer: weakref.ref[asyncio.TimerHandle] | None = None
        self._timer_at = math.inf

    def add(self, keeper: _LeaseKeeper, delay: float) -> None:
        """Renew ``keeper``'s lease ``delay`` seconds from now."""
        when = asyncio.get_running_loop().time() + delay
        self._due[keeper] = when
        if when < self._timer_at:
            self._schedule(when)

    def remove(self, keeper: _LeaseKeeper) -> None:
        self._due.pop(keeper, None)

    def _schedule(self, when: float) -> None:
        timer = self._timer() if self._timer is not None else None
        if timer is not None:
            timer.cancel()
        self._timer, self._timer_at = weakref.ref(asyncio.get_running_loop().call_at(when, self._fire)), when

    def _fire(self) -> None:
        self._timer, self._timer_at = None, math.inf
        now = asyncio.get_running_loop().time()
        for keeper, when in list(self._due.items()):
            if when <= now:
                del self._due[keeper]
                keeper.renew()
        if self._due:
            self._schedule(min(self._due.values()))


_RENEWALS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Renewals] = weakref.WeakKeyDictionary()


class _LeaseKeeper:
    """The renewals of one run's lease (see :meth:`RunState.keep_lease`), due on its loop's shared timer.

    Once stopped nothing refers to it (it has left the loop's renewals), so a finished run's state is freed at
    once, not left to the cycle collector.
    """

    __slots__ = ("_interval", "_loop", "_renewals", "_renewing", "_state", "_stopped")

    def __init__(self, state: RunState) -> None:
        self._state = state
        self._loop = asyncio.get_running_loop()
        renewals = _RENEWALS.get(self._loop)
        if renewals is None:
            renewals = _RENEWALS[self._loop] = _Renewals()
        self._renewals = renewals
        self._interval = max(state.lease_ttl / 3, 0.01)
        self._renewing: asyncio.Task[None] | None = None
        self._stopped = False
        renewals.add(self, self._interval)

    def renew(self) -> None:
        self._renewing = self._loop.create_task(self._renew())

    async def _renew(self) -> None:
        state = self._state
        try:
            holder = await state.store.renew_thread(state.thread_id, state.owner, state.lease_ttl)
        except StoreError as exc:  # a passing store fault: the next renewal may get through
            _log.warning("renewing the lease of thread %s failed: %s", state.thread_id, exc)
            holder = None
        if holder is not None:  # taken over (or taken over, finished and given back): never taken again here
            state.lost_to = holder or "nobody"
        elif not self._stopped:
            self._renewals.add(self, self._interval)

    async def stop(self) -> None:
        self._stopped = True
        self._renewals.remove(self)
        if self._state._keeper is self:  # nothing refers to a stopped keeper: no cycle for the collector
            self._state._keeper = None
        renewing, self._renewing = self._renewing, None
        if renewing is not None and not renewing.done():
            await asyncio.wait([renewing])


def _spawn(awaitable: Awaitable[Any], run_id: str) -> None:
    async def guarded() -> None:
        try:
            await awaitable
        except Exception:
            _log.exception("an async on_event callback of run %s raised", run_id)

    task = asyncio.ensure_future(guarded())
    _background.add(task)
    task.add_done_callback(_background.discard)
