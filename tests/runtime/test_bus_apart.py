"""A bus of the user's own runs apart from every run: its timeouts and context variables stay in the bus, a run's end
reaches it past its backlog, a plain ``def publish`` is served, and its failures are logged once per series."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import re

import pytest
from tests.runtime._doubles import taken

from podium import (
    AIMessage,
    Event,
    EventBus,
    Message,
    ModelRequest,
    ReactAgent,
    RunEnded,
    Runtime,
    Store,
    ToolMessage,
)
from podium.runtime import Subscription
from podium.testing import FunctionModel, tool_call

_span: contextvars.ContextVar[str | None] = contextvars.ContextVar("span", default=None)


def _agent(tool_wait: float = 0.0, seen: list[str | None] | None = None) -> ReactAgent:
    async def look(n: int) -> str:
        """Look around."""
        await asyncio.sleep(tool_wait)
        if seen is not None:
            seen.append(_span.get())
        return "ok"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content="done")
        return AIMessage(tool_calls=[tool_call("look", {"n": 1}, id="c")])

    return ReactAgent("a", FunctionModel(model), [look])


class _Bus(EventBus):
    def __init__(self) -> None:
        self.taken: list[tuple[str, int, str]] = []

    def subscribe(self, thread_id: str | None = None) -> Subscription:
        raise NotImplementedError


async def _slow_send() -> None:
    await asyncio.sleep(0.3)


@pytest.mark.parametrize("how", ["asyncio.timeout", "wait_for", "cancel own task"])
async def test_a_timeout_the_bus_sets_inside_publish_bounds_the_bus_not_the_run(store: Store, how: str) -> None:
    class Bounded(_Bus):
        publish_timeout = 5.0

        def __init__(self) -> None:
            super().__init__()
            self.timeouts = 0

        async def publish(self, thread_id: str, event: Event) -> None:
            try:
                if how == "asyncio.timeout":
                    async with asyncio.timeout(0.02):
                        await _slow_send()
                elif how == "wait_for":
                    await asyncio.wait_for(_slow_send(), 0.02)
                else:  # a client that gives up by cancelling the task it runs in
                    task = asyncio.current_task()
                    assert task is not None
                    asyncio.get_running_loop().call_later(0.02, task.cancel)
                    try:
                        await _slow_send()
                    except asyncio.CancelledError:
                        task.uncancel()
                        raise TimeoutError from None
            except TimeoutError:
                self.timeouts += 1
            self.taken.append((thread_id, event.seq, event.kind))

    bus = Bounded()
    runtime = Runtime(store, bus=bus)
    result = await runtime.run(_agent(tool_wait=0.3), "go", thread_id="t")  # never a CancelledError here
    assert (result.status, result.output) == ("completed", "done")
    stored = await store.read_events("t")
    assert [e.status for e in stored if isinstance(e, RunEnded)] == ["completed"]
    await taken(bus, len(stored))
    assert [t for t in bus.taken if t[1]] == [("t", e.seq, e.kind) for e in stored]
    assert bus.timeouts >= len(stored)


async def test_context_variables_a_bus_sets_stay_in_the_bus(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    class Tracing(_Bus):
        def __init__(self) -> None:
            super().__init__()
            self.outer: list[str | None] = []

        async def publish(self, thread_id: str, event: Event) -> None:
            self.outer.append(_span.get())
            token = _span.set(f"publish {event.seq}")
            try:
                await asyncio.sleep(0.001)
            finally:
                _span.reset(token)  # (fails when the first step ran in another context)
            _span.set("left behind")  # never reset: still the bus's own business

    made_in = _span.set("app")
    bus = Tracing()
    runtime = Runtime(store, bus=bus)
    _span.reset(made_in)
    seen: list[str | None] = []
    caller = _span.set("caller")
    try:
        result = await runtime.run(_agent(seen=seen), "go", thread_id="t")
        assert result.status == "completed"
        assert _span.get() == "caller"  # the caller's context is its own
        assert seen == ["caller"]  # and the tool sees the run's, not the bus's
    finally:
        _span.reset(caller)
    await taken(bus, len(await store.read_events("t")))
    await asyncio.sleep(0.05)
    assert bus.outer and set(bus.outer) <= {"app", "left behind"}  # the bus runs in the runtime's context
    assert "different Context" not in caplog.text and not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_past_its_backlog_a_bus_still_gets_each_runs_end_and_one_warning_with_the_count(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    class Slow(_Bus):
        max_backlog = 2

        async def publish(self, thread_id: str, event: Event) -> None:
            await asyncio.sleep(0.02)
            self.taken.append((thread_id, event.seq, event.kind))

    bus = Slow()
    runtime = Runtime(store, bus=bus)
    with caplog.at_level(logging.WARNING, logger="podium.runtime"):
        for thread_id in ("a", "b"):
            assert (await runtime.run(_agent(), "go", thread_id=thread_id)).status == "completed"
        for _ in range(300):
            if [t for t in bus.taken if t[2] == "run_ended"] == [("a", 7, "run_ended"), ("b", 7, "run_ended")]:
                break
            await asyncio.sleep(0.01)
    ends = [t for t in bus.taken if t[2] == "run_ended"]
    assert [(t, k) for t, _, k in ends] == [("a", "run_ended"), ("b", "run_ended")]  # each run's end reached it
    taken = [t for t in bus.taken if t[1]]
    assert taken == sorted(taken)  # in order
    stored = len(await store.read_events("a")) + len(await store.read_events("b"))
    missed = [r.getMessage() for r in caplog.records if "missed" in r.getMessage()]
    assert len(missed) == 1, missed  # one warning for the episode, with the count
    found = re.search(r"missed (\d+) events", missed[0])
    assert found is not None and int(found.group(1)) >= stored - len(taken) > 0
    assert "max_backlog of 2" in missed[0] and "Runtime.events" in missed[0]


async def test_a_plain_def_publish_gets_every_event_in_order_without_errors(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    class Plain(_Bus):
        def publish(self, thread_id: str, event: Event) -> None:  # type: ignore[override]
            self.taken.append((thread_id, event.seq, event.kind))

    bus = Plain()
    assert (await Runtime(store, bus=bus).run(_agent(), "go", thread_id="t")).status == "completed"
    stored = await store.read_events("t")
    await taken(bus, len(stored))
    assert [t for t in bus.taken if t[1]] == [("t", e.seq, e.kind) for e in stored]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_a_failing_bus_logs_its_first_failure_in_full_and_counts_the_rest(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    class Failing(_Bus):
        def __init__(self) -> None:
            super().__init__()
            self.down = True

        async def publish(self, thread_id: str, event: Event) -> None:
            if self.down:
                raise ConnectionError("the broker is gone")
            self.taken.append((thread_id, event.seq, event.kind))

    bus = Failing()
    runtime = Runtime(store, bus=bus)
    assert (await runtime.run(_agent(), "go", thread_id="t")).status == "completed"
    await asyncio.sleep(0.05)
    failed = len(await store.read_events("t"))
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is not None and "the broker is gone" in caplog.text
    bus.down = False
    assert (await runtime.run(_agent(), "again", thread_id="t")).status == "completed"
    await taken(bus, 1)
    recovered = [r.getMessage() for r in caplog.records if "takes events again" in r.getMessage()]
    assert len(recovered) == 1
    found = re.search(r"after (\d+) more", recovered[0])
    assert found is not None and int(found.group(1)) >= failed - 1
