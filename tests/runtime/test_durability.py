"""The runtime's guarantees: crash recovery, interrupts at depth across restarts, single writer, isolation,
append-only storage, and clear errors that change nothing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from podium import (
    AIMessage,
    HumanMessage,
    Message,
    MessageAdded,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    SQLiteStore,
    Store,
    StoreCorrupt,
    StoreLocked,
    ThreadBusy,
    ThreadNotFound,
    ToolMessage,
    UsageError,
)
from podium.testing import FunctionModel, tool_call

WORKER = Path(__file__).parent / "crash_worker.py"


def _wait_for(path: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.02)


async def test_sigkill_mid_run_then_a_new_process_finishes_without_repeats(tmp_path: Path) -> None:
    db, log = tmp_path / "chat.db", tmp_path / "calls.log"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    first = subprocess.Popen([sys.executable, str(WORKER), "run", str(db), str(log)], env=env)
    try:
        _wait_for(log.with_suffix(".blocked"))  # blocked inside the third tool call
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert first.returncode == -signal.SIGKILL

    second = subprocess.run(
        [sys.executable, str(WORKER), "resume", str(db), str(log)], env=env, capture_output=True, text=True, timeout=60
    )
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == {"status": "completed", "output": "all four steps recorded"}

    entries = [json.loads(line) for line in log.read_text().splitlines()]
    model_calls = Counter(e["seen"] for e in entries if e["what"] == "model")
    assert model_calls == {1: 1, 3: 1, 5: 1, 7: 1, 9: 1}, "a completed model call was made twice"
    tool_runs = Counter(e["n"] for e in entries if e["what"] == "tool")
    assert tool_runs == {1: 1, 2: 1, 3: 2, 4: 1}  # only the call cut short by the kill ran again

    store = SQLiteStore(db)
    messages = await Runtime(store).messages("crash-thread")
    kinds = [m.kind for m in messages]
    assert kinds == ["human"] + ["ai", "tool"] * 4 + ["ai"]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    asked = [c.id for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    assert answered == asked and len(set(asked)) == 4
    assert [m.content for m in messages if isinstance(m, ToolMessage)] == [f"step {n} recorded" for n in (1, 2, 3, 4)]
    runs = await store.list_runs("crash-thread")
    assert [r.status for r in runs] == ["completed"]
    await store.close()


def _nested_agents(calls: Counter[str]) -> ReactAgent:
    async def approve(ctx: RunContext[Any], action: str) -> str:
        """Ask the human to approve an action."""
        answer = await ctx.ask(f"May I {action}?")
        return f"human said {answer}"

    def inner_model(messages: list[Message], request: ModelRequest) -> AIMessage:
        calls["inner"] += 1
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"inner done, {messages[-1].content}")
        return AIMessage(tool_calls=[tool_call("approve", {"action": "delete the draft"})])

    def outer_model(messages: list[Message], request: ModelRequest) -> AIMessage:
        calls["outer"] += 1
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"outer done: {messages[-1].content}")
        return AIMessage(tool_calls=[tool_call("inner", {"text": "clean up"}, id="call_outer")])

    inner = ReactAgent("inner", FunctionModel(inner_model), [approve], description="Cleans up.")
    return ReactAgent("outer", FunctionModel(outer_model), [inner.as_tool()])


async def test_interrupt_two_levels_deep_survives_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "nested.db"
    before: Counter[str] = Counter()
    store = SQLiteStore(db)
    result = await Runtime(store).run(_nested_agents(before), "tidy up", thread_id="t")
    await store.close()
    assert result.status == "interrupted"
    [interrupt] = result.interrupts
    assert interrupt.prompt == "May I delete the draft?"
    assert interrupt.path[:3] == ("outer", "call_outer", "inner") and len(interrupt.path) == 4
    assert before == {"outer": 1, "inner": 1}

    after: Counter[str] = Counter()  # a fresh process: new store, runtime and agents on the same file
    store = SQLiteStore(db)
    runtime = Runtime(store)
    status, pending = await runtime.pending("t")
    assert status == "interrupted" and [p.id for p in pending] == [interrupt.id]
    resumed = await runtime.resume(_nested_agents(after), "t", "yes")
    assert resumed.status == "completed"
    assert resumed.output == "outer done: inner done, human said yes"
    assert after == {"outer": 1, "inner": 1}  # only the calls after the question were made
    main = await runtime.messages("t")
    assert [m.kind for m in main] == ["human", "ai", "tool", "ai"]
    inner_history = await runtime.messages("t", "outer/call_outer/inner")
    assert [m.kind for m in inner_history] == ["human", "ai", "tool", "ai"]
    with pytest.raises(UsageError, match="no run to resume"):
        await runtime.resume(_nested_agents(after), "t", "again")
    await store.close()


def _slow_echo(delay: float) -> FunctionModel:
    async def reply(messages: list[Message], request: ModelRequest) -> str:
        await asyncio.sleep(delay)
        return f"echo: {messages[-1].content}"

    return FunctionModel(reply)


async def test_second_run_on_a_busy_thread_fails_or_waits_never_interleaves(store: Store) -> None:
    runtime = Runtime(store, busy_poll=0.005)
    replying = asyncio.Event()

    async def reply(messages: list[Message], request: ModelRequest) -> str:
        replying.set()  # the first run holds the thread by now (over a pool, calls of two runs may overtake)
        await asyncio.sleep(0.05)
        return f"echo: {messages[-1].content}"

    agent = ReactAgent("echo", FunctionModel(reply))
    first = asyncio.create_task(runtime.run(agent, "one", thread_id="t"))
    await replying.wait()
    with pytest.raises(ThreadBusy):
        await runtime.run(agent, "two", thread_id="t")
    waited = await runtime.run(agent, "three", thread_id="t", if_busy="wait")
    assert (await first).status == "completed" and waited.status == "completed"
    events = await runtime.events("t")
    runs = [e.run_id for e in events]
    first_run = runs[0]
    assert runs == sorted(runs, key=lambda r: r != first_run)  # all of the first run's events come first
    assert [m.content for m in await runtime.messages("t")] == ["one", "echo: one", "three", "echo: three"]


async def test_two_connections_to_one_file_exclude_each_other(tmp_path: Path) -> None:
    a, b = SQLiteStore(tmp_path / "x.db"), SQLiteStore(tmp_path / "x.db")
    agent = ReactAgent("echo", _slow_echo(0.05))
    first = asyncio.create_task(Runtime(a).run(agent, "one", thread_id="t"))
    await asyncio.sleep(0.02)
    with pytest.raises(ThreadBusy):
        await Runtime(b).run(agent, "two", thread_id="t")
    assert (await first).status == "completed"
    assert (await Runtime(b).run(agent, "two", thread_id="t")).status == "completed"
    await a.close()
    await b.close()


async def test_hundred_concurrent_threads_stay_isolated(store: Store) -> None:
    runtime = Runtime(store)
    agent = ReactAgent("echo", _slow_echo(0.001))
    results = await asyncio.gather(*(runtime.run(agent, f"message {i}", thread_id=f"t{i}") for i in range(100)))
    assert all(r.status == "completed" for r in results)
    for i in range(100):
        assert [m.content for m in await runtime.messages(f"t{i}")] == [f"message {i}", f"echo: message {i}"]


async def test_bytes_written_per_turn_do_not_grow(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "growth.db")
    written: list[int] = []
    store._on_thread(
        lambda conn: conn.set_trace_callback(
            lambda sql: written.append(len(sql)) if sql.startswith(("INSERT", "UPDATE")) else None
        )
    )

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content="noted " + messages[-1].content)
        return AIMessage(tool_calls=[tool_call("note", {"text": "x" * 40})])

    def note(text: str) -> str:
        """Note something."""
        return text.upper()

    runtime = Runtime(store)
    agent = ReactAgent("noter", FunctionModel(model), [note])
    per_turn = []
    for turn in range(40):
        written.clear()
        result = await runtime.run(agent, f"turn {turn:03d}", thread_id="t")
        assert result.status == "completed"
        per_turn.append(sum(written))
    assert len(await runtime.messages("t")) == 40 * 4
    # the prompt grows every turn (the model sees all history); what is stored per turn must not
    assert max(per_turn[-5:]) <= per_turn[1] * 1.05, per_turn
    await store.close()


async def test_unknown_thread_is_a_clear_error(store: Store) -> None:
    runtime = Runtime(store)
    agent = ReactAgent("echo", _slow_echo(0))
    with pytest.raises(ThreadNotFound, match="no thread 'ghost'"):
        await runtime.resume(agent, "ghost", "hi")
    with pytest.raises(ThreadNotFound):
        await runtime.messages("ghost")
    with pytest.raises(ThreadNotFound):
        await runtime.pending("ghost")
    assert await store.get_thread("ghost") is None


def test_corrupt_database_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreCorrupt, match="not a usable Podium database"):
        SQLiteStore(path)
    assert path.read_bytes() == b"this is not a database" * 100
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(StoreCorrupt, match="not a Podium one"):
        SQLiteStore(foreign)
    newer = tmp_path / "newer.db"
    SQLiteStore(newer)._on_thread(lambda conn: conn.execute("PRAGMA user_version=99"))
    with pytest.raises(StoreCorrupt, match="newer than this Podium"):
        SQLiteStore(newer)


async def test_locked_database_is_a_clear_error_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    store = SQLiteStore(path, busy_timeout=0.1)
    runtime = Runtime(store)
    agent = ReactAgent("echo", _slow_echo(0))
    await runtime.run(agent, "before", thread_id="t")
    before = await runtime.events("t")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with pytest.raises(StoreLocked, match="locked"):
        await runtime.run(agent, "during", thread_id="t")
    holder.execute("ROLLBACK")
    holder.close()
    assert [e.seq for e in await runtime.events("t")] == [e.seq for e in before]
    assert (await runtime.run(agent, "after", thread_id="t")).status == "completed"
    await store.close()


async def test_run_while_waiting_for_an_answer_is_refused(store: Store) -> None:
    async def ask(ctx: RunContext[Any]) -> str:
        """Ask something."""
        return await ctx.ask("which one?")

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=messages[-1].content)
        return AIMessage(tool_calls=[tool_call("ask")])

    runtime = Runtime(store)
    agent = ReactAgent("asker", FunctionModel(model), [ask])
    assert (await runtime.run(agent, "go", thread_id="t")).status == "interrupted"
    from podium import ThreadWaiting

    with pytest.raises(ThreadWaiting, match="resume"):
        await runtime.run(agent, "something else", thread_id="t")
    with pytest.raises(UsageError, match="waits for an answer"):
        await runtime.resume(agent, "t")
    with pytest.raises(UsageError, match="no pending interrupt"):
        await runtime.resume(agent, "t", {"nope": "x"})
    assert (await runtime.resume(agent, "t", "the blue one")).output == "the blue one"
    assert [type(e).__name__ for e in await runtime.events("t") if isinstance(e, MessageAdded)].count(
        "MessageAdded"
    ) == 4
    assert HumanMessage(content="something else") not in await runtime.messages("t")


async def test_parallel_questions_are_answered_together_by_id(store: Store) -> None:
    async def confirm(ctx: RunContext[Any], item: str) -> str:
        """Confirm an item with the human."""
        return f"{item}={await ctx.ask(f'keep {item}?')}"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=", ".join(m.content for m in messages if isinstance(m, ToolMessage)))
        return AIMessage(tool_calls=[tool_call("confirm", {"item": i}, id=i) for i in ("hat", "scarf")])

    runtime = Runtime(store)
    agent = ReactAgent("packer", FunctionModel(model), [confirm])
    waiting = await runtime.run(agent, "pack", thread_id="t")
    assert waiting.status == "interrupted"
    ids = {i.prompt: i.id for i in waiting.interrupts}
    assert set(ids) == {"keep hat?", "keep scarf?"}
    with pytest.raises(UsageError, match="waits on 2 interrupts"):
        await runtime.resume(agent, "t", "yes")
    partly = await runtime.resume(agent, "t", {ids["keep hat?"]: "yes"})
    assert partly.status == "interrupted" and [i.prompt for i in partly.interrupts] == ["keep scarf?"]
    done = await runtime.resume(agent, "t", {ids["keep scarf?"]: "no"})
    assert done.output == "hat=yes, scarf=no"


async def test_a_run_that_lost_its_lease_stops(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from podium.store.base import new_owner

    async def no_renewal(thread_id: str, owner: str, ttl: float) -> None:
        return None  # (this process stalls: its lease is not renewed)

    async def slow_tool() -> str:
        """Wait while another process takes the thread."""
        monkeypatch.setattr(store, "renew_thread", no_renewal)
        await asyncio.sleep(0.06)  # the lease expires
        assert await store.acquire_thread("t", new_owner("intruder"), 60) is None
        return "done"

    model = FunctionModel(
        lambda m, r: "ok" if isinstance(m[-1], ToolMessage) else AIMessage(tool_calls=[tool_call("slow_tool")])
    )
    runtime = Runtime(store, lease_ttl=0.03)
    result = await runtime.run(ReactAgent("a", model, [slow_tool]), "go", thread_id="t")
    assert result.status == "failed" and "lost the write lease of thread 't'" in result.reason
