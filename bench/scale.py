#!/usr/bin/env python
"""Scale-out on PostgreSQL: 1, 2 and 4 ``podium serve`` processes sharing one database (docs/deploy.md).

The app is ``tests/server/scale_app.py``: a ReAct agent whose model answers after --latency-ms (default 50 ms) and
calls three instant tool steps, so a run is 4 model calls and 3 tool calls (7 steps) and its ideal latency is
4 x latency. For each process count, N conversations (default 1,000) run at once, each one ``POST /threads`` and one
``POST /threads/{id}/runs/wait``, every request sent to a process picked at random.

Measured:
  * throughput (runs per second, wall clock from the first request to the last answer) per process count, and
    the speed-up over one process
  * the CPU ceiling: every server process, PostgreSQL and this client share the machine's cores. During each
    throughput phase the CPU seconds each of them used are read from /proc (Linux), and the machine's busy share
    from /proc/stat; ``ceiling`` is the throughput the cores would allow if CPU were the only limit (cores divided
    by the CPU seconds a run cost in all), so a speed-up beyond ceiling / throughput of one process is impossible
    on this machine
  * latency added over the ideal, p50 and p99
  * SIGKILL to continue: two processes, runs in flight, the owner of most is killed; seconds until another
    process executes a step of its runs (lease --lease-ttl, default 5 s)
  * database round trips per run step: statements (and BEGIN/COMMIT) sent by one server process (counted in this
    process, served in-process) for one conversation at a time (its ``runs/wait``), divided by its 7 steps

Usage:
  python bench/scale.py                 # PODIUM_TEST_POSTGRES_URL (or --url) names the database
  python bench/scale.py --quick         # 100 conversations, 1 and 2 processes
  python bench/scale.py --json          # the figures as JSON on stdout
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from _http import post

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "tests" / "server" / "scale_app.py")
STEPS = 7


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _schema_url(url: str, schema: str) -> str:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    parts = urlsplit(url)
    query = (parts.query + "&" if parts.query else "") + "options=" + quote(f"-csearch_path={schema}")
    return urlunsplit(parts._replace(query=query))


def _drop(url: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextlib.contextmanager
def _servers(count: int, store: str, env: dict[str, str], lease_ttl: float, logs: Path) -> Any:
    import httpx

    procs = []
    for i in range(count):
        port = _free_port()
        command = [sys.executable, "-m", "podium", "serve", APP, "--port", str(port), "--store", store]
        command += ["--lease-ttl", str(lease_ttl), "--max-runs", "2000", "--log-level", "error"]
        out = (logs / f"server{i}-{port}.log").open("wb")
        procs.append(
            (f"http://127.0.0.1:{port}", subprocess.Popen(command, env={**os.environ, **env}, stdout=out, stderr=out))
        )
    try:
        deadline = time.monotonic() + 180
        for url, proc in procs:
            while True:
                assert proc.poll() is None, f"server {url} exited"
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(url + "/health", timeout=2).status_code == 200:
                        break
                assert time.monotonic() < deadline, f"server {url} did not start"
                time.sleep(0.2)
        yield procs
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for _, proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def _cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) used so far by the process ``pid`` and its waited-for children."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _postgres_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() in ("postgres", "postmaster"):
                    pids.append(int(entry.name))
    return pids


def _machine_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot."""
    values = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle and iowait
    return sum(values) - idle, sum(values)


class CpuMeter:
    """CPU seconds used by the servers, PostgreSQL and this client between :meth:`start` and :meth:`stop`."""

    def __init__(self, servers: list[int]) -> None:
        self.servers = servers

    def _sample(self) -> dict[str, Any]:
        postgres = 0.0
        for pid in _postgres_pids():
            with contextlib.suppress(OSError):
                postgres += _cpu_seconds(pid)
        servers = 0.0
        for pid in self.servers:
            with contextlib.suppress(OSError):
                servers += _cpu_seconds(pid)
        return {"servers": servers, "postgres": postgres, "client": time.process_time(), "machine": _machine_jiffies()}

    def start(self) -> None:
        self._before = self._sample()

    def stop(self, runs: int) -> dict[str, Any]:
        after = self._sample()
        spent = {k: after[k] - self._before[k] for k in ("servers", "postgres", "client")}
        (busy0, all0), (busy1, all1) = self._before["machine"], after["machine"]
        busy = (busy1 - busy0) / max(1, all1 - all0)
        per_run = {k: round(1000 * v / runs, 2) for k, v in spent.items()}
        total = sum(spent.values()) / runs
        cores = os.cpu_count() or 1
        return {
            "cpu_ms_per_run": per_run,
            "machine_busy": round(busy, 2),
            "ceiling_runs_per_s": round(cores / total, 1) if total else None,
        }


async def _conversations(bases: list[str], count: int, ideal: float) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0
    reasons = Counter[str]()

    async def one(i: int) -> None:
        nonlocal errors
        started = time.perf_counter()
        try:
            thread = json.loads((await post(random.choice(bases), "/threads", {}))[1])["thread_id"]
            body = {"assistant_id": "scale", "input": {"messages": [{"role": "user", "content": f"c{i}"}]}}
            status, raw = await post(random.choice(bases), f"/threads/{thread}/runs/wait", body)
            answer = json.loads(raw)
            messages = answer.get("messages") or [{}] if status == 200 else [{}]
            if messages[-1].get("content") != f"done: c{i}":
                errors += 1
                reasons[str(answer.get("__error__", status))[:160]] += 1
        except (OSError, asyncio.IncompleteReadError, KeyError, ValueError) as exc:
            errors += 1
            reasons[f"{type(exc).__name__} after {time.perf_counter() - started:.1f} s"] += 1
        latencies.append(time.perf_counter() - started)

    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(count)))
    wall = time.perf_counter() - began
    added = sorted(max(0.0, x - ideal) for x in latencies)
    return {
        "runs_per_s": round(count / wall, 1),
        "wall_s": round(wall, 2),
        "added_p50_ms": round(1000 * statistics.median(added), 1),
        "added_p99_ms": round(1000 * added[min(len(added) - 1, int(0.99 * len(added)))], 1),
        "errors": errors,
        "error_reasons": dict(reasons.most_common(3)),
    }


def throughput(url: str, processes: int, count: int, latency: float, logs: Path) -> dict[str, Any]:
    """``count`` conversations at once over ``processes`` processes."""
    schema = f"bench_scale_{uuid.uuid4().hex[:8]}"
    store = _schema_url(url, schema)
    try:
        env = {"PODIUM_TEST_MODEL_DELAY": str(latency)}
        with _servers(processes, store, env, 10.0, logs) as procs:
            meter = CpuMeter([proc.pid for _, proc in procs])
            meter.start()
            figures = asyncio.run(_conversations([u for u, _ in procs], count, 4 * latency))
            figures.update(meter.stop(count))
    finally:
        _drop(url, schema)
    return {"processes": processes, **figures}


def sigkill(url: str, lease_ttl: float, logs: Path) -> dict[str, Any]:
    """Seconds from SIGKILLing the owner of runs in flight to another process executing their next step."""
    import httpx

    schema = f"bench_scale_{uuid.uuid4().hex[:8]}"
    store = _schema_url(url, schema)
    steps = logs / "steps.log"
    env = {"PODIUM_TEST_LOG": str(steps), "PODIUM_TEST_STEP_DELAY": "1.0", "PODIUM_TEST_MODEL_DELAY": "0.05"}
    try:
        with _servers(2, store, env, lease_ttl, logs) as procs:
            runs = []
            for i in range(8):
                base = procs[i % 2][0]
                thread = httpx.post(f"{base}/threads", json={}).json()["thread_id"]
                body = {"assistant_id": "scale", "input": {"messages": [{"role": "user", "content": f"k{i}"}]}}
                runs.append(httpx.post(f"{base}/threads/{thread}/runs", json=body).json()["run_id"])
            while len({line.split()[2] for line in _lines(steps)}) < len(runs):
                time.sleep(0.05)
            owners = Counter(int(line.split()[1]) for line in _lines(steps))
            victim = next(p for _, p in procs if p.pid == owners.most_common(1)[0][0])
            theirs = {line.split()[2] for line in _lines(steps) if int(line.split()[1]) == victim.pid}
            victim.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            victim.wait()
            seen = len(_lines(steps))
            while True:
                later = [line.split() for line in _lines(steps)[seen:]]
                if any(int(pid) != victim.pid and run in theirs for _, pid, run, _ in later):
                    return {"sigkill_to_continue_s": round(time.monotonic() - killed, 2), "lease_ttl_s": lease_ttl}
                if time.monotonic() - killed > 120:
                    return {"sigkill_to_continue_s": None, "lease_ttl_s": lease_ttl}
                time.sleep(0.05)
    finally:
        _drop(url, schema)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def round_trips(url: str, conversations: int = 20) -> dict[str, Any]:
    """Statements one server process sends to PostgreSQL per run step (served in-process, counted here)."""
    import httpx
    import psycopg

    sys.path.insert(0, str(ROOT))
    os.environ["PODIUM_TEST_MODEL_DELAY"] = "0"
    from psycopg._connection_base import BaseConnection

    from podium.app import load_app
    from podium.server import create_app
    from podium.store.postgres import PostgresStore

    counted = Counter[str]()
    execute, many, command = psycopg.AsyncCursor.execute, psycopg.AsyncCursor.executemany, BaseConnection._exec_command

    async def counting(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        counted["statements"] += 1
        return await execute(self, query, *args, **kwargs)

    async def counting_many(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        counted["statements"] += 1  # one pipelined batch
        return await many(self, query, *args, **kwargs)

    def counting_command(self: Any, *args: Any, **kwargs: Any) -> Any:
        counted["statements"] += 1  # BEGIN, COMMIT, ROLLBACK of a transaction
        return command(self, *args, **kwargs)

    def counters(on: bool) -> None:
        psycopg.AsyncCursor.execute = counting if on else execute  # type: ignore[method-assign]
        psycopg.AsyncCursor.executemany = counting_many if on else many  # type: ignore[method-assign]
        BaseConnection._exec_command = counting_command if on else command  # type: ignore[method-assign]

    schema = f"bench_scale_{uuid.uuid4().hex[:8]}"
    _schema_url(url, schema)

    async def go() -> dict[str, Any]:
        store = PostgresStore(url, schema=schema)
        app = create_app({"scale": load_app(APP)}, store=store, close_store=True)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://podium") as client:
                await asyncio.sleep(0.5)  # the listener and the loops start
                body = {"assistant_id": "scale", "input": {"messages": [{"role": "user", "content": "x"}]}}
                thread = (await client.post("/threads", json={})).json()["thread_id"]
                await client.post(f"/threads/{thread}/runs/wait", json=body)  # warm up
                counters(True)
                try:
                    for _ in range(conversations):
                        thread = (await client.post("/threads", json={})).json()["thread_id"]
                        counted["threads"] += 1
                        before = counted["statements"]
                        await client.post(f"/threads/{thread}/runs/wait", json=body)
                        counted["run"] += counted["statements"] - before
                finally:
                    counters(False)
        per_run = counted["run"] / conversations
        return {
            "statements_per_run": round(per_run, 1),
            "statements_per_step": round(per_run / STEPS, 2),
            "steps_per_run": STEPS,
        }

    try:
        return asyncio.run(go())
    finally:
        _drop(url, schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=os.environ.get("PODIUM_TEST_POSTGRES_URL"), help="a PostgreSQL URL")
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--processes", default="1,2,4", help="process counts to measure, comma-separated")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--lease-ttl", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true", help="100 conversations, 1 and 2 processes")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--round-trips", action="store_true", help="measure only the database round trips per step")
    args = parser.parse_args()
    if not args.url:
        parser.error("name a PostgreSQL database: --url or PODIUM_TEST_POSTGRES_URL (see .ci/postgres.sh)")
    count = 100 if args.quick else args.conversations
    counts = [1, 2] if args.quick else [int(n) for n in args.processes.split(",")]
    latency = args.latency_ms / 1000
    if args.round_trips:
        figures = round_trips(args.url)
        print(
            json.dumps(figures)
            if args.json
            else f"database statements per run: {figures['statements_per_run']} "
            f"({figures['statements_per_step']} per step)"
        )
        return
    with tempfile.TemporaryDirectory() as folder:
        logs = Path(folder)
        results: dict[str, Any] = {"cores": os.cpu_count(), "conversations": count, "latency_ms": args.latency_ms}
        results["throughput"] = [throughput(args.url, n, count, latency, logs) for n in counts]
        base = results["throughput"][0]["runs_per_s"]
        for row in results["throughput"]:
            row["speedup"] = round(row["runs_per_s"] / base, 2)
        results.update(sigkill(args.url, args.lease_ttl, logs))
        results.update(round_trips(args.url))
    if args.json:
        print(json.dumps(results))
        return
    print(f"{count} concurrent conversations, {args.latency_ms:g} ms model, {results['cores']} cores")
    for row in results["throughput"]:
        print(
            f"  {row['processes']} process(es): {row['runs_per_s']:>7} runs/s  x{row['speedup']:<5} "
            f"added p50 {row['added_p50_ms']} ms  p99 {row['added_p99_ms']} ms  errors {row['errors']}"
        )
        cpu = row["cpu_ms_per_run"]
        print(
            f"      CPU per run: servers {cpu['servers']} ms, PostgreSQL {cpu['postgres']} ms, client "
            f"{cpu['client']} ms; machine busy {100 * row['machine_busy']:.0f} %; CPU ceiling "
            f"{row['ceiling_runs_per_s']} runs/s ({100 * row['runs_per_s'] / row['ceiling_runs_per_s']:.0f} % reached)"
        )
    base = results["throughput"][0]["runs_per_s"]
    for row in results["throughput"][1:]:
        bound = row["ceiling_runs_per_s"] / base
        print(
            f"  {row['processes']} processes: x{row['speedup']} one process, where this machine's CPU allows at most "
            f"x{bound:.2f} ({row['ceiling_runs_per_s']} runs/s; {results['cores']} cores shared by the servers, "
            "PostgreSQL and the client)"
        )
    print(f"SIGKILL to continue elsewhere: {results['sigkill_to_continue_s']} s (lease {results['lease_ttl_s']} s)")
    print(f"database statements per run: {results['statements_per_run']} ({results['statements_per_step']} per step)")


if __name__ == "__main__":
    main()
