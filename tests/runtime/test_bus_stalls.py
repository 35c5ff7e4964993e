"""A bus of the user's own that waits (a network bus that stalls) never holds a run up, nor its cancellation."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from tests.runtime._doubles import taken

from podium import (
    AIMessage,
    Event,
    EventBus,
    Message,
    ModelRequest,
    ReactAgent,
    Runtime,
    Store,
    ToolMessage,
)
from podium.runtime import Subscription
from podium.testing import FunctionModel, tool_call


def _agent(tool_wait: float = 0.0) -> ReactAgent:
    async def add(a: int, b: int) -> int:
        """Add."""
        await asyncio.sleep(tool_wait)
        return a + b

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"sum {messages[-1].content}")
        return AIMessage(tool_calls=[tool_call("add", {"a": 1, "b": 2}, id="c")])

    return ReactAgent("adder", FunctionModel(model), [add])


class _Waiting(EventBus):
    """Each publish waits ``pause`` seconds (forever: ``None``) before it takes the event."""

    def __init__(self, pause: float | None, *, timeout: float = 5.0, backlog: int = 1000) -> None:
        self.pause = pause
        self.publish_timeout = timeout
        self.max_backlog = backlog
        self.taken: list[tuple[str, int, str]] = []

    async def publish(self, thread_id: str, event: Event) -> None:
        if self.pause is None:
            await asyncio.Event().wait()
        await asyncio.sleep(self.pause)
        self.taken.append((thread_id, event.seq, event.kind))

    def subscribe(self, thread_id: str | None = None) -> Subscription:
        raise NotImplementedError


@pytest.mark.parametrize("pause", [None, 3600.0])
async def test_a_bus_that_never_answers_neither_holds_up_a_run_nor_its_cancellation(
    store: Store, pause: float | None
) -> None:
    runtime = Runtime(store, bus=_Waiting(pause))
    started = time.monotonic()
    running = asyncio.create_task(runtime.run(_agent(), "go", thread_id="t"))
    done, _ = await asyncio.wait({running}, timeout=5)  # (never cancelled: the cancellation could hang too)
    assert done, "the run waited on the bus"
    result = running.result()
    assert (result.status, result.output) == ("completed", "sum 3")
    assert time.monotonic() - started < 2

    slow = asyncio.create_task(runtime.run(_agent(tool_wait=60), "go", thread_id="u"))
    await asyncio.sleep(0.2)  # in its tool, with its first events handed to the stalled bus
    slow.cancel()
    done, _ = await asyncio.wait({slow}, timeout=3)
    assert done, "the cancelled run waited on the bus"
    runs = await store.list_runs("u")
    assert [r.status for r in runs] == ["cancelled"]
    cancelled = asyncio.create_task(runtime.run(_agent(tool_wait=60), "go", thread_id="v"))
    await asyncio.sleep(0.2)
    [run] = await store.list_runs("v")
    assert (await asyncio.wait_for(runtime.cancel(run.id), 3)).status == "cancelled"
    await asyncio.wait_for(cancelled, 3)


async def test_a_slow_bus_gets_every_event_in_order_and_one_past_its_timeout_is_dropped(store: Store) -> None:
    slow = _Waiting(0.01)
    runtime = Runtime(store, bus=slow)
    for thread_id in ("a", "b"):
        result = await runtime.run(_agent(), "go", thread_id=thread_id)
        assert result.status == "completed"
    await taken(slow, 2 * len(await store.read_events("a")), step=0.02)  # behind the run, in order
    stored = [("a", e.seq, e.kind) for e in await store.read_events("a")]
    stored += [("b", e.seq, e.kind) for e in await store.read_events("b")]
    assert [t for t in slow.taken if t[1]] == stored

    stalled = _Waiting(None, timeout=0.05, backlog=2)
    runtime = Runtime(store, bus=stalled)
    assert (await runtime.run(_agent(), "go", thread_id="c")).status == "completed"
    await asyncio.sleep(0.3)  # each waiting publish gives up after 0.05 s; past the backlog of 2, events are dropped
    assert runtime._outlet._task is None  # type: ignore[attr-defined]  # nothing left under way
    stalled.pause, stalled.max_backlog = 0.0, 1000
    assert (await runtime.run(_agent(), "go", thread_id="d")).status == "completed"
    await taken(stalled, len(await store.read_events("d")), step=0.02)
    assert [t for t in stalled.taken if t[1]] == [("d", e.seq, e.kind) for e in await store.read_events("d")]


async def test_a_bus_that_raises_at_once_or_later_is_logged_and_the_run_completes(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    class Raising(EventBus):
        def __init__(self, pause: float) -> None:
            self.pause = pause

        async def publish(self, thread_id: str, event: Event) -> None:
            if self.pause:
                await asyncio.sleep(self.pause)
            raise ConnectionError("the broker is gone")

        def subscribe(self, thread_id: str | None = None) -> Any:
            raise NotImplementedError

    for pause in (0.0, 0.01):
        result = await Runtime(store, bus=Raising(pause)).run(_agent(), "go", thread_id=f"r{pause}")
        assert result.status == "completed"
    await asyncio.sleep(0.2)
    assert "the broker is gone" in caplog.text
