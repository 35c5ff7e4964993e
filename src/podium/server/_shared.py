"""The executor of servers sharing one PostgreSQL database: any process executes any run (docs/deploy.md).

A request stores its run in the database's queue (:class:`~podium.store._pgqueue.PostgresRunQueue`) and returns; the
executors of every process claim queued runs (the first of each thread, ``SKIP LOCKED``) up to their capacity,
renew their claims on a timer, and take over the runs of a process whose claims expired (it died or lost the
database), resuming them from the journal. Cancel, ``interrupt`` and ``rollback`` mark the running row and notify;
the owning process stops the run. Waiting for a run (``wait``, ``join``, the end of a stream) waits for its row to
leave the queue: the process that removes it says so (``podium_left``, naming the run), so a waiter sends no query;
the rows are checked again in one statement on the renewal timer and when the listening connection comes back, so a
lost notification only delays. What a process learned (a run left) it remembers for a minute instead of asking.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

from fastapi import HTTPException

from podium.errors import PodiumError, StoreError
from podium.events import RunEnded
from podium.server._executor import STOP_WAIT, Executor, Job, Strategy
from podium.server._records import run_extra, set_run_extra
from podium.store._pgqueue import Listener, QueueBusy, QueuedRun, left_run
from podium.store.base import new_owner

if TYPE_CHECKING:
    from collections.abc import Callable

    from podium.store._pgqueue import PostgresRunQueue

__all__ = ["SharedExecutor"]

_log = logging.getLogger("podium.server")


def _job(row: QueuedRun) -> Job:
    return Job(**row.job)


class SharedExecutor(Executor):
    """Background runs of one of several servers that share a PostgreSQL database."""

    def __init__(self, *, queue: PostgresRunQueue, ttl: float, max_runs: int, poll: float = 1.0, **kwargs: Any):
        """Claim runs from ``queue`` for ``ttl`` seconds, at most ``max_runs`` at once; other arguments as Executor."""
        super().__init__(**kwargs)
        self.queue, self.ttl, self.max_runs, self.poll = queue, ttl, max_runs, poll
        self.busy_timeout = 2 * ttl  # a dead owner's lease on the thread expires within its ttl
        self.owner = new_owner(uuid.uuid4().hex[:8])
        """This process's name in the queue's claims."""
        self.jobs: dict[str, Job] = {}
        """Jobs submitted or executing here, by run id, until their run leaves the queue."""
        self.on_events: Callable[[str], None] | None = None
        """Called with the payload of every ``podium_events`` notification (the shared bus)."""
        self._wake = asyncio.Event()
        self._waiters: dict[str, asyncio.Event] = {}
        """An event per run waited for, set when it left the queue (or to check its row again)."""
        self._left: dict[str, float] = {}
        """Runs known to have left the queue, with when (kept a minute: waits and reads after a run need no query)."""
        self._listener = Listener(queue, self._notified, self._reconnected)
        self._loops: list[asyncio.Task[None]] = []

    # what the routes ask ------------------------------------------------------------------------------------------
    def job(self, run_id: str) -> Job | None:
        """The job of a run submitted or executing here, or ``None``."""
        return self.jobs.get(run_id)

    def busy(self, thread_id: str) -> bool:
        """Whether a run of the thread executes here."""
        return thread_id in self.active

    async def is_busy(self, thread_id: str) -> bool:
        """Whether a run of the thread is queued or executes in any process."""
        return bool(await self.queue.of_thread(thread_id))

    async def queued(self, run_id: str) -> bool:
        """Whether the run is queued or executes in any process."""
        return run_id not in self._left and await self.queue.get(run_id) is not None

    async def queued_ids(self, thread_id: str) -> list[str]:
        """The thread's runs waiting for their turn, oldest first."""
        return [r.run_id for r in await self.queue.of_thread(thread_id) if r.state == "pending"]

    async def is_final(self, run_id: str, event: RunEnded) -> bool:
        """Whether a run's end event ends its current execution (its row's ``after`` tells)."""
        if event.seq == 0 or run_id in self._left:
            return True
        job = self.jobs.get(run_id)
        if job is not None:  # its row's job is this one
            return event.seq > job.after
        row = await self.queue.get(run_id)
        return row is None or event.seq > int(row.job.get("after", 0))

    async def wait(self, thread_id: str, run_id: str) -> None:
        """Until the run left the queue (it stopped, wherever it executed).

        A run submitted or executing here is known to be queued; another is looked up once. Then the wait is woken
        by the notification that the run left, or by a check of the rows (the renewal timer, a reconnection).
        """
        if run_id not in self.jobs and run_id not in self._left and await self.queue.get(run_id) is None:
            return
        while run_id not in self._left:
            waiter = self._waiters.setdefault(run_id, asyncio.Event())
            if not await self.until_halted(waiter.wait()):
                return
            if self._waiters.get(run_id) is waiter:
                del self._waiters[run_id]
            if run_id not in self._left and await self.queue.get(run_id) is None:  # woken to check
                self._gone(run_id)

    # submitting and stopping ----------------------------------------------------------------------------------------
    async def submit(self, job: Job, strategy: Strategy, extra: dict[str, Any]) -> bool:
        """Queue ``job`` in the database, as ``strategy`` says when the thread is busy; whether it had to wait.

        Raises:
            HTTPException: 409 for ``reject`` on a busy thread, for a resume while a run is busy, and for new
                input while the thread waits for an answer (unless the strategy stops that run).
        """
        store, thread_id = self.store, job.thread_id
        self.refuse_if_closing()
        async with self.lock(thread_id):
            queued, last_id, last_status, job.after = await self.queue.before_submit(thread_id)
            if not job.resume and not queued and last_id is not None and last_status in ("interrupted", "running"):
                await self._end_waiting_run(thread_id, strategy)
            if job.resume:
                extra = {**(await run_extra(store, thread_id, job.run_id) or extra), "status": "pending"}
            else:
                await set_run_extra(store, thread_id, job.run_id, extra)
            try:
                waited, displaced, stopping = await self.queue.submit(
                    thread_id, job.run_id, job.to_dict(), strategy=strategy, resume=job.resume, by=self.owner
                )
            except QueueBusy as exc:
                raise HTTPException(409, str(exc)) from None
            if job.resume:
                await set_run_extra(store, thread_id, job.run_id, extra)
            self._left.pop(job.run_id, None)  # a resumed run is queued again
            self.jobs[job.run_id] = job
            for row in displaced:
                reason = "cancelled by a newer run (multitask_strategy)"
                await self._refused(self.jobs.get(row.run_id) or _job(row), "cancelled", reason)
                self._gone(row.run_id)
            if stopping is not None:  # the new run starts once the one it replaces stopped: answer after that too
                await self.wait(thread_id, stopping)
            self._wake.set()
            return waited

    async def cancel(self, thread_id: str, run_id: str, *, rollback: bool) -> str:
        """Cancel a run queued, executing in any process, or waiting for an answer: ``cancelled``, or
        ``already_ended`` when it had ended (or ended before the cancel reached it).

        The stop of an executing run is recorded on its queue row (its process, or the one that takes it over,
        applies it before executing anything more) and, when it executes here, on its job too (so it holds even
        when the queue cannot record it). The answer waits for the run's end.

        Raises:
            HTTPException: 503 when the run has not ended within ``CANCEL_WAIT`` seconds: the cancel is kept and
                applied once the run's end can be stored (see :meth:`Executor.cancel`).
            StoreError: the store could not record the cancel (nothing changed).
        """
        removed = await self.queue.remove_pending(run_id, self.owner)
        if removed is not None:
            job = self.jobs.get(run_id) or _job(removed)
            self._gone(run_id)
            await self._refused(job, "cancelled", "cancelled while queued")
            return "cancelled"
        here = self._executing(run_id)
        if here is not None:
            self._stop_job(here, rollback=rollback)
        try:
            asked = await self.queue.request_stop(run_id, "rollback" if rollback else "cancel")
        except StoreError:
            if here is None:
                raise
            asked = True  # kept by this process, which executes it
        if asked or here is not None:
            return await self._cancelled(thread_id, run_id, here, rollback=rollback)
        async with self.lock(thread_id):
            return await self._cancel(run_id, rollback=rollback)

    async def end_thread(self, thread_id: str) -> None:
        """Cancel every run of the thread: queued, executing anywhere, or waiting for an answer (before a delete)."""
        for row in await self.queue.of_thread(thread_id):
            await self.cancel(thread_id, row.run_id, rollback=False)
        async with self.lock(thread_id):
            last = await self.store.last_run(thread_id)
            if last is not None and last.status in ("interrupted", "running"):
                await self._cancel(last.id, rollback=False)

    # claiming and executing -------------------------------------------------------------------------------------
    async def recover(self) -> None:
        """Start listening, claiming and renewing (a stopped process's runs are claimed once its claims expire)."""
        self._listener.start()
        self._loops = [
            asyncio.create_task(self._claim_loop(), name="podium-claims"),
            asyncio.create_task(self._renew_loop(), name="podium-renewals"),
        ]

    async def _claim_loop(self) -> None:
        while not self.closing:
            self._wake.clear()
            free = self.max_runs - len(self.tasks)
            if free > 0:
                try:
                    for row in await self.queue.claim(self.owner, self.ttl, free):
                        await self._take(row)
                except PodiumError as exc:
                    _log.warning("claiming runs failed: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll)

    async def _take(self, row: QueuedRun) -> None:
        """Execute a claimed run: as submitted, or (claimed before by a process that stopped) resumed."""
        job = self.jobs.get(row.run_id) or _job(row)
        self.jobs[row.run_id] = job
        if row.claims > 1 or row.stop:
            record = await self.store.get_run(row.run_id)
            if row.stop:  # asked to stop while its process was gone
                if record is not None and record.status in ("running", "interrupted"):
                    job.stop = "rollback" if row.stop == "rollback" else "cancel"
                    self._start(job)  # ended, not executed (tried again while the store refuses the end)
                    return
                if record is None:
                    await self._refused(job, "cancelled", "cancelled while its process was gone")
                await self._finished(job)
                return
            if record is not None:
                if record.status == "running":
                    job.resume, job.answer = True, None  # what it did (and any answer) is in the journal
                elif not (record.status == "interrupted" and job.resume):
                    await self._finished(job)  # it ended before its process could say so
                    return
            _log.info("taking over run %s of thread %s (claim %d)", row.run_id, row.thread_id, row.claims)
        self._start(job)

    async def _finished(self, job: Job) -> None:
        """Take the run out of the queue (a rollback asked of it drops what it stored first)."""
        try:
            await self._finish(job)
        except PodiumError as exc:  # the claim expires and another process finishes the run's bookkeeping
            _log.warning("run %s: could not leave the queue: %s", job.run_id, exc)

    async def _finish(self, job: Job) -> None:
        if self.closing:  # stopped by the shutdown: let another process take it over now
            await self.queue.release(self.owner, job.run_id)
            return
        left = await self.queue.finish(job.run_id, self.owner)
        if not left:  # a rollback asked of it (its records go first), or the claim is lost
            row = await self.queue.get(job.run_id)
            if row is not None and row.owner == self.owner and "rollback" in (row.stop, job.stop):
                if await self.store.get_run(job.run_id) is not None:
                    await self.store.delete_run(job.run_id)
                    await set_run_extra(self.store, job.thread_id, job.run_id, {"deleted": True})
                left = await self.queue.finish(job.run_id, self.owner, rollback=True)
        if left:
            self._gone(job.run_id)
        else:  # another process holds it now and says when it leaves
            self.jobs.pop(job.run_id, None)
            job.done.set()

    async def _renew_loop(self) -> None:
        while not self.closing:
            await asyncio.sleep(self.ttl / 3)
            try:
                held = await self.queue.renew(self.owner, self.ttl)
            except PodiumError as exc:
                _log.warning("renewing the claims failed: %s", exc)
                continue
            for row in held:
                if row.stop and row.run_id in self.tasks:
                    self._stop(row.run_id, rollback=row.stop == "rollback")
            lost = set(self.tasks) - {r.run_id for r in held}
            for run_id in lost:
                _log.warning("run %s: its claim expired; the store fences this process's writes", run_id)
            try:
                await self._settle()
            except PodiumError as exc:
                _log.warning("checking the queue failed: %s", exc)
            forget = time.monotonic() - 60
            for run_id in [r for r, at in self._left.items() if at < forget]:
                del self._left[run_id]

    async def _settle(self) -> None:
        """Check in one statement the runs awaited or submitted here and executing elsewhere (a missed notification's
        fallback): those that left the queue are marked so."""
        followed = {r for r in self.jobs if r not in self.tasks} | set(self._waiters)
        if followed:
            for run_id in followed - await self.queue.present(sorted(followed)):
                self._gone(run_id)

    def _gone(self, run_id: str) -> None:
        """The run left the queue: its job here is done and its waiters return."""
        self._left[run_id] = time.monotonic()
        job = self.jobs.pop(run_id, None)
        if job is not None:
            job.done.set()
        waiter = self._waiters.pop(run_id, None)
        if waiter is not None:
            waiter.set()

    def _stop(self, run_id: str, rollback: bool = False) -> None:
        """Stop a run executing here, as another process (or this one) asked through the queue (kept on its job
        until applied; a rollback is applied when the run leaves the queue, as its row says)."""
        job = self._executing(run_id)
        if job is not None:
            self._stop_job(job, rollback=rollback)

    # notifications ------------------------------------------------------------------------------------------------
    def _notified(self, kind: str, payload: str) -> None:
        if kind == "queue":
            self._wake.set()
        elif kind == "left":
            try:
                run_id, more, by = left_run(payload)
            except (ValueError, TypeError):
                return
            if more:  # the thread's next run can be claimed now
                self._wake.set()
            if by != self.owner:  # this process knew when it removed it (and a late echo must not end a resumption)
                self._gone(run_id)
        elif kind == "stop":
            self._stop(payload)
        elif self.on_events is not None:
            self.on_events(payload)

    def _reconnected(self) -> None:
        """Notifications sent while the connection was down are lost: claim, and check every run followed here."""
        self._wake.set()
        self.later(self._settle())

    async def halt(self, grace: float) -> None:
        """Claim no more runs; let executing runs finish for ``grace`` seconds, then stop them (see Executor)."""
        self._wake.set()  # the claim loop sees ``closing`` (set before this awaits) and stops
        await super().halt(grace)

    async def shutdown(self, grace: float) -> None:
        """:meth:`halt`, then hand the runs stopped here to the other processes at once and stop listening."""
        await self.halt(grace)
        with contextlib.suppress(PodiumError, TimeoutError):  # (a database that does not answer: claims expire)
            async with asyncio.timeout(STOP_WAIT):
                await self.queue.release(self.owner, None)
        # nothing of this executor may outlive the store it uses: stop and await every task it started
        await self._listener.stop()
        for loop in self._loops:
            loop.cancel()
        await asyncio.gather(*self._loops, return_exceptions=True)
        await self._stop_background()
        close = getattr(self.bus, "aclose", None)
        if close is not None:
            await close()
