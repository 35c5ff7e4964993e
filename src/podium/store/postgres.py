"""A store in PostgreSQL, for conversations shared by processes on several hosts.

Needs the ``postgres`` extra (``pip install 'podium[postgres]'``: psycopg 3 on the system libpq, psycopg_pool). The
URL is any libpq connection string (``postgresql://user:password@host:5432/db``); nothing connects until the first
call, or :meth:`PostgresStore.open` (``await PostgresStore.connect(url)`` does both).

Rows are encoded as in :mod:`podium.store.sqlite`: compact JSON in ``TEXT`` columns. ``TEXT`` rather than
``JSONB`` because events are only ever read back whole, the text is smaller for small events, and JSONB refuses
strings holding ``\\u0000`` that tool output may contain.

One store holds a pool of connections (``psycopg_pool``, up to ``max_connections``): calls of different runs go
over different connections at once, and a run's own calls, awaited one after the other, commit in its sequence
order. A call waits at most ``wait_timeout`` (5 s) for a connection, so that while the server is down its callers
get their :class:`StoreError` in seconds. Leases are taken in one transaction with ``SELECT ... FOR UPDATE`` and
expire by the *server's* clock, so hosts with skewed clocks agree on them. A lost connection fails the call in
progress with :class:`StoreError`; the pool replaces it (and any idle one the server dropped too) for the next call.

An event is inserted only right after the thread's last one, checked in the inserting statement itself (beside the
lease, for a run's writes): a writer whose last commits the server lost (a crash at durability ``process``) is
refused with :class:`StoreError` instead of leaving a hole in the middle of the log; a run then goes on from what is
stored (see :func:`_not_next`).

The schema is versioned in the table ``podium_schema`` and migrated forward on open (one migrator at a time, under
an advisory lock); a schema from a newer Podium, or one that holds other tables named like Podium's, is refused
with :class:`StoreCorrupt`. ``schema=`` keeps several Podium stores apart in one database.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from math import inf
from typing import TYPE_CHECKING, Any, TypeVar

from podium.errors import LeaseLost, PodiumError, StoreError, UsageError
from podium.events import Event
from podium.messages import Message
from podium.store._pgschema import load_psycopg as _psycopg
from podium.store._pgschema import migrate

# one row encoding for every SQL backend
from podium.store._rows import (
    api_key_from_row,
    api_key_row,
    dumps,
    event_from_row,
    event_row,
    message_from_row,
    run_from_row,
    run_row,
    state_from_row,
    thread_from_row,
)
from podium.store.base import ApiKey, Durability, RunRecord, RunStatus, Store, ThreadInfo, listing_limit, owner_is_alive

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

    from podium.store._pgqueue import PostgresRunQueue

__all__ = ["PostgresStore"]

_RUN_COLUMNS = "id, thread_id, status, input, agent, created, updated, result"
_EVENT_COLUMNS = "seq, run_id, kind, key, ns, body"
_KEY_COLUMNS = 'id, name, "user", scopes, digest, created, revoked'
_NOW = "extract(epoch FROM clock_timestamp())::float8"

T = TypeVar("T")
Work = Callable[["AsyncConnection[Any]"], Awaitable[T]]


def _redact(text: str) -> str:
    """``text`` with the password field of any connection string in it masked (and nothing else changed)."""
    text = re.sub(r"(://[^:/@\s]*:)[^@\s]*@", r"\1***@", text)  # URL form
    return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", text)  # key=value form


def _psycopg_pool() -> Any:
    try:
        import psycopg_pool
    except ImportError:
        raise UsageError("PostgreSQL stores need psycopg_pool: pip install 'podium[postgres]'") from None
    return psycopg_pool


class PostgresStore(Store):
    """A store in a PostgreSQL database, through a pool of connections opened on first use."""

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        connect_timeout: float = 10.0,
        max_connections: int = 10,
        wait_timeout: float = 5.0,
        durability: Durability = "full",
    ) -> None:
        """Describe the database; nothing connects until the first call or :meth:`open`.

        Args:
            url: a libpq connection string, ``postgresql://user:password@host:port/dbname`` or ``key=value`` form.
            schema: the schema holding Podium's tables (created if missing); default: the connection's
                ``search_path`` (normally ``public``).
            connect_timeout: seconds to wait for the server when connecting (unless the URL sets one).
            max_connections: the most connections the pool opens; calls beyond that many at once wait for one.
            wait_timeout: seconds a call waits for a connection (a free one, or a new one while the server is
                unreachable) before it fails with :class:`StoreError`. Short, so that while the database is down
                a caller (an API request) gets its error in seconds; a run's own writes are tried again on their
                own schedule (its journal's retries, then its resumption), not by waiting here.
            durability: ``"full"`` (the server's ``synchronous_commit``: a commit is flushed to its disk before the
                call returns) or ``"process"`` (``synchronous_commit=off``: a commit survives a crash of this
                process, but a crash of the server may lose its last fraction of a second of commits).

        Raises:
            UsageError: psycopg or psycopg_pool is not installed, ``max_connections`` is below 1,
                ``wait_timeout`` is not a number of seconds above zero, or an unknown ``durability``.
            StoreError: ``url`` is not a valid connection string.
        """
        psycopg = _psycopg()
        _psycopg_pool()
        if max_connections < 1:
            raise UsageError(f"max_connections must be at least 1, not {max_connections}")
        if durability not in ("full", "process"):
            raise UsageError(f"durability must be 'full' or 'process', not {durability!r}")
        if isinstance(wait_timeout, bool) or not isinstance(wait_timeout, int | float) or not 0 < wait_timeout < inf:
            raise UsageError(f"wait_timeout must be a number of seconds above zero, not {wait_timeout!r}")
        self.durability: Durability = durability
        """What a committed write survives: ``"full"`` (a crash of the server) or ``"process"`` (of this process)."""
        try:
            params: dict[str, Any] = psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.Error as exc:
            raise StoreError(f"bad PostgreSQL URL {_redact(url)!r}: {_redact(str(exc))}") from None
        params.setdefault("connect_timeout", max(1, round(connect_timeout)))
        params.setdefault("application_name", "podium")
        self._conninfo: str = psycopg.conninfo.make_conninfo(**params)
        host = params.get("host") or params.get("hostaddr") or "localhost"
        where = f"{host}:{params['port']}" if params.get("port") else host
        who = f"{params['user']}@" if params.get("user") else ""
        self.description = f"{who}{where}/{params.get('dbname') or params.get('user') or 'default'}"
        """Where the store is (``user@host:port/dbname``), for messages; never holds the password."""
        self.schema = schema
        """The schema of Podium's tables, or ``None`` for the connection's default."""
        self.max_connections = max_connections
        """The most connections the store holds at once."""
        self._wait_timeout = float(wait_timeout)
        self._pool: AsyncConnectionPool[Any] | None = None
        self._opening = asyncio.Lock()
        self._closed = False

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        schema: str | None = None,
        connect_timeout: float = 10.0,
        max_connections: int = 10,
        wait_timeout: float = 5.0,
        durability: Durability = "full",
    ) -> PostgresStore:
        """Create a store (the arguments are the constructor's) and open it now, so a wrong URL or an unreachable
        server fails here.

        Raises:
            UsageError: as the constructor.
            StoreError: the server cannot be reached or refuses the login.
            StoreCorrupt: the schema belongs to a newer Podium, or is not a Podium one.
        """
        store = cls(
            url,
            schema=schema,
            connect_timeout=connect_timeout,
            max_connections=max_connections,
            wait_timeout=wait_timeout,
            durability=durability,
        )
        await store.open()
        return store

    async def open(self) -> None:
        """Connect, migrate the schema and start the pool (done by the first call otherwise).

        Raises:
            StoreError: the server cannot be reached or refuses the login.
            StoreCorrupt: the schema belongs to a newer Podium, or is not a Podium one.
        """
        await self._ready()

    def run_queue(self) -> PostgresRunQueue:
        """The queue that servers sharing this database claim their runs from (docs/deploy.md)."""
        from podium.store._pgqueue import PostgresRunQueue

        return PostgresRunQueue(self)

    async def close(self) -> None:
        """Close the pool's connections; the store cannot be used afterwards."""
        self._closed = True
        async with self._opening:
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    # connection handling
    async def _ready(self) -> AsyncConnectionPool[Any]:
        """The pool, opened (after one connection checked the server and migrated the schema) on first use."""
        if self._closed:
            raise StoreError(f"the PostgreSQL store {self.description} is closed")
        pool = self._pool
        if pool is not None:
            return pool
        async with self._opening:
            if self._closed:
                raise StoreError(f"the PostgreSQL store {self.description} is closed")
            if self._pool is None:
                await self._first_connection()
                pool = _psycopg_pool().AsyncConnectionPool(
                    self._conninfo,
                    kwargs={"autocommit": True},
                    min_size=1,
                    max_size=self.max_connections,
                    open=False,
                    configure=self._configure,
                    timeout=self._wait_timeout,
                    # a reconnection tried while the server is down gives up within a call's wait, so the next call
                    # starts a new one at once instead of after the pool's growing backoff (up to minutes)
                    reconnect_timeout=self._wait_timeout,
                    name=f"podium {self.description}",
                )
                await pool.open()
                self._pool = pool
            return self._pool

    async def _configure(self, conn: AsyncConnection[Any]) -> None:
        if self.durability == "process":
            await conn.execute("SET synchronous_commit TO off")
        if self.schema is not None:
            sql = _psycopg().sql
            await conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))

    async def _first_connection(self) -> None:
        """Connect once, so an unreachable server or a refused login is a clear error, and migrate the schema."""
        psycopg = _psycopg()
        try:
            conn: AsyncConnection[Any] = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True)
        except psycopg.Error as exc:
            reason = _redact(str(exc).strip())
            raise StoreError(f"cannot connect to PostgreSQL at {self.description}: {reason}") from None
        try:
            await self._configure(conn)
            await self._migrate(conn)
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL {self.description}: {_redact(str(exc).strip())}") from None
        finally:
            await conn.close()

    async def _run(self, work: Work[T]) -> T:
        """Run ``work`` on a connection of the pool, mapping database errors to :class:`StoreError`.

        A connection left broken or inside a transaction (by a lost server or a cancelled call) is rolled back or
        replaced by the pool before anyone else gets it.
        """
        psycopg = _psycopg()
        pool = await self._ready()
        pool_errors = _psycopg_pool()
        try:
            async with pool.connection() as conn:
                return await work(conn)
        except pool_errors.PoolTimeout:  # (an OperationalError too: before that branch, which checks the pool)
            raise StoreError(
                f"PostgreSQL {self.description}: no connection within {self._wait_timeout:g} s (wait_timeout): the "
                f"server does not answer (down, restarting or unreachable), or all {self.max_connections} connections "
                "are busy; try again shortly"
            ) from None
        except pool_errors.PoolClosed:
            raise StoreError(f"the PostgreSQL store {self.description} is closed") from None
        except psycopg.errors.IntegrityError as exc:
            raise StoreError(f"PostgreSQL {self.description}: {str(exc).strip()}") from None
        except psycopg.OperationalError as exc:
            reason = _redact(str(exc).strip())
            await pool.check()  # the server may have dropped the idle connections too: replace them now
            raise StoreError(f"PostgreSQL {self.description} failed (will reconnect): {reason}") from None
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL {self.description}: {str(exc).strip()}") from None
        except UnicodeEncodeError as exc:
            raise StoreError(f"PostgreSQL {self.description}: text that is not valid Unicode: {exc}") from None

    async def _migrate(self, conn: AsyncConnection[Any]) -> None:
        where = f"PostgreSQL {self.description}" + (f" (schema {self.schema})" if self.schema else "")
        await migrate(conn, self.schema, where)

    async def _rows(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        async def work(conn: AsyncConnection[Any]) -> list[tuple[Any, ...]]:
            return await (await conn.execute(query, params)).fetchall()

        return await self._run(work)

    async def _rowcount(self, query: str, params: tuple[Any, ...] = ()) -> int:
        async def work(conn: AsyncConnection[Any]) -> int:
            return (await conn.execute(query, params)).rowcount

        return await self._run(work)

    # threads
    async def create_thread(self, thread_id: str, metadata: dict[str, Any] | None = None) -> ThreadInfo:
        info = ThreadInfo(id=thread_id, metadata=dict(metadata or {}))

        async def work(conn: AsyncConnection[Any]) -> ThreadInfo:
            # one statement: the row inserted (first column true), or the existing one read in the same snapshot
            cursor = await conn.execute(
                "WITH added AS (INSERT INTO threads VALUES (%s,%s,%s) ON CONFLICT (id) DO NOTHING RETURNING id) "
                "SELECT true, 0, '' FROM added UNION ALL SELECT false, created, metadata FROM threads WHERE id=%s",
                (thread_id, info.created, dumps(info.metadata), thread_id),
            )
            row = await cursor.fetchone()
            if row is None:  # inserted meanwhile by a transaction this statement's snapshot did not see
                cursor = await conn.execute("SELECT false, created, metadata FROM threads WHERE id=%s", (thread_id,))
                row = await cursor.fetchone()
            if row is None:  # threads are never deleted
                raise StoreError(f"PostgreSQL {self.description}: thread {thread_id!r} vanished")
            if row[0]:
                return info
            return thread_from_row(thread_id, row[1], row[2])

        return await self._run(work)

    async def get_thread(self, thread_id: str) -> ThreadInfo | None:
        rows = await self._rows("SELECT created, metadata FROM threads WHERE id=%s", (thread_id,))
        return thread_from_row(thread_id, rows[0][0], rows[0][1]) if rows else None

    async def list_threads(self, limit: int = 100) -> list[ThreadInfo]:
        rows = await self._rows(
            "SELECT id, created, metadata FROM threads ORDER BY created DESC LIMIT %s", (listing_limit(limit),)
        )
        return [thread_from_row(*r) for r in rows]

    # events
    async def append_events(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        rows = [event_row(thread_id, e) for e in events]

        async def work(conn: AsyncConnection[Any]) -> None:
            if len(rows) == 1:  # one statement commits by itself: no BEGIN/COMMIT round trips
                seq = rows[0][1]
                if owner is None:
                    inserted = await conn.execute(_NEXT_EVENT, (*rows[0], thread_id, seq - 1))
                else:
                    inserted = await conn.execute(_FENCED_EVENT, (*rows[0], thread_id, owner, thread_id, seq - 1))
                if inserted.rowcount != 1:
                    raise await _refused(conn, self.description, thread_id, owner, seq)
                return
            async with conn.transaction():
                await _insert_events(conn, self.description, thread_id, rows, owner)

        await self._run(work)

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

        async def work(conn: AsyncConnection[Any]) -> None:  # one transaction: the run's end and its status
            async with conn.transaction():
                await _insert_events(conn, self.description, thread_id, rows, owner)
                cursor = await conn.execute(_UPDATE_RUN, (status, time.time(), dumps(result), run_id))
                if cursor.rowcount == 0:
                    raise StoreError(f"no run {run_id!r}")
                if release and owner is not None:
                    await conn.execute(_RELEASE, (thread_id, owner))

        await self._run(work)
        return release and owner is not None

    async def read_events(self, thread_id: str, *, after: int = 0, run_id: str | None = None) -> list[Event]:
        query = f"SELECT {_EVENT_COLUMNS} FROM events WHERE thread_id=%s AND seq>%s"
        params: tuple[Any, ...] = (thread_id, after)
        if run_id is not None:
            query += " AND run_id=%s"
            params += (run_id,)
        return [event_from_row(*row) for row in await self._rows(query + " ORDER BY seq", params)]

    async def last_seq(self, thread_id: str) -> int:
        rows = await self._rows("SELECT max(seq) FROM events WHERE thread_id=%s", (thread_id,))
        return int(rows[0][0] or 0)

    async def log_head(self, thread_id: str) -> tuple[int, str]:
        rows = await self._rows(
            "SELECT seq, run_id FROM events WHERE thread_id=%s ORDER BY seq DESC LIMIT 1", (thread_id,)
        )
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, "")

    async def load_messages(
        self, thread_id: str, namespace: str = "", *, exclude_run: str | None = None
    ) -> list[Message]:
        rows = await self._rows(
            "SELECT body FROM events WHERE thread_id=%s AND kind='message' AND ns=%s "
            "AND run_id IS DISTINCT FROM %s ORDER BY seq",
            (thread_id, namespace, exclude_run),
        )
        return [message_from_row(r[0]) for r in rows]

    async def journal(self, run_id: str) -> dict[str, Event]:
        rows = await self._rows(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE run_id=%s AND key IS NOT NULL ORDER BY thread_id, seq",
            (run_id,),
        )
        events = [event_from_row(*row) for row in rows]
        return {e.key: e for e in events if e.key is not None}

    # runs
    async def create_run(self, run: RunRecord) -> None:
        row = run_row(run)
        await self._rowcount(f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)", row)

    async def update_run(self, run_id: str, status: RunStatus, result: dict[str, Any] | None = None) -> None:
        changed = await self._rowcount(
            _UPDATE_RUN, (status, time.time(), dumps(result) if result is not None else None, run_id)
        )
        if changed == 0:
            raise StoreError(f"no run {run_id!r}")

    async def get_run(self, run_id: str) -> RunRecord | None:
        rows = await self._rows(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id=%s", (run_id,))
        return run_from_row(rows[0]) if rows else None

    async def list_runs(self, thread_id: str) -> list[RunRecord]:
        rows = await self._rows(f"SELECT {_RUN_COLUMNS} FROM runs WHERE thread_id=%s ORDER BY created, n", (thread_id,))
        return [run_from_row(r) for r in rows]

    async def last_run(self, thread_id: str) -> RunRecord | None:
        rows = await self._rows(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE thread_id=%s ORDER BY created DESC, n DESC LIMIT 1", (thread_id,)
        )
        return run_from_row(rows[0]) if rows else None

    async def delete_run(self, run_id: str) -> None:
        async def work(conn: AsyncConnection[Any]) -> None:
            async with conn.transaction():
                row = await (await conn.execute("SELECT thread_id FROM runs WHERE id=%s", (run_id,))).fetchone()
                if row is None:
                    raise StoreError(f"no run {run_id!r}")
                others = await conn.execute(
                    "SELECT count(*) FROM events WHERE thread_id=%s AND run_id<>%s AND seq > "
                    "(SELECT coalesce(min(seq), 0) FROM events WHERE thread_id=%s AND run_id=%s)",
                    (row[0], run_id, row[0], run_id),
                )
                if (await others.fetchone() or (0,))[0]:
                    raise StoreError(f"run {run_id!r} is not the newest of thread {row[0]!r}: other events follow")
                await conn.execute("DELETE FROM events WHERE thread_id=%s AND run_id=%s", (row[0], run_id))
                await conn.execute("DELETE FROM runs WHERE id=%s", (run_id,))

        await self._run(work)

    async def delete_thread(self, thread_id: str) -> None:
        async def work(conn: AsyncConnection[Any]) -> None:
            async with conn.transaction():
                for table in ("events", "runs", "state", "leases"):
                    await conn.execute(f"DELETE FROM {table} WHERE thread_id=%s", (thread_id,))
                await conn.execute("DELETE FROM threads WHERE id=%s", (thread_id,))

        await self._run(work)

    # leases
    async def acquire_thread(self, thread_id: str, owner: str, ttl: float) -> str | None:
        # the common cases in one statement, no transaction: a free thread, or a renewal of the owner's own lease
        fast = (
            f"INSERT INTO leases VALUES (%s, %s, {_NOW} + %s) ON CONFLICT (thread_id) DO UPDATE "
            "SET expires=excluded.expires WHERE leases.owner=excluded.owner"
        )

        async def work(conn: AsyncConnection[Any]) -> str | None:
            if (await conn.execute(fast, (thread_id, owner, float(ttl)))).rowcount == 1:
                return None
            async with conn.transaction():
                for _ in range(5):  # each pass either decides or saw the lease released in between
                    cursor = await conn.execute(
                        f"INSERT INTO leases VALUES (%s, %s, {_NOW} + %s) ON CONFLICT (thread_id) DO NOTHING",
                        (thread_id, owner, float(ttl)),
                    )
                    if cursor.rowcount == 1:
                        return None
                    cursor = await conn.execute(
                        f"SELECT owner, expires > {_NOW} FROM leases WHERE thread_id=%s FOR UPDATE", (thread_id,)
                    )
                    row = await cursor.fetchone()
                    if row is None:
                        continue
                    holder, live = row
                    if holder != owner and live and owner_is_alive(holder):
                        return str(holder)
                    await conn.execute(
                        f"UPDATE leases SET owner=%s, expires={_NOW} + %s WHERE thread_id=%s",
                        (owner, float(ttl), thread_id),
                    )
                    return None
            raise StoreError(f"PostgreSQL {self.description}: the lease of thread {thread_id!r} keeps changing hands")

        return await self._run(work)

    async def renew_thread(self, thread_id: str, owner: str, ttl: float) -> str | None:
        async def work(conn: AsyncConnection[Any]) -> str | None:
            renew = f"UPDATE leases SET expires={_NOW} + %s WHERE thread_id=%s AND owner=%s"
            if (await conn.execute(renew, (float(ttl), thread_id, owner))).rowcount == 1:
                return None
            row = await (await conn.execute("SELECT owner FROM leases WHERE thread_id=%s", (thread_id,))).fetchone()
            return str(row[0]) if row else ""

        return await self._run(work)

    async def release_thread(self, thread_id: str, owner: str) -> None:
        await self._rowcount(_RELEASE, (thread_id, owner))

    # state
    async def put_state(self, thread_id: str, key: str, value: Any, *, owner: str | None = None) -> None:
        unique_violation = _psycopg().errors.UniqueViolation
        params = (thread_id, key, dumps(value), thread_id, key)

        async def work(conn: AsyncConnection[Any]) -> None:
            for attempt in range(3):  # another connection may take the same next version first
                try:
                    if owner is not None:  # a run's state: only while it holds the lease (its transaction's own)
                        async with conn.transaction():
                            held = "SELECT 1 FROM leases WHERE thread_id=%s AND owner=%s FOR SHARE"
                            if await (await conn.execute(held, (thread_id, owner))).fetchone() is None:
                                raise await _lost(conn, thread_id, owner)
                            await conn.execute(
                                "INSERT INTO state SELECT %s, %s, coalesce(max(version), 0) + 1, %s "
                                "FROM state WHERE thread_id=%s AND key=%s",
                                params,
                            )
                        return
                    await conn.execute(
                        "INSERT INTO state SELECT %s, %s, coalesce(max(version), 0) + 1, %s "
                        "FROM state WHERE thread_id=%s AND key=%s",
                        params,
                    )
                    return
                except unique_violation:
                    if attempt == 2:
                        raise

        await self._run(work)

    async def get_state(self, thread_id: str, key: str) -> Any:
        rows = await self._rows(
            "SELECT version, value FROM state WHERE thread_id=%s AND key=%s ORDER BY version DESC LIMIT 1",
            (thread_id, key),
        )
        return state_from_row(thread_id, key, rows[0][0], rows[0][1]) if rows else None

    # API keys
    async def add_api_key(self, key: ApiKey) -> None:
        row = api_key_row(key)
        await self._rowcount(f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s)", row)

    async def find_api_key(self, digest: str) -> ApiKey | None:
        rows = await self._rows(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE digest=%s", (digest,))
        return api_key_from_row(rows[0]) if rows else None

    async def list_api_keys(self) -> list[ApiKey]:
        rows = await self._rows(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created, n")
        return [api_key_from_row(r) for r in rows]

    async def revoke_api_key(self, key_id: str) -> bool:
        sql = "UPDATE api_keys SET revoked=%s WHERE id=%s AND revoked IS NULL"
        return await self._rowcount(sql, (time.time(), key_id)) == 1


_INSERT_EVENT = "INSERT INTO events VALUES (%s,%s,%s,%s,%s,%s,%s)"
_HEAD = "(SELECT coalesce(max(seq), 0) FROM events WHERE thread_id=%s)"
"""The thread's last sequence number (one probe of the primary key, from its end)."""
_NEXT_EVENT = (  # inserted only right after the thread's last event (the last parameter)
    f"INSERT INTO events SELECT %s, %s::bigint, %s, %s, %s, %s, %s WHERE {_HEAD} = %s::bigint"
)
_FENCED_EVENT = (  # the same, and only if the owner's lease row exists, locked against a takeover meanwhile
    "INSERT INTO events SELECT %s, %s::bigint, %s, %s, %s, %s, %s FROM leases WHERE thread_id=%s AND owner=%s "
    f"AND {_HEAD} = %s::bigint FOR SHARE"
)
_UPDATE_RUN = "UPDATE runs SET status=%s, updated=%s, result=coalesce(%s, result) WHERE id=%s"
_RELEASE = "DELETE FROM leases WHERE thread_id=%s AND owner=%s"


async def _insert_events(
    conn: AsyncConnection[Any], where: str, thread_id: str, rows: list[Any], owner: str | None
) -> None:
    """Insert event rows inside the caller's transaction, right after the thread's last event; with an ``owner``,
    only while it holds the lease (the lease and the head are read in one statement).

    Raises:
        LeaseLost: ``owner`` does not hold the lease.
        StoreError: the rows are not numbered on from the thread's last event (see :func:`_not_next`).
    """
    if not rows:
        return
    first = rows[0][1]
    if any(row[1] != first + offset for offset, row in enumerate(rows)):
        numbers = ", ".join(str(row[1]) for row in rows)
        raise StoreError(
            f"PostgreSQL {where}: the events of one append must be numbered one after the other, not {numbers}"
        )
    async with conn.cursor() as cursor:
        if owner is None:
            found = await (await cursor.execute(f"SELECT {_HEAD}", (thread_id,))).fetchone()
        else:
            held = f"SELECT {_HEAD} FROM leases WHERE thread_id=%s AND owner=%s FOR SHARE"
            found = await (await cursor.execute(held, (thread_id, thread_id, owner))).fetchone()
            if found is None:
                raise await _lost(conn, thread_id, owner)
        assert found is not None
        if found[0] != first - 1:
            raise _not_next(where, thread_id, first, found[0])
        await cursor.executemany(_INSERT_EVENT, rows)


def _not_next(where: str, thread_id: str, seq: int, head: int) -> StoreError:
    """The error of an append numbered ``seq`` on a thread whose last event is ``head`` (not ``seq - 1``).

    A writer under the lease numbers its events on from the head it last wrote. A head below that means commits it
    was told of are gone: a crash of the database server at durability ``process`` (``synchronous_commit=off``) or
    a failover to a standby that had not received them. Writing on would leave a hole in the middle of the log (a
    tool result whose call is lost), so nothing is written and the writer must read the log again: a run stops,
    unfinished, and goes on from its stored journal, making again the steps whose records were lost.
    """
    if head >= seq:
        return StoreError(
            f"PostgreSQL {where}: event {seq} of thread {thread_id!r} is already taken (its log ends at "
            f"{head}); nothing was written"
        )
    return StoreError(
        f"PostgreSQL {where}: the log of thread {thread_id!r} ends at event {head}, not {seq - 1} as its writer "
        f"expected; nothing was written. Commits were lost (a crash of the database server at durability "
        f"'process'?): the writer must read the log again (a run stops and goes on from its stored journal)"
    )


async def _refused(conn: AsyncConnection[Any], where: str, thread_id: str, owner: str | None, seq: int) -> PodiumError:
    """Why a one-row append inserted nothing: the lease is not ``owner``'s, or ``seq`` does not follow the head."""
    row = await (
        await conn.execute(f"SELECT (SELECT owner FROM leases WHERE thread_id=%s), {_HEAD}", (thread_id, thread_id))
    ).fetchone()
    holder, head = row if row is not None else (None, 0)
    if owner is not None and holder != owner:
        return LeaseLost(thread_id, owner, holder)
    return _not_next(where, thread_id, seq, int(head))


async def _lost(conn: AsyncConnection[Any], thread_id: str, owner: str) -> LeaseLost:
    row = await (await conn.execute("SELECT owner FROM leases WHERE thread_id=%s", (thread_id,))).fetchone()
    return LeaseLost(thread_id, owner, row[0] if row else None)
