"""Issue 9, item 8: store trouble mid-run leaves the run resumable, a tool's result neither lost nor repeated.

The trouble is real: a second SQLite connection holds the database's write lock (as another process would) past
the store's busy timeout, right after the tool ran.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from podium import AIMessage, MessageAdded, ReactAgent, Runtime, SQLiteStore, StoreLocked, ToolMessage
from podium.testing import FunctionModel, tool_call


def _agent(calls: list[str], lock: sqlite3.Connection, hold: float | None) -> ReactAgent:
    async def pay(amount: int) -> str:
        """Pay an amount."""
        calls.append(f"pay {amount}")
        lock.execute("BEGIN IMMEDIATE")  # another process takes the write lock as the tool finishes
        if hold is not None:
            asyncio.get_running_loop().call_later(hold, lock.rollback)
        return f"paid {amount}"

    def reply(messages: list[Any], request: Any) -> AIMessage | str:
        if isinstance(messages[-1], ToolMessage):
            return f"done: {messages[-1].content}"
        return AIMessage(tool_calls=[tool_call("pay", {"amount": 10})])

    return ReactAgent("payer", FunctionModel(reply), [pay])


def _paid(events: list[Any]) -> list[str]:
    return [e.message.content for e in events if isinstance(e, MessageAdded) and isinstance(e.message, ToolMessage)]


async def test_a_lock_held_past_the_busy_timeout_costs_a_wait_not_the_run(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", busy_timeout=0.2)
    lock = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    calls: list[str] = []
    try:
        result = await Runtime(store).run(_agent(calls, lock, hold=0.6), "pay", thread_id="t")
        assert result.status == "completed" and result.output == "done: paid 10"
        assert calls == ["pay 10"]
        assert _paid(await store.read_events("t")) == ["paid 10"]
    finally:
        lock.close()
        await store.close()


async def test_a_store_that_stays_locked_stops_the_run_resumable_with_the_tool_result_kept(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", busy_timeout=0.1)
    lock = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    calls: list[str] = []
    agent = _agent(calls, lock, hold=None)
    runtime = Runtime(store)
    try:
        with pytest.raises(StoreLocked):
            await runtime.run(agent, "pay", thread_id="t")
        lock.rollback()  # the other process lets go
        assert [r.status for r in await store.list_runs("t")] == ["running"]  # not failed: resumable
        done = await runtime.resume(agent, "t", if_busy="wait", busy_timeout=5)
        assert done.status == "completed" and done.output == "done: paid 10"
        assert calls == ["pay 10"]  # the result recorded before the trouble was kept: the tool did not run again
        assert _paid(await store.read_events("t")) == ["paid 10"]
    finally:
        lock.close()
        await store.close()


async def test_a_store_ending_a_run_in_two_writes_survives_a_failed_status_write() -> None:
    """A store without a one-transaction end_run: its status write fails once, the flush tries again."""
    from podium import MemoryStore, StoreError
    from podium.store.base import Store

    class TwoWrites(MemoryStore):
        failures = 1
        end_run = Store.end_run  # events, then the status

        async def update_run(self, run_id: str, status: Any, result: Any = None) -> None:
            if status == "completed" and self.failures:
                self.failures -= 1
                raise StoreError("the status write failed")
            await super().update_run(run_id, status, result)

    store = TwoWrites()
    calls: list[str] = []

    async def pay(amount: int) -> str:
        """Pay an amount."""
        calls.append(f"pay {amount}")
        return f"paid {amount}"

    def reply(messages: list[Any], request: Any) -> AIMessage | str:
        if isinstance(messages[-1], ToolMessage):
            return f"done: {messages[-1].content}"
        return AIMessage(tool_calls=[tool_call("pay", {"amount": 10})])

    result = await Runtime(store).run(ReactAgent("payer", FunctionModel(reply), [pay]), "pay", thread_id="t")
    assert result.status == "completed" and store.failures == 0 and calls == ["pay 10"]
    events = await store.read_events("t")
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # nothing appended twice
    assert [e.kind for e in events].count("run_ended") == 1
    assert [r.status for r in await store.list_runs("t")] == ["completed"]


async def test_a_lease_left_behind_by_a_failed_release_does_not_make_the_next_run_wait() -> None:
    """The store refuses to delete (a disk that is full, a lock held elsewhere) as a run ends: the lease stays.

    This process's next run on the thread takes that lease over instead of finding its own thread busy, and the
    lease is released once the store recovers; another process still finds the thread held meanwhile.
    """
    from podium import MemoryStore, StoreError
    from podium.store.base import new_owner

    class NoDeletes(MemoryStore):
        failing = True

        async def release_thread(self, thread_id: str, owner: str) -> None:
            if self.failing:
                raise StoreError("database or disk is full")
            await super().release_thread(thread_id, owner)

    store = NoDeletes()
    runtime = Runtime(store, lease_ttl=30)
    agent = ReactAgent("echo", FunctionModel(lambda messages, request: f"heard: {messages[-1].content}"))
    first = await runtime.run(agent, "one", thread_id="t")
    assert first.status == "completed"
    stranger = new_owner("other")
    assert await store.acquire_thread("t", stranger, 30) is not None  # the lease stayed behind: held
    second = await runtime.run(agent, "two", thread_id="t")  # this process's next run is not kept waiting
    assert second.status == "completed" and second.output == "heard: two"
    assert await store.acquire_thread("t", stranger, 30) is not None  # another process still finds it held
    store.failing = False
    for _ in range(50):  # the background release goes on after the second run, and gets through
        if await store.acquire_thread("t", stranger, 30) is None:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the lease was never released")
    await store.release_thread("t", stranger)
    third = await runtime.run(agent, "three", thread_id="t")
    assert third.status == "completed"
