"""The run executor: runs execute in background tasks of the server, one at a time per thread, in the runtime.

A request only *submits* a run; what a client does afterwards (stream, disconnect, come back) never touches it.
When a thread is busy the run's ``multitask_strategy`` decides (``docs/server.md``, "Double-texting"): ``reject``
answers 409, ``enqueue`` waits its turn (the queue is stored, so a restart starts it), ``interrupt`` cancels the
current run keeping what it did, ``rollback`` cancels it and drops what it stored. At start-up :meth:`recover`
finishes every run a stopped server left running (the journal replays its completed steps) and restarts the queues.
A run that the store fails after it started (a full disk, a database refusing writes, beyond the store's own
retries) is not dropped: it goes on from its journal once the store takes writes again (after 1 s, then twice as
long each time, up to 30 s), and its clients wait for its end as before.

A cancel of a run executing here is kept on its job (:attr:`Job.stop`) until it is applied: the executing attempt
is cancelled the runtime's way, and a run stopped by its store meanwhile is not executed again but ended
``cancelled`` once the store takes the write. The cancel's answer is the run's real end (``cancelled``, or
``already_ended`` when it ended before the cancel reached it), or after :data:`CANCEL_WAIT` seconds a 503 saying the
cancel is kept: never ``cancelled`` for a run that goes on.

At shutdown (:meth:`Executor.halt`, begun as soon as the stop signal arrives) new runs are refused, executing runs
get their grace, and the rest are stopped for the next start (or another process) to finish; then every stream and
wait of the server ends (:attr:`Executor.halted`), so that the web server can close its connections at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

from fastapi import HTTPException

from podium.errors import PROCESS_STOPPING, LeaseLost, PodiumError, RunNotFound, StoreCorrupt, StoreError, ThreadBusy
from podium.events import Event, RunEnded
from podium.runtime.bus import Subscription
from podium.server._records import get_queue, put_queue, run_extra, set_run_extra

if TYPE_CHECKING:
    from podium.agents.base import Agent
    from podium.runtime.bus import EventBus
    from podium.runtime.runtime import Runtime
    from podium.store.base import Store

__all__ = ["Executor", "Job", "Strategy"]

Strategy = Literal["reject", "enqueue", "interrupt", "rollback"]

_log = logging.getLogger("podium.server")

STORE_RETRY_FIRST = 1.0
"""Seconds before a run stopped by a failing store goes on (its journal replays what it did), doubled each time
the store fails it again, up to :data:`STORE_RETRY_MOST`."""
STORE_RETRY_MOST = 30.0
CANCEL_WAIT = 10.0
"""Seconds a cancel waits for its run to end before it answers 503 (its store refuses the end's write, or the
process executing it is gone): the cancel is kept and applied once the run's end can be stored."""
STOP_WAIT = 1.0
"""Seconds the shutdown waits for a run it stopped (and for each store call after that): a store that does not
answer must not hold the process past its grace; the run is left ``running`` for the next start to finish."""


def _stream_tokens(event: Event) -> None:
    """A listener on every run, so that the runtime streams model tokens (it publishes them on the bus)."""


STOPPING = "the server is stopping"
"""What a request refused, or a stream or wait ended, by the shutdown is told first."""


class _Watched(Subscription):
    """A subscription of the bus that the executor closes when it halts: its reader gets what was published, then
    the end of the iteration."""

    __slots__ = ("_inner", "_watched", "thread_id")

    def __init__(self, inner: Subscription, watched: set[_Watched]) -> None:
        self._inner, self._watched, self.thread_id = inner, watched, inner.thread_id
        watched.add(self)

    async def next(self) -> Event:
        return await self._inner.next()

    def close(self) -> None:
        self._watched.discard(self)
        self._inner.close()


@dataclass(slots=True, kw_only=True)
class Job:
    """One submitted run: a new input, or the answer(s) that resume the thread's waiting run."""

    run_id: str
    thread_id: str
    assistant_id: str
    text: str | None = None
    answer: str | dict[str, str] | None = None
    resume: bool = False
    after: int = 0
    """The thread's last sequence number when the job was submitted: later ends of the run are this job's."""
    done: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    stop: Literal["cancel", "rollback"] | None = field(default=None, repr=False)
    """A cancel asked of the executing run (``rollback``: dropping what it stored too), kept until it is applied."""
    attempting: bool = field(default=False, repr=False)
    """Whether the run executes in the runtime now (not waiting for its store to take writes again)."""
    fault: str | None = field(default=None, repr=False)
    """The store's last failure under the run (what a cancel not applied yet waits for)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    """Set by a cancel: ends the run's pause between attempts."""

    def to_dict(self) -> dict[str, Any]:
        """The stored form (queued jobs): what the run is, not what this process knows of its execution."""
        # not asdict: it would deep-copy ``done`` too, and an event a client waits on holds that client's future
        return {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self) if f.name not in _LOCAL}


_LOCAL = frozenset({"done", "stop", "attempting", "fault", "wake"})
"""The fields of a :class:`Job` that only this process knows (never stored)."""


class Executor:
    """Background runs of one server."""

    def __init__(
        self,
        *,
        store: Store,
        runtime: Runtime,
        bus: EventBus,
        agent: Callable[[str], Agent],
        apps: Collection[str],
    ) -> None:
        """Execute on ``runtime`` (over ``store``, publishing to ``bus``) the agents ``agent(name)`` builds."""
        self.store, self.runtime, self.bus, self.agent, self.apps = store, runtime, bus, agent, apps
        self.active: dict[str, Job] = {}
        self.queues: dict[str, list[Job]] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._watched: set[_Watched] = set()
        self._halting: asyncio.Future[None] | None = None
        self.closing = False
        """Set when the shutdown begins: no run starts any more."""
        self.halted = asyncio.Event()
        """Set once the shutdown has stopped the executing runs (their grace spent): streams and waits end then."""
        self.stopped: set[str] = set()
        """The runs the shutdown stopped (their last event may say ``cancelled``): they go on at the next start, or
        in another process."""
        self.busy_timeout = 0.0
        """Seconds a run waits for its thread's lease held by a process that died (0: fail at once)."""
        self._stopping: set[str] = set()
        """Runs whose executing attempt is being cancelled (:meth:`_stop_job`)."""

    def lock(self, thread_id: str) -> asyncio.Lock:
        """The lock that orders submissions and cancellations on one thread."""
        return self._locks.setdefault(thread_id, asyncio.Lock())

    def job(self, run_id: str) -> Job | None:
        """The job of a run executing or queued here, or ``None``."""
        for job in self.active.values():
            if job.run_id == run_id:
                return job
        return next((j for q in self.queues.values() for j in q if j.run_id == run_id), None)

    def busy(self, thread_id: str) -> bool:
        """Whether a run of the thread executes or waits here."""
        return thread_id in self.active or bool(self.queues.get(thread_id))

    async def is_busy(self, thread_id: str) -> bool:
        """Whether a run of the thread executes or waits (in any process sharing the store)."""
        return self.busy(thread_id)

    async def queued(self, run_id: str) -> bool:
        """Whether the run waits for its turn or executes (in any process sharing the store)."""
        return self.job(run_id) is not None

    async def queued_ids(self, thread_id: str) -> list[str]:
        """The runs of the thread waiting for their turn, oldest first."""
        return [j.run_id for j in self.queues.get(thread_id, [])]

    async def is_final(self, run_id: str, event: RunEnded) -> bool:
        """Whether a run's end event ends its current execution (not an earlier stop of a run resumed since)."""
        job = self.job(run_id)
        return job is None or event.seq == 0 or event.seq > job.after

    async def submit(self, job: Job, strategy: Strategy, extra: dict[str, Any]) -> bool:
        """Start ``job`` now or queue it, as ``strategy`` says when the thread is busy; whether it was queued.

        ``extra`` (the run's API fields) is recorded once the run is accepted, before it can start.

        Raises:
            HTTPException: 409 for ``reject`` on a busy thread, for a resume while a run is busy, and for new
                input while the thread waits for an answer (unless the strategy stops that run).
        """
        store, thread_id = self.store, job.thread_id
        self.refuse_if_closing()
        async with self.lock(thread_id):
            if self.busy(thread_id):
                if strategy == "reject" or job.resume:
                    raise HTTPException(409, f"thread {thread_id!r} is busy with another run (multitask_strategy)")
                if strategy in ("interrupt", "rollback"):
                    stopping = await self._stop_all(thread_id, rollback=strategy == "rollback")
                    if stopping is not None:  # the new run starts once it ended (queued behind it if that is late)
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(CANCEL_WAIT):
                                await self.until_halted(stopping.done.wait())
            if not job.resume and not self.busy(thread_id):
                await self._end_waiting_run(thread_id, strategy)
            job.after = await store.last_seq(thread_id)
            if job.resume:
                extra = {**(await run_extra(store, thread_id, job.run_id) or extra), "status": "pending"}
            await set_run_extra(store, thread_id, job.run_id, extra)
            if self.busy(thread_id):
                self.queues.setdefault(thread_id, []).append(job)
                await self._save_queue(thread_id)
                return True
            self._start(job)
            return False

    async def cancel(self, thread_id: str, run_id: str, *, rollback: bool) -> str:
        """Cancel a run (queued, executing or waiting for an answer): ``cancelled``, or ``already_ended`` when it
        had ended (or ended before the cancel reached it).

        A run executing here is asked to stop (:meth:`_stop_job`) and the answer waits for its end.

        Raises:
            HTTPException: 503 when the run has not ended within :data:`CANCEL_WAIT` seconds (its store refuses the
                end's write): the cancel is kept, the run executes nothing more and ends ``cancelled`` once the
                store takes writes again; a cancel sent again answers its end.
            StoreError: the store could not record the cancel of a run not executing here (nothing changed).
        """
        async with self.lock(thread_id):
            queue = self.queues.get(thread_id, [])
            queued = next((j for j in queue if j.run_id == run_id), None)
            if queued is not None:
                queue.remove(queued)
                await self._save_queue(thread_id)
                await self._refused(queued, "cancelled", "cancelled while queued")
                return "cancelled"
            job = self._executing(run_id)
            if job is None:
                return await self._cancel(run_id, rollback=rollback)
            self._stop_job(job, rollback=rollback)
        return await self._cancelled(thread_id, run_id, job, rollback=rollback)

    async def end_thread(self, thread_id: str) -> None:
        """Cancel every run of the thread: queued, executing, or waiting for an answer (before a delete).

        Raises:
            HTTPException: 503, as :meth:`cancel`, when its executing run has not ended in time.
        """
        async with self.lock(thread_id):
            job = await self._stop_all(thread_id, rollback=False)
        if job is not None:
            await self._cancelled(thread_id, job.run_id, job, rollback=False)
        async with self.lock(thread_id):
            last = await self.store.last_run(thread_id)
            if last is not None and last.status in ("interrupted", "running"):
                await self._cancel(last.id, rollback=False)

    def refuse_if_closing(self) -> None:
        """Refuse a new run while the server stops.

        Raises:
            HTTPException: 503, the server is stopping.
        """
        if self.closing:
            raise HTTPException(
                503, f"{STOPPING}: send the run again once it is back (or to another process)", {"Retry-After": "5"}
            )

    def watch(self, thread_id: str) -> Subscription:
        """Follow the thread's events on the bus until the subscription is closed or the executor halts (the reader
        then gets what was published and the end of the iteration: a stream ends instead of waiting for a run that
        a shutdown stopped)."""
        subscription = _Watched(self.bus.subscribe(thread_id), self._watched)
        if self.halted.is_set():
            subscription.close()
        return subscription

    async def until_halted(self, waiting: Awaitable[Any]) -> bool:
        """Await ``waiting`` unless the executor halts first; whether it completed."""
        if self.halted.is_set():
            if isinstance(waiting, Coroutine):
                waiting.close()
            return False
        work = asyncio.ensure_future(waiting)
        halted = asyncio.ensure_future(self.halted.wait())
        try:
            await asyncio.wait({work, halted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            halted.cancel()
            if not work.done():
                work.cancel()
        return work.done() and not work.cancelled()

    async def submit_watched(self, job: Job, strategy: Strategy, extra: dict[str, Any]) -> Subscription:
        """:meth:`submit` ``job``, subscribed to its thread's events first (:meth:`watch`, so none of the run's is
        missed); the subscription is closed if the submission fails.

        Raises:
            HTTPException: as :meth:`submit`.
        """
        subscription = self.watch(job.thread_id)
        try:
            await self.submit(job, strategy, extra)
        except BaseException:
            subscription.close()
            raise
        return subscription

    async def _end_waiting_run(self, thread_id: str, strategy: Strategy) -> None:
        """Make way for new input on ``thread_id``: a run that waits for an answer (or was left running) is stopped
        under the ``interrupt`` and ``rollback`` strategies.

        Raises:
            HTTPException: 409 under the other strategies (the run should be resumed instead).
        """
        last = await self.store.last_run(thread_id)
        if last is not None and last.status in ("interrupted", "running"):
            if strategy not in ("interrupt", "rollback"):
                why = (
                    f"has a run {last.id!r} still running (in another process, or left by a server that stopped, "
                    "whose next start finishes it): wait for it, or"
                    if last.status == "running"
                    else f'waits for an answer to run {last.id!r}: resume it with {{"command": {{"resume": ...}}}}, or'
                )
                raise HTTPException(409, f'thread {thread_id!r} {why} send with multitask_strategy "interrupt"')
            await self._cancel(last.id, rollback=strategy == "rollback")

    async def _cancel(self, run_id: str, *, rollback: bool) -> str:
        store = self.store
        if await store.get_run(run_id) is None:
            return "already_ended"
        done = await self.runtime.cancel(run_id)
        if rollback:
            await store.delete_run(run_id)
            await set_run_extra(store, done.thread_id, run_id, {"deleted": True})
        return done.status

    async def _stop_all(self, thread_id: str, *, rollback: bool) -> Job | None:
        """End the thread's queued runs and ask its executing one to stop (:meth:`_stop_job`); that one's job."""
        for job in self.queues.pop(thread_id, []):
            await self._refused(job, "cancelled", "cancelled by a newer run (multitask_strategy)")
        await self._save_queue(thread_id)
        active = self.active.get(thread_id)
        if active is None:
            return None
        if active.run_id not in self.tasks:  # out of the queue, not started yet
            await self._cancel(active.run_id, rollback=rollback)
            return None
        self._stop_job(active, rollback=rollback)
        return active

    # stopping an executing run --------------------------------------------------------------------------------------
    def _executing(self, run_id: str) -> Job | None:
        """The job of the run if it executes here (in the runtime, or waiting for its store between attempts)."""
        if run_id in self.tasks:
            for job in self.active.values():
                if job.run_id == run_id:
                    return job
        return None

    def _stop_job(self, job: Job, *, rollback: bool) -> None:
        """Ask the run executing here to stop, and keep the request until it is applied: its attempt executing now
        is cancelled the runtime's way (its end recorded ``cancelled``); a run its store stopped is not executed
        again but ended (:meth:`_end_stopped`), so no tool runs after the cancel whatever the store does."""
        if job.stop != "rollback":
            job.stop = "rollback" if rollback else "cancel"
        job.wake.set()
        if job.attempting and job.run_id not in self._stopping:
            self._stopping.add(job.run_id)
            self.later(self._stop_attempt(job))

    async def _stop_attempt(self, job: Job) -> None:
        """Cancel the job's executing attempt through the runtime, tried again while the store cannot say (its
        next write fails anyway, and then :meth:`_execute` ends the run instead of executing it again)."""
        pause = 0.1
        try:
            while job.attempting:
                try:
                    await self.runtime.cancel(job.run_id)
                    return
                except RunNotFound:  # claimed, but the runtime has not recorded it yet: stop it before it does
                    task = self.tasks.get(job.run_id)
                    if task is not None and not task.done():
                        # (a cancellation can be lost in a store call finishing at that moment: tried again)
                        task.cancel()
                        await asyncio.wait([task], timeout=pause)
                    if task is None or task.done():
                        await self._refused(job, "cancelled", "cancelled before it started")
                        return
                except (StoreError, ThreadBusy) as exc:
                    _log.warning("run %s: stopping it failed (%s); trying again in %g s", job.run_id, exc, pause)
                    await asyncio.sleep(pause)
                pause = min(2 * pause, STORE_RETRY_MOST)
        finally:
            self._stopping.discard(job.run_id)

    async def _end_stopped(self, job: Job) -> bool:
        """End as asked the run of a job whose cancel came while it was not executing; ``False`` while the store
        refuses that (tried again later, never executing the run meanwhile).

        Raises:
            PodiumError: the store is damaged, another process took the thread over, or this server stops.
        """
        try:
            if await self.store.get_run(job.run_id) is None:  # stopped before it was recorded
                await self._refused(job, "cancelled", "cancelled before it started")
            else:
                await self._cancel(job.run_id, rollback=job.stop == "rollback")
        except (LeaseLost, StoreCorrupt):
            raise
        except (StoreError, ThreadBusy) as exc:
            if self.closing:
                raise
            job.fault = str(exc)
            _log.warning("run %s: its cancel is not stored yet: %s", job.run_id, exc)
            return False
        return True

    async def _cancelled(self, thread_id: str, run_id: str, job: Job | None, *, rollback: bool) -> str:
        """What a cancel asked of a run executing here answers, once the run ended (:meth:`cancel`).

        Raises:
            HTTPException: 503, the run did not end within :data:`CANCEL_WAIT` seconds (the cancel is kept).
        """
        try:
            async with asyncio.timeout(CANCEL_WAIT):
                await self.wait(thread_id, run_id)
        except TimeoutError:
            raise self._not_stopped(run_id, job) from None
        record = await self.store.get_run(run_id)
        if record is None or record.status == "cancelled":  # (dropped by a rollback, or never recorded)
            return "cancelled"
        if record.status not in ("running", "interrupted"):
            return "already_ended"  # it ended on its own before the cancel reached it
        if self.closing:
            raise self._not_stopped(run_id, job)
        async with self.lock(thread_id):  # it stopped to wait for an answer (or was left running): end it now
            status = await self._cancel(run_id, rollback=rollback)
        return "cancelled" if status == "already_ended" else status

    def _not_stopped(self, run_id: str, job: Job | None) -> HTTPException:
        fault = job.fault if job is not None else None
        why = f"its store refuses the write of its end: {fault}" if fault else "its end is not stored yet"
        if self.closing:
            why = f"{STOPPING}: the run is finished by the next start (or another process)"
        return HTTPException(
            503,
            f"run {run_id!r} has not stopped yet ({why}). Its cancel is kept: the run executes nothing more and "
            "ends cancelled as soon as its end can be stored; cancel it again (or read the run) to learn its end",
            {"Retry-After": "5"},
        )

    async def _save_queue(self, thread_id: str) -> None:
        await put_queue(self.store, thread_id, [j.to_dict() for j in self.queues.get(thread_id, [])])

    async def _refused(self, job: Job, status: str, reason: str) -> None:
        """Record that a run the runtime never started ended (``cancelled`` or ``failed``) and tell listeners."""
        store = self.store
        extra = await run_extra(store, job.thread_id, job.run_id) or {}
        api = "interrupted" if status == "cancelled" else "error"
        changes = {"status": api, "podium_status": status, "reason": reason, "updated": time.time()}
        await set_run_extra(store, job.thread_id, job.run_id, {**extra, **changes})
        ended = RunEnded(status=status, reason=reason, run_id=job.run_id)
        await self.bus.publish(job.thread_id, ended)
        job.done.set()

    def _start(self, job: Job) -> None:
        self.active[job.thread_id] = job
        self.tasks[job.run_id] = asyncio.create_task(self._execute(job), name=f"podium-run-{job.run_id}")

    async def _execute(self, job: Job) -> None:
        try:
            pause = STORE_RETRY_FIRST
            # the store failed under a run that had started: it goes on later, unless it was cancelled meanwhile
            while True:
                stopping = job.stop is not None
                if await (self._end_stopped(job) if stopping else self._run_once(job)):
                    if stopping or job.stop != "rollback":
                        break
                    continue  # a rollback asked while it executed: what it stored goes too
                what = "its cancel is tried again" if job.stop else "it goes on"
                _log.warning("run %s: %s in %g s, once the store takes its writes", job.run_id, what, pause)
                if not job.wake.is_set():  # (a cancel that came during the attempt is applied at once)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(job.wake.wait(), pause)
                job.wake.clear()
                pause = min(2 * pause, STORE_RETRY_MOST)
        except (PodiumError, HTTPException) as exc:
            detail = exc.detail if isinstance(exc, HTTPException) else str(exc)
            try:
                started = await self.store.get_run(job.run_id) is not None
            except StoreError:  # the store cannot say: the next start (or another process) settles the run
                started = True
            if not started:
                await self._refused(job, "failed", str(detail))
                _log.warning("run %s did not start: %s", job.run_id, detail)
            else:  # stopping, or another process took the thread over: the run is finished elsewhere or later
                _log.warning("run %s stopped here: %s", job.run_id, detail)
        except Exception:  # an agent that fails is recorded by the runtime; this is the server's own failure
            _log.exception("run %s failed in the server", job.run_id)
            with contextlib.suppress(Exception):
                await self._refused(job, "failed", "internal error in the server")
        finally:
            self.tasks.pop(job.run_id, None)
            if self.active.get(job.thread_id) is job:
                del self.active[job.thread_id]
            job.done.set()
            self.later(self._finished(job))

    async def _run_once(self, job: Job) -> bool:
        """Execute the job's run; ``False`` when the store failed after the run had started (the store's own
        retries spent), so that it should go on later from its journal (the job then resumes it).

        Raises:
            PodiumError: what the runtime raised otherwise (the run did not start, or the store failed while this
                server stops: the next start, or another process, finishes the run).
            HTTPException: the app is not served.
        """
        agent = self.agent(job.assistant_id)
        busy: dict[str, Any] = {"if_busy": "wait", "busy_timeout": self.busy_timeout} if self.busy_timeout else {}
        if job.resume and not busy:  # a run left by a process that stopped: its lease expires within its ttl
            busy = {"if_busy": "wait", "busy_timeout": 2 * self.runtime.lease_ttl}
        job.attempting = True
        try:
            if job.resume:
                await self.runtime.resume(
                    agent, job.thread_id, job.answer, run_id=job.run_id, on_event=_stream_tokens, **busy
                )
            else:
                assert job.text is not None
                await self.runtime.run(
                    agent, job.text, thread_id=job.thread_id, run_id=job.run_id, on_event=_stream_tokens, **busy
                )
        except (LeaseLost, StoreCorrupt):  # another process has the run, or retrying cannot help
            raise
        except StoreError as exc:
            job.attempting = False
            if self.closing or not await self._started(job):
                raise
            job.fault = str(exc)
            _log.warning("run %s stopped: %s", job.run_id, exc)
            job.resume, job.answer, job.text = True, None, None  # what it did, and its answer, are in its journal
            return False
        finally:
            job.attempting = False
        return True

    async def _started(self, job: Job) -> bool:
        """Whether the job's run is recorded as running (asked again while the store cannot say, unless stopping)."""
        pause = STORE_RETRY_FIRST
        while True:
            try:
                record = await self.store.get_run(job.run_id)
            except StoreError:
                if self.closing:
                    return False
                await asyncio.sleep(pause)
                pause = min(2 * pause, STORE_RETRY_MOST)
                continue
            return record is not None and record.status == "running"

    async def _finished(self, job: Job) -> None:
        """After a job's execution: start the thread's next queued run."""
        await self._advance(job.thread_id)

    def later(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` in the background (kept referenced until it ends; stopped at shutdown); a store failure in it
        is logged (nobody awaits it: left in the task, it would surface only as a warning when the task is gone)."""

        async def logged() -> None:
            try:
                await work
            except (PodiumError, HTTPException) as exc:
                detail = exc.detail if isinstance(exc, HTTPException) else exc
                _log.warning("background work of the server failed: %s", detail)

        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(logged())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _advance(self, thread_id: str) -> None:
        async with self.lock(thread_id):
            queue = self.queues.get(thread_id)
            if self.closing or thread_id in self.active or not queue:
                return
            job = queue.pop(0)
            self.active[thread_id] = job  # out of the queue, not started yet: active already for who waits on it
            try:
                await self._save_queue(thread_id)
                job.after = await self.store.last_seq(thread_id)
            except BaseException:
                del self.active[thread_id]
                queue.insert(0, job)  # still queued: the next turn starts it
                raise
            self._start(job)

    async def wait(self, thread_id: str, run_id: str) -> None:
        """Until the run's job here (if any) is done, or the executor halted."""
        job = self.job(run_id)
        if job is not None:
            await self.until_halted(job.done.wait())

    async def recover(self) -> None:
        """Finish the runs a stopped server left running, and restart the stored queues."""
        store = self.store
        for info in await store.list_threads(1_000_000):
            if "owner" not in info.metadata:
                continue
            thread_id = info.id
            last = await store.last_run(thread_id)
            if last is not None and last.status == "running":
                extra = await run_extra(store, thread_id, last.id) or {}
                assistant = extra.get("assistant_id", "")
                if assistant in self.apps:
                    _log.info("resuming run %s of thread %s", last.id, thread_id)
                    self._start(Job(run_id=last.id, thread_id=thread_id, assistant_id=assistant, resume=True))
                else:
                    _log.warning("ending run %s: its app %r is not served here", last.id, assistant)
                    try:
                        await self.runtime.cancel(last.id)
                    except PodiumError as exc:  # another live process holds the thread: it is not ours to end
                        _log.warning("run %s left alone: %s", last.id, exc)
                        continue
                    changes = {"reason": f"ended at start-up: the app {assistant!r} is not served"}
                    await set_run_extra(store, thread_id, last.id, {**extra, **changes})
            queued = [Job(**data) for data in await get_queue(store, thread_id)]
            if queued:
                self.queues[thread_id] = queued
                self.later(self._advance(thread_id))

    async def halt(self, grace: float) -> None:
        """Begin the shutdown: refuse new runs, let executing runs finish for ``grace`` seconds, then stop them so
        the next start (or another process) finishes them; then end every watched subscription and wait.

        Called again (the shutdown proper after the stop signal began it), it waits for the first call's work.
        Queued runs stay queued (stored) for the next start.
        """
        if self._halting is None:
            self.closing = True
            self._halting = asyncio.ensure_future(self._halt(grace))
        await asyncio.shield(self._halting)

    async def _halt(self, grace: float) -> None:
        stopped: list[Job] = []
        try:
            stopped = await self._stop_runs(grace)
        finally:
            self.halted.set()
            for subscription in list(self._watched):
                subscription.close()
        if stopped:  # left for the next start to finish (a store that does not answer gets STOP_WAIT seconds)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(STOP_WAIT):
                    await asyncio.gather(*(self._left_running(job) for job in stopped))

    async def _left_running(self, job: Job) -> None:
        with contextlib.suppress(PodiumError):
            await self.store.update_run(job.run_id, "running")

    async def shutdown(self, grace: float) -> None:
        """:meth:`halt`, then stop the executor's background work (before the store closes)."""
        await self.halt(grace)
        await self._stop_background()

    async def _stop_runs(self, grace: float) -> list[Job]:
        """Let executing runs finish for ``grace`` seconds, then cancel them (no end recorded: the run is not over);
        the jobs stopped.

        A stopped run's task gets :data:`STOP_WAIT` seconds more to end: one held by a store that does not answer
        (its write under way, its retries) is left behind, so that the shutdown keeps its timing whatever the store
        does; the next start (or another process) finishes the run from what was stored.
        """
        tasks = list(self.tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        stopped: list[Job] = []
        for job in list(self.active.values()):
            task = self.tasks.get(job.run_id)
            if task is not None and not task.done():
                self.stopped.add(job.run_id)
                task.cancel(PROCESS_STOPPING)
                stopped.append(job)
        left = [t for t in (self.tasks.get(job.run_id) for job in stopped) if t is not None]
        if left:
            await asyncio.wait(left, timeout=STOP_WAIT)
        for job in stopped:
            job.done.set()  # done here, whether or not its task ended: who waits for it answers now
        return stopped

    async def _stop_background(self) -> None:
        """Cancel and await every background task (none may outlive the store)."""
        while self._background:
            for task in list(self._background):
                task.cancel()
            await asyncio.gather(*self._background, return_exceptions=True)
