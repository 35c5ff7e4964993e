"""Stopping and restarting the server: runs in flight finish after a restart, even after ``kill -9``.

``podium serve`` runs as a real process here; a clean stop and restart also runs in this process (the server's
shutdown and start-up recovery, measured by coverage).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from typer.testing import CliRunner

from podium.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_process(
    *args: str, store: Path, port: int | None = None, host: str = "127.0.0.1"
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``podium serve ARGS`` on ``host`` and a free port (or ``port``); yields the process and its base URL once it
    answers."""
    port = port or _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "podium", "serve", *args, "--host", host, "--port", str(port), "--store", str(store)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    try:
        deadline = time.monotonic() + 90  # a loaded machine takes long to import the examples' dependencies
        while True:
            assert process.poll() is None, process.communicate()
            try:
                httpx.post(f"{url}/assistants/search", json={}, timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "podium serve did not start"
                time.sleep(0.1)
        yield process, url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=15)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hang is the failure reported
            process.kill()
            process.communicate()
            raise


def test_an_ipv6_address_is_printed_in_brackets(tmp_path: Path) -> None:
    """``--host ::1`` serves ``http://[::1]:PORT``, and the log and the hint print that, never ``http://::1:PORT``."""
    with socket.socket(socket.AF_INET6) as sock:
        sock.bind(("::1", 0))
        port = int(sock.getsockname()[1])
    with serve_process("trip", store=tmp_path / "s.db", port=port, host="::1") as (process, url):
        assert url == f"http://[::1]:{port}" and httpx.get(f"{url}/health", timeout=5).status_code == 200
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    assert f"serving trip on {url}" in err and f"Open {url}/ in a browser" in out
    assert "http://::1" not in out + err


def test_serve_runs_the_named_apps_and_stops_on_sigint(tmp_path: Path) -> None:
    with serve_process("trip", store=tmp_path / "s.db") as (process, url):
        names = [a["assistant_id"] for a in httpx.post(f"{url}/assistants/search", json={}).json()]
        assert names == ["trip"]
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=15)
        assert process.returncode == 0, err
        assert "serving trip on http://127.0.0.1" in err


def test_serve_refuses_an_unknown_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    done = CliRunner().invoke(cli, ["serve", "nope", "--store", str(tmp_path / "s.db")])
    assert done.exit_code == 2
    assert "no app 'nope'" in done.output


def test_serve_without_names_finds_the_examples_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from podium.cli import _serve_apps

    monkeypatch.chdir(tmp_path)  # no examples/ here: the importable examples package is found all the same
    apps = _serve_apps([])
    assert "trip" in apps and apps["trip"].source == ROOT / "examples" / "trip.py"


def test_serve_without_examples_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # neither an examples/ folder here nor an importable examples package
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p or ".").resolve() != ROOT])
    monkeypatch.delitem(sys.modules, "examples", raising=False)
    done = CliRunner().invoke(cli, ["serve", "--store", str(tmp_path / "s.db")])
    assert done.exit_code == 2
    assert "no apps to serve" in done.output


def _say(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def test_kill_9_mid_run_then_restart_completes_it_without_repeating_steps(
    tmp_path: Path, gate: tuple[Path, Path]
) -> None:
    gate_file, log = gate
    store = tmp_path / "kill.db"
    port = _free_port()
    parts: list[Any] = []

    async def follow(url: str, thread_id: str, blocked: asyncio.Event) -> None:
        async with get_client(url=url) as client:
            stream = client.runs.stream(thread_id, "gated", input=_say("survive"), stream_mode="events")
            async for part in stream:
                parts.append(part)
                if part.event == "events" and part.data.get("message", {}).get("kind") == "tool":
                    blocked.set()

    async def scenario(
        process: subprocess.Popen[str], url: str
    ) -> tuple[subprocess.Popen[str], list[tuple[int, dict[str, Any]]]]:
        async with httpx.AsyncClient() as http:
            thread_id = (await http.post(f"{url}/threads", json={})).json()["thread_id"]
        blocked = asyncio.Event()
        follower = asyncio.create_task(follow(url, thread_id, blocked))
        await asyncio.wait_for(blocked.wait(), 30)
        for _ in range(1500):  # until step 2 runs (after the model's next reply is stored), waiting at the gate
            if "2" in log.read_text().split():
                break
            await asyncio.sleep(0.02)
        process.kill()  # SIGKILL: no shutdown, no chance to record anything
        process.communicate(timeout=15)
        gate_file.touch()
        with serve_process("tests/server/gated_app.py", store=store, port=port) as (restarted, _):
            await asyncio.wait_for(follower, 60)  # the client reconnects by itself (Location + Last-Event-ID)
            async with httpx.AsyncClient() as http:
                run = (await http.get(f"{url}/threads/{thread_id}/runs")).json()[0]
                assert run["status"] == "success"
                where = f"{url}/threads/{thread_id}/runs/{run['run_id']}/stream"
                replay = _frames_of((await http.get(where, params={"stream_mode": "events"})).text)
            return restarted, replay

    with serve_process("tests/server/gated_app.py", store=store, port=port) as (process, url):
        _, replay = asyncio.run(scenario(process, url))
    received = [(p.data["seq"], p.data) for p in parts if p.event == "events" and p.data["seq"]]  # stored ones
    assert [seq for seq, _ in received] == [seq for seq, _ in replay]  # each stored event exactly once, in order
    assert [d["kind"] for _, d in received] == [d["kind"] for _, d in replay]
    assert received[-1][1]["kind"] == "run_ended" and received[-1][1]["status"] == "completed"
    assert log.read_text().split().count("1") == 1  # the completed step is not repeated
    assert log.read_text().split().count("2") == 2  # the interrupted one runs again


def _frames_of(text: str) -> list[tuple[int, dict[str, Any]]]:
    out: list[tuple[int, dict[str, Any]]] = []
    data: dict[str, Any] | None = None
    for line in text.splitlines():
        if line.startswith("data: "):
            data = json.loads(line[6:])
        elif line.startswith("id: ") and data is not None:
            out.append((int(line[4:]), data))
    return out


def test_a_stopped_server_leaves_runs_for_the_next_start(tmp_path: Path, gate: tuple[Path, Path]) -> None:
    from tests.server.conftest import live_server
    from tests.server.gated_app import app

    from podium.store.sqlite import SQLiteStore

    apps = {"gated": app}
    with live_server(apps, SQLiteStore(tmp_path / "s.db"), grace=0.1) as url:
        thread_id = httpx.post(f"{url}/threads", json={}).json()["thread_id"]
        runs = f"{url}/threads/{thread_id}/runs"
        first = httpx.post(runs, json={"assistant_id": "gated", "input": _say("one")}).json()
        for _ in range(500):
            if gate[1].exists():
                break
            time.sleep(0.02)
        second = httpx.post(runs, json={"assistant_id": "gated", "input": _say("two")}).json()
        assert second["status"] == "pending"
    gate[0].touch()
    with live_server(apps, SQLiteStore(tmp_path / "s.db")) as url:
        runs = f"{url}/threads/{thread_id}/runs"
        result = httpx.get(f"{runs}/{second['run_id']}/join", timeout=30).json()
        texts = [m["content"] for m in result["messages"] if m["type"] in ("human", "ai") and m["content"]]
        assert texts == ["one", "finished: one", "two", "finished: two"]
        assert [r["status"] for r in httpx.get(runs).json()] == ["success", "success"]
        assert httpx.get(f"{runs}/{first['run_id']}").json()["status"] == "success"


def test_a_run_whose_app_is_gone_is_ended_at_start_up(tmp_path: Path, gate: tuple[Path, Path]) -> None:
    from tests.server.conftest import example_apps, live_server
    from tests.server.gated_app import app

    from podium.store.sqlite import SQLiteStore

    with live_server({"gated": app}, SQLiteStore(tmp_path / "s.db"), grace=0.1) as url:
        thread_id = httpx.post(f"{url}/threads", json={}).json()["thread_id"]
        run = httpx.post(f"{url}/threads/{thread_id}/runs", json={"assistant_id": "gated", "input": _say("x")}).json()
        for _ in range(500):
            if gate[1].exists():
                break
            time.sleep(0.02)
    with live_server(example_apps("trip"), SQLiteStore(tmp_path / "s.db")) as url:
        got = httpx.get(f"{url}/threads/{thread_id}/runs/{run['run_id']}").json()
        assert got["podium_status"] == "cancelled"
        assert got["reason"] == "ended at start-up: the app 'gated' is not served"
        assert httpx.get(f"{url}/threads/{thread_id}").json()["status"] == "idle"


def test_sigterm_gives_runs_their_grace_then_ends_every_stream_and_wait_cleanly(
    tmp_path: Path, gate: tuple[Path, Path]
) -> None:
    """SIGTERM with three runs stuck at their step 2 (past ``--grace 1``): a thread-API stream just ends (the client
    rejoins it after the restart), an OpenAI stream ends with an error saying the server is stopping, a wait answers
    503 with where to join; the process exits about a second after the grace, logging no error. The runs go on at the
    next start."""
    from openai import APIError, AsyncOpenAI

    gate_file, log = gate
    store, port = tmp_path / "s.db", _free_port()
    seen: dict[str, Any] = {}

    async def thread_stream(http: httpx.AsyncClient, thread_id: str) -> None:
        body = {"assistant_id": "gated", "input": _say("streamed"), "stream_mode": ["updates"]}
        async with http.stream("POST", f"/threads/{thread_id}/runs/stream", json=body) as response:
            seen["location"] = response.headers["Location"]
            seen["frames"] = [line async for line in response.aiter_lines() if line.startswith("event: ")]

    async def openai_stream(url: str) -> None:
        client = AsyncOpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        messages: Any = [{"role": "user", "content": "chatted"}]
        stream = await client.chat.completions.create(
            model="gated", messages=messages, stream=True, extra_headers={"X-Conversation-Id": "c1"}
        )
        try:
            seen["chunks"] = [chunk async for chunk in stream]
        except APIError as exc:
            seen["openai_error"] = exc.message

    async def wait(http: httpx.AsyncClient, thread_id: str) -> None:
        seen["wait"] = await http.post(
            f"/threads/{thread_id}/runs/wait", json={"assistant_id": "gated", "input": _say("waited")}
        )

    async def scenario(process: subprocess.Popen[str], url: str) -> float:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            threads = [(await http.post("/threads", json={})).json()["thread_id"] for _ in range(2)]
            clients = [
                asyncio.create_task(thread_stream(http, threads[0])),
                asyncio.create_task(openai_stream(url)),
                asyncio.create_task(wait(http, threads[1])),
            ]
            for _ in range(1500):  # until the three runs wait at their step 2
                if log.exists() and log.read_text().split().count("2") == 3:
                    break
                await asyncio.sleep(0.02)
            signalled = time.monotonic()
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(asyncio.gather(*clients), 30)
            await asyncio.to_thread(process.wait, 30)
            return time.monotonic() - signalled

    with serve_process("tests/server/gated_app.py", "--grace", "1", store=store, port=port) as (process, url):
        took = asyncio.run(scenario(process, url))
        _, err = process.communicate(timeout=15)
    assert took < 4, f"the process took {took:.1f} s to exit after SIGTERM (grace 1 s)"
    assert '"level": "error"' not in err and "Traceback" not in err, err
    assert seen["frames"] == ["event: metadata"] + ["event: updates"] * 4  # the run's work so far, then the end
    assert "chunks" not in seen and seen["openai_error"].startswith("the server is stopping: the run goes on")
    waited = seen["wait"]
    assert waited.status_code == 503 and waited.json()["detail"].startswith("the server is stopping: run ")
    gate_file.touch()
    with serve_process("tests/server/gated_app.py", store=store, port=port) as (_, url):
        joined = httpx.get(f"{url}{waited.headers['Location']}", timeout=30).json()
        assert [m["content"] for m in joined["messages"]][-1] == "finished: waited"
        thread_id = waited.headers["Location"].split("/")[2]
        ends = [e for e in httpx.get(f"{url}/threads/{thread_id}/events").json() if e["kind"] == "run_ended"]
        assert [e["status"] for e in ends] == ["completed"]  # the shutdown ended nothing: no "cancelled" before it
        rejoined = httpx.get(f"{url}{seen['location']}", params={"stream_mode": "updates"}, timeout=30).text
        assert '"finished: streamed"' in rejoined
        asked = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "gated", "messages": [{"role": "user", "content": "again"}]},
            headers={"X-Conversation-Id": "c1"},
            timeout=30,
        ).json()
        assert asked["choices"][0]["message"]["content"] == "finished: again"
