"""Stores under concurrency: a locked SQLite file holds up its own store only; PostgreSQL serves runs over a pool."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from podium import AIMessage, MemoryStore, Message, ModelRequest, ReactAgent, Runtime, SQLiteStore, StoreLocked
from podium.store.postgres import PostgresStore
from podium.testing import FunctionModel, tool_call


def _echo() -> ReactAgent:
    async def reply(messages: list[Message], request: ModelRequest) -> str:
        await asyncio.sleep(0)
        return f"echo: {messages[-1].content}"

    return ReactAgent("echo", FunctionModel(reply))


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


@pytest.mark.parametrize("durability", ["full", "process"])
async def test_a_held_write_lock_delays_its_store_only_never_the_event_loop(tmp_path: Path, durability: str) -> None:
    path = tmp_path / "locked.db"
    store = SQLiteStore(path, durability=durability)  # type: ignore[arg-type]  # at process, writes try the loop first
    locked, free = Runtime(store), Runtime(MemoryStore())
    agent = _echo()
    await locked.run(agent, "warm up", thread_id="warm")
    holder = _hold_write_lock(path)
    waiting = [asyncio.create_task(locked.run(agent, f"locked {i}", thread_id=f"t{i}")) for i in range(10)]
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    clock = asyncio.create_task(ticker())
    served = await asyncio.gather(*(free.run(agent, f"free {i}", thread_id=f"f{i}") for i in range(10)))
    await asyncio.sleep(0.3)
    # while the lock is held: runs on another store complete, timers fire, the locked store's runs wait
    assert [r.status for r in served] == ["completed"] * 10
    assert ticks >= 10
    assert not any(task.done() for task in waiting)
    holder.execute("ROLLBACK")
    holder.close()
    results = await asyncio.gather(*waiting)
    clock.cancel()
    assert [r.status for r in results] == ["completed"] * 10
    for i in range(10):
        assert [m.content for m in await locked.messages(f"t{i}")] == [f"locked {i}", f"echo: locked {i}"]
    await store.close()


@pytest.mark.parametrize("durability", ["full", "process"])
async def test_runs_fail_clearly_after_the_busy_timeout_and_go_on_once_the_lock_is_released(
    tmp_path: Path, durability: str
) -> None:
    path = tmp_path / "locked.db"
    store = SQLiteStore(path, busy_timeout=0.05, durability=durability)  # type: ignore[arg-type]
    runtime = Runtime(store)
    agent = _echo()
    holder = _hold_write_lock(path)
    outcomes = await asyncio.gather(
        *(runtime.run(agent, f"message {i}", thread_id=f"t{i}") for i in range(10)), return_exceptions=True
    )
    assert all(isinstance(o, StoreLocked) and "locked by another connection" in str(o) for o in outcomes)
    holder.execute("ROLLBACK")
    holder.close()
    results = await asyncio.gather(*(runtime.run(agent, f"message {i}", thread_id=f"t{i}") for i in range(10)))
    assert [r.status for r in results] == ["completed"] * 10
    assert [m.content for m in await runtime.messages("t3")] == ["message 3", "echo: message 3"]
    await store.close()


async def test_a_run_cut_short_by_a_held_lock_resumes_from_its_journal(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    store = SQLiteStore(path, busy_timeout=0.05)
    holders: list[sqlite3.Connection] = []
    calls: list[str] = []

    async def lookup(key: str) -> str:  # async: the lock's connection stays on this thread
        """Look a key up."""
        calls.append(key)
        if len(calls) == 1:  # another process starts writing while the tool runs
            holders.append(_hold_write_lock(path))
        return f"value of {key}"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if messages[-1].kind == "tool":
            return AIMessage(content=f"found {messages[-1].content}")
        return AIMessage(tool_calls=[tool_call("lookup", {"key": "k"}, id="c1")])

    runtime = Runtime(store, lease_ttl=0.5)
    agent = ReactAgent("finder", FunctionModel(model), [lookup])
    with pytest.raises(StoreLocked):
        await runtime.run(agent, "find k", thread_id="t")
    holders[0].execute("ROLLBACK")
    holders[0].close()
    result = await runtime.resume(agent, "t", if_busy="wait", busy_timeout=5)
    assert result.status == "completed" and result.output == "found value of k"
    assert calls == ["k"]  # the result the store refused was kept by the runtime and stored first: no re-run
    await store.close()


async def test_a_closed_sqlite_store_refuses_calls(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    await store.close()
    await store.close()
    with pytest.raises(Exception, match="is closed"):
        await store.get_thread("t")


async def test_postgres_store_serves_concurrent_runs_over_its_pool(postgres_schema: tuple[str, str]) -> None:
    url, schema = postgres_schema
    name = f"podium-{schema}"
    store = await PostgresStore.connect(
        f"{url}{'&' if '?' in url else '?'}application_name={name}", schema=schema, max_connections=4
    )
    inside = 0
    most = 0
    release = asyncio.Event()

    async def reply(messages: list[Message], request: ModelRequest) -> str:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        if inside == 10:
            release.set()
        await release.wait()
        inside -= 1
        return f"echo: {messages[-1].content}"

    held, done = asyncio.Event(), asyncio.Event()

    async def hold_a_connection(conn: Any) -> None:  # a long call in a transaction takes one connection
        async with conn.transaction():
            await conn.execute("SELECT 1")
            held.set()
            await done.wait()

    holding = asyncio.create_task(store._run(hold_a_connection))
    await held.wait()
    runtime = Runtime(store)
    agent = ReactAgent("echo", FunctionModel(reply))
    results = await asyncio.gather(*(runtime.run(agent, f"message {i}", thread_id=f"t{i}") for i in range(10)))
    done.set()
    await holding
    assert most == 10 and [r.status for r in results] == ["completed"] * 10
    for i in range(10):
        assert [m.content for m in await runtime.messages(f"t{i}")] == [f"message {i}", f"echo: message {i}"]
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name=%s", (name,)).fetchall()
    assert 1 <= rows[0][0] <= 4  # a pool, never more than its size
    await store.close()


def test_postgres_pool_size_must_be_positive() -> None:
    from podium import UsageError

    with pytest.raises(UsageError, match="max_connections must be at least 1"):
        PostgresStore("postgresql://podium@127.0.0.1:1/db", max_connections=0)


async def test_the_memory_store_copies_values_that_are_not_json_data_too() -> None:
    """Results and state that JSON cannot hold (a tuple, a set, nesting deeper than the plain copy goes) are copied
    all the same in memory: nothing read shares anything mutable with what was written."""
    store = MemoryStore()
    await store.create_thread("t")
    deep: Any = ["leaf"]
    for _ in range(100):
        deep = [deep]
    value = {"pair": (1, [2]), "set": {3}, "deep": deep}
    await store.put_state("t", "s", value)
    read = await store.get_state("t", "s")
    assert read == value and read["pair"][1] is not value["pair"][1] and read["set"] is not value["set"]
    inner_read, inner_value = read["deep"], value["deep"]
    while isinstance(inner_read[0], list):
        inner_read, inner_value = inner_read[0], inner_value[0]
    assert inner_read == ["leaf"] and inner_read is not inner_value
