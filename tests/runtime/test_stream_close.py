"""Runtime.stream: closing the stream ends its run as Runtime.cancel does, and the thread is free at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.runtime._doubles import slow_agent

from podium import (
    RunEnded,
    Runtime,
    Store,
    ToolStarted,
)


async def _ends_cancelled_and_frees_the_thread(runtime: Runtime, store: Store, thread_id: str, *, now: bool) -> None:
    """The stream's run ended ``cancelled`` (``now``: already), and the next message is answered at once."""
    if now:
        assert [r.status for r in await store.list_runs(thread_id)] == ["cancelled"]
    reply = await runtime.send(slow_agent(), "quick", thread_id=thread_id)  # if_busy="fail": never ThreadBusy
    assert (reply.status, reply.output) == ("completed", "quick reply")
    assert [r.status for r in await store.list_runs(thread_id)] == ["cancelled", "completed"]
    ends = [e.status for e in await store.read_events(thread_id) if isinstance(e, RunEnded)]
    assert ends == ["cancelled", "completed"]


@pytest.mark.parametrize("how", ["aclose", "async with", "break"])
async def test_closing_a_stream_ends_its_run_and_frees_the_thread(store: Store, how: str) -> None:
    runtime = Runtime(store)
    if how == "aclose":
        stream = runtime.stream(slow_agent(), "go", thread_id="t")
        async for event in stream:
            if isinstance(event, ToolStarted):
                break
        await stream.aclose()
    elif how == "async with":
        async with runtime.stream(slow_agent(), "go", thread_id="t") as stream:
            async for event in stream:
                if isinstance(event, ToolStarted):
                    break
    else:
        async for event in runtime.stream(slow_agent(), "go", thread_id="t"):
            if isinstance(event, ToolStarted):
                break  # the stream is dropped here: its run is cancelled, the next call waits for its end
    await _ends_cancelled_and_frees_the_thread(runtime, store, "t", now=how != "break")


async def test_a_stream_read_to_its_end_or_closed_unread_leaves_the_run_as_it_is(store: Store) -> None:
    runtime = Runtime(store)
    events = [e async for e in runtime.stream(slow_agent(), "quick", thread_id="t")]
    assert isinstance(events[-1], RunEnded) and events[-1].status == "completed"
    unread = runtime.stream(slow_agent(), "go", thread_id="u")
    await unread.aclose()  # never read: never started
    assert await store.get_thread("u") is None
    finished = runtime.stream(slow_agent(), "quick", thread_id="t")
    assert [e.kind async for e in finished][-1] == "run_ended"
    await finished.aclose()
    assert [r.status for r in await store.list_runs("t")] == ["completed", "completed"]


async def test_a_reader_cancelled_while_it_waits_cancels_the_run(store: Store) -> None:
    runtime = Runtime(store)
    stream = runtime.stream(slow_agent(), "go", thread_id="t")

    async def read() -> None:
        async for _ in stream:
            pass

    reader = asyncio.create_task(read())
    for _ in range(100):
        if await store.get_thread("t") and [r.status for r in await store.list_runs("t")] == ["running"]:
            break
        await asyncio.sleep(0.01)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    await _ends_cancelled_and_frees_the_thread(runtime, store, "t", now=False)


async def test_a_stream_checks_its_arguments_when_it_is_made(store: Store) -> None:
    from podium import UsageError

    runtime = Runtime(store)
    bad: list[dict[str, Any]] = [{"agent": None}, {"input": 5}, {"limits": {"timeout": 1}}, {"if_busy": "later"}]
    for change in bad:
        arguments: dict[str, Any] = {"agent": slow_agent(), "input": "go", **change}
        with pytest.raises(UsageError):
            runtime.stream(arguments.pop("agent"), arguments.pop("input"), thread_id="t", **arguments)
    assert await store.get_thread("t") is None
