"""The write lease (issue 9, items 2 and 3): a living run keeps its thread, a stale writer is fenced off by the store,
and whether a holder lives is told by its lease and its life mark, never by a PID."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from podium import AIMessage, LeaseLost, ReactAgent, RunContext, Runtime, Store, StoreError, ThreadBusy, ToolMessage
from podium.store.base import new_owner
from podium.testing import FunctionModel, tool_call


def _agent(tool: object) -> ReactAgent:
    model = FunctionModel(
        lambda m, r: (
            f"done: {m[-1].content}" if isinstance(m[-1], ToolMessage) else AIMessage(tool_calls=[tool_call("pay")])
        )
    )
    return ReactAgent("payer", model, [tool])  # type: ignore[list-item]


async def test_a_tool_call_longer_than_the_lease_keeps_the_thread(store: Store) -> None:
    paid: list[int] = []

    async def pay() -> str:
        """Pay, slowly."""
        paid.append(1)
        await asyncio.sleep(2.5)  # more than two leases long
        return "paid"

    first = Runtime(store, lease_ttl=1.0)
    running = asyncio.create_task(first.run(_agent(pay), "pay", thread_id="t"))
    await asyncio.sleep(1.5)  # the lease would have expired without renewal
    second = Runtime(store, lease_ttl=1.0)
    try:
        await second.resume(_agent(pay), "t")
        raise AssertionError("a second runtime took a living run's thread")
    except ThreadBusy:
        pass
    result = await running
    assert result.status == "completed" and result.output == "done: paid"
    assert paid == [1]  # nothing ran twice


async def test_a_run_gives_its_lease_back_with_its_end_and_no_later_renewal_takes_it_again(store: Store) -> None:
    from podium import MemoryStore

    real_end, real_release = store.end_run, store.release_thread
    releases: list[str] = []

    async def slow_end(*args: object, **kwargs: object) -> bool:
        released = await real_end(*args, **kwargs)  # type: ignore[arg-type]
        await asyncio.sleep(0.1)  # ten renewal intervals after the end was stored
        return released

    async def counted(thread_id: str, owner: str) -> None:
        releases.append(owner)
        await real_release(thread_id, owner)

    store.end_run = slow_end  # type: ignore[method-assign]
    store.release_thread = counted  # type: ignore[method-assign]
    model = FunctionModel(lambda m, r: f"heard: {m[-1].content}")
    result = await Runtime(store, lease_ttl=0.03).run(ReactAgent("echo", model), "hi", thread_id="t")
    assert result.status == "completed"
    assert await store.acquire_thread("t", new_owner("other"), 60) is None  # free: no renewal took it back
    # SQLite and PostgreSQL give it back in the end's own transaction; the memory store through release_thread
    assert len(releases) == (1 if isinstance(store, MemoryStore) else 0)


async def test_a_stale_writer_is_fenced_and_stops_with_a_typed_outcome(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    intruder = new_owner("intruder")
    real_renew = store.renew_thread
    cut_off = False

    async def renew(thread_id: str, owner: str, ttl: float) -> str | None:
        if cut_off:
            raise StoreError("the database cannot be reached")
        return await real_renew(thread_id, owner, ttl)

    monkeypatch.setattr(store, "renew_thread", renew)

    async def pay() -> str:
        """Pay while this process is cut off from the database (its renewals fail) and another takes over."""
        nonlocal cut_off
        cut_off = True
        await asyncio.sleep(0.5)
        assert await store.acquire_thread("t", intruder, 60) is None  # the lease had expired: taken over
        cut_off = False
        return "paid"

    result = await Runtime(store, lease_ttl=0.3).run(_agent(pay), "pay", thread_id="t")
    assert result.status == "failed" and isinstance(result.error, LeaseLost)
    assert result.error.holder == intruder and "lost the write lease of thread 't'" in result.reason
    kinds = [e.kind for e in await store.read_events("t")]
    assert kinds.count("message") == 2 and "run_ended" not in kinds  # input and model call; no tool result, no end
    assert [r.status for r in await store.list_runs("t")] == ["running"]  # left for the new holder to finish


async def test_a_stale_writer_saves_no_state(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run another process took the thread from (its renewals failed while it stalled) cannot overwrite the
    thread's state either: its save is fenced like its events."""
    intruder = new_owner("intruder")
    real_renew = store.renew_thread

    async def failing(thread_id: str, owner: str, ttl: float) -> str | None:
        raise StoreError("the database cannot be reached")

    async def pay(ctx: RunContext[Any]) -> str:
        """Pay, then remember who paid."""
        monkeypatch.setattr(store, "renew_thread", failing)
        await asyncio.sleep(0.5)  # the lease (0.3 s) expires: another process takes over
        assert await store.acquire_thread("t", intruder, 60) is None
        await store.put_state("t", "paid_by", "intruder")
        monkeypatch.setattr(store, "renew_thread", real_renew)
        await ctx.save_state("paid_by", "stale run")
        return "paid"

    result = await Runtime(store, lease_ttl=0.3).run(_agent(pay), "pay", thread_id="t")
    assert result.status == "failed" and isinstance(result.error, LeaseLost)
    assert await store.get_state("t", "paid_by") == "intruder"


async def test_a_holder_in_another_pid_namespace_keeps_its_lease(store: Store) -> None:
    """Two containers share a volume: a PID from the other one means nothing here, alive or not."""
    await store.create_thread("t")
    other_namespace = f"{socket.gethostname()}:999999999:somewhere-else:token"  # no such PID here, no life mark
    assert await store.acquire_thread("t", other_namespace, 60) is None
    assert await store.acquire_thread("t", new_owner("me"), 60) == other_namespace


async def test_a_live_process_whose_pid_is_unknown_here_holds_until_it_ends(store: Store) -> None:
    code = "import sys; from podium.store.base import new_owner; print(new_owner('x'), flush=True); sys.stdin.read()"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    host, _, mark, token = child.stdout.readline().strip().split(":")
    holder = f"{host}:999999999:{mark}:{token}"  # its PID as another namespace would report it
    await store.create_thread("t")
    assert await store.acquire_thread("t", holder, 60) is None
    assert await store.acquire_thread("t", new_owner("me"), 60) == holder  # alive: its life mark is held
    child.stdin.close()
    child.wait(timeout=30)
    child.stdout.close()
    assert await store.acquire_thread("t", new_owner("me"), 60) is None  # ended: taken over at once


async def test_every_lease_of_a_process_that_died_is_taken_over_at_once(store: Store) -> None:
    """A server killed with runs on several threads: its restart takes each thread over at once. The first look at
    the dead process's mark used to delete it, and the other threads then waited for their leases to expire."""
    code = "import sys; from podium.store.base import new_owner; print(new_owner('x'), flush=True); sys.stdin.read()"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    holder = child.stdout.readline().strip()
    threads = ["a", "b", "c"]
    for thread in threads:
        await store.create_thread(thread)
        assert await store.acquire_thread(thread, holder, 600) is None
    child.stdin.close()
    child.wait(timeout=30)
    child.stdout.close()
    me = new_owner("me")
    assert [await store.acquire_thread(thread, me, 60) for thread in threads] == [None, None, None]


async def test_a_finished_run_leaves_nothing_for_the_cycle_collector(store: Store) -> None:
    """The lease's renewal timer must not tie a run's state into a reference cycle: under load, states left to the
    cycle collector pile up into long collections that pause every conversation."""
    import gc

    from podium.runtime.journal import RunState

    async def pay() -> str:
        """Pay."""
        return "paid"

    runtime = Runtime(store)
    agent = _agent(pay)
    await runtime.run(agent, "warm up", thread_id="w")
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for n in range(5):
            assert (await runtime.run(agent, f"pay {n}", thread_id=f"g{n}")).status == "completed"
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, RunState)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []


def test_marks_of_processes_gone_for_a_day_are_swept_off_the_callers_thread(tmp_path: Path) -> None:
    """The first lease of a process sweeps the marks of processes that ended more than a day ago; with thousands of
    them that took tens of ms on the event loop of a server's first request, so it runs on a thread of its own, and
    at most once an hour on the machine (the thread competed with every new process for the interpreter)."""
    import os
    import time

    folder = tmp_path / f"podium-life-{os.getuid()}"
    folder.mkdir()
    old, fresh = folder / "gone-two-days-ago", folder / "gone-an-hour-ago"
    for mark, age in ((old, 2 * 86_400), (fresh, 3_600)):
        mark.touch()
        os.utime(mark, (time.time() - age, time.time() - age))
    code = (
        "import threading\n"
        "from podium.store import base\n"
        "seen = []\n"
        "real = base._LifeMark._sweep\n"
        "def sweep(self):\n"
        "    seen.append(threading.current_thread().name)\n"
        "    real(self)\n"
        "base._LifeMark._sweep = sweep\n"
        "base.new_owner('t')\n"
        "[t.join(10) for t in threading.enumerate() if t.name == 'podium-life-sweep']\n"
        "print(*seen)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["podium-life-sweep"]  # once, on a thread of its own
    assert not old.exists() and fresh.exists()
    marks = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    assert len(marks) == 2  # the fresh mark and the new process's own

    # within the hour, the next process does not sweep again (no thread competes with it for the interpreter)
    older = folder / "gone-three-days-ago"
    older.touch()
    os.utime(older, (time.time() - 3 * 86_400, time.time() - 3 * 86_400))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == [] and older.exists()

    # an hour after the last sweep began, the next process sweeps
    stamp = folder / ".swept"
    os.utime(stamp, (time.time() - 3_601, time.time() - 3_601))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["podium-life-sweep"] and not older.exists()
    assert time.time() - stamp.stat().st_mtime < 60


async def test_runs_share_one_renewal_timer_and_each_long_run_still_renews(store: Store) -> None:
    async def pay() -> str:
        """Pay."""
        return "paid"

    loop = asyncio.get_running_loop()

    def renewal_timers() -> tuple[int, int]:
        timers = [h for h in loop._scheduled if "_Renewals" in repr(h)]  # type: ignore[attr-defined]
        return sum(not h.cancelled() for h in timers), sum(h.cancelled() for h in timers)

    runtime = Runtime(store)
    for n in range(30):
        assert (await runtime.run(_agent(pay), f"pay {n}", thread_id=f"s{n}")).status == "completed"
    assert renewal_timers() == (1, 0)  # thirty short runs: one timer, none made and cancelled per run

    renewed: list[str] = []
    renew = store.renew_thread

    async def counting(thread_id: str, owner: str, ttl: float) -> str | None:
        renewed.append(thread_id)
        return await renew(thread_id, owner, ttl)

    store.renew_thread = counting  # type: ignore[method-assign]

    async def slow() -> str:
        """Pay, slowly."""
        await asyncio.sleep(1.3)
        return "paid"

    slow.__name__ = "pay"  # the tool the model calls
    quick, slower = Runtime(store, lease_ttl=0.6), Runtime(store, lease_ttl=1.5)  # renewals every 0.2 s and 0.5 s
    results = await asyncio.gather(
        quick.run(_agent(slow), "pay", thread_id="q"), slower.run(_agent(slow), "pay", thread_id="l")
    )
    assert [r.status for r in results] == ["completed", "completed"]
    assert renewed.count("q") >= 4 and renewed.count("l") >= 1  # the renewals of each
    assert renewed.count("q") > renewed.count("l")


def test_a_loop_that_ended_is_freed_with_its_renewals() -> None:
    import gc
    import weakref

    from podium import MemoryStore
    from podium.runtime import journal

    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def one() -> None:
        async def pay() -> str:
            """Pay."""
            return "paid"

        assert (await Runtime(MemoryStore()).run(_agent(pay), "pay")).status == "completed"
        loop = asyncio.get_running_loop()
        assert loop in journal._RENEWALS  # the run's lease was kept on this loop's renewals
        loops.append(weakref.ref(loop))

    for _ in range(3):
        asyncio.run(one())
    gc.collect()
    assert [ref() for ref in loops] == [None, None, None]  # nothing keeps an ended loop (or its renewals) alive
