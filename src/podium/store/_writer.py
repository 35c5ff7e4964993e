"""The SQLite store's own thread, which groups the writes queued at one moment into one transaction.

Calls come here when they would wait for a lock on the event loop's connection (held by another process), or when
that connection cannot be used (``:memory:``, another thread); the others run there (:mod:`podium.store._direct`,
:mod:`podium.store._group`).

Group commit here: each time the thread wakes it takes every call queued meanwhile (up to :data:`MAX_BATCH`). Reads
run first, each on its own, and are answered at once; the writes then run one after the other in *one* transaction,
each inside a savepoint (a write that fails is rolled back alone and fails only its caller), and every writer is
answered after the single ``COMMIT``. With ``synchronous=FULL`` that commit is one fsync, shared by all the runs
that wrote meanwhile: the cost of durability is paid per wake-up of this thread, not per call. SQLite's automatic
WAL checkpoints run inside such a commit, on this thread too, so they never stall the event loop.

A write may be marked *not durable* (leases: after a power cut every process that held one is gone, so losing the
last lease change is harmless). A batch holding only such writes commits with ``synchronous=NORMAL``: no fsync of
its own, and the next durable commit syncs its pages along with its own.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

MAX_BATCH = 256
"""The most calls one transaction takes (a bound on how long one writer waits for the others)."""


@dataclass(slots=True)
class _Job:
    work: Callable[[Any], Any]
    future: Future[Any]
    write: bool
    durable: bool


def settled(value: Any) -> Any:
    """``value``, but a cursor (what ``execute`` returns) closed here and replaced by ``None``.

    A cursor handed to the event loop's thread would be finalised there, touching the connection while this thread
    uses it (SQLite reports "bad parameter or other API misuse").
    """
    if isinstance(value, sqlite3.Cursor):
        value.close()
        return None
    return value


class Writer:
    """One thread that alone uses one SQLite connection, running queued calls with group commit."""

    def __init__(self, name: str, errors: Callable[[], AbstractContextManager[None]]) -> None:
        """Start the thread.

        Args:
            name: the thread's name.
            errors: a context manager factory mapping SQLite's exceptions to the store's.
        """
        self.conn: sqlite3.Connection | None = None
        """The connection (set by the opening call, which runs on this thread)."""
        self.full = True
        """Whether durable commits run with ``synchronous=FULL`` (restored after a commit of non-durable writes)."""
        self.commits = 0
        """Transactions committed so far (a figure for benchmarks)."""
        self.synced_commits = 0
        """Of those, the ones with ``synchronous=FULL`` (one fsync each)."""
        self.commit_seconds = 0.0
        """Time spent in the ``COMMIT`` of those (writing the WAL and its fsync: the disk's share, for benchmarks)."""
        self._errors = errors
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, work: Callable[[Any], T], *, write: bool, durable: bool = True) -> Future[T]:
        """Queue ``work(connection)``; the future holds its result (for a write: once committed).

        Raises:
            RuntimeError: the writer was stopped.
        """
        if self._closed:
            raise RuntimeError("the writer is stopped")
        future: Future[T] = Future()
        self._queue.put(_Job(work, future, write, durable))
        return future

    def stop(self) -> None:
        """Let the thread finish what is queued, then exit (it closes nothing: the last call should)."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)

    # the thread ------------------------------------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            jobs = [first]
            stopping = False
            while len(jobs) < MAX_BATCH:
                try:
                    job = self._queue.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    stopping = True
                    break
                jobs.append(job)
            writes = [job for job in jobs if job.write and job.future.set_running_or_notify_cancel()]
            for job in jobs:
                if not job.write and job.future.set_running_or_notify_cancel():
                    self._run_alone(job)
            if writes:
                self._commit(writes)
            if stopping:
                return

    def _run_alone(self, job: _Job) -> None:
        try:
            with self._errors():
                value = settled(job.work(self.conn))
        except BaseException as exc:  # handed to the caller
            job.future.set_exception(exc)
        else:
            job.future.set_result(value)

    def _commit(self, writes: list[_Job]) -> None:
        conn = self.conn
        if conn is None:
            for job in writes:
                self._run_alone(job)  # fails with the store's "closed" error
            return
        light = self.full and not any(job.durable for job in writes)
        outcomes: list[tuple[_Job, Any, bool]] = []
        try:
            with self._errors():
                if light:
                    conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("BEGIN IMMEDIATE")
                for job in writes:
                    conn.execute("SAVEPOINT podium_call")
                    try:
                        with self._errors():
                            outcomes.append((job, settled(job.work(conn)), True))
                    except Exception as exc:
                        conn.execute("ROLLBACK TO podium_call")
                        outcomes.append((job, exc, False))
                    conn.execute("RELEASE podium_call")
                began = time.perf_counter()
                conn.execute("COMMIT")
                if not light and self.full:
                    self.commit_seconds += time.perf_counter() - began
        except BaseException as exc:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:  # the commit's own failure is what the callers need to see
                    pass
            for job in writes:
                job.future.set_exception(exc)
            return
        finally:
            if light:
                conn.execute("PRAGMA synchronous=FULL")
        self.commits += 1
        self.synced_commits += self.full and not light
        for job, value, ok in outcomes:
            if ok:
                job.future.set_result(value)
            else:
                job.future.set_exception(value)
