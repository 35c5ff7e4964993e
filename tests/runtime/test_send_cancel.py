"""Runtime.send, Runtime.cancel and run ids chosen by the caller, on every store backend."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from podium import (
    AIMessage,
    InterruptAnswered,
    MemoryStore,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    RunEnded,
    RunNotFound,
    Runtime,
    Store,
    ThreadWaiting,
    ToolMessage,
    UsageError,
)
from podium.store.base import new_owner
from podium.testing import FunctionModel, tool_call


def _asker(questions: int = 1) -> ReactAgent:
    async def confirm(ctx: RunContext[Any], what: str) -> str:
        """Ask the human to confirm ``what``."""
        return await ctx.ask(f"confirm {what}?")

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content="answers: " + ", ".join(m.content for m in messages if isinstance(m, ToolMessage)))
        calls = [tool_call("confirm", {"what": f"item {n}"}, id=f"c{n}") for n in range(questions)]
        return AIMessage(tool_calls=calls)

    return ReactAgent("asker", FunctionModel(model), [confirm])


def _sleeper(started: asyncio.Event) -> ReactAgent:
    async def wait_long(ctx: RunContext[Any]) -> str:
        """Wait a long time."""
        started.set()
        await asyncio.sleep(60)
        return "woke"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=messages[-1].content)
        return AIMessage(tool_calls=[tool_call("wait_long", id="w")])

    return ReactAgent("sleeper", FunctionModel(model), [wait_long])


async def test_send_answers_the_one_pending_question_and_otherwise_starts_a_run(store: Store) -> None:
    runtime = Runtime(store)
    agent = _asker()
    first = await runtime.send(agent, "go", thread_id="t", run_id="r1")
    assert (first.status, first.run_id) == ("interrupted", "r1")
    events: list[Any] = []
    answered = await runtime.send(agent, "yes", thread_id="t", on_event=events.append)
    assert (answered.status, answered.run_id, answered.output) == ("completed", "r1", "answers: yes")
    assert isinstance(events[0], InterruptAnswered) and events[0].seq > 0  # journaled like any step
    assert [e.key for e in await store.read_events("t", run_id="r1") if isinstance(e, InterruptAnswered)] == [
        "asker/c0@3#1!"
    ]
    again = await runtime.send(agent, "once more", thread_id="t")
    assert again.status == "interrupted" and again.run_id != "r1"
    fresh = await runtime.send(agent, "hello")
    assert fresh.status == "interrupted" and fresh.thread_id not in ("t", "")


async def test_send_refuses_to_guess_between_several_questions(store: Store) -> None:
    runtime = Runtime(store)
    agent = _asker(questions=2)
    assert (await runtime.send(agent, "go", thread_id="t")).status == "interrupted"
    with pytest.raises(UsageError, match=r"waits on 2 interrupts.*asker/c0@3#1, asker/c1@4#1"):
        await runtime.send(agent, "yes", thread_id="t")
    done = await runtime.resume(agent, "t", {"asker/c0@3#1": "a", "asker/c1@4#1": "b"})
    assert done.output == "answers: a, b"


async def test_a_run_id_cannot_be_used_twice_and_resume_checks_it(store: Store) -> None:
    runtime = Runtime(store)
    agent = _asker()
    await runtime.run(agent, "go", thread_id="t", run_id="r1")
    with pytest.raises(UsageError, match="already used"):
        await runtime.run(agent, "go", thread_id="u", run_id="r1")
    with pytest.raises(UsageError, match="waits in run 'r1', not 'r2'"):
        await runtime.resume(agent, "t", "yes", run_id="r2")
    with pytest.raises(UsageError, match="if_busy"):
        await runtime.resume(agent, "t", "yes", if_busy="never")  # type: ignore[arg-type]
    assert (await runtime.resume(agent, "t", "yes", run_id="r1")).status == "completed"


async def test_cancel_stops_an_executing_run_once(store: Store) -> None:
    runtime = Runtime(store)
    started = asyncio.Event()
    subscription = runtime.bus.subscribe("t")
    task = asyncio.create_task(runtime.run(_sleeper(started), "sleep", thread_id="t", run_id="r"))
    await started.wait()
    cancelled = await runtime.cancel("r")
    assert (cancelled.run_id, cancelled.thread_id, cancelled.status) == ("r", "t", "cancelled")
    result = await task
    assert result.status == "cancelled"
    assert (await store.get_run("r")).status == "cancelled"  # type: ignore[union-attr]
    ended = [e for e in await store.read_events("t") if isinstance(e, RunEnded)]
    assert [e.status for e in ended] == ["cancelled"]
    assert (await runtime.cancel("r")).status == "already_ended"
    seen = []
    while not subscription._queue.empty():  # type: ignore[attr-defined]
        seen.append(await subscription.next())
    assert isinstance(seen[-1], RunEnded) and seen[-1].status == "cancelled"
    subscription.close()
    # the thread is free again
    assert (await runtime.run(_asker(), "go", thread_id="t")).status == "interrupted"


async def test_cancel_ends_a_waiting_run_and_an_orphaned_one(store: Store) -> None:
    runtime = Runtime(store)
    agent = _asker()
    await runtime.run(agent, "go", thread_id="t", run_id="r")
    assert (await runtime.cancel("r")).status == "cancelled"
    assert (await runtime.pending("t"))[0] == "cancelled"
    assert (await runtime.cancel("r")).status == "already_ended"
    assert (await runtime.run(agent, "go", thread_id="t", run_id="r2")).status == "interrupted"
    await store.update_run("r2", "running")  # as if its process had died mid-way
    with pytest.raises(ThreadWaiting):
        await runtime.run(agent, "hi", thread_id="t")  # (send would answer its question: see test_holes_ends)
    assert (await runtime.cancel("r2")).status == "cancelled"
    ended = [e.status for e in await store.read_events("t") if isinstance(e, RunEnded)]
    assert ended == ["interrupted", "cancelled", "interrupted", "cancelled"]
    with pytest.raises(RunNotFound, match="'nope'"):
        await runtime.cancel("nope")


async def test_a_caller_giving_up_still_records_the_run_as_cancelled() -> None:
    runtime = Runtime()
    started = asyncio.Event()
    task = asyncio.create_task(runtime.run(_sleeper(started), "sleep", thread_id="t", run_id="r"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await runtime.store.get_run("r")).status == "cancelled"  # type: ignore[union-attr]
    assert (await runtime.cancel("r")).status == "already_ended"


async def test_two_concurrent_cancels_end_the_run_once() -> None:
    runtime = Runtime()
    started = asyncio.Event()
    task = asyncio.create_task(runtime.run(_sleeper(started), "sleep", thread_id="t", run_id="r"))
    await started.wait()
    both = await asyncio.gather(runtime.cancel("r"), runtime.cancel("r"))
    assert sorted(c.status for c in both) == ["already_ended", "cancelled"]
    assert (await task).status == "cancelled"
    assert [e.status for e in await runtime.events("t") if isinstance(e, RunEnded)] == ["cancelled"]


async def test_a_cancel_stores_its_end_and_the_status_in_one_write(store: Store) -> None:
    """A crash between two writes used to leave ``RunEnded(cancelled)`` with the status still ``interrupted``, and a
    later answer finished the cancelled run (its tool ran). The end and the status now go in one ``end_run``."""
    runtime = Runtime(store)
    first = await runtime.send(_asker(), "go", thread_id="t")
    assert first.status == "interrupted"
    ends: list[str] = []
    updates: list[str] = []
    real_end, real_update = store.end_run, store.update_run

    async def end_run(thread_id: str, events: list[Any], run_id: str, status: Any, *a: Any, **k: Any) -> bool:
        ends.append(status)
        return await real_end(thread_id, events, run_id, status, *a, **k)

    async def update_run(run_id: str, status: Any, result: Any = None) -> None:
        updates.append(status)
        await real_update(run_id, status, result)

    store.end_run = end_run  # type: ignore[method-assign]
    store.update_run = update_run  # type: ignore[method-assign]
    assert (await runtime.cancel(first.run_id)).status == "cancelled"
    assert ends == ["cancelled"]
    # the memory store's end_run makes two writes (events, then status); SQLite and PostgreSQL one
    assert updates == (["cancelled"] if isinstance(store, MemoryStore) else [])


async def test_a_stored_cancel_is_final_even_when_the_status_was_not_written(store: Store) -> None:
    """A process that stored the cancel's end but not the run's status (a store whose end takes two writes): an
    answer sent afterwards ends the run as cancelled, and its tool does not run."""
    ran: list[str] = []

    async def transfer(ctx: RunContext[Any], amount: int) -> str:
        """Transfer ``amount`` after the human confirms."""
        if (await ctx.ask(f"transfer {amount}?")) == "yes":
            ran.append("transferred")
        return "done"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=messages[-1].content)
        return AIMessage(tool_calls=[tool_call("transfer", {"amount": 5000}, id="x")])

    agent = ReactAgent("bank", FunctionModel(model), [transfer])
    runtime = Runtime(store)
    first = await runtime.send(agent, "pay the invoice", thread_id="t")
    assert first.status == "interrupted"
    real_update = store.update_run

    async def lost_update(run_id: str, status: Any, result: Any = None) -> None:
        if status == "cancelled":
            raise RuntimeError("the process died here")
        await real_update(run_id, status, result)

    store.update_run = lost_update  # type: ignore[method-assign]
    split = isinstance(store, MemoryStore)  # two writes here: the status write is the one lost
    if split:
        with pytest.raises(RuntimeError):
            await runtime.cancel(first.run_id)
    else:  # one write: nothing to lose in between
        await runtime.cancel(first.run_id)
    store.update_run = real_update  # type: ignore[method-assign]
    answered = await runtime.send(agent, "yes", thread_id="t")
    # the answer finishes the cancelled run as cancelled; where the cancel was whole, it starts a new run instead
    assert answered.status == ("cancelled" if split else "interrupted") and ran == []
    run = await store.get_run(first.run_id)
    assert run is not None and run.status == "cancelled"


async def test_two_concurrent_answers_to_one_question_never_answer_the_next(store: Store) -> None:
    """A double click: two clients send "yes" to "approve $500?". One answers it; the run then asks "approve
    $9000?", which neither client saw: the other "yes" is refused, not taken as its answer."""

    async def approve(ctx: RunContext[Any]) -> str:
        """Approve the two payments."""
        first = await ctx.ask("approve $500?")
        second = await ctx.ask("approve $9000?")
        return f"$500: {first}; $9000: {second}"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=messages[-1].content)
        return AIMessage(tool_calls=[tool_call("approve", id="a")])

    agent = ReactAgent("payer", FunctionModel(model), [approve])
    runtime = Runtime(store)
    first = await runtime.send(agent, "pay both", thread_id="t")
    assert first.interrupts[0].prompt == "approve $500?"
    blocker = new_owner("blocker")  # holds the thread while both clients read the question and wait for it
    assert await store.acquire_thread("t", blocker, 60) is None
    sends = [
        asyncio.ensure_future(runtime.send(agent, "yes", thread_id="t", if_busy="wait", busy_timeout=10))
        for _ in range(2)
    ]
    await asyncio.sleep(0.3)
    await store.release_thread("t", blocker)
    outcomes = await asyncio.gather(*sends, return_exceptions=True)
    answered = [o for o in outcomes if not isinstance(o, BaseException)]
    refused = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(answered) == 1 and answered[0].interrupts[0].prompt == "approve $9000?"
    assert len(refused) == 1 and isinstance(refused[0], UsageError) and "answered meanwhile" in str(refused[0])
    status, pending = await runtime.pending("t")
    assert status == "interrupted" and pending[0].prompt == "approve $9000?"  # still waits for its own answer
