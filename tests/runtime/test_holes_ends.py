"""Issue 9, items 1 and 7: no sequence of crashes leaves a thread stuck, and a run ends once.

A crash is stood in for by a store write that fails at the chosen moment (the process would have died there).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from podium import AIMessage, InterruptAnswered, ReactAgent, RunContext, Runtime, Store, StoreError, ToolMessage
from podium.events import Event
from podium.runtime.bus import InProcessBus
from podium.testing import FunctionModel, tool_call


def _agent(calls: list[str]) -> ReactAgent:
    async def pay(ctx: RunContext[Any], amount: int) -> str:
        """Pay an amount once the human agrees."""
        if await ctx.ask(f"Pay {amount} EUR?") != "yes":
            return "not paid"
        calls.append(f"pay {amount}")
        return f"paid {amount}"

    def reply(messages: list[Any], request: Any) -> AIMessage | str:
        calls.append("model")
        if isinstance(messages[-1], ToolMessage):
            return f"done: {messages[-1].content}"
        return AIMessage(tool_calls=[tool_call("pay", {"amount": 10})])

    return ReactAgent("payer", FunctionModel(reply), [pay])


async def test_a_crash_between_the_end_and_the_status_ends_the_run_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    agent = _agent(calls)
    runtime = Runtime(store)
    assert (await runtime.run(agent, "pay", thread_id="t")).status == "interrupted"
    real_update = store.update_run

    async def update(run_id: str, status: Any, result: Any = None) -> None:
        if status == "completed":
            raise StoreError("killed before the status was stored")
        await real_update(run_id, status, result)

    monkeypatch.setattr(store, "update_run", update)
    # the built-in stores write a run's end and its status in one transaction; a store that writes them one after
    # the other (Store's own end_run) can stop in between
    monkeypatch.setattr(store, "end_run", functools.partial(Store.end_run, store))
    with pytest.raises(StoreError):
        await runtime.resume(agent, "t", "yes")
    monkeypatch.setattr(store, "update_run", real_update)
    done = await runtime.resume(agent, "t")
    assert done.status == "completed" and done.output == "done: paid 10"
    ends = [e for e in await store.read_events("t") if e.kind == "run_ended"]
    assert [e.status for e in ends] == ["interrupted", "completed"]  # one end per execution, none repeated
    assert [r.status for r in await store.list_runs("t")] == ["completed"]
    assert calls == ["model", "pay 10", "model"]  # nothing ran again: no phantom execution
    again = await runtime.send(agent, "and now?", thread_id="t")  # the thread takes new messages
    assert again.status == "interrupted"


async def test_a_crash_while_answering_leaves_a_thread_that_takes_the_answer_again(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    agent = _agent(calls)
    runtime = Runtime(store)
    assert (await runtime.run(agent, "pay", thread_id="t")).status == "interrupted"
    real_append = store.append_events

    async def append(thread_id: str, events: list[Any], *, owner: str | None = None) -> None:
        if any(isinstance(e, InterruptAnswered) for e in events):
            raise StoreError("killed before the answer was stored")
        await real_append(thread_id, events, owner=owner)

    monkeypatch.setattr(store, "append_events", append)
    with pytest.raises(StoreError):
        await runtime.send(agent, "yes", thread_id="t")
    monkeypatch.setattr(store, "append_events", real_append)
    assert [r.status for r in await store.list_runs("t")] == ["running"]  # marked running, the answer not stored
    done = await runtime.send(agent, "yes", thread_id="t")  # answering again works
    assert done.status == "completed" and done.output == "done: paid 10"
    assert calls.count("pay 10") == 1


async def test_a_failing_event_bus_does_not_fail_the_run(store: Store) -> None:
    class BrokenBus(InProcessBus):
        async def publish(self, thread_id: str, event: Event) -> None:
            raise ConnectionError("the bus is down")

    calls: list[str] = []
    runtime = Runtime(store, bus=BrokenBus())
    first = await runtime.run(_agent(calls), "pay", thread_id="t")
    assert first.status == "interrupted"
    done = await runtime.resume(_agent(calls), "t", "yes")
    assert done.status == "completed" and calls == ["model", "pay 10", "model"]
