"""Double-texting through the official client: two runs on one thread obey ``multitask_strategy``.

The gated app keeps a run busy (its second step waits for a gate file), so the second run always meets a busy
thread; opening the gate lets everything finish.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import ConflictError, NotFoundError


def _say(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def _until(check: Any) -> None:
    for _ in range(500):
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


async def _busy(client: Any, thread_id: str, text: str = "first") -> dict[str, Any]:
    """Start a run and wait until it blocks at its gate (step 1 done)."""
    run = await client.runs.create(thread_id, "gated", input=_say(text))

    async def blocked() -> bool:
        state = await client.threads.get_state(thread_id)
        return any(m["type"] == "tool" for m in state["values"]["messages"])

    await _until(blocked)
    return dict(run)


def _texts(state: dict[str, Any]) -> list[str]:
    return [m["content"] for m in state["values"]["messages"] if m["type"] in ("human", "ai") and m["content"]]


async def test_reject_answers_409_while_busy(gated_server: str, gate: tuple[Path, Path]) -> None:
    async with get_client(url=gated_server) as client:
        thread_id = (await client.threads.create())["thread_id"]
        first = await _busy(client, thread_id)
        assert (await client.threads.get(thread_id))["status"] == "busy"
        with pytest.raises(ConflictError, match="is busy with another run"):
            await client.runs.create(thread_id, "gated", input=_say("second"), multitask_strategy="reject")
        gate[0].touch()
        await client.runs.join(thread_id, first["run_id"])
        assert _texts(await client.threads.get_state(thread_id)) == ["first", "finished: first"]
        assert [r["status"] for r in await client.runs.list(thread_id)] == ["success"]


async def test_enqueue_runs_the_second_after_the_first(gated_server: str, gate: tuple[Path, Path]) -> None:
    async with get_client(url=gated_server) as client:
        thread_id = (await client.threads.create())["thread_id"]
        first = await _busy(client, thread_id)
        second = await client.runs.create(thread_id, "gated", input=_say("second"))  # enqueue is the default
        assert second["status"] == "pending" and second["multitask_strategy"] == "enqueue"
        listed = await client.runs.list(thread_id)
        assert [(r["run_id"], r["status"]) for r in listed] == [
            (second["run_id"], "pending"),
            (first["run_id"], "running"),
        ]
        gate[0].touch()
        result = await client.runs.join(thread_id, second["run_id"])
        assert _texts({"values": result}) == ["first", "finished: first", "second", "finished: second"]
        assert [r["status"] for r in await client.runs.list(thread_id)] == ["success", "success"]


async def test_interrupt_stops_the_first_and_keeps_what_it_did(gated_server: str, gate: tuple[Path, Path]) -> None:
    async with get_client(url=gated_server) as client:
        thread_id = (await client.threads.create())["thread_id"]
        first = await _busy(client, thread_id)
        second = await client.runs.create(thread_id, "gated", input=_say("second"), multitask_strategy="interrupt")
        stopped = await client.runs.get(thread_id, first["run_id"])
        assert (stopped["status"], stopped["podium_status"]) == ("interrupted", "cancelled")
        gate[0].touch()
        await client.runs.join(thread_id, second["run_id"])
        state = await client.threads.get_state(thread_id)
        assert _texts(state) == ["first", "second", "finished: second"]
        assert next(m["content"] for m in state["values"]["messages"] if m["type"] == "tool") == "step 1 done"


async def test_rollback_stops_the_first_and_drops_what_it_did(gated_server: str, gate: tuple[Path, Path]) -> None:
    async with get_client(url=gated_server) as client:
        thread_id = (await client.threads.create())["thread_id"]
        first = await _busy(client, thread_id)
        second = await client.runs.create(thread_id, "gated", input=_say("second"), multitask_strategy="rollback")
        with pytest.raises(NotFoundError):
            await client.runs.get(thread_id, first["run_id"])
        gate[0].touch()
        await client.runs.join(thread_id, second["run_id"])
        assert _texts(await client.threads.get_state(thread_id)) == ["second", "finished: second"]
        assert [r["run_id"] for r in await client.runs.list(thread_id)] == [second["run_id"]]


async def test_two_runs_sent_at_once_obey_reject(gated_server: str, gate: tuple[Path, Path]) -> None:
    async with get_client(url=gated_server) as client:
        thread_id = (await client.threads.create())["thread_id"]
        sends = [
            client.runs.create(thread_id, "gated", input=_say(text), multitask_strategy="reject")
            for text in ("one", "two")
        ]
        outcomes = await asyncio.gather(*sends, return_exceptions=True)
        accepted = [o for o in outcomes if isinstance(o, dict)]
        refused = [o for o in outcomes if isinstance(o, ConflictError)]
        assert len(accepted) == 1 and len(refused) == 1, outcomes
        gate[0].touch()
        await client.runs.join(thread_id, accepted[0]["run_id"])
        assert len(_texts(await client.threads.get_state(thread_id))) == 2


async def test_two_runs_sent_at_once_are_enqueued_in_turn(gated_server: str, gate: tuple[Path, Path]) -> None:
    gate[0].touch()
    async with get_client(url=gated_server) as client:
        thread_id = (await client.threads.create())["thread_id"]
        runs = await asyncio.gather(*(client.runs.create(thread_id, "gated", input=_say(t)) for t in ("a", "b")))
        for run in runs:
            await client.runs.join(thread_id, run["run_id"])
        texts = _texts(await client.threads.get_state(thread_id))
        assert sorted(texts) == ["a", "b", "finished: a", "finished: b"]
        assert texts[1] == f"finished: {texts[0]}"  # one after the other, never interleaved


async def test_cancel_a_running_run_records_its_end_once(gated_server: str, gate: tuple[Path, Path]) -> None:
    async with get_client(url=gated_server) as client:
        thread_id = (await client.threads.create())["thread_id"]
        run = await _busy(client, thread_id)
        await client.runs.cancel(thread_id, run["run_id"], wait=True)
        got = await client.runs.get(thread_id, run["run_id"])
        assert got["podium_status"] == "cancelled"
        await client.runs.cancel(thread_id, run["run_id"])
        parts = [p async for p in client.runs.join_stream(thread_id, run["run_id"], stream_mode="events")]
        ends = [p.data["status"] for p in parts if p.event == "events" and p.data["kind"] == "run_ended"]
        assert ends == ["cancelled"]
        assert (await client.threads.get(thread_id))["status"] == "idle"
        again = await client.runs.create(thread_id, "gated", input=_say("again"))
        gate[0].touch()
        await client.runs.join(thread_id, again["run_id"])
        assert _texts(await client.threads.get_state(thread_id))[-1] == "finished: again"


async def test_cancel_a_queued_run_and_rollback_a_running_one(gated_server: str, gate: tuple[Path, Path]) -> None:
    async with get_client(url=gated_server) as client:
        thread_id = (await client.threads.create())["thread_id"]
        first = await _busy(client, thread_id)
        queued = await client.runs.create(thread_id, "gated", input=_say("queued"))
        await client.runs.cancel(thread_id, queued["run_id"])
        assert (await client.runs.get(thread_id, queued["run_id"]))["podium_status"] == "cancelled"
        await client.runs.cancel(thread_id, first["run_id"], action="rollback")
        assert (await client.threads.get_state(thread_id))["values"]["messages"] == []
        assert await client.runs.list(thread_id) == []
        gate[0].touch()


async def test_a_queued_job_is_stored_while_a_client_waits_for_it() -> None:
    """A client waiting on a queued run (``/runs/wait``, a join) holds a future in the job's ``done`` event; storing
    the job must not copy that event (it raised, answering 500 and leaving the queue stuck)."""
    import asyncio

    from podium.server._executor import Job

    job = Job(run_id="r", thread_id="t", assistant_id="a", text="hi", answer={"q": "yes"})
    waiter = asyncio.ensure_future(job.done.wait())
    await asyncio.sleep(0)
    data = job.to_dict()
    assert data == {
        "run_id": "r", "thread_id": "t", "assistant_id": "a", "text": "hi", "answer": {"q": "yes"}, "resume": False,
        "after": 0,
    }  # fmt: skip
    assert data["answer"] is not job.answer  # a copy: the stored form does not change with the job
    job.done.set()
    await waiter


async def test_a_queued_run_being_started_is_found_by_who_waits_for_it() -> None:
    """Between leaving its queue and starting, a run used to be neither queued nor active for two store calls: a
    join or a stream asking for it then found nothing to wait for and answered at once."""
    import asyncio

    from podium import MemoryStore, ReactAgent, Runtime
    from podium.server._executor import Executor, Job
    from podium.testing import FunctionModel

    store = MemoryStore()
    await store.create_thread("t")
    gate = asyncio.Event()
    real_last_seq = store.last_seq

    async def slow_last_seq(thread_id: str) -> int:
        await gate.wait()
        return await real_last_seq(thread_id)

    store.last_seq = slow_last_seq  # type: ignore[method-assign]
    runtime = Runtime(store)
    agent = ReactAgent("echo", FunctionModel(lambda m, r: "hi"))
    executor = Executor(store=store, runtime=runtime, bus=runtime.bus, agent=lambda name: agent, apps={"echo"})
    job = Job(run_id="r1", thread_id="t", assistant_id="echo", text="hello")
    executor.queues["t"] = [job]
    advancing = asyncio.ensure_future(executor._advance("t"))
    await asyncio.sleep(0.05)
    assert executor.job("r1") is job and executor.busy("t")  # taken off the queue, not started: still found
    gate.set()
    await advancing
    await asyncio.wait_for(job.done.wait(), 10)
