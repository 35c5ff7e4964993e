"""The SQLite store's second connection, used on the event loop's own thread for what cannot block it.

A call handed to the store's thread (:mod:`podium.store._writer`) costs two thread wake-ups; most calls need not
pay them, because in WAL mode they never wait:

* **Reads.** A WAL reader never waits for a writer: it reads the last committed snapshot. The connection has
  ``busy_timeout`` 0, so the rare moment it cannot start (another connection recovering the WAL, or holding the
  file in exclusive mode) is a ``SQLITE_BUSY`` at once, and the read is handed to the thread, which waits.
* **Writes.** This connection runs with ``synchronous=NORMAL`` and ``wal_autocheckpoint=0``: its commit appends to
  the WAL and syncs nothing. At durability ``full`` the durable writes of one turn of the event loop share one
  transaction here, and its callers wait for a sync of the WAL made on another thread (:mod:`podium.store._group`).
  ``BEGIN IMMEDIATE`` that meets a write lock held elsewhere (another process, or the store's own thread in the
  middle of a commit) fails at once, and the call is handed to the thread, which waits with the busy timeout: a
  lock held elsewhere delays the calls that need it, never the event loop. A run awaits its calls in order, so a
  call handed to the thread and its next call here never race.
* **Checkpoints** (which fsync) never run here: every :data:`CHECKPOINT_EVERY` commits a passive checkpoint is
  queued on the store's thread (unless one is still under way there). Once the log holds :data:`RESET_FRAMES`,
  the next checkpoint runs with this connection's writes held off (see :meth:`Direct._writable`), so that it
  copies the whole log and the next commit writes the log from its start again: the log stays bounded.

The connection is bound to the first thread that uses it (the event loop's); calls from any other thread go to the
store's thread as before.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import Any, Final, NoReturn, TypeVar

from podium.store._writer import Writer, settled

T = TypeVar("T")

CHECKPOINT_EVERY: Final = 256
"""Commits of this connection between two checkpoints queued on the store's thread (a ReAct step commits about
two, each a few pages: a WAL of several hundred pages, like SQLite's own automatic checkpoints at 1,000)."""


class Busy(Exception):
    """The call could not run here without waiting; hand it to the store's thread."""


class _WorkFailed(Exception):
    """A work of a transaction without savepoints raised: the transaction was rolled back."""


def _is_busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and getattr(exc, "sqlite_errorcode", 0) & 0xFF in (
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
    )


RESET_FRAMES: Final = 1_024
"""Frames in the log (4 MB of 4 KB pages, SQLite's own automatic checkpoint point) past which a checkpoint holds
this connection's writes off until it has copied the whole log, so that the log is written from its start again
(see :meth:`Direct._writable`), at most once every :data:`RESET_EVERY` seconds. A log written over in place syncs
faster than one that grows: its sync need not record a new file size (half the time on this project's test
machine)."""

RESET_EVERY: Final = 0.5
"""Seconds between two resets of the log, at least, unless it holds :data:`RESET_FRAMES_MAX`: each holds every write
off for a few ms, which under a heavy load of commits would come several times a second."""

RESET_FRAMES_MAX: Final = 16_384
"""Frames in the log (64 MB) past which it is reset whenever the last reset was (a bound on its size)."""


RESET_TRIES: Final = 3
"""Checkpoints with writes held off, at most, to get the log written from its start again."""


def _checkpoint(conn: sqlite3.Connection) -> int:
    """A passive checkpoint (it stops nobody); the frames the log held (0 if it could not look)."""
    row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(row[1]) if row and row[1] > 0 else 0


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Direct:
    """A connection used on one thread (the event loop's) for the statements that never wait there."""

    def __init__(self, path: str, writer: Writer, errors: Callable[[], AbstractContextManager[None]]) -> None:
        """Open the connection (the schema exists: the store's thread migrated it).

        Args:
            path: the database file.
            writer: the store's thread, where checkpoints are queued.
            errors: a context manager factory mapping SQLite's exceptions to the store's.

        Raises:
            sqlite3.Error: the connection could not be opened or set up.
        """
        self.commits = 0
        """Transactions committed on this connection (a figure for benchmarks)."""
        self.handed = 0
        """Calls that met a lock here and were handed to the store's thread."""
        self._writer = writer
        self._errors = errors
        self._thread: int | None = None
        self._checkpointing = False
        self._resetting = False
        self._commits_at_reset = 0
        self._reset_tries = 0
        self._last_reset = 0.0
        self._reset_lock = threading.Lock()
        self._reset_waiters: list[asyncio.Future[None]] = []
        conn = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
        self.conn: sqlite3.Connection | None = conn
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA wal_autocheckpoint=0")

    def usable(self) -> bool:
        """Whether the calling thread may use the connection (the first thread that asked, while it is open)."""
        ident = threading.get_ident()
        if self._thread is None:
            self._thread = ident
        return self.conn is not None and self._thread == ident

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` outside any transaction (it must consume its cursors).

        Raises:
            Busy: the read would have to wait.
        """
        conn = self.conn
        assert conn is not None
        try:
            value: T = settled(work(conn))
        except sqlite3.Error as exc:
            raise self._mapped(exc) from None
        return value

    def write(self, work: Callable[[sqlite3.Connection], T], *, single: bool = False) -> T:
        """``work(connection)`` in one write transaction, committed without an fsync.

        Args:
            work: the statements.
            single: ``work`` runs one writing statement, which is then its own transaction (no ``BEGIN`` and
                ``COMMIT`` round trips).

        Raises:
            Busy: the write lock is held elsewhere, or a checkpoint runs (nothing was written).
        """
        self._writable()
        if not single:
            outcome, ok = self._each_alone([work])[0]
            if not ok:
                raise outcome
            done: T = outcome
            return done
        alone = self.conn
        assert alone is not None
        try:
            value: T = settled(work(alone))
        except sqlite3.Error as exc:
            raise self._mapped(exc) from None
        self._committed()
        return value

    def write_many(self, works: list[Callable[[sqlite3.Connection], Any]]) -> list[tuple[Any, bool]]:
        """``works`` in one write transaction, committed without an fsync; a work that fails is rolled back alone.

        Returns one ``(value, True)`` per work that succeeded, ``(exception, False)`` per work that raised (its
        statements rolled back alone), in order. The works run one after another first; only if one of them raises
        is the transaction rolled back and each work run again in a savepoint of its own (two statements a work
        that the common case does without).

        Raises:
            Busy: the write lock is held elsewhere, or a checkpoint runs (nothing was written).
            StoreError: the transaction could not be committed (nothing was written).
        """
        self._writable()
        if len(works) > 1:
            try:
                return self._all_or_nothing(works)
            except _WorkFailed:  # rolled back: again, each work alone in a savepoint
                pass
        return self._each_alone(works)

    def _all_or_nothing(self, works: list[Callable[[sqlite3.Connection], Any]]) -> list[tuple[Any, bool]]:
        """Every work in one transaction with no savepoints; :class:`_WorkFailed` (all rolled back) if one raised."""
        outcomes: list[tuple[Any, bool]] = []
        conn = self._begin()
        try:
            for work in works:
                outcomes.append((settled(work(conn)), True))
        except Exception:
            self._rollback(conn)
            raise _WorkFailed from None
        except BaseException as exc:
            self._abandon(conn, exc)
        self._commit(conn)
        return outcomes

    def _each_alone(self, works: list[Callable[[sqlite3.Connection], Any]]) -> list[tuple[Any, bool]]:
        """Each work in its own savepoint of one transaction (the one transaction of a lone work)."""
        outcomes: list[tuple[Any, bool]] = []
        alone = len(works) == 1  # the transaction is the work's own: no savepoint, a failure rolls it all back
        conn = self._begin()
        try:
            for work in works:
                if not alone:
                    conn.execute("SAVEPOINT podium_write")
                try:
                    outcomes.append((settled(work(conn)), True))
                except Exception as exc:
                    if not alone:
                        conn.execute("ROLLBACK TO podium_write")
                    else:
                        self._rollback(conn)
                    outcomes.append((self._mapped(exc) if isinstance(exc, sqlite3.Error) else exc, False))
                if not alone:
                    conn.execute("RELEASE podium_write")
        except BaseException as exc:
            self._abandon(conn, exc)
        if conn.in_transaction:  # else the lone work failed and was rolled back
            self._commit(conn)
        return outcomes

    def _begin(self) -> sqlite3.Connection:
        """Begin a write transaction of the connection.

        Raises:
            Busy: the write lock is held elsewhere (nothing was written).
        """
        conn = self.conn
        assert conn is not None
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._mapped(exc) from None
        return conn

    def _commit(self, conn: sqlite3.Connection) -> None:
        """Commit the transaction begun by :meth:`_begin` (without an fsync); rolled back if that fails."""
        try:
            conn.execute("COMMIT")
        except BaseException as exc:
            self._abandon(conn, exc)
        self._committed()

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:  # (some errors end the transaction themselves)
            conn.execute("ROLLBACK")

    def _abandon(self, conn: sqlite3.Connection, exc: BaseException) -> NoReturn:
        """Roll the transaction back and raise ``exc`` (the store's own for SQLite's)."""
        self._rollback(conn)
        if isinstance(exc, sqlite3.Error):
            raise self._mapped(exc) from None
        raise exc

    @property
    def resetting(self) -> bool:
        """Whether a checkpoint resetting the log holds writes off (see :meth:`_writable`)."""
        return self._resetting

    def after_reset(self) -> asyncio.Future[None]:
        """A future of the running loop's, done once writes may be made here again (at once if no reset of the log
        holds them off, and when the connection is closed)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._reset_lock:
            if self._resetting and self.conn is not None:
                self._reset_waiters.append(future)
                return future
        future.set_result(None)
        return future

    def _reset_ended(self) -> None:
        """Writes may be made here again (called on the store's thread, or when closing): wake who waits for it."""
        with self._reset_lock:
            self._resetting = False
            waiters, self._reset_waiters = self._reset_waiters, []
        for future in waiters:
            try:
                future.get_loop().call_soon_threadsafe(_wake, future)
            except RuntimeError:  # that loop closed meanwhile: nobody waits any more
                pass

    def _writable(self) -> None:
        """Refuse a write while a checkpoint resets the log: the write goes to the store's thread and runs after it.

        A checkpoint copies the log into the database; the log is written from its start again only once a
        checkpoint has copied all of it. Passive checkpoints run while this connection commits, so under a steady
        stream of commits they never get there, and the log would grow without end (hundreds of MB a minute,
        every read slower than the last). Once it holds :data:`RESET_FRAMES` (and the last reset is
        :data:`RESET_EVERY` old), the next checkpoint runs with the writes held off: it copies what the last one
        left (a short wait), and the next commit starts the log over.
        """
        if self._resetting:
            self.handed += 1
            raise Busy

    def _committed(self) -> None:
        self.commits += 1
        if self.commits % CHECKPOINT_EVERY == 0 and not self._checkpointing:
            self._checkpointing = True
            self._writer.submit(_checkpoint, write=False).add_done_callback(self._checkpointed)

    def close(self) -> None:
        """Close the connection (the store's thread still has its own, which checkpoints when it closes)."""
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
        self._reset_ended()

    def _mapped(self, exc: sqlite3.Error) -> Exception:
        """The exception to raise for ``exc``: :class:`Busy` for ``SQLITE_BUSY``/``SQLITE_LOCKED`` (counted as
        handed to the store's thread), else the store's own (see the ``errors`` given to :meth:`__init__`)."""
        if _is_busy(exc):
            self.handed += 1
            return Busy()
        try:
            with self._errors():
                raise exc
        except Exception as mapped:  # what the store's errors() made of it (or exc itself)
            return mapped

    def _checkpointed(self, future: Future[int]) -> None:
        """After a checkpoint (called on the store's thread): if the log grew too long, hold writes off and run
        another, again while a commit slipped in as it began (at most :data:`RESET_TRIES` times)."""
        frames = 0 if future.exception() is not None else future.result()  # a failed one is tried at the next look
        if self._resetting:
            again = self.commits != self._commits_at_reset and self._reset_tries < RESET_TRIES
        else:
            due = time.monotonic() - self._last_reset >= RESET_EVERY
            again = frames >= RESET_FRAMES_MAX or (frames >= RESET_FRAMES and due)
            self._reset_tries = 0
        if again:
            if not self._resetting:  # a reset begins (it may take a few checkpoints)
                self._last_reset = time.monotonic()
            self._resetting = True  # writes wait until the next checkpoint has run (see _writable)
            self._commits_at_reset = self.commits
            self._reset_tries += 1
            try:
                self._writer.submit(_checkpoint, write=False).add_done_callback(self._checkpointed)
                return
            except RuntimeError:  # the store is closing
                pass
        self._checkpointing = False
        self._reset_ended()
