"""The PostgreSQL store's schema: its tables, the migrations that make them, and the migrator."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from podium.errors import StoreCorrupt, UsageError

if TYPE_CHECKING:
    from psycopg import AsyncConnection

VERSION_TABLE = "podium_schema"
TABLES = ("threads", "runs", "events", "leases", "state", "api_keys", "run_queue")

MIGRATIONS: list[str] = [
    # 1: threads, runs, the event log (also the journal), leases, versioned state
    """
    CREATE TABLE threads (id TEXT PRIMARY KEY, created DOUBLE PRECISION NOT NULL, metadata TEXT NOT NULL);
    CREATE INDEX threads_created ON threads (created);
    CREATE TABLE runs (
        id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, status TEXT NOT NULL, input TEXT, agent TEXT NOT NULL,
        created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL, result TEXT,
        n BIGINT GENERATED ALWAYS AS IDENTITY);
    CREATE INDEX runs_thread ON runs (thread_id, created, n);
    CREATE TABLE events (
        thread_id TEXT NOT NULL, seq BIGINT NOT NULL, run_id TEXT NOT NULL, kind TEXT NOT NULL,
        key TEXT, ns TEXT, body TEXT NOT NULL, PRIMARY KEY (thread_id, seq));
    CREATE UNIQUE INDEX events_journal ON events (run_id, key) WHERE key IS NOT NULL;
    CREATE TABLE leases (thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, expires DOUBLE PRECISION NOT NULL);
    CREATE TABLE state (
        thread_id TEXT NOT NULL, key TEXT NOT NULL, version INTEGER NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (thread_id, key, version))
    """,
    # 2: the server's API keys (a digest of each secret, never the secret)
    """
    CREATE TABLE api_keys (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, "user" TEXT NOT NULL, scopes TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE, created DOUBLE PRECISION NOT NULL, revoked DOUBLE PRECISION,
        n BIGINT GENERATED ALWAYS AS IDENTITY)
    """,
    # 3: the run queue that servers sharing the database claim runs from (see podium.store._pgqueue)
    """
    CREATE TABLE run_queue (
        run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, n BIGINT GENERATED ALWAYS AS IDENTITY, job TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'running')), owner TEXT, expires DOUBLE PRECISION,
        stop TEXT, claims INTEGER NOT NULL DEFAULT 0);
    CREATE UNIQUE INDEX run_queue_one_running ON run_queue (thread_id) WHERE state = 'running';
    CREATE INDEX run_queue_thread ON run_queue (thread_id, n);
    CREATE INDEX run_queue_owner ON run_queue (owner) WHERE state = 'running'
    """,
]


def load_psycopg() -> Any:
    """The ``psycopg`` module.

    Raises:
        UsageError: it is not installed.
    """
    try:
        import psycopg
    except ImportError:
        raise UsageError("PostgreSQL stores need psycopg 3: pip install 'podium[postgres]'") from None
    return psycopg


async def migrate(conn: AsyncConnection[Any], schema: str | None, where: str) -> None:
    """Bring the schema (``None``: the connection's current one) to the newest version, once per schema at a time.

    Raises:
        StoreCorrupt: the schema is newer than this Podium, or holds tables of these names that are not Podium's.
    """

    async def version() -> int | None:
        cursor = await conn.execute(f"SELECT to_regclass('{VERSION_TABLE}') IS NOT NULL")
        if not (await cursor.fetchone() or (False,))[0]:
            return None
        row = await (await conn.execute(f"SELECT max(version) FROM {VERSION_TABLE}")).fetchone()
        current = int(row[0]) if row and row[0] is not None else 0
        if current > len(MIGRATIONS):
            raise StoreCorrupt(
                f"{where} has Podium schema version {current}, newer than this Podium knows "
                f"({len(MIGRATIONS)}); upgrade Podium"
            )
        return current

    if await version() == len(MIGRATIONS):
        return
    # One migrator per schema at a time. A session lock taken *before* the transaction: the transaction then
    # starts after a concurrent migrator committed and sees its tables (a lock taken inside would not).
    lock = "SELECT pg_advisory_{}(hashtext('podium:' || coalesce(%s, current_schema(), '')))"
    await conn.execute(lock.format("lock"), (schema,))
    try:
        await _migrate_locked(conn, schema, where, version)
    finally:
        if not conn.closed and conn.info.transaction_status == load_psycopg().pq.TransactionStatus.IDLE:
            await conn.execute(lock.format("unlock"), (schema,))


async def _migrate_locked(
    conn: AsyncConnection[Any], schema: str | None, where: str, version: Callable[[], Awaitable[int | None]]
) -> None:
    sql = load_psycopg().sql
    if schema is not None:
        await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    async with conn.transaction():
        current = await version()
        if current is None:
            cursor = await conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema() AND table_name = ANY(%s) ORDER BY table_name",
                (list(TABLES),),
            )
            clashes = [r[0] for r in await cursor.fetchall()]
            if clashes:
                raise StoreCorrupt(
                    f"{where} already has tables {', '.join(clashes)} but no {VERSION_TABLE} table: it is not "
                    "a Podium schema; give the store another schema or database"
                )
            await conn.execute(f"CREATE TABLE {VERSION_TABLE} (version INTEGER NOT NULL)")
            await conn.execute(f"INSERT INTO {VERSION_TABLE} VALUES (0)")
            current = 0
        for number in range(current, len(MIGRATIONS)):
            for statement in MIGRATIONS[number].split(";"):
                if statement.strip():
                    await conn.execute(statement)
        await conn.execute(f"UPDATE {VERSION_TABLE} SET version=%s", (len(MIGRATIONS),))
