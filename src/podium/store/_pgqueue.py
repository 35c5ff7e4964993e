"""The run queue of servers sharing one PostgreSQL database, and the listener that wakes them (docs/deploy.md).

A submitted run is a row of ``run_queue``, ``pending`` until an executor of any process claims it. Claims take the
oldest row of each thread only (so a thread's runs start in the order they were queued) with ``FOR UPDATE SKIP
LOCKED`` (so concurrent claimers never wait on each other), and a partial unique index lets at most one row per
thread be ``running``: the database itself refuses a second running run of a thread, whatever a process believes.

A claim lasts ``ttl`` seconds and its process renews all of its claims in one statement on a timer; a process that
dies stops renewing, and once its claims expire another process claims them again and resumes the runs from the
journal. Expiry is judged by the database server's clock, so hosts with skewed clocks agree.

Processes tell each other what changed with ``NOTIFY``: ``podium_queue`` (a run was added to a thread's queue, or
its claim released), ``podium_left`` (a run left the queue: finished, or removed while pending; the payload says
which, and whether its thread has more, so a waiter needs no query), ``podium_stop`` (cancel, interrupt or rollback
of a running run: its owner stops it) and ``podium_events`` (events were stored: streams elsewhere read them). The
rows are the truth: a process re-reads what it follows when its listening connection comes back, and on a timer.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from podium.errors import StoreError
from podium.store._rows import job_from_row

if TYPE_CHECKING:
    from psycopg import AsyncConnection

T = TypeVar("T")


class _Database(Protocol):
    """What the queue uses of a :class:`~podium.store.postgres.PostgresStore` (which imports this module)."""

    schema: str | None
    _conninfo: str

    async def _run(self, work: Callable[[AsyncConnection[Any]], Awaitable[T]]) -> T: ...

    async def _rows(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...


__all__ = ["KINDS", "Listener", "PostgresRunQueue", "QueueBusy", "QueuedRun", "left_run"]

_log = logging.getLogger("podium.store")

KINDS = ("queue", "left", "stop", "events")
"""The kinds of notification executors listen for."""


def channel(kind: str, schema: str | None) -> str:
    """The notification channel of ``kind`` for the stores of ``schema`` (channels are per database, not schema)."""
    return f"podium_{kind}" + (f"_{hashlib.sha1(schema.encode()).hexdigest()[:12]}" if schema else "")


_NOW = "extract(epoch FROM clock_timestamp())::float8"
_COLUMNS = "run_id, thread_id, job, state, owner, stop, claims"


@dataclass(slots=True, kw_only=True)
class QueuedRun:
    """A row of the run queue."""

    run_id: str
    """The run."""
    thread_id: str
    """Its thread."""
    job: dict[str, Any]
    """What to execute (the executor's job, in JSON form)."""
    state: str
    """``pending`` or ``running``."""
    owner: str | None = None
    """The process executing it, while ``running``."""
    stop: str | None = None
    """A stop asked of its owner: ``cancel`` or ``rollback``."""
    claims: int = 0
    """How many times it was claimed: above 1, a process died (or lost its claim) while executing it."""


def left_run(payload: str) -> tuple[str, bool, str]:
    """From a ``left`` notification's payload: the run, whether its thread has more runs queued, and the process
    that removed it (which knew it already).

    Raises:
        ValueError: the payload is not a ``left`` one.
    """
    run_id, more, by = json.loads(payload)
    return str(run_id), bool(more), str(by)


# the payload of a ``left`` notification: the run, whether its thread has more runs, who removed it
_LEFT = "json_build_array(run_id, more, %s::text)::text"
_OTHERS = "SELECT 1 FROM run_queue o WHERE o.thread_id = r.thread_id AND o.run_id <> r.run_id"


def _queued(row: tuple[Any, ...]) -> QueuedRun:
    return QueuedRun(
        run_id=row[0],
        thread_id=row[1],
        job=job_from_row(row[0], row[2]),
        state=row[3],
        owner=row[4],
        stop=row[5],
        claims=row[6],
    )


class QueueBusy(StoreError):
    """The thread has a run queued or executing and the submission asked not to wait (``reject``)."""


class PostgresRunQueue:
    """The ``run_queue`` table of a :class:`~podium.store.postgres.PostgresStore`."""

    def __init__(self, store: _Database) -> None:
        """Use the tables of ``store``."""
        self.store = store
        self.channels = {kind: channel(kind, store.schema) for kind in KINDS}
        """The channel of each kind of notification."""

    async def submit(
        self, thread_id: str, run_id: str, job: dict[str, Any], *, strategy: str, resume: bool, by: str = ""
    ) -> tuple[bool, list[QueuedRun], str | None]:
        """Queue a run as ``strategy`` says when the thread is busy.

        Returns whether it had to wait, the pending runs it displaced, and the running run asked to stop. ``by``
        names the submitting process in the notifications of displaced runs.

        Submissions of one thread are serialised by a transaction-level advisory lock, so two processes deciding at
        once see each other's rows. ``interrupt`` and ``rollback`` remove the pending runs (returned, for the caller
        to record) and ask the running one's owner to stop it (``podium_stop``). ``enqueue`` decides nothing, so it
        takes the lock, queues the run and notifies in one statement (whether it waited is then judged from the rows
        committed when the statement began).

        Raises:
            QueueBusy: the thread is busy and ``strategy`` is ``reject`` or this is a resume.
        """

        if strategy == "enqueue" and not resume:
            rows = await self.store._rows(
                "WITH locked AS (SELECT pg_advisory_xact_lock(hashtext('podium-queue:' || %s))), "
                "added AS (INSERT INTO run_queue (run_id, thread_id, job, state) "
                "SELECT %s, %s, %s, 'pending' FROM locked RETURNING thread_id) "
                "SELECT EXISTS (SELECT 1 FROM run_queue WHERE thread_id=%s), pg_notify(%s, %s)::text FROM added",
                (thread_id, run_id, thread_id, json.dumps(job), thread_id, self.channels["queue"], thread_id),
            )
            return bool(rows[0][0]), [], None

        async def work(conn: AsyncConnection[Any]) -> tuple[bool, list[QueuedRun], str | None]:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext('podium-queue:' || %s))", (thread_id,))
                cursor = await conn.execute(
                    f"SELECT {_COLUMNS} FROM run_queue WHERE thread_id=%s ORDER BY n", (thread_id,)
                )
                rows = [_queued(r) for r in await cursor.fetchall()]
                displaced: list[QueuedRun] = []
                running = next((r.run_id for r in rows if r.state == "running"), None)
                if rows and (strategy == "reject" or resume):
                    raise QueueBusy(f"thread {thread_id!r} is busy with another run (multitask_strategy)")
                if rows and strategy in ("interrupt", "rollback"):
                    displaced = [r for r in rows if r.state == "pending"]
                    await conn.execute(
                        f"SELECT pg_notify(%s, {_LEFT}) FROM (SELECT run_id, true more FROM run_queue "
                        "WHERE thread_id=%s AND state='pending') r",
                        (self.channels["left"], by, thread_id),
                    )
                    await conn.execute("DELETE FROM run_queue WHERE thread_id=%s AND state='pending'", (thread_id,))
                    stop = "rollback" if strategy == "rollback" else "cancel"
                    await conn.execute(
                        "SELECT pg_notify(%s, run_id) FROM run_queue WHERE thread_id=%s AND state='running'",
                        (self.channels["stop"], thread_id),
                    )
                    await conn.execute(
                        "UPDATE run_queue SET stop=%s WHERE thread_id=%s AND state='running'", (stop, thread_id)
                    )
                await conn.execute(
                    "INSERT INTO run_queue (run_id, thread_id, job, state) VALUES (%s, %s, %s, 'pending')",
                    (run_id, thread_id, json.dumps(job)),
                )
                await conn.execute("SELECT pg_notify(%s, %s)", (self.channels["queue"], thread_id))
                return bool(rows), displaced, running if strategy in ("interrupt", "rollback") else None

        return await self.store._run(work)

    async def claim(self, owner: str, ttl: float, limit: int) -> list[QueuedRun]:
        """Claim up to ``limit`` runs for ``owner`` for ``ttl`` seconds: each thread's first, pending or expired."""

        async def work(conn: AsyncConnection[Any]) -> list[QueuedRun]:
            cursor = await conn.execute(
                f"""
                WITH head AS (
                    SELECT DISTINCT ON (thread_id) run_id FROM run_queue ORDER BY thread_id, n
                ), pick AS (
                    SELECT q.run_id FROM run_queue q JOIN head USING (run_id)
                    WHERE q.state = 'pending' OR q.expires < {_NOW}
                    ORDER BY q.n LIMIT %s FOR UPDATE OF q SKIP LOCKED
                )
                UPDATE run_queue q SET state='running', owner=%s, expires={_NOW} + %s, claims=q.claims + 1
                FROM pick WHERE q.run_id = pick.run_id
                RETURNING q.run_id, q.thread_id, q.job, q.state, q.owner, q.stop, q.claims
                """,
                (limit, owner, float(ttl)),
            )
            return [_queued(r) for r in await cursor.fetchall()]

        try:
            return await self.store._run(work)
        except StoreError as exc:
            if "run_queue_one_running" in str(exc):  # a head that changed under us: the index held, try again later
                return []
            raise

    async def renew(self, owner: str, ttl: float) -> list[QueuedRun]:
        """Extend every claim of ``owner`` by ``ttl`` seconds (one statement); the runs it still holds."""
        rows = await self.store._rows(
            f"UPDATE run_queue SET expires={_NOW} + %s WHERE owner=%s AND state='running' RETURNING {_COLUMNS}",
            (float(ttl), owner),
        )
        return [_queued(r) for r in rows]

    async def finish(self, run_id: str, owner: str, *, rollback: bool = False) -> bool:
        """Remove a run ``owner`` executed from the queue, and say so (``podium_left``); whether it was removed.

        Not removed: ``owner`` lost the claim, or (unless ``rollback``) a rollback was asked of the run, which the
        caller does first (the run's records go before the thread's next run can start).
        """
        rows = await self.store._rows(
            "WITH done AS (DELETE FROM run_queue r WHERE run_id=%s AND owner=%s "
            f"AND (%s OR stop IS DISTINCT FROM 'rollback') RETURNING r.run_id, r.thread_id, EXISTS ({_OTHERS}) more) "
            f"SELECT pg_notify(%s, {_LEFT})::text FROM done",
            (run_id, owner, rollback, self.channels["left"], owner),
        )
        return bool(rows)

    async def release(self, owner: str, run_id: str | None) -> None:
        """Let the claims of ``owner`` (on one run, or all) expire now, so another process takes them over."""
        await self.store._rows(
            "WITH freed AS (UPDATE run_queue SET expires=0 WHERE owner=%s AND state='running' "
            "AND (%s::text IS NULL OR run_id=%s) RETURNING thread_id) SELECT pg_notify(%s, thread_id) FROM freed",
            (owner, run_id, run_id, self.channels["queue"]),
        )

    async def remove_pending(self, run_id: str, by: str = "") -> QueuedRun | None:
        """Take a run out of the queue while it still waits; the row removed, or ``None`` if it is not pending.

        ``by`` names the process removing it, in the notification.
        """
        rows = await self.store._rows(
            "WITH gone AS (DELETE FROM run_queue r WHERE run_id=%s AND state='pending' "
            f"RETURNING {_COLUMNS}, EXISTS ({_OTHERS}) more) "
            f"SELECT {_COLUMNS}, pg_notify(%s, {_LEFT}) FROM gone",
            (run_id, self.channels["left"], by),
        )
        return _queued(rows[0]) if rows else None

    async def request_stop(self, run_id: str, stop: str) -> bool:
        """Ask the owner of a running run to stop it (``cancel`` or ``rollback``); whether it was running."""
        rows = await self.store._rows(
            "WITH asked AS (UPDATE run_queue SET stop=%s WHERE run_id=%s AND state='running' RETURNING run_id) "
            "SELECT pg_notify(%s, run_id) FROM asked",
            (stop, run_id, self.channels["stop"]),
        )
        return bool(rows)

    async def get(self, run_id: str) -> QueuedRun | None:
        """The run's row, or ``None`` once it finished (or was never queued)."""
        rows = await self.store._rows(f"SELECT {_COLUMNS} FROM run_queue WHERE run_id=%s", (run_id,))
        return _queued(rows[0]) if rows else None

    async def present(self, run_ids: list[str]) -> set[str]:
        """Which of ``run_ids`` are still queued or executing (one statement)."""
        rows = await self.store._rows("SELECT run_id FROM run_queue WHERE run_id = ANY(%s)", (run_ids,))
        return {r[0] for r in rows}

    async def before_submit(self, thread_id: str) -> tuple[int, str | None, str | None, int]:
        """In one statement: how many runs of the thread are queued, its newest run's id and status (``None`` when
        it has none), and its last event's sequence number."""
        rows = await self.store._rows(
            "SELECT (SELECT count(*) FROM run_queue WHERE thread_id=%s), last.id, last.status, "
            "(SELECT coalesce(max(seq), 0) FROM events WHERE thread_id=%s) FROM (SELECT 1) one LEFT JOIN LATERAL "
            "(SELECT id, status FROM runs WHERE thread_id=%s ORDER BY created DESC, n DESC LIMIT 1) last ON true",
            (thread_id, thread_id, thread_id),
        )
        count, last_id, status, seq = rows[0]
        return int(count), last_id, status, int(seq)

    async def of_thread(self, thread_id: str) -> list[QueuedRun]:
        """The thread's queued and executing runs, oldest first."""
        rows = await self.store._rows(f"SELECT {_COLUMNS} FROM run_queue WHERE thread_id=%s ORDER BY n", (thread_id,))
        return [_queued(r) for r in rows]

    async def notify(self, kind: str, payload: str) -> None:
        """Send one notification of ``kind`` (used for batches of stored events)."""
        await self.store._rows("SELECT pg_notify(%s, %s)", (self.channels[kind], payload))


class Listener:
    """A connection of its own that ``LISTEN``s on the queue's channels and calls ``on_notify(kind, payload)``.

    A lost connection is opened again after a pause; ``on_reconnect`` is called then (notifications sent meanwhile
    are lost, so the caller re-reads what it follows).
    """

    def __init__(
        self, queue: PostgresRunQueue, on_notify: Callable[[str, str], None], on_reconnect: Callable[[], None]
    ) -> None:
        """Listen through a connection of its own to the database of ``queue``."""
        self.queue, self.on_notify, self.on_reconnect = queue, on_notify, on_reconnect
        self._task: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()

    def start(self) -> None:
        """Start listening in the background."""
        self._task = asyncio.create_task(self._listen(), name="podium-listener")

    async def stop(self) -> None:
        """Stop listening and close the connection."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _listen(self) -> None:
        import psycopg
        from psycopg import sql

        kinds = {name: kind for kind, name in self.queue.channels.items()}
        first, pause = True, 0.5
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.queue.store._conninfo, autocommit=True)
                async with conn:
                    for name in kinds:
                        await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(name)))
                    self.connected.set()
                    pause = 0.5
                    if not first:
                        self.on_reconnect()
                    first = False
                    async for note in conn.notifies():
                        self.on_notify(kinds[note.channel], note.payload)
            except psycopg.Error as exc:
                if self.connected.is_set() or first:
                    _log.warning("lost the notification connection to PostgreSQL (%s); reconnecting", exc)
                self.connected.clear()
                await asyncio.sleep(pause)
                pause = min(5.0, pause * 2)
