"""The SQLite store's second connection: reads (and writes needing no fsync) on the event loop, never waiting there."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from podium import SQLiteStore, StoreLocked
from podium.events import SideChannel
from podium.store import _direct
from podium.store.base import RunRecord


def _note(seq: int, text: str = "n") -> SideChannel:
    event = SideChannel(text=text, channel="progress")
    event.seq, event.run_id = seq, "r"
    return event


def _hold_thread(store: SQLiteStore) -> tuple[threading.Event, asyncio.Future[bool]]:
    """Keep the store's thread busy until the returned event is set."""
    gate = threading.Event()
    return gate, asyncio.ensure_future(store._call(lambda _: gate.wait(5)))


async def test_reads_and_process_writes_never_wait_for_the_stores_thread(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db", durability="process")
    await store.create_thread("t")
    gate, blocked = _hold_thread(store)
    await asyncio.sleep(0.02)
    # the thread is stuck, yet the calls of a run complete: they run on the event loop's connection
    await store.create_run(RunRecord(id="r", thread_id="t"))
    assert await store.acquire_thread("t", "me", 30) is None
    await store.append_events("t", [_note(1), _note(2)])
    await store.append_events("t", [_note(3)])
    await store.update_run("r", "completed", {"output": "done"})
    assert await store.last_seq("t") == 3
    assert (await store.get_run("r")).status == "completed"  # type: ignore[union-attr]
    assert not blocked.done()
    gate.set()
    await blocked
    assert store._writer.commits == 0
    await store.close()


async def test_at_full_durability_no_call_waits_for_the_stores_thread_and_durable_writes_wait_for_a_sync(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "f.db")
    await store.create_thread("t")
    gate, blocked = _hold_thread(store)
    await asyncio.sleep(0.02)
    synced, syncs = store.synced_commits, store.syncs
    assert await store.get_thread("t") is not None
    assert await store.acquire_thread("t", "me", 30) is None  # no sync needed: on the loop
    assert store.syncs == syncs
    await store.append_events("t", [_note(1)])  # the thread is stuck, yet the durable write completes, synced
    assert (store.synced_commits, store.syncs) == (synced + 1, syncs + 1)
    assert not blocked.done()
    gate.set()
    await blocked
    assert await store.last_seq("t") == 1
    await store.close()


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def _take_and_give_back_the_write_lock(conn: sqlite3.Connection) -> str:
    """A call that must wait for a write lock held elsewhere: at once on the loop's connection (busy timeout 0)."""
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("ROLLBACK")
    return threading.current_thread().name


@pytest.mark.parametrize("durability", ["full", "process"])
async def test_a_call_that_would_wait_on_the_loop_is_handed_to_the_thread_and_the_loop_goes_on(
    tmp_path: Path, durability: str
) -> None:
    path = tmp_path / "x.db"
    store = SQLiteStore(path, durability=durability, busy_timeout=5)  # type: ignore[arg-type]
    await store.create_thread("t")
    assert await store._read(_take_and_give_back_the_write_lock) == threading.current_thread().name  # free: here
    holder = _hold_write_lock(path)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    clock = asyncio.create_task(ticker())
    waiting = asyncio.ensure_future(store._read(_take_and_give_back_the_write_lock))
    assert await store.get_thread("t") is not None  # reads go on meanwhile
    await asyncio.sleep(0.3)
    assert not waiting.done() and ticks >= 10  # it waits on the store's thread; the event loop runs on
    holder.execute("ROLLBACK")
    assert await waiting == "podium-sqlite"
    clock.cancel()
    assert store._direct is not None and store._direct.handed == 1
    holder.close()
    await store.close()


async def test_a_held_lock_still_fails_clearly_after_the_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    store = SQLiteStore(path, durability="process", busy_timeout=0.05)
    holder = _hold_write_lock(path)
    with pytest.raises(StoreLocked, match="locked by another connection"):
        await store.create_thread("t")
    assert await store.get_thread("t") is None  # reads never wait for the lock
    holder.execute("ROLLBACK")
    holder.close()
    assert (await store.create_thread("t")).id == "t"
    await store.close()


async def test_a_failed_write_on_the_loop_leaves_nothing_behind(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db", durability="process")
    await store.create_thread("t")
    await store.append_events("t", [_note(1)])
    with pytest.raises(Exception, match="UNIQUE"):
        await store.append_events("t", [_note(2), _note(1)])  # the second clashes: the first is rolled back too
    with pytest.raises(Exception, match="no run"):
        await store.update_run("missing", "completed")
    assert [e.seq for e in await store.read_events("t")] == [1]
    await store.append_events("t", [_note(2)])  # the connection is out of the failed transaction
    assert await store.last_seq("t") == 2
    await store.close()


async def test_checkpoints_run_on_the_stores_thread_never_on_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_direct, "CHECKPOINT_EVERY", 20)
    path = tmp_path / "c.db"
    store = SQLiteStore(path, durability="process")
    seen: list[str] = []
    store._on_thread(lambda conn: conn.set_trace_callback(lambda sql: seen.append(threading.current_thread().name)))
    assert store._direct is not None and store._direct.conn is not None
    assert store._direct.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    await store.create_thread("t")
    size = path.stat().st_size
    for seq in range(1, 201):
        await store.append_events("t", [_note(seq, "x" * 500)])
    for _ in range(100):  # the checkpoint was queued; it copies the WAL's pages into the file
        if path.stat().st_size > size:
            break
        await asyncio.sleep(0.02)
    assert path.stat().st_size > size
    assert seen and set(seen) == {"podium-sqlite"}
    assert len(await store.read_events("t")) == 200
    await store.close()


async def test_calls_from_another_thread_go_through_the_stores_thread(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "o.db", durability="process")
    await store.create_thread("t")  # binds the loop's connection to this thread
    outcome: list[object] = []

    def elsewhere() -> None:
        async def calls() -> None:
            assert store._direct is not None and not store._direct.usable()
            await store.append_events("t", [_note(1, "from another thread")])
            outcome.append(await store.read_events("t"))

        asyncio.run(calls())

    before = store._writer.commits
    worker = threading.Thread(target=elsewhere)
    worker.start()
    await asyncio.get_running_loop().run_in_executor(None, worker.join)
    assert [e.text for e in outcome[0]] == ["from another thread"]  # type: ignore[attr-defined]
    assert store._writer.commits == before + 1
    await store.close()


async def test_an_in_memory_store_keeps_one_connection(tmp_path: Path) -> None:
    store = SQLiteStore(":memory:", durability="process")
    assert store._direct is None
    await store.create_thread("t")
    await store.append_events("t", [_note(1)])
    assert await store.last_seq("t") == 1
    await store.close()


async def test_a_known_thread_is_found_without_a_write_and_a_race_creates_it_once(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.db")
    first, second = await asyncio.gather(store.create_thread("x", {"n": 1}), store.create_thread("x", {"n": 2}))
    assert (first.created, first.metadata) == (second.created, second.metadata)
    commits = store.commits
    again = await store.create_thread("x", {"n": 3})
    assert (again.created, again.metadata, store.commits) == (first.created, first.metadata, commits)
    assert [t.id for t in await store.list_threads()] == ["x"]
    await store.close()


@pytest.mark.parametrize("durability", ["process", "full"])
async def test_a_fenced_batch_of_events_is_one_statement_and_a_large_one_is_fenced_too(
    tmp_path: Path, durability: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.errors import LeaseLost
    from podium.store import sqlite as sqlite_store
    from podium.store.base import new_owner

    store = SQLiteStore(tmp_path / "s.db", durability=durability)  # type: ignore[arg-type]
    try:
        await store.create_thread("t")
        me, other = new_owner("me"), new_owner("other")
        assert await store.acquire_thread("t", me, 60) is None
        statements: list[str] = []
        assert store._direct is not None and store._direct.conn is not None
        store._direct.conn.set_trace_callback(statements.append)
        await store.append_events("t", [_note(1), _note(2), _note(3)], owner=me)
        inserts = [s for s in statements if s.startswith("INSERT")]
        assert len(inserts) == 1 and "FROM leases" in inserts[0]  # three rows, fenced by the lease, at once
        assert not any(s.startswith("SELECT") for s in statements)  # the lease is not read on its own
        assert not any(s.startswith("SAVEPOINT") for s in statements)  # a lone write is its transaction's own
        with pytest.raises(LeaseLost):  # alone in its transaction, which is rolled back
            await store.append_events("t", [_note(4), _note(5)], owner=other)
        monkeypatch.setattr(sqlite_store, "ONE_STATEMENT_ROWS", 2)  # larger batches: read the lease, then insert
        with pytest.raises(LeaseLost):
            await store.append_events("t", [_note(4), _note(5), _note(6)], owner=other)
        await store.append_events("t", [_note(4), _note(5), _note(6)], owner=me)
        await store.append_events("t", [_note(7), _note(8), _note(9)])  # no owner: not fenced
        assert [e.seq for e in await store.read_events("t")] == list(range(1, 10))
    finally:
        await store.close()
