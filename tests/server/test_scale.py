"""Several real ``podium serve`` processes sharing one PostgreSQL database (issue 15).

Each test starts its own processes (``tests/server/scale_app.py``) on a fresh schema and checks what the issue asks
from the database itself: every run completes, each thread's log is contiguous, no run executed on two processes,
a SIGKILLed process's runs complete elsewhere without repeating completed steps, ``reject`` and ``enqueue`` hold
across processes, and a process cut off from the database writes nothing once its lease is gone.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.scale_support import Proxy, log_lines, schema_url, servers, sql

pytest.importorskip("psycopg")

Schema = tuple[str, str]


def _input(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def _thread(client: httpx.AsyncClient, base: str) -> str:
    response = await client.post(f"{base}/threads", json={})
    response.raise_for_status()
    return str(response.json()["thread_id"])


async def _start(client: httpx.AsyncClient, base: str, thread_id: str, text: str, strategy: str = "enqueue") -> Any:
    body = {"assistant_id": "scale", "input": _input(text), "multitask_strategy": strategy}
    return await client.post(f"{base}/threads/{thread_id}/runs", json=body)


async def _until(condition: Callable[[], bool]) -> None:
    """Until ``condition`` holds (it reads files and tables that other processes write), 90 s at most."""
    async with asyncio.timeout(90):
        while not condition():  # noqa: ASYNC110 - other processes write what it reads
            await asyncio.sleep(0.1)


def _tool_results(store: str, thread_id: str) -> list[tuple[str, str]]:
    """``(run_id, content)`` of the thread's tool messages, in order."""
    rows = sql(
        store, "SELECT run_id, body FROM events WHERE thread_id=%s AND kind='message' ORDER BY seq", (thread_id,)
    )
    out = []
    for run_id, body in rows:
        message = json.loads(body)["message"]
        if message.get("kind") == "tool":
            out.append((run_id, message["content"]))
    return out


def _check_contiguous(store: str) -> None:
    rows = sql(store, "SELECT thread_id, count(*), min(seq), max(seq) FROM events GROUP BY thread_id")
    assert rows
    for thread_id, count, low, high in rows:
        assert (low, high) == (1, count), f"thread {thread_id}: events {low}..{high} for {count} rows"


@pytest.mark.slow
async def test_three_processes_share_300_conversations(postgres_schema: Schema, tmp_path: Path) -> None:
    url, schema = postgres_schema
    store = schema_url(url, schema)
    log = tmp_path / "steps.log"
    with servers([store] * 3, tmp_path, {"PODIUM_TEST_LOG": str(log)}, lease_ttl=10) as procs:
        bases = [p.url for p in procs]
        limit = asyncio.Semaphore(24)

        async def conversation(client: httpx.AsyncClient, i: int) -> None:
            async with limit:
                thread_id = await _thread(client, random.choice(bases))
                started = await _start(client, random.choice(bases), thread_id, f"conversation {i}")
                started.raise_for_status()
                run_id = started.json()["run_id"]
                joined = await client.get(f"{random.choice(bases)}/threads/{thread_id}/runs/{run_id}/join")
                assert joined.json()["messages"][-1]["content"] == f"done: conversation {i}", joined.text
                run = await client.get(f"{random.choice(bases)}/threads/{thread_id}/runs/{run_id}")
                assert run.json()["status"] == "success", run.text

        async with httpx.AsyncClient(timeout=120) as client:
            await asyncio.gather(*(conversation(client, i) for i in range(300)))

    statuses = sql(store, "SELECT status, count(*) FROM runs GROUP BY status")
    assert statuses == [("completed", 300)]
    assert sql(store, "SELECT count(*) FROM run_queue") == [(0,)]
    _check_contiguous(store)
    assert len(sql(store, "SELECT DISTINCT run_id FROM events WHERE kind='run_started'")) == 300
    lines = log_lines(log)
    assert Counter(what for what, *_ in lines) == {"start": 900, "done": 900}  # every step exactly once
    by_run: dict[str, list[int]] = defaultdict(list)
    for _, pid, run_id, _ in lines:
        by_run[run_id].append(pid)
    assert len(by_run) == 300
    for pids in by_run.values():  # a run moves to another process (a claim that expired on a starved host) at most
        blocks = [p for i, p in enumerate(pids) if i == 0 or pids[i - 1] != p]  # once, never back: never two at once
        assert len(blocks) == len(set(blocks))
    assert len({pid for pids in by_run.values() for pid in pids}) >= 2  # the processes shared the work


@pytest.mark.slow
async def test_a_sigkilled_process_runs_complete_elsewhere(postgres_schema: Schema, tmp_path: Path) -> None:
    url, schema = postgres_schema
    store = schema_url(url, schema)
    log = tmp_path / "steps.log"
    env = {"PODIUM_TEST_LOG": str(log), "PODIUM_TEST_STEP_DELAY": "1.0"}
    with servers([store] * 3, tmp_path, env) as procs:
        async with httpx.AsyncClient(timeout=60) as client:
            runs: dict[str, str] = {}
            for i in range(6):
                thread_id = await _thread(client, procs[i % 3].url)
                runs[thread_id] = (await _start(client, procs[i % 3].url, thread_id, f"job {i}")).json()["run_id"]
            await _until(lambda: {r for _, _, r, _ in log_lines(log)} == set(runs.values()))
            owners = Counter(int(o.split(":")[1]) for (o,) in sql(store, "SELECT owner FROM run_queue"))
            victim = next(p for p in procs if p.process.pid == owners.most_common(1)[0][0])
            survivor = next(p for p in procs if p is not victim)
            mine = [
                t
                for (t,) in sql(
                    store, "SELECT thread_id FROM run_queue WHERE owner LIKE %s", (f"%:{victim.process.pid}:%",)
                )
            ]
            assert mine
            watched = mine[0]

            async def watch() -> list[str]:
                frames = []
                path = f"{survivor.url}/threads/{watched}/runs/{runs[watched]}/stream"
                async with client.stream("GET", path, params={"stream_mode": "values"}) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data: "):
                            frames.append(line[6:])
                return frames

            streaming = asyncio.create_task(watch())
            await asyncio.sleep(0.5)
            victim.kill()
            killed = time.monotonic()
            for thread_id in mine:
                joined = await client.get(f"{survivor.url}/threads/{thread_id}/runs/{runs[thread_id]}/join")
                assert joined.json()["messages"][-1]["content"].startswith("done: job"), joined.text
            assert time.monotonic() - killed < 30
            frames = await asyncio.wait_for(streaming, 30)
            assert any("done: job" in f for f in frames)  # the stream saw the run continue and end

    assert sql(store, "SELECT DISTINCT status FROM runs") == [("completed",)]
    _check_contiguous(store)
    lines = log_lines(log)
    for thread_id, run_id in runs.items():
        results = _tool_results(store, thread_id)
        assert [c.split(" by ")[0] for _, c in results] == ["step 1", "step 2", "step 3"]  # one result per step
        for content in (c for _, c in results):
            n, pid = int(content.split()[1]), int(content.split(" by ")[1])
            done_by = [p for what, p, r, k in lines if what == "done" and r == run_id and k == n]
            if pid == victim.process.pid:  # completed (and recorded) before the kill: never executed again
                assert done_by == [pid]


async def test_reject_and_enqueue_hold_across_processes(postgres_schema: Schema, tmp_path: Path) -> None:
    url, schema = postgres_schema
    store = schema_url(url, schema)
    env = {"PODIUM_TEST_STEP_DELAY": "0.2"}
    with servers([store] * 2, tmp_path, env) as procs:
        a, b = (p.url for p in procs)
        async with httpx.AsyncClient(timeout=60) as client:
            thread_id = await _thread(client, a)
            both = await asyncio.gather(
                _start(client, a, thread_id, "one", "reject"), _start(client, b, thread_id, "two", "reject")
            )
            assert sorted(r.status_code for r in both) == [200, 409]
            winner = next(r for r in both if r.status_code == 200).json()["run_id"]
            await client.get(f"{b}/threads/{thread_id}/runs/{winner}/join")

            queued = await _thread(client, b)
            both = await asyncio.gather(_start(client, a, queued, "first"), _start(client, b, queued, "second"))
            assert [r.status_code for r in both] == [200, 200]
            for response in both:
                await client.get(f"{a}/threads/{queued}/runs/{response.json()['run_id']}/join")
            runs = (await client.get(f"{a}/threads/{queued}/runs")).json()
    assert [r["status"] for r in runs] == ["success", "success"]
    order = [r for (r,) in sql(store, "SELECT run_id FROM events WHERE thread_id=%s ORDER BY seq", (queued,))]
    blocks = [r for i, r in enumerate(order) if i == 0 or order[i - 1] != r]
    assert len(blocks) == 2  # one run after the other, never interleaved
    assert blocks == [r["run_id"] for r in reversed(runs)]  # in the order they were queued


@pytest.mark.slow
async def test_a_partitioned_process_cannot_write_after_its_lease_is_gone(
    postgres_schema: Schema, tmp_path: Path
) -> None:
    url, schema = postgres_schema
    direct = schema_url(url, schema)
    port = int(url.rpartition(":")[2].partition("/")[0])
    proxy = Proxy(("127.0.0.1", port))
    through = schema_url(url, schema, port=proxy.port)
    log, hold = tmp_path / "steps.log", tmp_path / "hold"
    hold.touch()
    env = {"PODIUM_TEST_LOG": str(log), "PODIUM_TEST_HOLD": str(hold), "PODIUM_TEST_STEP_DELAY": "0.5"}
    with servers([through], tmp_path, env) as (cut_off,):
        async with httpx.AsyncClient(timeout=90) as client:
            thread_id = await _thread(client, cut_off.url)
            run_id = (await _start(client, cut_off.url, thread_id, "partitioned")).json()["run_id"]
            await _until(lambda: ("start", cut_off.process.pid, run_id, 2) in log_lines(log))  # held in step 2
            (other_dir := tmp_path / "b").mkdir()
            with servers([direct], other_dir, env) as (other,):
                proxy.cut()
                with log.open("a") as file:
                    file.write(f"cut 0 {run_id} 0\n")
                hold.unlink()  # the cut-off process finishes step 2 but cannot record it
                await _until(lambda: any(p == other.process.pid for _, p, _, _ in log_lines(log)))  # taken over
                proxy.restore()  # the cut-off process is back while the other one holds the thread
                joined = await client.get(f"{other.url}/threads/{thread_id}/runs/{run_id}/join")
                assert joined.json()["messages"][-1]["content"] == "done: partitioned", joined.text
                await asyncio.sleep(4)  # give the cut-off process every chance to write what it finished
    proxy.cut()
    lines = log_lines(log)
    cut_at = next(i for i, line in enumerate(lines) if line[0] == "cut")
    finished_after_cut = {n for what, pid, _, n in lines[cut_at:] if what == "done" and pid == cut_off.process.pid}
    assert 2 in finished_after_cut
    results = _tool_results(direct, thread_id)
    assert [c.split(" by ")[0] for _, c in results] == ["step 1", "step 2", "step 3"]
    for content in (c for _, c in results):
        n, pid = int(content.split()[1]), int(content.split(" by ")[1])
        if n in finished_after_cut:
            assert pid == other.process.pid  # what the cut-off process finished afterwards was never written
    _check_contiguous(direct)
    ended = sql(direct, "SELECT count(*) FROM events WHERE thread_id=%s AND kind='run_ended'", (thread_id,))
    assert ended == [(1,)]
