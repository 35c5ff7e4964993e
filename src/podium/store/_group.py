"""Group commit at durability ``full`` on the event loop's connection: one transaction and one sync for many writes.

The durable writes whose callers wait for their sync, made during one turn of the event loop (the flushes of every
run that reached one then), are run at the end of that turn in *one* transaction of the loop's connection
(:mod:`podium.store._direct`; a write that fails is rolled back alone and fails only its caller), committed at
``synchronous=NORMAL``, which syncs nothing. Then one sync of the write-ahead log on another thread
(:mod:`podium.store._syncer`) makes the transaction durable, shared with every commit made while it waited, and only
then are the writers answered. The statements never leave the event loop's thread, and the sync never runs on it (an
idle loop may wait a moment for its answer: :meth:`~podium.store._syncer.Syncer.wait_quickly`). A write that needs
no sync of its own (a lease, a run's record) joins the transaction when one is about to be committed in the same
turn, and its caller is answered at the commit; otherwise it commits alone at once. So does a write whose caller
waits for its commit but not its sync (a run's round before a model call): gathered, it would wait for the rest of
the loop's turn, and its sync is shared all the same (asked for at once, it is held back a moment for a write whose
caller waits, which it then serves too: :meth:`~podium.store._syncer.Syncer.request`).

A commit is visible to readers of the file from the moment it is in the log, a moment before its sync ends; the
call that wrote it returns only after. When another connection holds the write lock the writes are refused here
(:class:`Busy`) and their callers hand them to the store's thread, which waits for the lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from podium.errors import StoreError
from podium.store._direct import Busy, Direct
from podium.store._syncer import Syncer, Waiter

MAX_BATCH = 128
"""The most writes one transaction takes: a bound on how long one commit holds the event loop (a few ms)."""

T = TypeVar("T")
Work = Callable[[Any], Any]
Batch = list[tuple[Work, "asyncio.Future[Any]", str]]
"""Writes waiting for the next transaction: what to run, its caller's future, and what of a sync it asks for."""

_NO_SYNC, _SOON, _WAIT = "no sync", "sync soon", "wait for the sync"
"""A write asks for no sync (a lease), for a sync nobody waits for, or for a sync its caller waits for."""


class GroupCommit:
    """Gathers the durable writes of one loop turn into one transaction, answered after one shared sync."""

    def __init__(self, direct: Direct, syncer: Syncer, path: str) -> None:
        """Commit through ``direct`` (the loop's connection) and make durable through ``syncer``.

        Args:
            direct: the event loop's connection.
            syncer: the thread syncing the file's write-ahead log.
            path: the database file, named in errors.
        """
        self.synced_commits = 0
        """Transactions made durable so far (several callers' writes may share one, several may share a sync)."""
        self._direct = direct
        self._syncer = syncer
        self._path = path
        self._batch: Batch = []
        self._scheduled: asyncio.AbstractEventLoop | None = None

    def pending(self) -> bool:
        """Whether a write made now should join the group: a transaction is about to be committed in this turn of
        the event loop, or the log is being reset (writes wait here until it is)."""
        if self._direct.resetting:
            return True
        return bool(self._batch) and self._scheduled is asyncio.get_running_loop()

    def write(
        self, work: Callable[[Any], T], *, durable: bool = True, single: bool = False, wait: bool = True
    ) -> asyncio.Future[T]:
        """A future of ``work(connection)``'s result, settled once its transaction is durable (``durable=False``:
        once it is committed, without a sync; ``wait=False``: once it is committed, with a sync of it started that
        nobody waits for).

        A write with ``wait=False`` is committed at once (``single``: ``work`` is one statement, its own
        transaction), and its future is done on return. So is a write whose caller waits for the sync when nothing
        else is ready to run on the loop (no other write can join this turn's transaction) and nothing is gathered
        yet; the loop's thread then waits briefly for the sync (:meth:`Syncer.wait_quickly`): the future is
        usually done on return too, and its caller goes on without a turn of the loop.

        Its exception: what ``work`` raised (nothing of it written); :class:`Busy` (the write lock is held
        elsewhere: nothing written, hand the write to the store's thread); :class:`StoreError` (the commit or the
        sync failed).
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        mode = _NO_SYNC if not durable else _WAIT if wait else _SOON
        # a waiting write commits at once when no other write could join its transaction (nothing else is ready
        # to run, nothing gathered) and the disk is quick enough to wait for; one that does not wait always does
        alone = mode is _WAIT and not self._batch and self._syncer.would_wait(loop)
        if (mode is _SOON or alone) and not self._direct.resetting:
            self._now(work, future, single, mode)
            return future
        self._batch.append((work, future, mode))
        if self._scheduled is not loop:  # (a loop that stopped before its commit ran leaves it to this one)
            self._scheduled = loop
            loop.call_soon(self._commit)
        return future

    def _commit(self) -> None:
        if self._direct.resetting:  # the log is being reset: the writes wait here (not on another thread) till then
            self._hold()
            return
        # a write whose caller was cancelled, or whose loop has closed, is not made
        pending = [(w, f, d) for w, f, d in self._batch if not f.done() and not f.get_loop().is_closed()]
        batch, self._batch = pending[:MAX_BATCH], pending[MAX_BATCH:]
        self._scheduled = None
        if self._batch:  # the rest in the next turn, after what else waits to run
            self._scheduled = asyncio.get_running_loop()
            self._scheduled.call_soon(self._commit)
        if not batch:
            return
        if self._direct.conn is None:  # the store was closed meanwhile
            for _, future, _ in batch:
                _settle(future, None, StoreError(f"the SQLite store {self._path} is closed"))
            return
        try:
            outcomes = self._direct.write_many([work for work, _, _ in batch])
        except Busy:
            if self._direct.resetting:  # a reset of the log began just now: these writes wait for it too
                self._batch[:0] = batch
                self._hold()
                return
            for _, future, _ in batch:
                _settle(future, None, Busy())
            return
        except Exception as exc:  # nothing committed
            for _, future, _ in batch:
                _settle(future, None, exc)
            return
        durable: list[tuple[asyncio.Future[Any], tuple[Any, bool]]] = []
        soon = False
        for (_, future, mode), outcome in zip(batch, outcomes, strict=True):
            if mode is _WAIT and outcome[1]:
                durable.append((future, outcome))
                continue
            soon = soon or (mode is _SOON and outcome[1])
            # failed (nothing of it written), or committed and not waiting for the sync
            _settle(future, *((outcome[0], None) if outcome[1] else (None, outcome[0])))
        if durable:
            self._ask(lambda failure: self._answer(durable, failure))
            # after what is ready now has run: if the loop is idle then, its thread waits briefly for the sync
            asyncio.get_running_loop().call_soon(self._syncer.wait_quickly)
        elif soon:
            self._ask(None)

    def _now(self, work: Callable[[Any], T], future: asyncio.Future[T], single: bool, mode: str) -> None:
        """Commit ``work`` alone at once. Its caller waiting for the sync (``_WAIT``): wait briefly for it on this
        (idle) loop's thread. Else (``_SOON``) answer at once, with a sync asked for."""
        if self._direct.conn is None:  # the store was closed meanwhile
            future.set_exception(StoreError(f"the SQLite store {self._path} is closed"))
            return
        try:
            value = self._direct.write(work, single=single)
        except Exception as exc:  # nothing committed (Busy: the caller hands the write to the store's thread)
            future.set_exception(exc)
            return
        if mode is _SOON:
            future.set_result(value)
            self._ask(None)
            return
        self._ask(lambda failure: self._answer([(future, (value, True))], failure))
        self._syncer.wait_quickly()  # answered here, usually: the future is then done on return

    def _ask(self, waiter: Waiter | None) -> None:
        """Ask for a sync of every commit made so far; ``waiter`` is answered after it (``None``: nobody waits, and
        the sync may wait a moment for a caller who does: :meth:`Syncer.request`)."""
        if waiter is None:
            self._syncer.request()
        else:
            self._syncer.sync_then(waiter)

    def _hold(self) -> None:
        """The log is being reset: the writes gathered here are committed once it is (or the store closes)."""
        loop = asyncio.get_running_loop()
        self._scheduled = None
        self._direct.after_reset().add_done_callback(lambda _: self._resume(loop))

    def _resume(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._scheduled is None and self._batch:
            self._scheduled = loop
            self._commit()

    def _answer(self, durable: list[tuple[asyncio.Future[Any], tuple[Any, bool]]], failure: OSError | None) -> None:
        if failure is None:
            self.synced_commits += 1
        for future, (value, _) in durable:
            if failure is not None:  # committed, but nothing says it reached the disk
                _settle(
                    future,
                    None,
                    StoreError(
                        f"{self._path}: {failure} (the write is not acknowledged: the store "
                        "takes no writes until it has made its file durable again)"
                    ),
                )
            else:
                _settle(future, value, None)


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():  # its caller was cancelled
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
