"""Two servers in this process sharing one PostgreSQL schema (the multi-process behaviour, measured in-process).

The gated app keeps a run busy until the test opens its gate. Whichever server claims a run, the other one streams
it, cancels it, deletes its thread, or takes it over when the first one shuts down.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import example_apps, live_server

pytest.importorskip("psycopg")

Schema = tuple[str, str]


@contextmanager
def _two(postgres_schema: Schema, grace: float = 5.0) -> Iterator[list[tuple[str, Any]]]:
    """Two servers of the gated app on one schema: ``[(url, state), ...]``."""
    from tests.server.gated_app import app

    from podium.store.postgres import PostgresStore

    url, schema = postgres_schema
    out: list[tuple[str, Any]] = []
    with ExitStack() as stack:
        for _ in range(2):
            states: list[Any] = []
            base = stack.enter_context(
                live_server(
                    {"gated": app},
                    PostgresStore(url, schema=schema),
                    grace=grace,
                    extend=lambda fastapi, states=states: states.append(fastapi.state.podium),
                )
            )
            out.append((base, states[0]))
        yield out


def _say(text: str) -> dict[str, Any]:
    return {"assistant_id": "gated", "input": {"messages": [{"role": "user", "content": text}]}}


async def _blocked(client: httpx.AsyncClient, base: str, thread_id: str) -> None:
    """Until the run of the thread waits at its gate (step 1 recorded)."""
    for _ in range(1000):
        state = (await client.get(f"{base}/threads/{thread_id}/state")).json()
        if any(m["type"] == "tool" for m in state["values"]["messages"]):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the run never reached its gate")


async def _owner(servers: list[tuple[str, Any]], run_id: str) -> int:
    """Which server executes the run."""
    for _ in range(500):
        for i, (_, state) in enumerate(servers):
            if run_id in state.executor.tasks:
                return i
        await asyncio.sleep(0.02)
    raise AssertionError("no server executes the run")


async def test_a_run_streams_and_is_cancelled_from_the_other_server(
    postgres_schema: Schema, gate: tuple[Path, Path]
) -> None:
    with _two(postgres_schema) as servers:
        async with httpx.AsyncClient(timeout=60) as client:
            first = servers[0][0]
            thread_id = (await client.post(f"{first}/threads", json={})).json()["thread_id"]
            run_id = (await client.post(f"{first}/threads/{thread_id}/runs", json=_say("streamed"))).json()["run_id"]
            await _blocked(client, first, thread_id)
            other = servers[1 - await _owner(servers, run_id)][0]
            frames: list[str] = []

            async def follow() -> None:
                path = f"{other}/threads/{thread_id}/runs/{run_id}/stream"
                async with client.stream("GET", path, params={"stream_mode": "updates"}) as response:
                    frames.extend([line async for line in response.aiter_lines() if line.startswith("data: ")])

            following = asyncio.create_task(follow())
            await asyncio.sleep(0.3)
            gate[0].touch()
            await asyncio.wait_for(following, 30)
            texts = [json.dumps(json.loads(f[6:])) for f in frames]
            assert any("step 2 done" in t for t in texts)  # an event stored by the other process, live
            assert any("finished: streamed" in t for t in texts)
            assert (await client.get(f"{other}/threads/{thread_id}/runs/{run_id}")).json()["status"] == "success"

            gate[0].unlink()
            second = (await client.post(f"{first}/threads/{thread_id}/runs", json=_say("cancelled"))).json()["run_id"]
            await _blocked(client, first, thread_id)
            other = servers[1 - await _owner(servers, second)][0]
            assert (await client.get(f"{other}/threads/{thread_id}")).json()["status"] == "busy"
            cancel = await client.post(f"{other}/threads/{thread_id}/runs/{second}/cancel", params={"wait": True})
            assert cancel.json() == {"run_id": second, "status": "cancelled"}
            run = (await client.get(f"{first}/threads/{thread_id}/runs/{second}")).json()
            assert run["podium_status"] == "cancelled"

            third = (await client.post(f"{first}/threads/{thread_id}/runs", json=_say("deleted"))).json()["run_id"]
            queued = (await client.post(f"{other}/threads/{thread_id}/runs", json=_say("queued"))).json()
            assert queued["status"] == "pending"
            listed = (await client.get(f"{first}/threads/{thread_id}/runs")).json()
            assert [r["run_id"] for r in listed[:2]] == [queued["run_id"], third]
            deleted = await client.delete(f"{other}/threads/{thread_id}")
            assert deleted.status_code in (200, 204), deleted.text
            for run_id in (third, queued["run_id"]):
                assert not await servers[0][1].executor.queued(run_id)


async def test_a_server_that_stops_hands_its_runs_to_the_other(
    postgres_schema: Schema, gate: tuple[Path, Path]
) -> None:
    from tests.server.gated_app import app

    from podium.store.postgres import PostgresStore

    url, schema = postgres_schema
    async with httpx.AsyncClient(timeout=60) as client:
        states: list[Any] = []
        with live_server(
            {"gated": app}, PostgresStore(url, schema=schema), grace=0.1, extend=lambda f: states.append(f)
        ) as leaving:
            thread_id = (await client.post(f"{leaving}/threads", json={})).json()["thread_id"]
            run_id = (await client.post(f"{leaving}/threads/{thread_id}/runs", json=_say("moved"))).json()["run_id"]
            await _blocked(client, leaving, thread_id)
        with live_server({"gated": app}, PostgresStore(url, schema=schema)) as staying:
            gate[0].touch()
            joined = (await client.get(f"{staying}/threads/{thread_id}/runs/{run_id}/join")).json()
            assert joined["messages"][-1]["content"] == "finished: moved"
    steps = gate[1].read_text().split()
    assert steps.count("1") == 1  # step 1 was recorded before the first server stopped: not repeated


def test_workers_build_the_server_the_command_line_described(
    postgres_schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    import logging

    root, podium = logging.getLogger(), logging.getLogger("podium")  # (each worker logs JSON lines: put back after)
    monkeypatch.setattr(root, "handlers", root.handlers[:])
    monkeypatch.setattr(root, "level", root.level)
    monkeypatch.setattr(podium, "handlers", podium.handlers[:])
    monkeypatch.setattr(podium, "level", podium.level)
    monkeypatch.setattr(podium, "propagate", podium.propagate)
    from podium.server._shared import SharedExecutor
    from podium.server._workers import ENV, create, describe
    from podium.server.auth import AuthConfig

    url, _ = postgres_schema
    auth = AuthConfig(jwt_secret="s" * 32, default_scopes=frozenset({"read"}))
    monkeypatch.setenv(ENV, describe(["trip"], url, auth, lease_ttl=7.0, max_runs=3, log_level="warning"))
    monkeypatch.chdir(Path(__file__).parents[2])
    app = create()
    state = app.state.podium
    assert list(state.apps) == ["trip"] and state.auth == auth
    assert isinstance(state.executor, SharedExecutor)
    assert (state.executor.ttl, state.executor.max_runs, state.runtime.lease_ttl) == (7.0, 3, 7.0)
    assert podium.level == logging.WARNING and not podium.propagate  # the worker's logs: JSON lines at its level
    assert os.environ[ENV]
    assert example_apps("trip")


async def test_waits_are_woken_by_the_run_leaving_not_by_polling_and_shutdown_leaves_no_task(
    postgres_schema: Schema, gate: tuple[Path, Path]
) -> None:
    with _two(postgres_schema) as servers:
        async with httpx.AsyncClient(timeout=60) as client:
            (first, a), (second, b) = servers
            thread_id = (await client.post(f"{first}/threads", json={})).json()["thread_id"]
            waiting = asyncio.create_task(client.post(f"{first}/threads/{thread_id}/runs/wait", json=_say("w")))
            await _blocked(client, first, thread_id)
            run_id = (await client.get(f"{first}/threads/{thread_id}/runs")).json()[0]["run_id"]
            joining = asyncio.create_task(client.get(f"{second}/threads/{thread_id}/runs/{run_id}/join"))
            looked: dict[str, list[str]] = {"a": [], "b": []}
            for name, state in (("a", a), ("b", b)):
                get = state.executor.queue.get

                async def spy(run_id: str, get: Any = get, seen: list[str] = looked[name]) -> Any:
                    seen.append(run_id)
                    return await get(run_id)

                state.executor.queue.get = spy
            await asyncio.sleep(1.5)  # waits that polled the queue would have looked it up at least once meanwhile
            gate[0].touch()
            answers = [(await task).json() for task in (waiting, joining)]
            assert [x["messages"][-1]["content"] for x in answers] == ["finished: w", "finished: w"]
            assert looked["a"] == []  # submitted there: its waiter was told the run left
            assert len(looked["b"]) <= 1  # joined there: at most the one look-up when the join began
    for state in (a, b):  # stopped: nothing the executor or its bus started still runs (the store is closed)
        assert not state.executor._background
        assert all(loop.done() for loop in state.executor._loops)
        assert not state.bus._tails and state.bus._flusher is None
