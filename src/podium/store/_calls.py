"""How the SQLite store's calls are run: on the event loop's connection when they cannot wait, else on its thread.

See :mod:`podium.store.sqlite` for the whole picture, :mod:`podium.store._direct` and :mod:`podium.store._writer`
for each side.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from podium.errors import StoreError
from podium.store._direct import Busy, Direct
from podium.store._group import GroupCommit
from podium.store._syncer import Syncer
from podium.store._writer import Writer

T = TypeVar("T")


class Calls:
    """The SQLite store's ways of running a call: ``_read``, ``_tx`` (here when possible), ``_call`` (its thread)."""

    path: str
    _writer: Writer
    _direct: Direct | None
    _syncer: Syncer | None
    _group: GroupCommit | None

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
                power cut).
        """
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
