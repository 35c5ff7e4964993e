"""The PostgreSQL run queue's statements: what each one decides and says in one round trip (issue 15, 10's figures)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("psycopg")

Schema = tuple[str, str]


@pytest.fixture
async def store(postgres_schema: Schema) -> AsyncIterator[Any]:
    from podium.store.postgres import PostgresStore

    url, schema = postgres_schema
    store = await PostgresStore.connect(url, schema=schema)
    yield store
    await store.close()


class _Heard:
    """Notifications of the queue's channels, as the executors' listener receives them."""

    def __init__(self, store: Any) -> None:
        from podium.store._pgqueue import Listener

        self.notes: list[tuple[str, str]] = []
        self.arrived = asyncio.Event()
        self.listener = Listener(store.run_queue(), self._note, lambda: None)

    def _note(self, kind: str, payload: str) -> None:
        self.notes.append((kind, payload))
        self.arrived.set()

    async def of(self, kind: str, count: int = 1) -> list[str]:
        for _ in range(200):
            found = [p for k, p in self.notes if k == kind]
            if len(found) >= count:
                return found
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 10)
        raise AssertionError(f"no {kind} notification: {self.notes}")


def _count_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement and transaction command sent from now on (what a round trip costs)."""
    import psycopg
    from psycopg._connection_base import BaseConnection

    sent: list[str] = []
    execute, command = psycopg.AsyncCursor.execute, BaseConnection._exec_command

    async def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        if "search_path" not in str(query):  # a connection the pool opens meanwhile is set up: not the call's
            sent.append(str(query))
        return await execute(self, query, *args, **kwargs)

    def counted_command(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(str(query))
        return command(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.AsyncCursor, "execute", counted)
    monkeypatch.setattr(BaseConnection, "_exec_command", counted_command)
    return sent


async def test_enqueue_is_one_statement_that_keeps_order_and_wakes_claimers(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.store.base import RunRecord

    queue = store.run_queue()
    heard = _Heard(store)
    heard.listener.start()
    try:
        await asyncio.wait_for(heard.listener.connected.wait(), 10)
        await store.create_thread("t")
        await store.create_run(RunRecord(id="old", thread_id="t", status="interrupted", agent="a"))
        assert await queue.before_submit("t") == (0, "old", "interrupted", 0)
        sent = _count_statements(monkeypatch)
        assert await queue.submit("t", "r1", {"n": 1}, strategy="enqueue", resume=False) == (False, [], None)
        assert len(sent) == 1
        assert await queue.submit("t", "r2", {"n": 2}, strategy="enqueue", resume=False) == (True, [], None)
        assert (await queue.before_submit("t"))[0] == 2
        assert await heard.of("queue", 2) == ["t", "t"]
        claimed = await queue.claim("me", 10, 10)
        assert [r.run_id for r in claimed] == ["r1"]  # the thread's first only, in the order queued
        assert await queue.present(["r1", "r2", "never"]) == {"r1", "r2"}
    finally:
        await heard.listener.stop()


async def test_finish_says_which_run_left_and_who_removed_it(store: Any) -> None:
    from podium.store._pgqueue import left_run

    queue = store.run_queue()
    heard = _Heard(store)
    heard.listener.start()
    try:
        await asyncio.wait_for(heard.listener.connected.wait(), 10)
        for run_id in ("a", "b"):
            await queue.submit("t", run_id, {}, strategy="enqueue", resume=False)
        await queue.submit("u", "c", {}, strategy="enqueue", resume=False)
        assert {r.run_id for r in await queue.claim("p1", 10, 10)} == {"a", "c"}
        assert not await queue.finish("a", "p2")  # not its claim: nothing removed, nothing said
        assert await queue.finish("a", "p1")
        assert await queue.finish("c", "p1")
        assert await queue.remove_pending("b", "p3") is not None
        assert await queue.remove_pending("b", "p3") is None
        left = [left_run(p) for p in await heard.of("left", 3)]
        assert left == [("a", True, "p1"), ("c", False, "p1"), ("b", False, "p3")]  # "more": t still had b
        with pytest.raises(ValueError):
            left_run("not json")
    finally:
        await heard.listener.stop()


async def test_a_rollback_asked_keeps_the_run_queued_until_its_owner_finishes_it_as_one(store: Any) -> None:
    queue = store.run_queue()
    await queue.submit("t", "r", {}, strategy="enqueue", resume=False)
    await queue.claim("p1", 10, 10)
    assert await queue.request_stop("r", "rollback")
    assert not await queue.finish("r", "p1")  # its records go first
    row = await queue.get("r")
    assert row is not None and row.stop == "rollback"
    assert await queue.finish("r", "p1", rollback=True)
    assert await queue.get("r") is None


async def test_displaced_runs_are_announced_as_left(store: Any) -> None:
    from podium.store._pgqueue import left_run

    queue = store.run_queue()
    heard = _Heard(store)
    heard.listener.start()
    try:
        await asyncio.wait_for(heard.listener.connected.wait(), 10)
        await queue.submit("t", "running", {}, strategy="enqueue", resume=False)
        await queue.claim("p1", 10, 10)
        await queue.submit("t", "waiting", {}, strategy="enqueue", resume=False)
        waited, displaced, stopping = await queue.submit("t", "new", {}, strategy="interrupt", resume=False, by="p2")
        assert (waited, [r.run_id for r in displaced], stopping) == (True, ["waiting"], "running")
        assert [left_run(p) for p in await heard.of("left")] == [("waiting", True, "p2")]
        assert await heard.of("stop") == ["running"]
    finally:
        await heard.listener.stop()


async def test_create_thread_and_a_lease_renewal_are_one_statement_each(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = await store.create_thread("t", {"k": 1})
    sent = _count_statements(monkeypatch)
    again = await store.create_thread("t", {"k": 2})
    assert (again.created, again.metadata) == (created.created, {"k": 1})
    assert len(sent) == 1
    sent.clear()
    assert await store.acquire_thread("t", "me", 10) is None
    assert await store.acquire_thread("t", "me", 10) is None  # a renewal of its own lease
    assert len(sent) == 2
    assert await store.acquire_thread("t", "other@host:1", 10) == "me"  # held: the slower path decides
    await store.release_thread("t", "me")
    assert await store.acquire_thread("t", "other@host:1", 10) is None
