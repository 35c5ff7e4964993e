"""The default store: one SQLite file (WAL mode), safe across processes on one machine.

No call makes the event loop wait. Reads and writes run on a connection of the event loop's thread, which never
waits for a lock (:mod:`podium.store._direct`). At durability ``full`` the durable writes of one turn of the event
loop share one transaction there, made durable by one sync of the write-ahead log on another thread, shared by the
commits made meanwhile (group commit, :mod:`podium.store._group`). A call that would wait for a lock is handed to
the store's own thread and awaited there (:mod:`podium.store._writer`), where the writes queued at one moment
share one transaction and one fsync. A lock held by another process (waited for up to ``busy_timeout``) delays the
calls that need it, never the event loop.

``durability`` says what a committed write survives (the file is in WAL mode either way):

* ``"full"`` (the default): the WAL is synced after every commit (``synchronous=FULL`` on the store's thread, the
  shared sync above on the event loop's connection), so a write whose call returned survives a power cut or an
  operating-system crash. Another reader may see a commit a moment before its sync ends.
  :meth:`~podium.store.Store.append_events_soon` returns at its commit, with its sync started (not waited for).
  A sync that fails fails its callers, and the store takes no write until it has made its whole file durable again
  (tried at the next write or :meth:`~SQLiteStore.ping`; see :mod:`podium.store._calls`): no restart is needed.
* ``"process"``: ``synchronous=NORMAL``, fsync only at checkpoints: a write survives the crash or kill of the
  process (SIGKILL), but a power cut may drop the last commits (never corrupting the file).

The schema is versioned with ``PRAGMA user_version`` and migrated forward on open; a file from a newer Podium, or
one that is not a Podium database, is refused with :class:`StoreCorrupt`.
A damaged file is :class:`StoreCorrupt` too: SQLite's "malformed" errors, and a thread's log read with a gap or
cut short (see :mod:`podium.store._integrity`); :meth:`SQLiteStore.check` runs ``PRAGMA quick_check``.
``read_only=True`` opens an existing file for inspection without writing anything, even in a read-only folder.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TypeVar, get_args

from podium.errors import LeaseLost, StoreCorrupt, StoreError, StoreLocked, UsageError
from podium.events import Event
from podium.messages import Message
from podium.store._calls import Calls
from podium.store._direct import Direct
from podium.store._files import connect_read_only, lock_for_serving, make_folder, writable
from podium.store._group import GroupCommit
from podium.store._integrity import quick_check, read_log
from podium.store._rows import (
    api_key_from_row,
    api_key_row,
    dumps,
    event_from_row,
    event_row,
    lease_from_row,
    log_head_from_row,
    message_from_row,
    run_from_row,
    run_row,
    state_from_row,
    thread_from_row,
)
from podium.store._syncer import Syncer
from podium.store._writer import Writer
from podium.store.base import (
    ApiKey,
    Claim,
    Durability,
    RunRecord,
    RunStatus,
    Store,
    ThreadInfo,
    listing_limit,
    owner_is_alive,
)

__all__ = ["SQLiteStore"]

_LOG_HEAD = "SELECT seq, run_id FROM events WHERE thread_id=? ORDER BY seq DESC LIMIT 1"
_LAST_RUN = "SELECT * FROM runs WHERE thread_id=? ORDER BY created DESC, rowid DESC LIMIT 1"

APPLICATION_ID = 0x50444D31  # "PDM1": marks the file as a Podium database

MIGRATIONS: list[str] = [
    # 1: threads, runs, the event log (also the journal), leases, versioned state
    """
    CREATE TABLE threads (id TEXT PRIMARY KEY, created REAL NOT NULL, metadata TEXT NOT NULL);
    CREATE TABLE runs (
        id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, status TEXT NOT NULL, input TEXT, agent TEXT NOT NULL,
        created REAL NOT NULL, updated REAL NOT NULL, result TEXT);
    CREATE INDEX runs_thread ON runs (thread_id, created);
    CREATE TABLE events (
        thread_id TEXT NOT NULL, seq INTEGER NOT NULL, run_id TEXT NOT NULL, kind TEXT NOT NULL,
        key TEXT, ns TEXT, body TEXT NOT NULL, PRIMARY KEY (thread_id, seq)) WITHOUT ROWID;
    CREATE UNIQUE INDEX events_journal ON events (run_id, key) WHERE key IS NOT NULL;
    CREATE TABLE leases (thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL);
    CREATE TABLE state (
        thread_id TEXT NOT NULL, key TEXT NOT NULL, version INTEGER NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (thread_id, key, version)) WITHOUT ROWID;
    """,
    # 2: the server's API keys (a digest of each secret, never the secret)
    """
    CREATE TABLE api_keys (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, user TEXT NOT NULL, scopes TEXT NOT NULL, digest TEXT NOT NULL UNIQUE,
        created REAL NOT NULL, revoked REAL);
    """,
]

T = TypeVar("T")


def _transaction(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``work`` in one write transaction (on the store's thread)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


class SQLiteStore(Calls, Store):
    """A store in one SQLite file; no call makes the event loop wait (see the module's documentation)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 5.0,
        durability: Durability = "full",
        read_only: bool = False,
    ) -> None:
        """Open (creating if needed) the database at ``path`` and migrate its schema.

        Args:
            path: the database file; its folder is created if missing (and removed again if the database cannot
                be opened). ``":memory:"`` works for tests.
            busy_timeout: seconds to wait for another connection's write lock before :class:`StoreLocked`.
            durability: ``"full"`` (fsync at every commit: commits survive a power cut) or ``"process"`` (commits
                survive a crash of the process, not of the machine); see the module's documentation.
            read_only: open an existing file for reading only (``mode=ro``; in a read-only folder, where SQLite
                cannot create its shared-memory file, as an immutable file when no write-ahead log is pending):
                nothing is created or migrated, and every write fails with :class:`StoreError`.

        Raises:
            UsageError: an unknown ``durability``.
            StoreError: the folder cannot be created, the file cannot be opened, or (``read_only``) there is no
                database at ``path``.
            StoreCorrupt: the file is not a Podium database, or was written by a newer version.
            StoreLocked: the file stayed locked while migrating.
        """
        if durability not in get_args(Durability):
            raise UsageError(f"durability must be 'full' or 'process', not {durability!r}")
        self.path = str(path)
        self._file: int | None = None
        self._serving: int | None = None
        """The descriptor holding the serving lock (see :meth:`lock_for_serving`)."""
        """The inode of the file opened (``None``: not known, or ``:memory:``)."""
        self.durability: Durability = durability
        """What a committed write survives: ``"full"`` (a power cut) or ``"process"`` (a process crash)."""
        self.read_only = read_only
        """Whether the file was opened for reading only."""
        if Path(self.path).is_dir():
            raise StoreError(f"{self.path} is a folder, not a database file; name a file in it (like podium.db)")
        if read_only and not Path(self.path).is_file():
            raise StoreError(f"no database at {self.path} (nothing has been stored there)")
        made = make_folder(Path(self.path).parent) if self.path != ":memory:" and not read_only else []
        self._writer = Writer("podium-sqlite", self._errors)
        self._writer.full = durability == "full"
        self._direct: Direct | None = None
        self._syncer: Syncer | None = None
        self._group: GroupCommit | None = None
        try:
            self._on_thread(lambda _: self._open(busy_timeout), opening=True)
            if self.path != ":memory:" and not read_only:  # a second connection to ":memory:" is another database
                with self._errors():
                    self._direct = Direct(self.path, self._writer, self._errors)
                if durability == "full":
                    self._syncer = Syncer(self.path)
                    self._group = GroupCommit(self._direct, self._syncer, self.path)
        except BaseException:
            self._on_thread(self._shut, opening=True)
            self._writer.stop()
            for folder in reversed(made):  # leave nothing behind
                folder.rmdir()
            raise

    # the store's thread ---------------------------------------------------------------------------------------------
    def _open(self, busy_timeout: float) -> None:
        """Connect (on the store's thread, which alone uses the connection) and migrate."""
        try:
            if self.read_only:
                conn = connect_read_only(self.path, busy_timeout)
            else:
                conn = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open database {self.path}: {exc}") from None
        self._writer.conn = conn
        with contextlib.suppress(OSError):  # the file this store writes (a file put in its place is another)
            self._file = os.stat(self.path).st_ino if self.path != ":memory:" else None
        try:
            self._setup(conn)
        except BaseException:
            self._writer.conn = None
            conn.close()
            raise

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"{self.path}: {exc}") from None
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if self._syncer is not None and getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_IOERR:
                # SQLite's own write or sync of the file failed: count the log as not synced either
                self._syncer.fail(OSError(errno.EIO, text))
            if "locked" in text or "busy" in text:
                raise StoreLocked(
                    f"database {self.path} is locked by another connection ({text}); "
                    "another process may be writing to it"
                ) from None
            if "readonly" in text or ("unable to open" in text and not writable(self.path)):
                raise StoreError(f"cannot write to {self.path}: the file or its folder is read-only ({text})") from None
            raise StoreError(f"{self.path}: {text}") from None
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(f"{self.path} is not a usable Podium database: {exc}") from None

    def _setup(self, conn: sqlite3.Connection) -> None:
        with self._errors():
            if not self.read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA synchronous={'FULL' if self.durability == 'full' else 'NORMAL'}")
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
        if app_id != APPLICATION_ID and (tables or version):
            raise StoreCorrupt(f"{self.path} is an SQLite database, but not a Podium one")
        if version > len(MIGRATIONS):
            raise StoreCorrupt(
                f"{self.path} has schema version {version}, newer than this Podium knows ({len(MIGRATIONS)}); "
                "upgrade Podium"
            )
        if self.read_only and not version:
            raise StoreError(f"no database at {self.path}: the file is empty")
        if version == len(MIGRATIONS) or self.read_only:  # an older schema is read as it is
            return

        def migrate(c: sqlite3.Connection) -> None:
            current = c.execute("PRAGMA user_version").fetchone()[0]
            for number in range(current, len(MIGRATIONS)):
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        c.execute(statement)
            c.execute(f"PRAGMA application_id={APPLICATION_ID}")
            c.execute(f"PRAGMA user_version={len(MIGRATIONS)}")

        with self._errors():
            _transaction(conn, migrate)

    def _shut(self, conn: sqlite3.Connection | None) -> None:
        """Close the thread's connection (on the thread; the last connection to close checkpoints the WAL)."""
        self._writer.conn = None
        if conn is not None:
            conn.close()

    # threads
    async def create_thread(self, thread_id: str, metadata: dict[str, Any] | None = None) -> ThreadInfo:
        return await self._create_thread(thread_id, metadata, durable=True)

    async def ensure_thread(self, thread_id: str, metadata: dict[str, Any] | None = None) -> ThreadInfo:
        return await self._create_thread(thread_id, metadata, durable=False)  # the run's record syncs it

    async def _create_thread(self, thread_id: str, metadata: dict[str, Any] | None, *, durable: bool) -> ThreadInfo:
        info = ThreadInfo(id=thread_id, metadata=dict(metadata or {}))
        existing = await self.get_thread(thread_id)  # a read (no write transaction, no fsync) for a known thread
        if existing is not None:
            return existing

        self._same_file()

        def work(c: sqlite3.Connection) -> ThreadInfo:
            row = c.execute("SELECT created, metadata FROM threads WHERE id=?", (thread_id,)).fetchone()
            if row:
                return thread_from_row(thread_id, row[0], row[1])
            c.execute("INSERT INTO threads VALUES (?,?,?)", (thread_id, info.created, dumps(info.metadata)))
            return info

        return await self._tx(work, durable=durable)

    async def get_thread(self, thread_id: str) -> ThreadInfo | None:
        rows = await self._query("SELECT created, metadata FROM threads WHERE id=?", (thread_id,))
        return thread_from_row(thread_id, rows[0][0], rows[0][1]) if rows else None

    async def list_threads(self, limit: int = 100) -> list[ThreadInfo]:
        rows = await self._query(
            "SELECT id, created, metadata FROM threads ORDER BY created DESC LIMIT ?", (listing_limit(limit),)
        )
        return [thread_from_row(*r) for r in rows]

    # events
    async def append_events(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        await self._append(thread_id, events, owner, wait=True)

    async def append_events_soon(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        await self._append(thread_id, events, owner, wait=False)

    async def _append(self, thread_id: str, events: list[Event], owner: str | None, *, wait: bool) -> None:
        rows = [event_row(thread_id, e) for e in events]
        # up to ONE_STATEMENT_ROWS rows: one statement, its own transaction; on the thread, a LeaseLost rolls back
        # this call's savepoint and fails this caller only
        single = len(rows) <= ONE_STATEMENT_ROWS
        await self._tx(lambda c: _insert_events(c, thread_id, rows, owner), single=single, wait=wait)

    async def end_run(
        self,
        thread_id: str,
        events: list[Event],
        run_id: str,
        status: RunStatus,
        result: dict[str, Any],
        *,
        owner: str | None = None,
        release: bool = False,
    ) -> bool:
        rows = [event_row(thread_id, e) for e in events]

        def work(c: sqlite3.Connection) -> None:  # one transaction: one commit (one fsync at full) per run's end
            _insert_events(c, thread_id, rows, owner)
            _update_run(c, run_id, status, result)
            if release and owner is not None:
                c.execute(_RELEASE, (thread_id, owner))

        await self._tx(work)
        return release and owner is not None

    async def read_events(self, thread_id: str, *, after: int = 0, run_id: str | None = None) -> list[Event]:
        sql = "SELECT seq, run_id, kind, key, ns, body FROM events WHERE thread_id=? AND seq>?"
        params: tuple[Any, ...] = (thread_id, after)
        if run_id is not None:
            sql += " AND run_id=? ORDER BY seq"
            return [event_from_row(*row) for row in await self._query(sql, (*params, run_id))]
        rows = await self._read(lambda c: read_log(c, self.path, thread_id, after, sql + " ORDER BY seq", params))
        return [event_from_row(*row) for row in rows]

    async def last_seq(self, thread_id: str) -> int:
        rows = await self._query("SELECT max(seq) FROM events WHERE thread_id=?", (thread_id,))
        return log_head_from_row(thread_id, rows[0])[0]

    async def log_head(self, thread_id: str) -> tuple[int, str]:
        rows = await self._query(_LOG_HEAD, (thread_id,))
        return log_head_from_row(thread_id, rows[0] if rows else None)

    async def load_messages(
        self, thread_id: str, namespace: str = "", *, exclude_run: str | None = None
    ) -> list[Message]:
        sql = (  # every event's number, so the log is checked whole; the bodies of the messages asked for
            "SELECT seq, run_id, CASE WHEN kind='message' AND ns=? AND run_id IS NOT ? THEN body END "
            "FROM events WHERE thread_id=? ORDER BY seq"
        )
        params = (namespace, exclude_run, thread_id)
        rows = await self._read(lambda c: read_log(c, self.path, thread_id, 0, sql, params))
        return [message_from_row(r[2]) for r in rows if r[2] is not None]

    async def journal(self, run_id: str) -> dict[str, Event]:
        rows = await self._query(
            "SELECT seq, run_id, kind, key, ns, body FROM events WHERE run_id=? AND key IS NOT NULL", (run_id,)
        )
        events = [event_from_row(*row) for row in rows]
        return {e.key: e for e in events if e.key is not None}

    # runs
    async def create_run(self, run: RunRecord) -> None:
        await self._insert_run(run, durable=True)

    async def open_run(self, run: RunRecord) -> None:
        await self._insert_run(run, durable=False)  # the run's first events sync it along

    async def _insert_run(self, run: RunRecord, *, durable: bool) -> None:
        self._same_file()
        row = run_row(run)
        await self._tx(
            lambda c: c.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?)", row), durable=durable, single=True
        )

    async def update_run(self, run_id: str, status: RunStatus, result: dict[str, Any] | None = None) -> None:
        await self._tx(lambda c: _update_run(c, run_id, status, result), single=True)  # nothing written if it raises

    async def get_run(self, run_id: str) -> RunRecord | None:
        rows = await self._query("SELECT * FROM runs WHERE id=?", (run_id,))
        return run_from_row(rows[0]) if rows else None

    async def list_runs(self, thread_id: str) -> list[RunRecord]:
        rows = await self._query("SELECT * FROM runs WHERE thread_id=? ORDER BY created, rowid", (thread_id,))
        return [run_from_row(r) for r in rows]

    async def last_run(self, thread_id: str) -> RunRecord | None:
        rows = await self._query(_LAST_RUN, (thread_id,))
        return run_from_row(rows[0]) if rows else None

    async def delete_run(self, run_id: str) -> None:
        def work(c: sqlite3.Connection) -> None:
            row = c.execute("SELECT thread_id FROM runs WHERE id=?", (run_id,)).fetchone()
            if row is None:
                raise StoreError(f"no run {run_id!r}")
            others = c.execute(
                "SELECT count(*) FROM events WHERE thread_id=? AND run_id<>? AND seq > "
                "(SELECT coalesce(min(seq), 0) FROM events WHERE thread_id=? AND run_id=?)",
                (row[0], run_id, row[0], run_id),
            ).fetchone()[0]
            if others:
                raise StoreError(f"run {run_id!r} is not the newest of thread {row[0]!r}: other events follow")
            c.execute("DELETE FROM events WHERE thread_id=? AND run_id=?", (row[0], run_id))
            c.execute("DELETE FROM runs WHERE id=?", (run_id,))

        await self._tx(work)

    async def delete_thread(self, thread_id: str) -> None:
        def work(c: sqlite3.Connection) -> None:
            for table in ("events", "runs", "state", "leases"):
                c.execute(f"DELETE FROM {table} WHERE thread_id=?", (thread_id,))
            c.execute("DELETE FROM threads WHERE id=?", (thread_id,))

        await self._tx(work)

    # leases
    async def acquire_thread(self, thread_id: str, owner: str, ttl: float) -> str | None:
        # a power cut ends every holder: no fsync needed
        self._same_file()
        return await self._tx(lambda c: _take_lease(c, thread_id, owner, ttl), durable=False)

    async def renew_thread(self, thread_id: str, owner: str, ttl: float) -> str | None:
        return await self._tx(lambda c: _renew_lease(c, thread_id, owner, ttl), durable=False)

    async def claim_thread(
        self, thread_id: str, owner: str, ttl: float, metadata: dict[str, Any] | None = None
    ) -> Claim:
        self._same_file()  # once per run: a run's writes must go where the next open finds them
        new_thread = (thread_id, time.time(), dumps(metadata or {}))

        def work(c: sqlite3.Connection) -> Claim:  # one transaction, where the reads cost no snapshot of their own
            c.execute("INSERT OR IGNORE INTO threads VALUES (?,?,?)", new_thread)
            holder = _take_lease(c, thread_id, owner, ttl)
            if holder is not None:
                return Claim(holder=holder)
            last = c.execute(_LAST_RUN, (thread_id,)).fetchone()
            head = c.execute(_LOG_HEAD, (thread_id,)).fetchone()
            return Claim(
                holder=None,
                last_run=run_from_row(last) if last else None,
                head=log_head_from_row(thread_id, head),
            )

        return await self._tx(work, durable=False)  # the run's first events sync the thread along

    async def release_thread(self, thread_id: str, owner: str) -> None:
        await self._tx(lambda c: c.execute(_RELEASE, (thread_id, owner)), durable=False, single=True)

    # state
    async def put_state(self, thread_id: str, key: str, value: Any, *, owner: str | None = None) -> None:
        def work(c: sqlite3.Connection) -> None:
            if owner is not None and (holder := _lease_holder(c, thread_id)) != owner:
                raise LeaseLost(thread_id, owner, holder)
            row = c.execute("SELECT max(version) FROM state WHERE thread_id=? AND key=?", (thread_id, key)).fetchone()
            c.execute("INSERT INTO state VALUES (?,?,?,?)", (thread_id, key, (row[0] or 0) + 1, dumps(value)))

        await self._tx(work)

    async def get_state(self, thread_id: str, key: str) -> Any:
        rows = await self._query(
            "SELECT version, value FROM state WHERE thread_id=? AND key=? ORDER BY version DESC LIMIT 1",
            (thread_id, key),
        )
        return state_from_row(thread_id, key, rows[0][0], rows[0][1]) if rows else None

    # API keys
    async def add_api_key(self, key: ApiKey) -> None:
        row = api_key_row(key)
        await self._tx(lambda c: c.execute("INSERT INTO api_keys VALUES (?,?,?,?,?,?,?)", row))

    async def find_api_key(self, digest: str) -> ApiKey | None:
        rows = await self._query("SELECT * FROM api_keys WHERE digest=?", (digest,))
        return api_key_from_row(rows[0]) if rows else None

    async def list_api_keys(self) -> list[ApiKey]:
        return [api_key_from_row(r) for r in await self._query("SELECT * FROM api_keys ORDER BY created, rowid")]

    async def revoke_api_key(self, key_id: str) -> bool:
        def work(c: sqlite3.Connection) -> bool:
            sql = "UPDATE api_keys SET revoked=? WHERE id=? AND revoked IS NULL"
            return c.execute(sql, (time.time(), key_id)).rowcount == 1

        return await self._tx(work)

    async def ping(self) -> None:
        """Answer if the store can be used now: its file is still the one it opened (a file removed or replaced
        while in use keeps taking writes that no later open sees), writes are not held off after a failed sync of
        the log (a repair is tried here, see :mod:`podium.store._calls`), and a read works.

        Raises:
            StoreError: it cannot (the message says why).
        """
        self._same_file()
        if self._syncer is not None and self._syncer.broken is not None:
            await self._repair(self._syncer)
        await super().ping()

    def _same_file(self) -> None:
        """Check that the file at :attr:`path` is still the one this store opened: writes to a file removed or
        replaced while in use go where no later open finds them. (An ``os.stat``: run once per run's start, not
        per write.)

        Raises:
            StoreError: the file was removed or replaced.
        """
        if self._file is None:
            return
        try:
            same = os.stat(self.path).st_ino == self._file
        except OSError:
            same = False
        if not same:
            raise StoreError(
                f"the database file {self.path} was removed or replaced while in use: what is written now is not "
                "in it, so the store takes no more runs; restart with the file back in place"
            )

    async def check(self) -> None:
        """Check the whole file with SQLite's ``PRAGMA quick_check`` (time grows with the file's size).

        Raises:
            StoreCorrupt: a page of the file is damaged.
        """
        await self._call(lambda c: quick_check(c, self.path))

    def lock_for_serving(self) -> None:
        """Mark this process as the one serving the file, and refuse if another one does (``podium serve`` calls
        it: on SQLite the server is one process, whose runs and leases no other server sees).

        An exclusive advisory lock on the file ``<database>-serve.lock`` beside it, held until :meth:`close` or
        the end of the process (however it ends: a killed server leaves no stale lock). Only servers take it:
        other processes (scripts, ``podium threads``, ``podium keys``) open and use the file as before.

        Raises:
            StoreError: another process serves the file (the message names it), or the lock file cannot be made.
        """
        if self.path != ":memory:" and self._serving is None:
            self._serving = lock_for_serving(self.path)

    async def close(self) -> None:
        """Close the connections and stop the store's thread; the store cannot be used afterwards."""
        serving, self._serving = self._serving, None
        if serving is not None:
            os.close(serving)
        if self._direct is not None:
            self._direct.close()
        if self._syncer is not None:
            self._syncer.close()
        try:
            await self._call(self._shut)
        except StoreError:  # closed already
            return
        finally:
            self._writer.stop()


ONE_STATEMENT_ROWS: Final = 512
"""Event rows inserted by one statement at most (7 parameters a row, well within SQLite's limit of 32,766)."""


@functools.lru_cache(maxsize=64)
def _insert_sql(rows: int, fenced: bool) -> str:
    """One statement inserting ``rows`` event rows; ``fenced``: only while the lease named by the last two
    parameters is held."""
    values = ",".join(["(?,?,?,?,?,?,?)"] * rows)
    if not fenced:
        return f"INSERT INTO events VALUES {values}"
    return (
        f"INSERT INTO events SELECT * FROM (VALUES {values}) "
        "WHERE EXISTS (SELECT 1 FROM leases WHERE thread_id=? AND owner=?)"
    )


_RELEASE = "DELETE FROM leases WHERE thread_id=? AND owner=?"
_RENEW = "UPDATE leases SET expires=? WHERE thread_id=? AND owner=?"


def _insert_events(c: sqlite3.Connection, thread_id: str, rows: list[tuple[Any, ...]], owner: str | None) -> None:
    """Insert event rows; with an ``owner``, only while it holds the lease.

    Up to :data:`ONE_STATEMENT_ROWS` rows are one statement naming the lease in its own condition (atomic alone:
    its own transaction when the caller has none). More rows are inserted in the caller's write transaction, where
    the lease is read once: nobody can change it before the commit.

    Rows stored already, identical, count as written and the others are inserted: a write is tried again when its
    caller was told it failed though it was committed (its sync failed). Only a failed insert looks for them.

    Raises:
        LeaseLost: ``owner`` does not hold the lease; nothing was inserted.
        sqlite3.IntegrityError: a row's place in the log (or its journal key) holds another event.
    """
    try:
        _insert_rows(c, thread_id, rows, owner)
    except sqlite3.IntegrityError:
        missing = _not_stored(c, thread_id, rows)
        if missing is None:  # the conflict is with other events
            raise
        if missing:
            _insert_rows(c, thread_id, missing, owner)
        elif owner is not None and (holder := _lease_holder(c, thread_id)) != owner:
            raise LeaseLost(thread_id, owner, holder) from None


def _insert_rows(c: sqlite3.Connection, thread_id: str, rows: list[tuple[Any, ...]], owner: str | None) -> None:
    if len(rows) > ONE_STATEMENT_ROWS:
        if owner is not None and (holder := _lease_holder(c, thread_id)) != owner:
            raise LeaseLost(thread_id, owner, holder)
        c.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?)", rows)
        return
    params = [value for row in rows for value in row]
    if owner is None:
        c.execute(_insert_sql(len(rows), False), params)
    elif c.execute(_insert_sql(len(rows), True), (*params, thread_id, owner)).rowcount != len(rows):
        raise LeaseLost(thread_id, owner, _lease_holder(c, thread_id))


def _not_stored(c: sqlite3.Connection, thread_id: str, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]] | None:
    """The ``rows`` not stored yet, when the others are stored exactly so, before them (what a write committed
    before its caller was told it failed); ``None`` otherwise (the first row is not stored, or a row's place in the
    log holds another event)."""
    seqs = [row[1] for row in rows]
    stored = {
        found[1]: found
        for found in c.execute(
            "SELECT thread_id, seq, run_id, kind, key, ns, body FROM events WHERE thread_id=? AND seq BETWEEN ? AND ?",
            (thread_id, min(seqs), max(seqs)),
        )
    }
    for at, row in enumerate(rows):
        found = stored.get(row[1])
        if found is None:  # the stored ones come first (written before), the rest after them
            return rows[at:] if at and not any(later[1] in stored for later in rows[at:]) else None
        if tuple(found) != tuple(row):
            return None
    return []


def _lease_holder(c: sqlite3.Connection, thread_id: str) -> str | None:
    row = c.execute("SELECT owner FROM leases WHERE thread_id=?", (thread_id,)).fetchone()
    return str(row[0]) if row else None


def _update_run(c: sqlite3.Connection, run_id: str, status: RunStatus, result: dict[str, Any] | None) -> None:
    cursor = c.execute(
        "UPDATE runs SET status=?, updated=?, result=coalesce(?, result) WHERE id=?",
        (status, time.time(), dumps(result) if result is not None else None, run_id),
    )
    if cursor.rowcount == 0:
        raise StoreError(f"no run {run_id!r}")


def _renew_lease(c: sqlite3.Connection, thread_id: str, owner: str, ttl: float) -> str | None:
    """Extend ``owner``'s lease inside a write transaction; the holder (``""``: nobody) if it is not ``owner``'s."""
    if c.execute(_RENEW, (time.time() + ttl, thread_id, owner)).rowcount == 1:
        return None
    return _lease_holder(c, thread_id) or ""


def _take_lease(c: sqlite3.Connection, thread_id: str, owner: str, ttl: float) -> str | None:
    """Take or renew the thread's lease inside a write transaction; the live holder's name if another has it."""
    now = time.time()
    row = c.execute("SELECT owner, expires FROM leases WHERE thread_id=?", (thread_id,)).fetchone()
    if row is not None:
        holder, expires = lease_from_row(thread_id, row[0], row[1])
        if holder != owner and expires > now and owner_is_alive(holder):
            return holder
    c.execute("INSERT OR REPLACE INTO leases VALUES (?,?,?)", (thread_id, owner, now + ttl))
    return None
