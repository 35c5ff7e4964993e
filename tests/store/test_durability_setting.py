"""The ``durability`` setting and group commit: what a commit survives, and writers sharing one transaction."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import loop_wakes

from podium import Settings, SQLiteStore, StoreError, UsageError, open_store
from podium.events import SideChannel
from podium.store.base import RunRecord
from podium.store.postgres import PostgresStore


def _synchronous(store: SQLiteStore) -> int:
    """The connection's ``PRAGMA synchronous`` (1 NORMAL, 2 FULL), read on the store's thread."""
    return int(store._on_thread(lambda c: c.execute("PRAGMA synchronous").fetchone()[0]))


async def test_full_is_the_default_and_process_is_normal(tmp_path: Path) -> None:
    full, process = SQLiteStore(tmp_path / "f.db"), SQLiteStore(tmp_path / "p.db", durability="process")
    assert (full.durability, _synchronous(full)) == ("full", 2)
    assert (process.durability, _synchronous(process)) == ("process", 1)
    for store in (full, process):
        await store.close()
    with pytest.raises(UsageError, match="durability must be 'full' or 'process', not 'fast'"):
        SQLiteStore(tmp_path / "x.db", durability="fast")  # type: ignore[arg-type]


async def test_the_setting_reaches_the_stores(tmp_path: Path) -> None:
    assert Settings.load(env={}).durability == "full"
    settings = Settings.load(env={"PODIUM_DURABILITY": "process", "PODIUM_DATA_DIR": str(tmp_path)})
    store = open_store(settings=settings)
    assert isinstance(store, SQLiteStore) and _synchronous(store) == 1
    await store.close()
    with pytest.raises(UsageError, match="bad setting durability: 'none'; choose full or process"):
        Settings.load(env={"PODIUM_DURABILITY": "none"})
    postgres = open_store("postgresql://u@localhost/db", settings=settings)
    assert isinstance(postgres, PostgresStore) and postgres.durability == "process"
    with pytest.raises(UsageError, match="durability"):
        PostgresStore("postgresql://u@localhost/db", durability="off")  # type: ignore[arg-type]


async def test_postgres_process_durability_turns_synchronous_commit_off(postgres_schema: tuple[str, str]) -> None:
    url, schema = postgres_schema
    for durability, expected in (("process", "off"), ("full", "on")):
        store = PostgresStore(url, schema=schema, durability=durability)  # type: ignore[arg-type]
        shown = await store._run(lambda conn: _show(conn))
        assert shown == expected
        await store.close()


async def _show(conn: object) -> str:
    cursor = await conn.execute("SHOW synchronous_commit")  # type: ignore[attr-defined]
    row = await cursor.fetchone()
    return str(row[0])


def _held_disk(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Syncs of the log wait (at most 5 s) until the event returned is set."""
    from podium.store import _syncer

    disk = threading.Event()
    real = _syncer._data_sync

    def held(fd: int) -> None:
        disk.wait(5)
        real(fd)

    monkeypatch.setattr(_syncer, "_data_sync", held)
    return disk


def _open(path: Path, durability: str, monkeypatch: pytest.MonkeyPatch) -> SQLiteStore:
    """A store at ``durability``; ``full-gathered``: full, every durable write gathered into the turn's transaction
    (as under load), never committed at once on an idle loop."""
    if durability == "full-gathered":
        from podium.store import _syncer

        monkeypatch.setattr(_syncer.Syncer, "would_wait", lambda self, loop: False)
        durability = "full"
    return SQLiteStore(path, durability=durability)  # type: ignore[arg-type]


def _note(seq: int, text: str) -> SideChannel:
    event = SideChannel(text=text, channel="progress")
    event.seq, event.run_id = seq, "r"
    return event


async def test_writes_queued_together_share_one_commit_and_a_failure_stays_alone(tmp_path: Path) -> None:
    """On the store's thread (where writes go while the event loop's connection meets a lock held elsewhere)."""
    store = SQLiteStore(tmp_path / "g.db")
    for i in range(20):
        await store.create_thread(f"t{i}")
    before = store.commits
    gate = threading.Event()
    blocked = asyncio.ensure_future(store._call(lambda _: gate.wait(5)))  # holds the thread while writers queue
    await asyncio.sleep(0.05)
    work = [lambda c, i=i: c.execute("INSERT INTO threads VALUES (?, 0, '{}')", (f"u{i}",)) for i in range(20)]
    writes = [asyncio.wrap_future(store._submit(w, write=True)) for w in work]
    clash = asyncio.wrap_future(
        store._submit(lambda c: c.execute("INSERT INTO threads VALUES ('u3', 0, '{}')"), write=True)
    )
    await asyncio.sleep(0.05)
    gate.set()
    await blocked
    await asyncio.gather(*writes)
    with pytest.raises(StoreError, match="UNIQUE"):
        await clash
    assert store.commits == before + 1  # twenty-one writers, one transaction, one fsync
    assert {t.id for t in await store.list_threads(limit=100)} >= {f"u{i}" for i in range(20)}
    await store.close()


async def test_durable_writes_of_one_loop_turn_share_a_transaction_and_a_sync(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "g.db")
    for i in range(20):
        await store.create_thread(f"t{i}")
    commits, syncs = store.commits, store.syncs
    writes = [asyncio.ensure_future(store.append_events(f"t{i}", [_note(1, f"n{i}")])) for i in range(20)]
    clash = asyncio.ensure_future(store.append_events("t3", [_note(1, "same seq as n3")]))
    await asyncio.gather(*writes)
    with pytest.raises(StoreError, match="UNIQUE"):  # fails alone: the others are stored
        await clash
    assert (store.commits - commits, store.syncs - syncs) == (1, 1)  # twenty-one writers, one transaction, one sync
    assert store._writer.commits == 0  # nothing was handed to the store's own thread
    for i in range(20):
        assert [e.text for e in await store.read_events(f"t{i}")] == [f"n{i}"]  # type: ignore[attr-defined]
    await store.close()


async def test_a_lease_change_joins_a_pending_transaction_without_waiting_for_its_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that needs no sync of its own (a lease) made while a durable transaction is about to commit goes into
    that transaction, and its caller is answered once it is committed, not after the sync."""
    store = SQLiteStore(tmp_path / "j.db")
    await store.create_thread("t")
    await store.create_thread("u")
    disk = _held_disk(monkeypatch)
    commits = store.commits
    durable = asyncio.ensure_future(store.append_events("t", [_note(1, "durable")]))
    await asyncio.sleep(0)  # the durable write waits for the end of this turn of the loop
    assert await store.acquire_thread("u", "me", 30) is None  # joined it, answered while the sync still waits
    assert store.commits == commits + 1 and not durable.done()
    disk.set()
    await durable
    assert store.commits == commits + 1  # one transaction for both
    await store.close()


async def test_lease_changes_commit_without_a_sync_of_their_own(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "l.db")
    await store.create_thread("t")
    commits, synced, syncs = store.commits, store.synced_commits, store.syncs
    assert await store.acquire_thread("t", "me", 30) is None
    await store.release_thread("t", "me")
    assert (store.commits, store.synced_commits, store.syncs) == (commits + 2, synced, syncs)
    assert _synchronous(store) == 2  # the store's thread still commits at FULL
    await store.create_run(RunRecord(id="r", thread_id="t"))
    assert (store.synced_commits, store.syncs) == (synced + 1, syncs + 1)
    await store.close()
    # what was committed without its own sync is in the file all the same
    with sqlite3.connect(tmp_path / "l.db") as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 1


async def test_a_closed_store_refuses_calls(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.create_thread("t")
    await store.close()  # twice is fine


@pytest.mark.parametrize("durability", ["full", "full-gathered", "process"])
async def test_many_concurrent_writers_and_readers_share_the_thread_safely(
    tmp_path: Path, durability: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _open(tmp_path / "m.db", durability, monkeypatch)

    async def one(i: int) -> int:
        await store.create_thread(f"t{i}")
        assert await store.acquire_thread(f"t{i}", "me", 30) is None
        for seq in range(1, 6):
            await store.append_events(f"t{i}", [_note(seq, f"n{seq}")])
            await store.last_seq(f"t{i}")
        await store.release_thread(f"t{i}", "me")
        return len(await store.read_events(f"t{i}"))

    assert await asyncio.gather(*(one(i) for i in range(200))) == [5] * 200
    if durability.startswith("full"):  # concurrent durable writes share transactions (and syncs)
        assert store.commits < 200 * 8
    else:  # no fsync to share: each write commits at once on the event loop's connection
        assert store._direct is not None and store._direct.commits == store.commits == 200 * 8
    await store.close()


async def test_a_run_on_a_new_thread_syncs_its_thread_with_its_record(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.db")  # full: an fsync per durable commit
    synced, commits = store.synced_commits, store.commits
    thread = await store.ensure_thread("t", {"agent": "a"})
    assert (store.synced_commits - synced, store.commits - commits) == (0, 1)  # committed, not synced
    assert await store.ensure_thread("t", {"agent": "b"}) == thread  # a known thread: read, not written again
    await store.create_run(RunRecord(id="r", thread_id="t"))
    assert store.synced_commits - synced == 1  # the run's record syncs both
    await store.create_thread("u")  # a thread asked for on its own (the server's POST /threads) is synced at once
    assert store.synced_commits - synced == 2
    await store.close()
    reopened = SQLiteStore(tmp_path / "t.db")
    assert {t.id for t in await reopened.list_threads()} == {"t", "u"}
    await reopened.close()


async def test_a_write_pending_when_the_store_closes_fails_clearly(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    await store.create_thread("t")
    pending = asyncio.ensure_future(store.append_events("t", [_note(1, "late")]))
    await asyncio.sleep(0)  # the write waits for the end of the loop's turn
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await pending


async def test_a_large_group_of_writes_is_committed_in_bounded_transactions(tmp_path: Path) -> None:
    from podium.store._group import MAX_BATCH

    store = SQLiteStore(tmp_path / "b.db")
    count = MAX_BATCH * 2 + 5
    for i in range(count):
        await store.create_thread(f"t{i}")
    commits = store.commits
    await asyncio.gather(*(store.append_events(f"t{i}", [_note(1, f"n{i}")]) for i in range(count)))
    assert store.commits - commits == 3  # never one transaction holding the event loop for all of them
    for i in range(count):
        assert [e.text for e in await store.read_events(f"t{i}")] == [f"n{i}"]  # type: ignore[attr-defined]
    await store.close()


def test_a_loop_that_stopped_before_its_commit_leaves_no_write_waiting_forever(tmp_path: Path) -> None:
    """A write whose loop closed before the commit ran (its caller gone) is dropped; the next loop's writes go on."""
    store = SQLiteStore(tmp_path / "l.db")
    asyncio.run(store.create_thread("t"))
    first = asyncio.new_event_loop()
    started: list[asyncio.Future[None]] = []

    async def start_only() -> None:
        started.append(asyncio.ensure_future(store.append_events("t", [_note(1, "never committed")])))
        await asyncio.sleep(0)  # the write is queued for the end of the turn; the loop stops before that
        asyncio.get_running_loop().stop()
        await asyncio.sleep(1)

    with pytest.raises(RuntimeError, match="stopped before"):
        first.run_until_complete(start_only())
    first.close()
    assert not started[0].done()  # its caller is gone with its loop

    async def next_loop() -> list[str]:
        await asyncio.wait_for(store.append_events("t", [_note(1, "next")]), 5)
        return [e.text for e in await store.read_events("t")]  # type: ignore[attr-defined]

    assert asyncio.run(next_loop()) == ["next"]
    asyncio.run(store.close())


async def test_a_run_waits_for_one_sync_its_ends_and_its_record_has_none_of_its_own(tmp_path: Path) -> None:
    """At ``full`` a run answered by one model call waits for one sync: its end's. Its first events (with the thread
    and the run's record committed just before them) are committed before the model call with a sync started, not
    waited for; the record has no sync of its own."""
    from podium import ReactAgent, Runtime
    from podium.testing import FunctionModel

    store = SQLiteStore(tmp_path / "r.db")
    runtime = Runtime(store)
    agent = ReactAgent("echo", FunctionModel(lambda messages, request: "hello"))
    synced, syncs = store.synced_commits, store.syncs
    assert (await runtime.run(agent, "hi", thread_id="t")).output == "hello"
    assert store.synced_commits - synced == 1
    assert 1 <= store.syncs - syncs <= 2
    synced = store.synced_commits
    await store.open_run(RunRecord(id="later", thread_id="t"))
    assert store.synced_commits == synced  # committed without a sync
    await store.close()
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 2


@pytest.mark.parametrize("durability", ["full", "full-gathered"])
async def test_the_model_is_asked_while_the_round_before_it_syncs_and_a_tool_runs_only_once_its_call_is_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durability: str
) -> None:
    """Before a model call the run does not wait for the sync of what it stored (a power cut then loses only what a
    crash during the call would repeat anyway); before a tool runs, and before the run answers, it does."""
    from podium import AIMessage, ReactAgent, Runtime, ToolCall, ToolMessage
    from podium.testing import FunctionModel

    asked: list[int] = []
    ran: list[str] = []

    def reply(messages: list[Any], request: Any) -> AIMessage:
        asked.append(len(messages))
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content="done")
        return AIMessage(content="", tool_calls=[ToolCall(id="c", name="charge", arguments="{}")])

    def charge() -> str:
        """Charge the card (a side effect: it must not run on a decision a power cut could lose)."""
        ran.append("charged")
        return "charged"

    store = _open(tmp_path / "m.db", durability, monkeypatch)
    disk = _held_disk(monkeypatch)
    runtime = Runtime(store)
    running = asyncio.ensure_future(runtime.run(ReactAgent("a", FunctionModel(reply), [charge]), "pay", thread_id="t"))
    for _ in range(200):
        if asked:
            break
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)
    assert asked == [1]  # asked (once, with the user message) while the sync of the run's first events is held
    assert ran == [] and not running.done()  # its reply asks for a tool: stored durably first
    disk.set()
    result = await asyncio.wait_for(running, 10)
    assert result.output == "done" and ran == ["charged"]
    await store.close()


@pytest.mark.parametrize("durability", ["full", "full-gathered"])
async def test_a_read_only_tool_runs_while_its_call_syncs_and_the_answer_still_waits_for_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durability: str
) -> None:
    """A tool declared ``read_only`` changes nothing a power cut could hide: its call is committed, not waited for
    on the disk, before it runs. The run's answer waits for the disk all the same."""
    from podium import AIMessage, ReactAgent, Runtime, ToolCall, ToolMessage, tool
    from podium.testing import FunctionModel

    ran: list[str] = []

    def reply(messages: list[Any], request: Any) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"it is {messages[-1].content}")
        return AIMessage(content="", tool_calls=[ToolCall(id="c", name="balance", arguments="{}")])

    @tool(read_only=True)
    def balance() -> str:
        """Read the account's balance (a lookup: it changes nothing)."""
        ran.append("read")
        return "12 EUR"

    store = _open(tmp_path / "r.db", durability, monkeypatch)
    disk = _held_disk(monkeypatch)
    runtime = Runtime(store)
    running = asyncio.ensure_future(runtime.run(ReactAgent("a", FunctionModel(reply), [balance]), "how much?"))
    for _ in range(200):
        if ran:
            break
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)
    assert ran == ["read"] and not running.done()  # it ran while the disk is held; the answer waits for it
    disk.set()
    result = await asyncio.wait_for(running, 10)
    assert result.output == "it is 12 EUR" and ran == ["read"]
    await store.close()


@pytest.mark.parametrize("durability", ["full", "full-gathered"])
async def test_events_stored_soon_are_committed_at_once_and_made_durable_by_the_next_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durability: str
) -> None:
    store = _open(tmp_path / "s.db", durability, monkeypatch)
    await store.create_thread("t")
    disk = _held_disk(monkeypatch)
    await asyncio.wait_for(store.append_events_soon("t", [_note(1, "soon")]), 2)  # returns while the disk is held
    with sqlite3.connect(tmp_path / "s.db") as other:  # committed: another connection reads it
        assert other.execute("SELECT count(*) FROM events").fetchone()[0] == 1
    waiting = asyncio.ensure_future(store.append_events("t", [_note(2, "waits")]))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # its own sync (covering the first) is held
    disk.set()
    await asyncio.wait_for(waiting, 5)
    assert [e.text for e in await store.read_events("t")] == ["soon", "waits"]  # type: ignore[attr-defined]
    await store.close()


async def test_a_write_stored_soon_gets_a_sync_of_its_own_unless_a_waiting_write_asks_for_one_first(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "y.db")
    await store.create_thread("t")
    syncer = store._syncer
    assert syncer is not None
    before = syncer.syncs
    await store.append_events_soon("t", [_note(1, "alone")])
    for _ in range(200):  # nobody waits for it, and it is synced all the same
        if syncer.syncs > before:
            break
        await asyncio.sleep(0.005)
    assert syncer.syncs == before + 1
    before = syncer.syncs
    await store.append_events_soon("t", [_note(2, "soon")])  # (a model answering at once:)
    await store.append_events("t", [_note(3, "waits")])  # its sync covers both commits
    await asyncio.sleep(0.05)
    assert syncer.syncs == before + 1
    await store.close()


async def test_a_write_stored_soon_does_not_wait_for_a_gathered_transaction_and_shares_its_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under load (writes gathered for the loop's turn), a round stored before a model call is committed at once,
    not at the end of the turn, and the gathered transaction's sync covers it."""
    store = _open(tmp_path / "y.db", "full-gathered", monkeypatch)
    for thread in ("t1", "t2"):
        await store.create_thread(thread)
    syncer = store._syncer
    assert syncer is not None
    before = syncer.syncs
    waiting = asyncio.ensure_future(store.append_events("t1", [_note(1, "waits")]))
    await asyncio.sleep(0)  # gathered, to be committed at the end of the loop's turn
    await store.append_events_soon("t2", [_note(1, "soon")])  # returns without a turn of the loop
    assert not waiting.done()
    with sqlite3.connect(tmp_path / "y.db") as other:
        assert other.execute("SELECT thread_id FROM events").fetchall() == [("t2",)]
    await asyncio.wait_for(waiting, 5)
    await asyncio.sleep(0.05)
    assert syncer.syncs == before + 1  # one sync for both
    await store.close()


async def test_a_failed_sync_of_events_stored_soon_fails_the_next_write_that_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.store import _syncer

    store = SQLiteStore(tmp_path / "f.db")
    await store.create_thread("t")

    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(_syncer, "_data_sync", broken)
    await store.append_events_soon("t", [_note(1, "committed, never durable")])
    for _ in range(100):  # its sync runs (and fails) on the sync's thread
        if store._syncer._broken is not None:  # type: ignore[union-attr]
            break
        await asyncio.sleep(0.01)
    with pytest.raises(StoreError, match="syncing the write-ahead log failed"):
        await store.append_events("t", [_note(2, "next")])
    await store.close()


@pytest.mark.parametrize("durability", ["full", "full-gathered", "process"])
async def test_the_log_is_written_from_its_start_again_under_a_steady_stream_of_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durability: str
) -> None:
    """Checkpoints run on the store's thread while the event loop commits; without a moment when the whole log is
    copied, the log would grow without end. Past a size the store holds writes off for one checkpoint, so the
    next commit starts the log over (a later checkpoint finds fewer frames); the writes held meanwhile are made."""
    from podium.store import _direct

    frames_seen: list[int] = []
    real = _direct._checkpoint

    def recording(conn: sqlite3.Connection) -> int:
        frames = real(conn)
        frames_seen.append(frames)
        return frames

    monkeypatch.setattr(_direct, "_checkpoint", recording)
    monkeypatch.setattr(_direct, "CHECKPOINT_EVERY", 4)
    monkeypatch.setattr(_direct, "RESET_FRAMES", 40)
    monkeypatch.setattr(_direct, "RESET_EVERY", 0.0)
    store = _open(tmp_path / "w.db", durability, monkeypatch)
    threads = [f"t{i}" for i in range(10)]
    for thread in threads:
        await store.create_thread(thread)

    async def writer(thread: str) -> None:
        for seq in range(1, 81):
            await store.append_events(thread, [_note(seq, f"{thread}-{seq}")])
            await asyncio.sleep(0.001)  # a steady stream, not a burst: the store's thread gets its turns

    await asyncio.gather(*(writer(t) for t in threads))
    assert [len(await store.read_events(t)) for t in threads] == [80] * 10  # nothing lost, nothing stuck
    restarted = [(a, b) for a, b in itertools.pairwise(frames_seen) if b < a]
    assert restarted, f"the log never started over: frames at each checkpoint {frames_seen}"
    await store.close()


async def test_resets_of_the_log_are_spaced_unless_it_grows_too_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reset holds every write off for a moment: under a steady stream of commits it comes at most once every
    RESET_EVERY seconds, unless the log outgrows RESET_FRAMES_MAX."""
    from podium.store import _direct

    resets: set[float] = set()  # when each began (a reset may take a few checkpoints)
    real = _direct._checkpoint

    def recording(conn: sqlite3.Connection) -> int:
        direct = store._direct
        if direct is not None and direct.resetting:
            resets.add(direct._last_reset)
        return real(conn)

    monkeypatch.setattr(_direct, "_checkpoint", recording)
    monkeypatch.setattr(_direct, "CHECKPOINT_EVERY", 4)
    monkeypatch.setattr(_direct, "RESET_FRAMES", 8)
    monkeypatch.setattr(_direct, "RESET_EVERY", 60.0)
    store = SQLiteStore(tmp_path / "s.db", durability="process")
    await store.create_thread("t")
    for seq in range(1, 201):  # a steady stream: the store's thread gets its turns to checkpoint between commits
        await store.append_events("t", [_note(seq, f"n{seq}")])
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.2)
    assert len(resets) == 1  # the first (none before it), then none for a minute
    monkeypatch.setattr(_direct, "RESET_FRAMES_MAX", 8)  # too long: reset whenever the last was
    for seq in range(201, 401):
        await store.append_events("t", [_note(seq, f"n{seq}")])
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.2)
    assert len(resets) > 2
    assert len(await store.read_events("t")) == 400
    await store.close()


@pytest.mark.parametrize("durability", ["full", "process"])
async def test_a_write_made_while_the_log_is_reset_waits_on_the_loop_and_commits_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durability: str
) -> None:
    """A write that meets a reset of the log (a checkpoint holding writes off) waits for its end on the event loop
    and is then committed on the loop's connection: the store's thread, busy with the checkpoint, is not given it."""
    import threading

    from podium.store import _direct

    gate, armed = threading.Event(), threading.Event()
    real = _direct._checkpoint

    def checkpoint(conn: sqlite3.Connection) -> int:
        direct = store._direct
        if armed.is_set() and direct is not None and direct.resetting:  # one run with writes held off
            gate.wait(10)
        return real(conn)

    monkeypatch.setattr(_direct, "_checkpoint", checkpoint)
    monkeypatch.setattr(_direct, "CHECKPOINT_EVERY", 1)
    monkeypatch.setattr(_direct, "RESET_FRAMES", 1)
    monkeypatch.setattr(_direct, "RESET_EVERY", 0.0)
    store = _open(tmp_path / "r.db", durability, monkeypatch)
    await store.create_thread("t")
    direct = store._direct
    assert direct is not None
    for _ in range(500):  # the thread's own commit may have begun a reset: let it end
        if not direct.resetting:
            break
        await asyncio.sleep(0.01)
    armed.set()
    await store.append_events("t", [_note(1, "first")])  # its checkpoint finds a frame: a reset begins
    for _ in range(500):
        if direct.resetting:
            break
        await asyncio.sleep(0.01)
    assert direct.resetting
    thread_commits, handed, commits = store._writer.commits, direct.handed, direct.commits
    write = asyncio.ensure_future(store.append_events("t", [_note(2, "during the reset")]))
    await asyncio.sleep(0.05)
    assert not write.done()  # held off
    gate.set()
    await asyncio.wait_for(write, 10)
    assert (store._writer.commits, direct.handed) == (thread_commits, handed)  # not handed to the store's thread
    assert direct.commits > commits
    assert [e.text for e in await store.read_events("t")] == ["first", "during the reset"]  # type: ignore[attr-defined]
    await store.close()


async def test_an_idle_loop_takes_the_sync_answer_directly_and_a_slow_disk_is_not_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With nothing else to run, the loop's thread waits briefly for the sync and settles its writers itself (no
    wake-up through the loop's self-pipe); a sync slower than that is answered through the loop as before, and once
    the disk is seen to be slow the loop does not wait at all."""
    import time

    from podium.store import _syncer

    store = SQLiteStore(tmp_path / "q.db")
    await store.create_thread("t")
    syncs = store.syncs
    wakes = loop_wakes(monkeypatch)
    for seq in range(1, 21):
        await store.append_events("t", [_note(seq, f"n{seq}")])
    assert store.syncs - syncs == 20  # each write waited for its own sync
    assert wakes[0] < 10  # most answers were handed over on the loop's thread (a thread can be slow to wake)

    disk = _held_disk(monkeypatch)
    wakes[0] = 0
    write = asyncio.ensure_future(store.append_events("t", [_note(21, "slow")]))
    await asyncio.sleep(0)  # the write is committed at the end of this turn, then the loop is idle
    started = time.perf_counter()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert time.perf_counter() - started < 0.1 and not write.done()  # waited QUICK_SYNC_WAIT at most, went on
    disk.set()
    await write
    assert wakes[0] == 1  # answered through the loop

    store._syncer.typical = 2 * _syncer.QUICK_SYNC_WAIT  # type: ignore[union-attr]  # a disk seen to be slow
    waited: list[float] = []
    take = _syncer.Handoff.take
    monkeypatch.setattr(_syncer.Handoff, "take", lambda self, s: waited.append(s) or take(self, s))
    await store.append_events("t", [_note(22, "no wait")])
    assert waited == []
    await store.close()


async def test_the_loop_waits_only_while_idle_and_never_past_its_next_timer() -> None:
    from podium._handoff import idle_window

    loop = asyncio.get_running_loop()
    assert idle_window(loop, 0.002) == 0.002  # nothing ready, no timer
    timer = loop.call_later(0.0005, lambda: None)
    assert 0 < idle_window(loop, 0.002) <= 0.0005  # up to the timer, no longer
    timer.cancel()
    soon = loop.call_later(0.00001, lambda: None)
    assert idle_window(loop, 0.002) == 0.0  # a timer due at once leaves no window
    soon.cancel()
    await asyncio.sleep(0)
    loop.call_soon(lambda: None)
    assert idle_window(loop, 0.002) == 0.0  # a callback is ready: no waiting
    await asyncio.sleep(0)


async def test_a_durable_write_on_an_idle_loop_commits_at_once_and_needs_no_turn_of_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing else can join the transaction when nothing else is ready to run: the write is committed at once as
    one statement, the loop's thread waits briefly for its sync, and the caller goes on without a turn of the loop."""
    from podium._eager import first_step
    from podium.store import _syncer

    monkeypatch.setattr(_syncer, "QUICK_SYNC_WAIT", 0.05)  # a disk slowed by other tests still counts as quick
    store = SQLiteStore(tmp_path / "n.db")
    await store.create_thread("t")
    statements: list[str] = []
    store._direct.conn.set_trace_callback(statements.append)  # type: ignore[union-attr]
    commits, syncs = store.commits, store.syncs
    at_once = 0
    for seq in range(1, 21):
        finished, waiting = first_step(store.append_events("t", [_note(seq, f"n{seq}")]))
        if not finished:  # the sync's thread was slow to answer: the write is answered through the loop
            await waiting
        at_once += finished
    assert at_once >= 10  # most writes were durable before the call returned (a thread can be slow to wake)
    assert (store.commits - commits, store.syncs - syncs) == (20, 20)  # each durable, each its own sync
    inserts = [s for s in statements if s.startswith("INSERT INTO events")]
    assert len(inserts) == 20 and not any(s.startswith(("BEGIN", "COMMIT", "SAVEPOINT")) for s in statements)
    assert [e.text for e in await store.read_events("t")] == [f"n{i}" for i in range(1, 21)]  # type: ignore[attr-defined]
    await store.close()


async def test_a_shared_transaction_takes_savepoints_only_when_a_write_in_it_fails(tmp_path: Path) -> None:
    """Writes gathered in one transaction run one after another; only when one fails is it rolled back and each
    write run again in a savepoint of its own, so the failing one fails alone."""
    store = SQLiteStore(tmp_path / "s.db")
    for i in range(10):
        await store.create_thread(f"t{i}")
    statements: list[str] = []
    store._direct.conn.set_trace_callback(statements.append)  # type: ignore[union-attr]
    await asyncio.gather(*(store.append_events(f"t{i}", [_note(1, f"n{i}")]) for i in range(10)))
    assert sum(s.startswith("INSERT INTO events") for s in statements) == 10
    assert not any("SAVEPOINT" in s for s in statements) and statements.count("COMMIT") == 1

    statements.clear()
    writes = [asyncio.ensure_future(store.append_events(f"t{i}", [_note(2, f"m{i}")])) for i in range(10)]
    clash = asyncio.ensure_future(store.append_events("t3", [_note(2, "same seq as m3")]))
    await asyncio.gather(*writes)
    with pytest.raises(StoreError, match="UNIQUE"):
        await clash
    assert statements.count("ROLLBACK") == 1 and sum("SAVEPOINT" in s for s in statements) == 11
    for i in range(10):
        assert [e.text for e in await store.read_events(f"t{i}")] == [f"n{i}", f"m{i}"]  # type: ignore[attr-defined]
    await store.close()


async def test_a_run_timing_out_while_its_events_wait_for_the_disk_ends_once_with_them_stored_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write under way (the model's reply, stored before its tool runs) is not cancelled with the run: the run
    learns how it ended, then records its end after it (nothing stored twice, no sequence number claimed twice)."""
    import time

    from podium import AIMessage, Limits, ReactAgent, Runtime, ToolCall, ToolMessage
    from podium.store import _syncer
    from podium.testing import FunctionModel

    def reply(messages: list[Any], request: Any) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content="hi")
        return AIMessage(content="", tool_calls=[ToolCall(id="c", name="ping", arguments="{}")])

    def ping() -> str:
        """Answer pong."""
        return "pong"

    store = SQLiteStore(tmp_path / "c.db")
    real = _syncer._data_sync
    slow = threading.Event()

    def slow_disk(fd: int) -> None:
        if slow.is_set():
            time.sleep(0.4)  # longer than the run's timeout
        real(fd)

    monkeypatch.setattr(_syncer, "_data_sync", slow_disk)
    agent = ReactAgent("echo", FunctionModel(reply), [ping])
    runtime = Runtime(store)
    assert (await runtime.run(agent, "warm up", thread_id="t")).status == "completed"
    slow.set()
    result = await runtime.run(agent, "slow disk", thread_id="t", limits=Limits(timeout=0.1))
    slow.clear()
    assert result.status == "limit_exceeded" and result.limit == "time"
    events = await store.read_events("t")
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    ends = [e for e in events if e.kind == "run_ended" and e.run_id == result.run_id]
    assert len(ends) == 1
    assert (await runtime.run(agent, "after", thread_id="t")).status == "completed"  # the thread goes on
    await store.close()


async def test_gathered_writes_meeting_a_lock_held_elsewhere_go_to_the_stores_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transaction of gathered writes that cannot begin (another connection holds the write lock) is handed to
    the store's thread, which waits for the lock while the event loop goes on; nothing is lost."""
    store = _open(tmp_path / "l.db", "full-gathered", monkeypatch)
    for i in range(3):
        await store.create_thread(f"t{i}")
    other = sqlite3.connect(tmp_path / "l.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    handed = store._direct.handed  # type: ignore[union-attr]
    writes = [asyncio.ensure_future(store.append_events(f"t{i}", [_note(1, f"n{i}")])) for i in range(3)]
    await asyncio.sleep(0.1)
    assert not any(w.done() for w in writes)  # waiting on the store's thread, not on the loop
    assert store._direct.handed > handed  # type: ignore[union-attr]
    other.execute("ROLLBACK")
    other.close()
    await asyncio.gather(*writes)
    for i in range(3):
        assert [e.text for e in await store.read_events(f"t{i}")] == [f"n{i}"]  # type: ignore[attr-defined]
    await store.close()
