#!/usr/bin/env python
"""The server under load: N concurrent conversations over HTTP on loopback, on SQLite.

Each conversation is one ``POST /threads/{id}/runs/wait`` (the thread created on the way) running a ReAct agent with
one tool and a model that takes --latency-ms per call: two model calls, so the ideal latency is 2 x latency. In the
same run, a bare FastAPI endpoint that only sleeps the ideal time, served the same way, is the ceiling: what HTTP,
uvicorn and the client cost without Podium.

Measured (server in its own process, the client in this one):
  * throughput (conversations per second, wall clock from the first request to the last answer)
  * latency added over the ideal: p50, p99, max
  * peak RSS of the server process (VmHWM)
  * errors (non-200 answers, or an answer that is not the agent's), with the most common reasons

Usage:
  python bench/server.py                 # 1,000 concurrent conversations
  python bench/server.py --quick         # 100, in a few seconds
  python bench/server.py --json          # the figures as JSON on stdout
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from _http import post

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve_podium(port: int, db: str, latency: float) -> None:
    """The Podium server: one app, a ReAct agent with one tool over a model that sleeps ``latency`` per call."""
    import uvicorn

    from podium import AIMessage, ReactAgent, ToolMessage
    from podium.app import App
    from podium.server import create_app
    from podium.store.sqlite import SQLiteStore
    from podium.testing import FunctionModel, tool_call

    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: what to look up.
        """
        return f"{key}=42"

    async def model(messages: list[Any], request: Any) -> Any:
        await asyncio.sleep(latency)
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return f"Found {last.content}"
        return AIMessage(tool_calls=[tool_call("lookup", {"key": "answer"})])

    agent = ReactAgent("bench", FunctionModel(model), [lookup], prompt="Look things up.")
    app = create_app({"bench": App(name="bench", build=lambda _: agent)}, store=SQLiteStore(db), close_store=True)
    app.state.podium.agents["bench"] = agent  # built here: no cassette, no configured model
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", backlog=4096, timeout_keep_alive=75)


def _serve_bare(port: int, ideal: float) -> None:
    """The ceiling: a FastAPI endpoint that only waits the ideal time."""
    import uvicorn
    from fastapi import FastAPI

    bare = FastAPI()

    @bare.post("/threads/{thread_id}/runs/wait")
    async def wait(thread_id: str, body: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(ideal)
        return {"messages": [{"type": "ai", "content": "Found answer=42"}]}

    @bare.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    uvicorn.run(bare, host="127.0.0.1", port=port, log_level="warning", backlog=4096, timeout_keep_alive=75)


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _load(url: str, n: int, ideal: float) -> dict[str, Any]:
    reasons: Counter[str] = Counter()

    async def conversation() -> tuple[float, bool]:
        body = {
            "assistant_id": "bench",
            "if_not_exists": "create",
            "input": {"messages": [{"role": "user", "content": "What is the answer?"}]},
        }
        start = time.perf_counter()
        try:
            status, answer = await post(url, f"/threads/{uuid.uuid4()}/runs/wait", body)
            ok = status == 200 and json.loads(answer)["messages"][-1]["content"] == "Found answer=42"
            if not ok:
                reasons[f"HTTP {status}: {answer[:100]!r}"] += 1
        except (OSError, asyncio.IncompleteReadError, KeyError, IndexError, ValueError) as exc:
            ok = False
            reasons[f"{type(exc).__name__} after {time.perf_counter() - start:.1f} s"[:60]] += 1
        return time.perf_counter() - start, ok

    for _ in range(3):  # warm up: imports, the first SQLite pages
        await conversation()
    started = time.perf_counter()
    results = await asyncio.gather(*(conversation() for _ in range(n)))
    wall = time.perf_counter() - started
    added = sorted(max(0.0, seconds - ideal) * 1000 for seconds, _ in results)
    return {
        "conversations": n,
        "errors": sum(1 for _, ok in results if not ok),
        "throughput_per_s": round(n / wall, 1),
        "wall_s": round(wall, 3),
        "added_ms_p50": round(statistics.median(added), 1),
        "added_ms_p99": round(added[min(len(added) - 1, int(len(added) * 0.99))], 1),
        "added_ms_max": round(added[-1], 1),
        "error_reasons": dict(reasons.most_common(3)),
    }


def _measure(kind: str, n: int, latency: float, folder: str) -> dict[str, Any]:
    port = _free_port()
    ideal = 2 * latency
    args = [sys.executable, __file__, f"--serve-{kind}", str(port), "--latency-ms", str(latency * 1000)]
    if kind == "podium":
        args += ["--db", os.path.join(folder, "bench.db")]
    server = subprocess.Popen(args, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        import httpx

        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None:
                raise SystemExit(f"the {kind} server did not start: {server.stderr.read() if server.stderr else ''}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"the {kind} server did not answer within a minute")
            time.sleep(0.1)
        figures = asyncio.run(_load(f"http://127.0.0.1:{port}", n, ideal))
        figures["server_peak_rss_mb"] = round(_peak_rss_mb(server.pid), 1)
        return figures
    finally:
        server.terminate()
        server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100 conversations instead of 1,000")
    parser.add_argument("--conversations", type=int, default=None, help="how many at once (default 1,000)")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="the model's latency per call")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--serve-podium", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    latency = args.latency_ms / 1000
    if args.serve_podium:
        _serve_podium(args.serve_podium, args.db, latency)
        return
    if args.serve_bare:
        _serve_bare(args.serve_bare, 2 * latency)
        return
    n = args.conversations or (100 if args.quick else 1000)
    with tempfile.TemporaryDirectory() as folder:
        report = {
            "conversations": n,
            "model_latency_ms": args.latency_ms,
            "ideal_ms": 2 * args.latency_ms,
            "cpus": os.cpu_count(),
            "podium": _measure("podium", n, latency, folder),
            "bare_fastapi": _measure("bare", n, latency, folder),
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{n} concurrent conversations, ReAct with one tool, model {args.latency_ms:.0f} ms/call (ideal {2 * args.latency_ms:.0f} ms), SQLite"
    )
    print(f"{'':14}{'conv/s':>9}{'p50 +ms':>10}{'p99 +ms':>10}{'max +ms':>10}{'RSS MB':>9}{'errors':>8}")
    for name in ("podium", "bare_fastapi"):
        f = report[name]
        print(
            f"{name:14}{f['throughput_per_s']:>9}{f['added_ms_p50']:>10}{f['added_ms_p99']:>10}"
            f"{f['added_ms_max']:>10}{f['server_peak_rss_mb']:>9}{f['errors']:>8}"
        )
        if f["error_reasons"]:
            print(f"{'':14}errors: {f['error_reasons']}")


if __name__ == "__main__":
    main()
