"""podium._eager: a coroutine's first step in the caller, a task only if it waits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from podium._eager import firm, first_step


async def test_a_coroutine_that_never_waits_is_done_at_once_without_a_task() -> None:
    async def quick() -> int:
        return 7

    before = len(asyncio.all_tasks())
    assert first_step(quick()) == (True, 7)
    assert len(asyncio.all_tasks()) == before


async def test_what_it_raises_before_waiting_propagates() -> None:
    async def broken() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        first_step(broken())


async def test_a_coroutine_that_waits_goes_on_from_where_it_stopped() -> None:
    steps: list[str] = []
    gate = asyncio.Event()

    async def slow() -> str:
        steps.append("first")  # runs in the caller, before first_step returns
        await gate.wait()
        steps.append("second")
        await asyncio.sleep(0)
        return "done"

    finished, going = first_step(slow())
    assert not finished and steps == ["first"]
    gate.set()
    assert await going == "done" and steps == ["first", "second"]


async def _going_on(coro: Any) -> Any:
    finished, going = first_step(coro)
    assert not finished
    return await going


async def test_cancelling_the_awaiting_task_reaches_the_coroutine_where_it_waits() -> None:
    seen: list[str] = []

    async def waits() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    task = asyncio.ensure_future(_going_on(waits()))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"]


async def test_an_error_caught_inside_after_the_throw_ends_the_coroutine_normally() -> None:
    async def recovers() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return "recovered"
        return "slept"

    task = asyncio.ensure_future(_going_on(recovers()))
    await asyncio.sleep(0)
    task.cancel()
    assert await task == "recovered"  # as a task of its own would have ended


async def test_a_firm_task_finishes_and_whoever_awaited_it_is_cancelled_after() -> None:
    """:func:`firm`: the awaiting task's cancellation does not reach the coroutine, which finishes; the awaiting
    task gets its ``CancelledError`` then, with the outcome still to be read from the task."""
    gate = asyncio.Event()
    finished: list[str] = []

    async def write() -> str:
        await gate.wait()
        finished.append("written")
        return "stored"

    done, going = first_step(write())
    assert not done
    writing = firm(going)

    async def caller() -> str:
        return await writing  # type: ignore[no-any-return]

    awaiting = asyncio.ensure_future(caller())
    await asyncio.sleep(0)
    awaiting.cancel()
    assert not writing.cancel()  # refused
    await asyncio.sleep(0)
    assert not awaiting.done() and not writing.done()  # the caller waits for the write to end
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await awaiting
    assert finished == ["written"] and writing.result() == "stored"
