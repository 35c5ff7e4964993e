"""The fsync of a SQLite file's write-ahead log, on a thread of its own, shared by every commit made before it.

In WAL mode, what ``synchronous=FULL`` adds to ``NORMAL`` is one sync of the log after each commit (checkpoints
sync the same way at both settings). Commits made at ``NORMAL`` on the event loop's connection
(:mod:`podium.store._group`) are made durable by :meth:`Syncer.sync_then`: this module's thread syncs the log file's
data and answers every caller that asked before that sync began, so concurrent commits share one. A failed sync
leaves nothing known about what reached the disk: it fails its callers and every later one until
:meth:`Syncer.repaired`, which the store calls once it has copied the whole log into the database file and synced
it (see :mod:`podium.store._calls`).

The answer usually goes back through the event loop (``call_soon_threadsafe``: the loop wakes from its ``epoll``
through its self-pipe). When the loop has nothing else to run, :meth:`Syncer.wait_quickly` instead waits on the
loop's thread for at most :data:`QUICK_SYNC_WAIT` and the sync's thread hands the answer over directly (see
:mod:`podium._handoff`): the sync itself never runs on the loop's thread, and the loop waits only while it would
have been idle, never longer than that bound.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import time
from collections.abc import Callable

from podium._handoff import Handoff, idle_window

QUICK_SYNC_WAIT = 0.002
"""How long (seconds), at most, the event loop's thread waits for a sync's answer when it has nothing else to do (no
callback ready, no timer due sooner), unless syncs have lately taken longer than that."""

SOON_DELAY = 0.01
"""How long (seconds), at most, a sync nobody waits for (:meth:`Syncer.request`) waits for a caller who does, so that
one sync serves both (a run's rounds stored before model calls that answer at once, then its tool round or its end:
a FAANG run with a quick model then syncs once, not twice). A waiting caller never waits for it: it starts the sync
at once. What it delays is only the disk's copy of commits nobody waits for, which a crash would repeat anyway."""

Waiter = Callable[[OSError | None], None]
"""Who waits for a sync: called with ``None`` once it is done, or with the error of a failed one."""

_data_sync = getattr(os, "fdatasync", os.fsync)
"""What SQLite itself uses where it can: the file's data and size, not its times."""


class Syncer:
    """A thread that syncs one SQLite file's write-ahead log for whoever asked since its last sync began."""

    def __init__(self, database: str) -> None:
        """Start the thread (it sleeps until asked).

        Args:
            database: the database file; its log is ``database + "-wal"``.
        """
        self.syncs = 0
        """Syncs done so far (a figure for benchmarks)."""
        self.seconds = 0.0
        """Time they took (the disk's share, for benchmarks)."""
        self.typical = 0.0
        """A moving average of the time a sync takes (seconds)."""
        self._wal = database + "-wal"
        self._folder = os.path.dirname(os.path.abspath(database))
        self._synced_inode: int | None = None
        self._waiting: list[tuple[asyncio.AbstractEventLoop, Waiter]] = []
        self._unanswered: dict[asyncio.AbstractEventLoop, int] = {}
        """Callers of each loop not answered yet (asked, or in the sync under way)."""
        self._handoffs: dict[asyncio.AbstractEventLoop, Handoff] = {}
        """The loops whose thread waits for the next answer (see :meth:`wait_quickly`)."""
        self._broken: OSError | None = None
        self.failures = 0
        """Failed syncs (and failures :meth:`fail` was told of) so far."""
        self._requested = False
        """A sync is asked for that nobody waits for (:meth:`request`)."""
        self._closed = False
        self._lock = threading.Lock()
        self._wake: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="podium-sqlite-sync", daemon=True)
        self._thread.start()

    def sync_then(self, waiter: Waiter) -> None:
        """Call ``waiter`` on this event loop once the log, with every commit made before this call, is on disk:
        with ``None``, or the :class:`OSError` of a failed sync (now or before) or of a closed store. (A callback,
        not a future: its caller learns one turn of the loop sooner.)"""
        loop = asyncio.get_running_loop()
        with self._lock:
            closed = self._closed
            if not closed:
                self._waiting.append((loop, waiter))
                self._unanswered[loop] = self._unanswered.get(loop, 0) + 1
                first = len(self._waiting) == 1
        if closed:
            _settle([waiter], OSError("the store is closed"), wrap=False)
        elif first:  # the thread sleeps, syncs for earlier callers, or holds a requested sync back for this one:
            self._wake.put(None)  # one wake-up for all that follow

    def request(self) -> None:
        """Sync the log soon, with every commit made before this call, for commits nobody waits for: the sync starts
        within :data:`SOON_DELAY` (after the one under way), at once when a caller of :meth:`sync_then` comes
        meanwhile (the sync then answers it too), and answers nobody else. A failed one fails every later caller of
        :meth:`sync_then`, as any failed sync does."""
        with self._lock:
            if self._closed:
                return
            first = not self._waiting and not self._requested
            self._requested = True
        if first:
            self._wake.put(None)

    @property
    def broken(self) -> OSError | None:
        """The error of the sync that failed, while nothing says what of the log reached the disk (``None``: no sync
        failed since the last :meth:`repaired`)."""
        return self._broken

    def fail(self, error: OSError) -> None:
        """Count the log as not synced, as a failed sync of its own would: SQLite's own sync of the same file failed
        (the kernel reports a lost write once, to whichever sync comes first, so this thread's next one may succeed
        with that write lost)."""
        with self._lock:
            self._broken = self._broken or error
            self.failures += 1

    def repaired(self) -> None:
        """Sync again for the callers from now on: everything the log held is in the database file, synced (a
        checkpoint that truncated the log), so nothing committed rests on the failed sync any more."""
        with self._lock:
            self._broken = None
            self._synced_inode = None  # the log is written anew: sync its name in the folder again too

    def would_wait(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether :meth:`wait_quickly` called now on ``loop`` would wait (the loop is idle and the disk quick)."""
        return self._window(loop) > 0

    def _window(self, loop: asyncio.AbstractEventLoop) -> float:
        return 0.0 if self.typical > QUICK_SYNC_WAIT else idle_window(loop, QUICK_SYNC_WAIT)

    def wait_quickly(self) -> None:
        """On the event loop's thread, with nothing else ready to run there: wait up to :data:`QUICK_SYNC_WAIT` for
        the answer to this loop's callers and settle them here (one wake-up of this thread instead of a wake-up of
        the loop through its self-pipe). Returns at once when the loop has other work, or nobody of it waits."""
        loop = asyncio.get_running_loop()
        window = self._window(loop)
        if not window:  # the loop has work, or the disk is slower than that: waiting would hold it for nothing
            return
        with self._lock:
            if not self._unanswered.get(loop) or loop in self._handoffs:
                return
            handoff = self._handoffs[loop] = Handoff()
        answer = handoff.take(window)
        with self._lock:
            if self._handoffs.get(loop) is handoff:
                del self._handoffs[loop]
        if answer is not None:
            _settle(*answer[0])

    def close(self) -> None:
        """Answer whoever waits, then stop the thread."""
        with self._lock:
            self._closed = True
        self._wake.put(None)
        self._thread.join()

    def _serve(self) -> None:
        while True:
            self._wake.get()
            with self._lock:
                hold = self._requested and not self._waiting and not self._closed
            if hold:  # only a sync nobody waits for: a caller who does may come at once and share it
                try:
                    self._wake.get(timeout=SOON_DELAY)
                except queue.Empty:
                    pass
            with self._lock:
                batch, self._waiting = self._waiting, []
                requested, self._requested = self._requested, False
                closed = self._closed
            if batch or requested:  # else a wake-up for callers an earlier sync already answered
                self._answer(batch)
            if closed:
                return

    def _answer(self, batch: list[tuple[asyncio.AbstractEventLoop, Waiter]]) -> None:
        with self._lock:
            broken = self._broken
        began = time.perf_counter()
        error = broken or self._sync()
        took = time.perf_counter() - began
        self.seconds += took
        self.typical += (took - self.typical) / 8
        self.syncs += error is None
        if error is not None and broken is None:  # a new failure (a repair made meanwhile does not clear it)
            self.fail(error)
        by_loop: dict[asyncio.AbstractEventLoop, list[Waiter]] = {}
        for loop, future in batch:
            by_loop.setdefault(loop, []).append(future)
        for loop, futures in by_loop.items():
            with self._lock:
                left = self._unanswered.get(loop, 0) - len(futures)
                if left > 0:
                    self._unanswered[loop] = left
                else:
                    self._unanswered.pop(loop, None)
                handoff = self._handoffs.pop(loop, None)
            if handoff is not None and handoff.give((futures, error), None):
                continue  # the loop's thread waits for it (wait_quickly) and settles them itself
            try:
                loop.call_soon_threadsafe(_settle, futures, error)
            except RuntimeError:  # that loop closed meanwhile: nobody waits there
                pass

    def _sync(self) -> OSError | None:
        try:
            fd = os.open(self._wal, os.O_RDONLY)
        except FileNotFoundError:  # no log: every commit went into the database file, which a checkpoint synced
            return None
        except OSError as exc:
            return exc
        try:
            _data_sync(fd)
            inode = os.fstat(fd).st_ino
            if inode != self._synced_inode:  # a log created anew: its name in the folder must be durable too
                folder = os.open(self._folder, os.O_RDONLY)
                try:
                    os.fsync(folder)
                finally:
                    os.close(folder)
                self._synced_inode = inode
        except OSError as exc:
            return exc
        finally:
            os.close(fd)
        return None


def _settle(waiters: list[Waiter], error: OSError | None, *, wrap: bool = True) -> None:
    """Answer ``waiters`` (on their loop) with ``error``, the failed sync's (each waiter gets an :class:`OSError` of
    its own saying so; ``wrap=False``: ``error`` as it is), or ``None``."""
    for waiter in waiters:
        if error is not None and wrap:
            waiter(OSError(error.errno, f"syncing the write-ahead log failed: {error.strerror}"))
        else:
            waiter(error)
