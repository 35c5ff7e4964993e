"""Runtime.stream and its readers: closed from another task, read by two tasks, let go of after a ``break``."""

from __future__ import annotations

import asyncio

import pytest
from tests.runtime._doubles import slow_agent

from podium import (
    Event,
    RunEnded,
    Runtime,
    Store,
    ThreadBusy,
    ToolStarted,
    UsageError,
)
from podium.runtime._stream import RunStream


async def _read(stream: RunStream, got: list[Event]) -> str:
    async for event in stream:
        got.append(event)
    return "ended"


async def _statuses(store: Store, thread_id: str) -> list[str]:
    return [r.status for r in await store.list_runs(thread_id)]


@pytest.mark.parametrize("waiting_for_thread", [False, True], ids=["executing", "waiting for its thread"])
async def test_a_stream_closed_from_another_task_ends_its_readers_loop(store: Store, waiting_for_thread: bool) -> None:
    runtime = Runtime(store)
    first = None
    if waiting_for_thread:  # another run holds the thread: the stream's run waits for it
        first = asyncio.create_task(runtime.run(slow_agent(0.3), "go", thread_id="t"))
        await asyncio.sleep(0.05)
    stream = runtime.stream(slow_agent(), "go", thread_id="t", if_busy="wait")
    got: list[Event] = []
    reader = asyncio.create_task(_read(stream, got))
    await asyncio.sleep(0.1)
    await stream.aclose()  # a stop button
    assert await asyncio.wait_for(reader, 3) == "ended"  # never a CancelledError in a task nobody cancelled
    if waiting_for_thread:
        assert first is not None and (await first).status == "completed"
        assert got == [] and await _statuses(store, "t") == ["completed"]  # it never began
    else:
        assert isinstance(got[-1], RunEnded) and got[-1].status == "cancelled"
        assert await _statuses(store, "t") == ["cancelled"]
    assert (await runtime.send(slow_agent(), "quick", thread_id="t")).status == "completed"


async def test_a_stream_closed_from_another_task_inside_a_task_group_ends_the_group_cleanly(store: Store) -> None:
    runtime = Runtime(store)
    first = asyncio.create_task(runtime.run(slow_agent(0.3), "go", thread_id="t"))
    await asyncio.sleep(0.05)
    stream = runtime.stream(slow_agent(), "go", thread_id="t", if_busy="wait")
    got: list[Event] = []

    async def stop() -> None:
        await asyncio.sleep(0.1)
        await stream.aclose()

    async with asyncio.TaskGroup() as group:
        group.create_task(_read(stream, got))
        group.create_task(stop())
    assert got == [] and (await first).status == "completed"


async def test_a_second_task_reading_a_stream_is_refused_and_the_first_reads_to_the_end(store: Store) -> None:
    runtime = Runtime(store)
    stream = runtime.stream(slow_agent(0.1), "go", thread_id="t")
    got: list[Event] = []
    first = asyncio.create_task(_read(stream, got))
    await asyncio.sleep(0.02)
    with pytest.raises(UsageError, match="one reader at a time"):
        await stream.__anext__()
    assert await asyncio.wait_for(first, 3) == "ended"
    assert isinstance(got[-1], RunEnded) and got[-1].status == "completed"
    assert [e async for e in stream] == []  # read to its end: ended for everyone


@pytest.mark.parametrize("then", ["send", "run", "reader task ended"])
async def test_a_break_out_of_a_stream_kept_in_a_variable_frees_the_thread_for_the_next_call(
    store: Store, then: str
) -> None:
    runtime = Runtime(store)
    stream = runtime.stream(slow_agent(), "go", thread_id="t")

    async def read_until_the_tool() -> None:
        async for event in stream:
            if isinstance(event, ToolStarted):
                break  # the stream is still held (in ``stream``), not closed

    if then == "reader task ended":
        await asyncio.create_task(read_until_the_tool())
    else:
        await read_until_the_tool()
    call = runtime.send if then != "run" else runtime.run
    async with asyncio.timeout(5):  # (in this task: the one that read the stream)
        reply = await call(slow_agent(), "quick", thread_id="t")  # if_busy="fail": never ThreadBusy
    assert (reply.status, reply.output) == ("completed", "quick reply")
    assert await _statuses(store, "t") == ["cancelled", "completed"]
    rest = [e async for e in stream]  # what is left of it: the run's end
    assert [e.status for e in rest if isinstance(e, RunEnded)] == ["cancelled"]


async def test_a_break_after_the_runs_end_leaves_it_completed(store: Store) -> None:
    runtime = Runtime(store)
    stream = runtime.stream(slow_agent(0), "go", thread_id="t")
    async for event in stream:
        if isinstance(event, RunEnded):
            break
    assert (await runtime.send(slow_agent(), "quick", thread_id="t")).status == "completed"
    assert await _statuses(store, "t") == ["completed", "completed"]


async def test_a_stream_read_by_another_task_keeps_its_run_and_thread_busy_says_how_to_close_it(store: Store) -> None:
    runtime = Runtime(store)
    stream = runtime.stream(slow_agent(), "go", thread_id="t")
    got: list[Event] = []
    reader = asyncio.create_task(_read(stream, got))
    for _ in range(300):
        if any(isinstance(e, ToolStarted) for e in got):
            break
        await asyncio.sleep(0.01)
    with pytest.raises(ThreadBusy, match=r"a stream of this runtime .*aclose\(\)"):
        await runtime.send(slow_agent(), "quick", thread_id="t")
    assert await _statuses(store, "t") == ["running"]
    await stream.aclose()
    assert await asyncio.wait_for(reader, 3) == "ended"
    assert await _statuses(store, "t") == ["cancelled"]
