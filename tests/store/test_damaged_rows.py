"""A row damaged outside Podium, in any table a store reads back, is :class:`StoreCorrupt` naming its table, its key
and what is wrong (never a bare ``JSONDecodeError`` or ``TypeError``), in SQLite and PostgreSQL alike; the
``podium`` commands that read it print one ``error:`` line and exit with status 2.

Damaged event rows are covered by ``tests/test_errors.py`` and damaged pages by ``test_corruption.py``.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from podium import ReactAgent, Runtime, SQLiteStore, StoreCorrupt
from podium.server.auth import new_api_key
from podium.store.base import Store
from podium.testing import FunctionModel

ROOT = Path(__file__).parents[2]

Read = Callable[[Store], Awaitable[Any]]


def _agent() -> ReactAgent:
    return ReactAgent("a", FunctionModel(lambda messages, _: "ok"))


async def _send(store: Store) -> Any:
    return await Runtime(store).send(_agent(), "more", thread_id="t")


READS: dict[str, Read] = {
    "get_thread": lambda s: s.get_thread("t"),
    "list_threads": lambda s: s.list_threads(),
    "create_thread": lambda s: s.create_thread("t"),
    "messages": lambda s: Runtime(s).messages("t"),
    "events": lambda s: Runtime(s).events("t"),
    "send": _send,
    "get_run": lambda s: s.get_run(RUN),
    "list_runs": lambda s: s.list_runs("t"),
    "last_run": lambda s: s.last_run("t"),
    "acquire_thread": lambda s: s.acquire_thread("t", "someone", 10),
    "get_state": lambda s: s.get_state("t", "k"),
    "list_api_keys": lambda s: s.list_api_keys(),
    "find_api_key": lambda s: s.find_api_key("d" * 64),
    "log_head": lambda s: s.log_head("t"),
    "last_seq": lambda s: s.last_seq("t"),
}

RUN = "run1"

# (table, statement, what the error names, the reads that meet the row, the backends where the damage can be made:
# PostgreSQL's numeric columns are typed, SQLite's hold anything)
DAMAGE: dict[str, tuple[str, str, list[str], bool]] = {
    "thread metadata not JSON": (
        "UPDATE threads SET metadata='{broken'",
        "threads row of thread 't' is damaged: metadata is not JSON",
        ["get_thread", "list_threads", "create_thread", "messages", "events", "send"],
        True,
    ),
    "thread metadata a list": (
        "UPDATE threads SET metadata='[1, 2]'",
        r"threads row of thread 't' is damaged: metadata is a JSON list \[1, 2\], not a JSON object",
        ["get_thread", "list_threads", "messages", "send"],
        True,
    ),
    "thread metadata null": (
        "UPDATE threads SET metadata='null'",
        "threads row of thread 't' is damaged: metadata is null, not a JSON object",
        ["get_thread", "list_threads"],
        True,
    ),
    "thread created text": (
        "UPDATE threads SET created='yesterday'",
        "threads row of thread 't' is damaged: created holds text 'yesterday', not a number",
        ["get_thread", "list_threads", "events"],
        False,
    ),
    "run result not JSON": (
        "UPDATE runs SET result='{broken'",
        f"runs row of run '{RUN}' is damaged: result is not JSON",
        ["get_run", "list_runs", "last_run", "send"],
        True,
    ),
    "run result a number": (
        "UPDATE runs SET result='5'",
        f"runs row of run '{RUN}' is damaged: result is int 5, not a JSON object",
        ["get_run", "last_run", "send"],
        True,
    ),
    "run input not JSON": (
        "UPDATE runs SET input='{broken'",
        f"runs row of run '{RUN}' is damaged: input is not JSON",
        ["get_run", "list_runs", "last_run", "send"],
        True,
    ),
    "run input text": (
        """UPDATE runs SET input='"hi"'""",
        f"runs row of run '{RUN}' is damaged: input is text 'hi', not a JSON object",
        ["get_run", "send"],
        True,
    ),
    "run status unknown": (
        "UPDATE runs SET status='exploded'",
        f"runs row of run '{RUN}' is damaged: status is text 'exploded', not one of cancelled, completed",
        ["get_run", "list_runs", "last_run", "send"],
        True,
    ),
    "run updated text": (
        "UPDATE runs SET updated='later'",
        f"runs row of run '{RUN}' is damaged: updated holds text 'later', not a number",
        ["get_run", "send"],
        False,
    ),
    "lease expires text": (
        "INSERT INTO leases VALUES ('t', 'garbage', 'notanumber')",
        "leases row of thread 't' is damaged: expires holds text 'notanumber', not a number; a lease holds no "
        "conversation data: delete that row",
        ["send", "acquire_thread"],
        False,
    ),
    "lease expires bytes": (
        "INSERT INTO leases VALUES ('t', 'garbage', x'00ff')",
        "leases row of thread 't' is damaged: expires holds bytes",
        ["send", "acquire_thread"],
        False,
    ),
    "state not JSON": (
        "UPDATE state SET value='{broken'",
        "state row of thread 't', key 'k', version 1 is damaged: value is not JSON",
        ["get_state"],
        True,
    ),
    "api key scopes not JSON": (
        "UPDATE api_keys SET scopes='{broken'",
        "api_keys row of API key '[^']+' is damaged: scopes is not JSON",
        ["list_api_keys", "find_api_key"],
        True,
    ),
    "api key scopes not a list of text": (
        "UPDATE api_keys SET scopes='[\"read\", 5]'",
        "api_keys row of API key '[^']+' is damaged: scopes is a JSON list .*, not a JSON list of text",
        ["list_api_keys", "find_api_key"],
        True,
    ),
    "api key revoked text": (
        "UPDATE api_keys SET revoked='never'",
        "api_keys row of API key '[^']+' is damaged: revoked holds text 'never', not a number",
        ["list_api_keys", "find_api_key"],
        False,
    ),
    "last event's seq text": (
        "UPDATE events SET seq='last' WHERE seq=(SELECT max(seq) FROM events)",
        "events row of thread 't' is damaged: the last seq holds text 'last'",
        ["log_head", "last_seq", "send"],
        False,
    ),
}


async def _fill(store: Store) -> None:
    """A thread ``t`` with one completed run (id :data:`RUN`), a state value and an API key."""
    result = await Runtime(store).run(_agent(), "hi", thread_id="t", run_id=RUN)
    assert result.status == "completed"
    await store.put_state("t", "k", {"v": 1})
    _, key = new_api_key("ci", scopes=("read",))
    key.digest = "d" * 64
    await store.add_api_key(key)


@pytest.fixture(params=["sqlite", "postgres"])
async def damaged_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """``(backend, open_store, damage)``: a filled store of each SQL backend, a way to open it again, and a way
    to run a statement on it outside Podium."""
    if request.param == "sqlite":
        path = tmp_path / "podium.db"
        store = SQLiteStore(path)
        await _fill(store)
        await store.close()

        def damage(statement: str) -> None:
            with sqlite3.connect(path) as conn:
                conn.execute(statement)

        yield "sqlite", lambda: SQLiteStore(path), damage, str(path)
        return
    psycopg = pytest.importorskip("psycopg")
    from podium.store.postgres import PostgresStore

    url, schema = request.getfixturevalue("postgres_schema")
    store = await PostgresStore.connect(url, schema=schema)
    await _fill(store)
    await store.close()

    def damage_pg(statement: str) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{schema}"')
            conn.execute(statement)

    yield "postgres", lambda: PostgresStore(url, schema=schema), damage_pg, None


@pytest.mark.parametrize("case", list(DAMAGE))
async def test_a_damaged_row_is_store_corrupt_naming_its_table_key_and_fault(case: str, damaged_store: Any) -> None:
    backend, reopen, damage, _ = damaged_store
    statement, said, reads, in_postgres = DAMAGE[case]
    if backend == "postgres" and not in_postgres:
        pytest.skip("PostgreSQL's typed column cannot hold such a value")
    damage(statement)
    store = reopen()
    try:
        for read in reads:
            with pytest.raises(StoreCorrupt, match=said):
                result = await READS[read](store)
                if read == "send":  # a run that met the row while running reports it as its error
                    assert isinstance(result.error, StoreCorrupt), result
                    raise result.error
    finally:
        await store.close()


def podium(*args: str, store: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PODIUM_STORE": store}
    return subprocess.run(
        [sys.executable, "-m", "podium", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )


@pytest.mark.parametrize(
    ("statement", "command", "said"),
    [
        ("UPDATE threads SET metadata='{broken'", ["threads"], "threads row of thread 't' is damaged"),
        ("UPDATE threads SET metadata='{broken'", ["history", "t"], "threads row of thread 't' is damaged"),
        ("UPDATE threads SET created='x'", ["threads"], "threads row of thread 't' is damaged"),
        ("UPDATE api_keys SET scopes='{broken'", ["keys", "list"], "api_keys row of API key"),
        ("UPDATE api_keys SET scopes='{broken'", ["keys", "revoke", "ci"], "api_keys row of API key"),
        ("UPDATE runs SET result='{broken'", ["chat", "trip", "--thread", "t"], f"runs row of run '{RUN}'"),
    ],
)
async def test_the_commands_report_a_damaged_row_in_one_line(
    statement: str, command: list[str], said: str, tmp_path: Path
) -> None:
    path = tmp_path / "podium.db"
    store = SQLiteStore(path)
    await _fill(store)
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(statement)
    done = podium(*command, store=str(path))
    assert done.returncode == 2, done
    assert done.stderr.startswith("error: ") or "\nerror: " in done.stderr, done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(error) == 1 and said in error[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("job", ["{broken", "[1]"])
async def test_a_damaged_run_queue_job_is_store_corrupt(job: str, postgres_schema: tuple[str, str]) -> None:
    psycopg = pytest.importorskip("psycopg")
    from podium.store.postgres import PostgresStore

    url, schema = postgres_schema
    store = await PostgresStore.connect(url, schema=schema)
    try:
        queue = store.run_queue()
        await queue.submit("t", "r1", {"kind": "run"}, strategy="enqueue", resume=False)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{schema}"')
            conn.execute("UPDATE run_queue SET job=%s", (job,))
        for read in (queue.get("r1"), queue.of_thread("t")):
            with pytest.raises(StoreCorrupt, match="the run_queue row of run 'r1' is damaged: job is"):
                await read
    finally:
        await store.close()
