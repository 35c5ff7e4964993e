"""The run executor: runs execute in background tasks of the server, one at a time per thread, in the runtime.

A request only *submits* a run; what a client does afterwards (stream, disconnect, come back) never touches it.
When a thread is busy the run's ``multitask_strategy`` decides (``docs/server.md``, "Double-texting"): ``reject``
answers 409, ``enqueue`` waits its turn (the queue is stored, so a restart starts it), ``interrupt`` cancels the
current run keeping what it did, ``rollback`` cancels it and drops what it stored. At start-up :meth:`recover`
finishes every run a stopped server left running (the journal replays its completed steps) and restarts the queues.
A run that the store fails after it started (a full disk, a database refusing writes, beyond the store's own
retries) is not dropped: it goes on from its journal once the store takes writes again (after 1 s, then twice as
long each time, up to 30 s), and its clients wait for its end as before.

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

from podium.errors import PROCESS_STOPPING, LeaseLost, PodiumError, StoreCorrupt, StoreError
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

    def to_dict(self) -> dict[str, Any]:
        """The stored form (queued jobs)."""
        # not asdict: it would deep-copy ``done`` too, and an event a client waits on holds that client's future
        return {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self) if f.name != "done"}


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
                    await self._stop_all(thread_id, rollback=strategy == "rollback")
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
        """Cancel a run (queued, executing or waiting for an answer); ``cancelled`` or ``already_ended``."""
        async with self.lock(thread_id):
            queue = self.queues.get(thread_id, [])
            queued = next((j for j in queue if j.run_id == run_id), None)
            if queued is not None:
                queue.remove(queued)
                await self._save_queue(thread_id)
                await self._refused(queued, "cancelled", "cancelled while queued")
                return "cancelled"
            return await self._cancel(run_id, rollback=rollback)

    async def end_thread(self, thread_id: str) -> None:
        """Cancel every run of the thread: queued, executing, or waiting for an answer (before a delete)."""
        async with self.lock(thread_id):
            await self._stop_all(thread_id, rollback=False)
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

    async def _stop_all(self, thread_id: str, *, rollback: bool) -> None:
        for job in self.queues.pop(thread_id, []):
            await self._refused(job, "cancelled", "cancelled by a newer run (multitask_strategy)")
        await self._save_queue(thread_id)
        active = self.active.get(thread_id)
        if active is not None:
            await self._cancel(active.run_id, rollback=rollback)

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
            while not await self._run_once(job):  # the store failed under a run that had started: it goes on later
                _log.warning("run %s goes on in %g s, once the store takes its writes", job.run_id, pause)
                await asyncio.sleep(pause)
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
            if self.closing or not await self._started(job):
                raise
            _log.warning("run %s stopped: %s", job.run_id, exc)
            job.resume, job.answer, job.text = True, None, None  # what it did, and its answer, are in its journal
            return False
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
            except PodiumError as exc:
                _log.warning("background work of the server failed: %s", exc)

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
        try:
            await self._stop_runs(grace)
        finally:
            self.halted.set()
            for subscription in list(self._watched):
                subscription.close()

    async def shutdown(self, grace: float) -> None:
        """:meth:`halt`, then stop the executor's background work (before the store closes)."""
        await self.halt(grace)
        await self._stop_background()

    async def _stop_runs(self, grace: float) -> None:
        """Let executing runs finish for ``grace`` seconds, then cancel them, their status left ``running``."""
        tasks = list(self.tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        for job in list(self.active.values()):
            task = self.tasks.get(job.run_id)
            if task is not None and not task.done():
                self.stopped.add(job.run_id)
                task.cancel(PROCESS_STOPPING)  # no end recorded: the run is not over
                await asyncio.wait([task])
                with contextlib.suppress(PodiumError):
                    await self.store.update_run(job.run_id, "running")  # left for the next start to finish

    async def _stop_background(self) -> None:
        """Cancel and await every background task (none may outlive the store)."""
        while self._background:
            for task in list(self._background):
                task.cancel()
            await asyncio.gather(*self._background, return_exceptions=True)
