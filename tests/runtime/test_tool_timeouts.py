"""Issue 9, item 5: timeouts bound everything a tool does.

Sync tools run off the event loop (so a run's timeout stops a run whose sync tool blocks), every tool call is
bounded by its tool's timeout (a default one unless set), and a call that times out reaches the model as an error.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from typing import Any

import pytest
from tests.conftest import loop_wakes

from podium import (
    AIMessage,
    Limits,
    ReactAgent,
    Runtime,
    Tool,
    ToolDefinitionError,
    ToolMessage,
    ToolTimeout,
    tool,
)
from podium.testing import FunctionModel, tool_call
from podium.tools import DEFAULT_TOOL_TIMEOUT

_request = contextvars.ContextVar("request", default="none")


def _calling(name: str, seen: list[str]) -> FunctionModel:
    def reply(messages: list[Any], request: Any) -> AIMessage | str:
        if isinstance(messages[-1], ToolMessage):
            seen.append(messages[-1].content)
            return "over"
        return AIMessage(tool_calls=[tool_call(name, {})])

    return FunctionModel(reply)


async def test_a_run_timeout_stops_a_run_whose_sync_tool_blocks() -> None:
    release = threading.Event()
    threads: list[threading.Thread] = []

    def block() -> str:
        """Block (a sync call that does not return)."""
        threads.append(threading.current_thread())
        release.wait(3)
        return "unblocked"

    agent = ReactAgent("a", _calling("block", []), [block])
    try:
        result = await Runtime().run(agent, "go", limits=Limits(timeout=0.3))
        assert result.status == "limit_exceeded" and result.limit == "time"
        assert not release.is_set() and threads[0].is_alive()  # stopped while the tool still blocked
        assert threads[0] is not threading.main_thread() and threads[0].daemon
    finally:
        release.set()


async def test_a_tool_call_past_its_timeout_goes_back_to_the_model_as_an_error() -> None:
    release = threading.Event()

    @tool(timeout=0.2)
    def stuck() -> str:
        """Hang (a sync call)."""
        release.wait(3)
        return "late"

    @tool(timeout=0.2)
    async def stuck_async() -> str:
        """Hang (an async call)."""
        await asyncio.sleep(3)
        return "late"

    try:
        for made in (stuck, stuck_async):
            seen: list[str] = []
            result = await Runtime().run(ReactAgent("a", _calling(made.name, seen), [made]), "go")
            assert result.status == "completed"
            assert seen and f"tool '{made.name}' did not finish within its timeout of 0.2 s" in seen[0]
        with pytest.raises(ToolTimeout) as caught:
            await stuck.run(None, {})
        assert caught.value.tool == "stuck" and caught.value.timeout == 0.2
    finally:
        release.set()


async def test_sync_tools_run_in_a_thread_with_the_callers_context_and_their_errors() -> None:
    def where() -> str:
        """Say where it runs."""
        return f"{threading.current_thread() is threading.main_thread()} {_request.get()}"

    def broken() -> str:
        """Fail."""
        raise KeyError("gone")

    _request.set("r1")
    assert await Tool(where).run(None, {}) == "False r1"
    with pytest.raises(KeyError):
        await Tool(broken).run(None, {})


def test_the_timeout_has_a_default_and_is_checked() -> None:
    def f() -> None:
        """Nothing."""

    assert Tool(f).timeout == DEFAULT_TOOL_TIMEOUT == 300.0
    assert Tool(f, timeout=None).timeout is None
    assert ReactAgent("helper", _calling("f", []), [f]).as_tool().timeout is None  # bounded by the run instead
    for bad in (0, -1, "5", True):
        with pytest.raises(ToolDefinitionError, match="timeout must be a positive number"):
            Tool(f, timeout=bad)  # type: ignore[arg-type]


async def test_a_hung_sync_call_holds_only_its_own_thread_and_idle_threads_end(monkeypatch: pytest.MonkeyPatch) -> None:
    import podium._tool_thread

    monkeypatch.setattr(podium._tool_thread, "IDLE_SECONDS", 0.05)
    release = threading.Event()
    threads: list[threading.Thread] = []

    def hang() -> str:
        """Hang until released."""
        threads.append(threading.current_thread())
        release.wait(5)
        return "released"

    def quick() -> str:
        """Answer at once."""
        threads.append(threading.current_thread())
        return "quick"

    hung = asyncio.ensure_future(Tool(hang).run(None, {}))
    try:
        for _ in range(500):
            if threads:
                break
            await asyncio.sleep(0.01)
        assert await Tool(quick).run(None, {}) == "quick"  # not queued behind the hung call
        assert threads[1] is not threads[0]
    finally:
        release.set()
    assert await hung == "released"
    for _ in range(500):  # idle threads end after IDLE_SECONDS
        if not any(t.is_alive() for t in threads):
            break
        await asyncio.sleep(0.01)
    assert not any(t.is_alive() for t in threads)


async def test_an_async_tool_is_bounded_after_its_first_step_and_keeps_its_task() -> None:
    """A coroutine tool's first step runs at once (no timer for a call that never waits); one that waits goes on
    in the caller's task under the timeout, and whatever it raises reaches the caller as it would directly."""
    steps: list[str] = []

    @tool(timeout=0.2)
    async def quick(x: int) -> int:
        """Answer at once."""
        return x * 2

    @tool(timeout=0.2)
    async def waits_then_answers(x: int) -> int:
        """Wait a little, then answer."""
        caller = asyncio.current_task()
        await asyncio.sleep(0.01)
        assert asyncio.current_task() is caller  # no task of its own: the caller's context and cancellation
        return x + 1

    @tool(timeout=0.2)
    async def waits_too_long() -> str:
        """Start, then hang."""
        steps.append("started")
        try:
            await asyncio.sleep(3)
        except asyncio.CancelledError:
            steps.append("cancelled")
            raise
        return "late"

    @tool(timeout=0.2)
    async def fails_at_once() -> str:
        """Fail before waiting."""
        raise ValueError("no")

    assert await quick.run(None, {"x": 4}) == 8
    assert await waits_then_answers.run(None, {"x": 4}) == 5
    with pytest.raises(ToolTimeout):
        await waits_too_long.run(None, {})
    assert steps == ["started", "cancelled"]
    with pytest.raises(ValueError, match="no"):
        await fails_at_once.run(None, {})


async def test_a_quick_sync_call_is_handed_over_without_waking_the_loop_and_a_slow_one_is_not_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    import podium._tool_thread as tool_thread

    loop = asyncio.get_running_loop()
    wakes = loop_wakes(monkeypatch)

    def quick(key: str) -> str:
        """Answer at once."""
        return f"value of {key}"

    settled = calls = 0
    threads_before = threading.active_count()
    while settled < 5 and calls < 500:  # a thread can be slow to wake on a busy machine; most are handed over
        future = tool_thread.in_thread(quick, {"key": "k"}, "quick")
        calls += 1
        settled += future.done()
        assert await future == "value of k"
    # the calls ran on a tool thread, not here, and on the same one: it is idle again before it hands over
    assert threads_before <= threading.active_count() <= threads_before + 1 and threading.active_count() > 1
    assert settled == 5 and wakes[0] == calls - settled

    release = threading.Event()

    def slow() -> str:
        """Answer once released."""
        release.wait(5)
        return "late"

    started = time.perf_counter()
    future = tool_thread.in_thread(slow, {}, "slow")
    held = time.perf_counter() - started
    assert not future.done() and held < 0.1  # the loop waited QUICK_WAIT at most, then went on
    release.set()
    assert await future == "late"  # handed back through the loop as before
    assert wakes[0] == calls - settled + 1

    busy = loop.create_future()
    loop.call_soon(busy.set_result, None)  # something is ready to run: the call is not waited for
    future = tool_thread.in_thread(quick, {"key": "b"}, "quick")
    assert not future.done()
    assert await future == "value of b"
    await busy


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="threads cannot be placed on CPUs here")
async def test_a_quick_call_wakes_on_the_loops_cpu_and_runs_free_to_move() -> None:
    """A call the idle loop waits for wakes its tool thread on the loop thread's CPU (no cross-CPU wake-up either
    way), and the thread lets itself run anywhere before the call starts: neither the call nor a thread it starts is
    held to that CPU."""
    import podium._tool_thread as tool_thread
    from podium._handoff import Placement

    anywhere = os.sched_getaffinity(0)
    if Placement.here() is None:
        pytest.skip("the CPU a thread runs on cannot be known here")

    def where() -> tuple[int | None, set[int]]:
        """The CPU this call runs on, and where this thread may run."""
        return Placement.here(), os.sched_getaffinity(0)

    same = handed = 0
    for _ in range(40):
        here = Placement.here()
        future = tool_thread.in_thread(where, {}, "where")
        cpu, allowed = await future
        assert allowed == anywhere
        if future.done() and cpu is not None:
            handed += 1
            same += cpu == here
    assert handed >= 10 and same >= handed / 2  # (without placement, the other, idle CPU takes nearly all)

    def starts_a_thread() -> set[int]:
        """Where a thread this call starts may run."""
        started: list[set[int]] = []
        thread = threading.Thread(target=lambda: started.append(os.sched_getaffinity(0)))
        thread.start()
        thread.join()
        return started[0]

    assert await tool_thread.in_thread(starts_a_thread, {}, "starts") == anywhere

    Placement._getcpu = None  # a system that cannot tell: nothing is moved
    try:
        assert Placement.here() is None
        assert (await tool_thread.in_thread(where, {}, "where"))[1] == anywhere
    finally:
        Placement._getcpu = False


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="threads cannot be placed on CPUs here")
async def test_where_threads_may_not_be_placed_placement_stops_trying(monkeypatch: pytest.MonkeyPatch) -> None:
    import podium._tool_thread as tool_thread
    from podium._handoff import Placement

    if Placement.here() is None:
        pytest.skip("the CPU a thread runs on cannot be known here")
    refused: list[int] = []

    def forbidden(pid: int, cpus: set[int]) -> None:
        refused.append(pid)
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setaffinity", forbidden)
    try:
        for _ in range(20):
            assert await tool_thread.in_thread(lambda: 42, {}, "quick") == 42
        assert len(refused) <= 1 and Placement.here() is None  # refused once, then not asked again
    finally:
        Placement._getcpu = False


async def test_an_inline_tool_runs_on_the_event_loops_thread_with_the_same_result() -> None:
    threads: dict[str, threading.Thread] = {}

    def double(x: int) -> int:
        """Double a number."""
        threads["plain"] = threading.current_thread()
        return 2 * x

    @tool(inline=True, read_only=True)
    def triple(x: int) -> int:
        """Triple a number."""
        threads["inline"] = threading.current_thread()
        return 3 * x

    def reply(messages: list[Any], request: Any) -> AIMessage | str:
        if isinstance(messages[-1], ToolMessage):
            return " ".join(m.content for m in messages if isinstance(m, ToolMessage))
        return AIMessage(tool_calls=[tool_call("double", {"x": 5}), tool_call("triple", {"x": 5})])

    result = await Runtime().run(ReactAgent("a", FunctionModel(reply), [double, triple]), "go")
    assert result.output == "10 15"
    assert threads["inline"] is threading.current_thread()  # the loop's own thread: no hand-over
    assert threads["plain"] is not threading.current_thread()  # the default: a tool thread
    assert triple.inline and not Tool(double).inline


async def test_a_slow_inline_call_is_logged_once_and_its_result_kept(caplog: pytest.LogCaptureFixture) -> None:
    import time

    @tool(inline=True)
    def crunch(n: int) -> int:
        """Crunch a number, slowly."""
        time.sleep(0.06)  # longer than INLINE_WARNING: it held the event loop
        return n + 1

    ctx = None
    with caplog.at_level("WARNING", logger="podium.tools"):
        assert await crunch.run(ctx, {"n": 1}) == 2
        assert await crunch.run(ctx, {"n": 2}) == 3
    warned = [r for r in caplog.records if "crunch" in r.getMessage()]
    assert len(warned) == 1 and "inline" in warned[0].getMessage()


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_inline_must_be_a_bool(bad: Any) -> None:
    def f() -> str:
        """F."""
        return ""

    with pytest.raises(ToolDefinitionError, match="inline must be True or False"):
        Tool(f, inline=bad)


def test_inline_is_refused_for_a_coroutine_function() -> None:
    async def f() -> str:
        """F."""
        return ""

    with pytest.raises(ToolDefinitionError, match="inline is for sync functions"):
        tool(inline=True)(f)
