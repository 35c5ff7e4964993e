"""A run is stored once per round (a model reply; the results of its tool calls), published on the bus only once
stored, and reads its thread's history incrementally (only the events stored since the previous turn)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podium import (
    AIMessage,
    Event,
    HumanMessage,
    MemoryStore,
    Message,
    MessageAdded,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    SQLiteStore,
    Store,
    ToolMessage,
)
from podium.testing import FunctionModel, tool_call


def _agent(rounds: int, seen: list[list[str]] | None = None) -> ReactAgent:
    """Answers after ``rounds`` rounds of two tool calls each; records what it is shown."""

    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        human = next(i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage))
        if seen is not None:
            seen.append([str(m.content) for m in messages if isinstance(m, HumanMessage | AIMessage) and m.content])
        done = sum(isinstance(m, ToolMessage) for m in messages[human:]) // 2
        if done < rounds:
            return AIMessage(tool_calls=[tool_call("note", {"n": 2 * done}), tool_call("note", {"n": 2 * done + 1})])
        return AIMessage(content=f"answer to {messages[human].content}")

    def note(n: int) -> str:
        """Take a note."""
        return f"noted {n}"

    return ReactAgent("rounds", FunctionModel(reply), [note])


async def test_a_run_commits_once_per_round_not_once_per_event(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.db")
    runtime = Runtime(store)
    before = store.commits
    result = await runtime.run(_agent(rounds=4), "go", thread_id="t")
    assert result.status == "completed"
    events = await runtime.events("t")
    # 16 events in 10 commits: before each of the 5 model calls and 4 rounds of tools, and the run's end (the
    # answer, the run's status and the lease given back with it); besides them the thread and the lease taken (one
    # transaction), and the run; and in each round of two calls, the first result, stored while the other call runs
    assert len(events) == 16
    assert store.commits - before == 10 + 2 + 4
    await store.close()


async def test_the_bus_sees_events_in_order_and_only_once_stored(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "b.db")
    runtime = Runtime(store)
    checked: list[tuple[int, bool]] = []
    live: list[str] = []

    async def watch() -> None:
        async with runtime.bus.subscribe("t") as subscription:
            async for event in subscription:
                if event.seq:
                    stored = [e.seq for e in await store.read_events("t", after=event.seq - 1)]
                    checked.append((event.seq, bool(stored) and stored[0] == event.seq))
                if event.kind == "run_ended":
                    return

    import asyncio

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0)
    await runtime.run(_agent(rounds=2), "go", thread_id="t", on_event=lambda e: live.append(e.kind))
    await asyncio.wait_for(watcher, 10)
    assert [seq for seq, _ in checked] == list(range(1, 11))
    assert all(stored for _, stored in checked)
    assert live.count("tool_started") == 4  # the callbacks get every event, at once
    await store.close()


class _CountingStore(MemoryStore):
    """A memory store that tells how many events each read returned (what a turn costs to read)."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[int] = []

    async def read_events(self, thread_id: str, *, after: int = 0, run_id: str | None = None) -> list[Event]:
        events = await super().read_events(thread_id, after=after, run_id=run_id)
        self.read.append(len(events))
        return events

    async def load_messages(self, *args: Any, **kwargs: Any) -> list[Message]:
        raise AssertionError("a turn must not read the whole history")


async def test_each_turn_reads_only_what_was_stored_since_the_last() -> None:
    store = _CountingStore()
    runtime = Runtime(store)
    seen: list[list[str]] = []
    agent = _agent(rounds=1, seen=seen)
    for turn in range(5):
        assert (await runtime.run(agent, f"q{turn}", thread_id="t")).status == "completed"
    # the first turn starts on an empty log; each later one knows the runs before it (this runtime stored them, and
    # the log's head is the one it knew): none reads anything, at any of its model calls
    assert store.read == []
    assert seen[-1][:-1] == [text for i in range(4) for text in (f"q{i}", f"answer to q{i}")]
    # a run stored by another runtime (another process) is read: its 7 events and the last one known before them
    other = Runtime(store)
    assert (await other.run(agent, "elsewhere", thread_id="t")).status == "completed"
    assert (await runtime.run(agent, "back", thread_id="t")).status == "completed"
    assert store.read[-1] == 8
    assert seen[-1][-4:-1] == ["answer to q4", "elsewhere", "answer to elsewhere"]
    assert len(seen[-1]) == 2 * 6 + 1


async def test_a_resumed_run_and_the_turns_after_it_see_each_message_once(tmp_path: Path) -> None:
    """A run that waits for the human is not taken into the kept history when it stops (its resumption must see
    the history before its events); once it ends, the next turn sees it whole, once."""
    for store in (MemoryStore(), SQLiteStore(tmp_path / "i.db")):
        seen: list[list[str]] = []

        def reply(messages: list[Message], request: ModelRequest, seen: list[list[str]] = seen) -> AIMessage:
            seen.append([str(m.content) for m in messages if isinstance(m, HumanMessage | AIMessage) and m.content])
            last = messages[-1]
            if isinstance(last, HumanMessage) and "confirm" in str(last.content):
                return AIMessage(tool_calls=[tool_call("confirm")])
            if isinstance(last, ToolMessage):
                return AIMessage(content=f"confirmed: {last.content}")
            return AIMessage(content=f"answer to {last.content}")

        async def confirm(ctx: RunContext[Any]) -> str:
            """Ask the human to confirm."""
            return await ctx.ask("Sure?")

        agent = ReactAgent("asker", FunctionModel(reply), [confirm])
        runtime = Runtime(store)
        await runtime.run(agent, "hello", thread_id="t")
        assert (await runtime.run(agent, "please confirm", thread_id="t")).status == "interrupted"
        resumed = await runtime.resume(agent, "t", "yes")
        assert resumed.output == "confirmed: yes"
        assert seen[-1] == ["hello", "answer to hello", "please confirm"]
        await runtime.run(agent, "next", thread_id="t")
        assert seen[-1] == ["hello", "answer to hello", "please confirm", "confirmed: yes", "next"]
        await store.close()


async def test_a_rolled_back_run_leaves_the_history_that_was_kept(tmp_path: Path) -> None:
    for store in (MemoryStore(), SQLiteStore(tmp_path / "h.db")):
        runtime = Runtime(store)
        seen: list[list[str]] = []
        agent = _agent(rounds=0, seen=seen)
        await runtime.run(agent, "kept", thread_id="t")
        dropped = await runtime.run(agent, "dropped", thread_id="t")
        await store.delete_run(dropped.run_id)
        await runtime.run(agent, "after", thread_id="t")
        assert seen[-1] == ["kept", "answer to kept", "after"]
        await store.close()


async def test_histories_are_kept_per_namespace_and_for_a_bounded_number_of_threads() -> None:
    from podium.runtime._history import HistoryCache

    store = MemoryStore()
    runtime = Runtime(store)
    runtime._histories = HistoryCache(max_threads=2)
    seen: list[list[str]] = []
    agent = _agent(rounds=0, seen=seen)
    for thread in ("a", "b", "c", "a"):
        await runtime.run(agent, f"to {thread}", thread_id=thread)
    assert seen[-1] == ["to a", "answer to to a", "to a"]
    assert len(runtime._histories._threads) == 2


async def test_a_call_that_finishes_while_its_round_runs_on_is_stored_at_once(store: Store) -> None:
    """Parallel calls: the quick one's result is stored while the slow one still runs, so a crash then repeats only
    the slow one (it used to wait for the round's end, and a crash repeated the quick call's side effect)."""
    import asyncio

    release = asyncio.Event()
    seen: list[list[str]] = []

    async def quick() -> str:
        """Quick."""
        return "quick done"

    async def slow() -> str:
        """Slow."""
        for _ in range(200):
            names = [e.message.name for e in await store.read_events("t") if isinstance(e, MessageAdded)]
            if "quick" in names:
                break
            await asyncio.sleep(0.01)
        seen.append([n or "" for n in names])
        await release.wait()
        return "slow done"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content="both done")
        return AIMessage(tool_calls=[tool_call("quick", id="q"), tool_call("slow", id="s")])

    run = asyncio.ensure_future(
        Runtime(store).run(ReactAgent("a", FunctionModel(model), [quick, slow]), "go", thread_id="t")
    )
    for _ in range(300):
        if seen:
            break
        await asyncio.sleep(0.01)
    release.set()
    assert (await run).output == "both done"
    assert seen and "quick" in seen[0] and "slow" not in seen[0]  # stored while the slow call still ran
