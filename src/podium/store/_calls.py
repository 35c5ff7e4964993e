"""How the SQLite store's calls are run: on the event loop's connection when they cannot wait, else on its thread.

See :mod:`podium.store.sqlite` for the whole picture, :mod:`podium.store._direct` and :mod:`podium.store._writer`
for each side.

After a failed sync of the write-ahead log (durability ``full``) nothing says what of the log reached the disk, so
no write is made until the store has repaired itself (:meth:`Calls._repair`): a checkpoint that copies the whole
log into the database file, syncs that file and truncates the log. Once it succeeds, everything the file holds is
on disk, including the commits whose sync failed (their callers were told it failed, and may write the same rows
again: the events of a run count as written when they are stored already, identical). It is tried at the next write
or health check, at most every :data:`REPAIR_EVERY` seconds; until it succeeds writes fail at once, saying why.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from podium.errors import StoreError
from podium.store._direct import Busy, Direct
from podium.store._group import GroupCommit
from podium.store._syncer import Syncer
from podium.store._writer import Writer

T = TypeVar("T")

REPAIR_EVERY = 1.0
"""Seconds between two tries, at least, to repair the store after a failed sync (each copies the whole log)."""


class Calls:
    """The SQLite store's ways of running a call: ``_read``, ``_tx`` (here when possible), ``_call`` (its thread)."""

    path: str
    _writer: Writer
    _direct: Direct | None
    _syncer: Syncer | None
    _group: GroupCommit | None
    _repairing: Future[None] | None = None
    """The repair under way on the store's thread (see :meth:`_repair`)."""
    _repair_tried = 0.0
    _repair_failure = ""

    @property
    def commits(self) -> int:
        """Write transactions committed so far by this store (several callers' writes may share one)."""
        return self._writer.commits + (self._direct.commits if self._direct else 0)

    @property
    def synced_commits(self) -> int:
        """Of those, the ones made durable by a sync of the log before their callers were answered."""
        return self._writer.synced_commits + (self._group.synced_commits if self._group else 0)

    @property
    def syncs(self) -> int:
        """Syncs of the log so far that callers waited for (concurrent commits share one)."""
        return self._writer.synced_commits + (self._syncer.syncs if self._syncer else 0)

    @property
    def disk_seconds(self) -> float:
        """Time spent in those syncs and the commits they belong to: the disk's share, for benchmarks."""
        return self._writer.commit_seconds + (self._syncer.seconds if self._syncer else 0.0)

    def _guard(self, work: Callable[[sqlite3.Connection], T], opening: bool) -> Callable[[Any], T]:
        def guarded(conn: sqlite3.Connection | None) -> T:
            if conn is None and not opening:
                raise StoreError(f"the SQLite store {self.path} is closed")
            return work(conn)  # type: ignore[arg-type]  # None only while opening, when work ignores it

        return guarded

    def _submit(
        self, work: Callable[[sqlite3.Connection], T], *, write: bool, durable: bool = True, opening: bool = False
    ) -> Future[T]:
        try:
            return self._writer.submit(self._guard(work, opening), write=write, durable=durable)
        except RuntimeError:  # stopped by close()
            raise StoreError(f"the SQLite store {self.path} is closed") from None

    def _on_thread(self, work: Callable[[sqlite3.Connection], T], *, opening: bool = False) -> T:
        """Run ``work`` on the store's thread and wait for it, blocking (for set-up, not for coroutines)."""
        return self._submit(work, write=False, opening=opening).result()

    async def _call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` (reads, or statements managing their own transaction) on the store's thread."""
        return await asyncio.wrap_future(self._submit(work, write=False))

    async def _tx(
        self, work: Callable[[sqlite3.Connection], T], *, durable: bool = True, single: bool = False, wait: bool = True
    ) -> T:
        """Run ``work`` in a write transaction: here unless that would wait for a lock, else on the store's thread.

        Here, at durability ``full``, a durable write shares the transaction of the writes made in the same turn
        of the event loop and waits for the sync of the log that follows (:mod:`podium.store._group`). On the
        thread it shares the transaction of the writes queued meanwhile. ``durable=False`` lets it commit without
        a sync of its own (for leases, which a power cut voids); ``wait=False`` returns once it is committed, its
        sync started and not waited for (on the thread, where every commit is synced, it waits all the same).
        ``single``: ``work`` is one writing statement, its own transaction when it runs here on its own.

        Raises:
            StoreError: also when the sync of the log failed (the write is committed but may not survive a
                power cut), and, with nothing written, while the store cannot repair itself after that.
        """
        syncer = self._syncer
        if syncer is not None and syncer.broken is not None:
            await self._repair(syncer)
        direct = self._direct
        if direct is not None and direct.usable():
            try:
                group = self._group  # durability full: a shared transaction (and, if durable, a shared sync)
                if group is not None and (durable or group.pending()):
                    return await group.write(work, durable=durable, single=single, wait=wait)
                while direct.resetting:  # the log is being reset: wait here (the store's thread is busy with it)
                    await direct.after_reset()
                if direct.usable():
                    return direct.write(work, single=single)
            except Busy:  # a write lock held elsewhere: the thread waits for it, the event loop does not
                pass
        return await asyncio.wrap_future(self._submit(work, write=True, durable=durable))

    async def _repair(self, syncer: Syncer) -> None:
        """Make everything the file holds durable after a failed sync, then let writes through again.

        A checkpoint on the store's thread copies the whole log into the database file, syncs the file and
        truncates the log: commits whose sync failed are then on disk (as the file holds them), and the next commit
        writes the log from its start (a power cut then finds no commit of the old log behind a new one). Callers
        arriving meanwhile wait for the same try; one arriving within :data:`REPAIR_EVERY` of a failed try fails
        at once.

        Raises:
            StoreError: the store is not repaired (the disk still fails, or another process reads the log).
        """
        failure, failures = syncer.broken, syncer.failures
        if failure is None:
            return
        repairing = self._repairing
        if repairing is None:
            if time.monotonic() - self._repair_tried < REPAIR_EVERY:
                raise self._unrepaired(failure)
            self._repair_tried = time.monotonic()
            repairing = self._repairing = self._submit(self._checkpoint_all, write=False)
            repairing.add_done_callback(lambda _: setattr(self, "_repairing", None))
        try:
            await asyncio.wrap_future(repairing)
        except StoreError as exc:
            self._repair_failure = str(exc)
            raise self._unrepaired(failure) from None
        if syncer.failures == failures:  # (unless another sync failed meanwhile)
            syncer.repaired()
        self._repair_failure = ""
        if syncer.broken is not None:
            raise self._unrepaired(syncer.broken)

    def _checkpoint_all(self, conn: sqlite3.Connection) -> None:
        """Copy the whole log into the database file, sync it, and truncate the log (on the store's thread).

        Raises:
            StoreError: the checkpoint failed, or could not copy everything (a reader of another connection).
        """
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise StoreError("another connection reads the write-ahead log")

    def _unrepaired(self, failure: OSError) -> StoreError:
        why = f"; the last try: {self._repair_failure}" if self._repair_failure else ""
        return StoreError(
            f"{self.path} takes no writes: a write or sync of its write-ahead log failed "
            f"({failure.strerror or failure}), so what it held may not be on disk; the store copies the log into "
            "the database file and syncs it before it takes writes again, tried at the next write or health check "
            f"(at most every {REPAIR_EVERY:g} s){why}; if the disk keeps failing, check it and restart"
        )

    async def _read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` outside a transaction here (a WAL reader never waits), or on the store's thread if it would."""
        direct = self._direct
        if direct is not None and direct.usable():
            try:
                return direct.read(work)
            except Busy:
                pass
        return await self._call(work)

    async def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return await self._read(lambda conn: conn.execute(sql, params).fetchall())
