"""The event bus: every event of every run reaches subscribers, and no subscriber can fail or stall a run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from podium import (
    AIMessage,
    Event,
    InProcessBus,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    RunEnded,
    RunStarted,
    Runtime,
    Store,
    SubscriberLagged,
    TokenDelta,
    ToolMessage,
    UsageError,
)
from podium.testing import FunctionModel, tool_call


def _agent() -> ReactAgent:
    async def note(ctx: RunContext[Any], text: str) -> str:
        """Note ``text`` on the side channel."""
        await ctx.progress(text)
        return f"noted {text}"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=messages[-1].content)
        return AIMessage(tool_calls=[tool_call("note", {"text": "hi"}, id="n")])

    return ReactAgent("noter", FunctionModel(model), [note])


async def _drain(subscription: Any) -> list[Event]:
    events = []
    while not subscription._queue.empty():
        events.append(await subscription.next())
    return events


async def test_every_stored_event_is_published_after_it_is_stored(store: Store) -> None:
    runtime = Runtime(store)
    assert isinstance(runtime.bus, InProcessBus)
    async with runtime.bus.subscribe("t") as one, runtime.bus.subscribe() as every:
        await runtime.run(_agent(), "go", thread_id="t", on_event=lambda e: None)
        await runtime.run(_agent(), "go", thread_id="other")
        stored = await store.read_events("t")
        published = await _drain(one)
        assert [e.seq for e in published if e.seq] == [e.seq for e in stored]
        assert any(isinstance(e, TokenDelta) and not e.seq for e in published)  # streamed-only ones too
        assert isinstance(published[0], RunStarted) and isinstance(published[-1], RunEnded)
        everything = await _drain(every)
        assert {e.run_id for e in everything} == {e.run_id for e in published} | {
            e.run_id for e in await store.read_events("other")
        }
    assert runtime.bus._by_thread == {}  # type: ignore[attr-defined]


async def test_a_subscriber_that_raises_or_blocks_does_not_change_the_run(store: Store) -> None:
    quiet = await Runtime(store).run(_agent(), "go", thread_id="quiet")
    bus = InProcessBus(max_queue=2)
    runtime = Runtime(store, bus=bus)
    stalled = bus.subscribe()  # never read: overflows
    calls: list[str] = []

    def raising(event: Event) -> None:
        calls.append(event.kind)
        raise RuntimeError("subscriber bug")

    async def slow(event: Event) -> None:
        await asyncio.sleep(60)

    result = await runtime.run(_agent(), "go", thread_id="t", on_event=raising)
    assert (result.status, result.output) == (quiet.status, quiet.output) == ("completed", "noted hi")
    assert calls == ["run_started"]  # dropped after it raised
    waited = await runtime.run(_agent(), "go", thread_id="u", on_event=slow)
    assert (waited.status, waited.output) == ("completed", "noted hi")
    assert [e.kind for e in await store.read_events("t")] == [e.kind for e in await store.read_events("quiet")]
    assert await stalled.next() and await stalled.next()
    with pytest.raises(SubscriberLagged, match="after seq 2"):
        await stalled.next()
    with pytest.raises(StopAsyncIteration):
        await stalled.next()


async def test_a_subscription_iterates_until_closed() -> None:
    bus = InProcessBus()
    subscription = bus.subscribe("t")
    received: list[str] = []

    async def consume() -> None:
        async for event in subscription:
            received.append(event.kind)

    consumer = asyncio.create_task(consume())
    await bus.publish("t", RunStarted(seq=1))
    await bus.publish("u", RunStarted(seq=1))
    await asyncio.sleep(0)
    subscription.close()
    subscription.close()
    await consumer
    assert received == ["run_started"]
    with pytest.raises(UsageError, match="max_queue"):
        InProcessBus(max_queue=0)


async def test_events_nobody_follows_are_not_published_and_a_bus_of_its_own_gets_every_one(store: Store) -> None:
    from podium import EventBus
    from podium.runtime import Subscription

    bus = InProcessBus()
    assert bus.quiet("t")
    async with bus.subscribe("t"):
        assert not bus.quiet("t") and bus.quiet("u")
        async with bus.subscribe():
            assert not bus.quiet("u")
    assert bus.quiet("t")

    class Forwarding(EventBus):  # a bus of the user's, forwarding elsewhere: it must see every event
        def __init__(self) -> None:
            self.seen: list[tuple[str, int]] = []

        async def publish(self, thread_id: str, event: Event) -> None:
            self.seen.append((thread_id, event.seq))

        def subscribe(self, thread_id: str | None = None) -> Subscription:
            raise NotImplementedError

    forwarding = Forwarding()
    await Runtime(store, bus=forwarding).run(_agent(), "go", thread_id="f", on_event=lambda e: None)
    stored = [("f", e.seq) for e in await store.read_events("f")]
    for _ in range(100):  # handed over by the bus's own task, right after the run
        if len([s for s in forwarding.seen if s[1]]) >= len(stored):
            break
        await asyncio.sleep(0.01)
    assert [s for s in forwarding.seen if s[1]] == stored
    assert any(seq == 0 for _, seq in forwarding.seen)  # streamed-only ones too

    skipped = InProcessBus()
    published: list[int] = []
    skipped.publish_nowait = lambda thread_id, event: published.append(event.seq)  # type: ignore[method-assign]
    await Runtime(store, bus=skipped).run(_agent(), "go", thread_id="g")
    assert published == []  # nobody followed: nothing was handed to the bus
