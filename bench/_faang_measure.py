"""The measuring side of ``bench/faang.py``: one store's figures in a worker process, import time, profiling."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _faang_workload import ROOT, build, pct, peak_rss_mb, run_one


def _sqlite_payload(path: str) -> tuple[int, int]:
    con = sqlite3.connect(path)
    try:
        (events,) = con.execute(
            "select coalesce(sum(length(thread_id) + length(run_id) + length(kind) + coalesce(length(key), 0)"
            " + coalesce(length(ns), 0) + length(body) + 8), 0) from events"
        ).fetchone()
        (runs,) = con.execute(
            "select coalesce(sum(length(id) + length(thread_id) + length(status) + coalesce(length(input), 0)"
            " + length(agent) + coalesce(length(result), 0) + 16), 0) from runs"
        ).fetchone()
        (threads,) = con.execute("select coalesce(sum(length(id) + length(metadata) + 8), 0) from threads").fetchone()
        (state,) = con.execute(
            "select coalesce(sum(length(thread_id) + length(key) + length(value) + 8), 0) from state"
        ).fetchone()
        (rows,) = con.execute("select count(*) from events").fetchone()
    finally:
        con.close()
    return events + runs + threads + state, rows


def _file_size(path: str) -> int:
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def fsync_ms(folder: str, samples: int = 50, *, in_place: bool = True) -> float:
    """This machine's sync latency where the database lives: median of ``samples`` 4 KiB writes, each followed by
    ``fdatasync`` (what SQLite and the store's sync thread call).

    ``in_place``: each write goes over a page the file already has, as in a write-ahead log written from its start
    again (the floor: its sync need not record a new file size); else each write grows the file.
    """
    sync = getattr(os, "fdatasync", os.fsync)
    times = []
    with open(os.path.join(folder, f"fsync-{'in-place' if in_place else 'growing'}.probe"), "wb") as file:
        if in_place:
            file.write(b"x" * 4096 * samples)
            file.flush()
            os.fsync(file.fileno())
        for n in range(samples):
            if in_place:
                file.seek(4096 * n)
            file.write(b"y" * 4096)
            file.flush()
            t = time.perf_counter()
            sync(file.fileno())
            times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1000, 3)


def _rounds_of(events: list[Any]) -> int:
    """Journaled rounds of a run: its model calls and its rounds of tool calls (one per reply asking for tools)."""
    from podium import AIMessage, MessageAdded

    replies = [e.message for e in events if isinstance(e, MessageAdded) and isinstance(e.message, AIMessage)]
    return len(replies) + sum(1 for m in replies if m.tool_calls)


def worker(kind: str, runs: int, k: int, latency_ms: float, rounds: int) -> dict[str, Any]:
    t_import = time.perf_counter()
    from podium import MemoryStore, Runtime, SQLiteStore
    from podium.orchestration.supervisor import create_supervisor  # noqa: F401

    out: dict[str, Any] = {"config": kind, "import_s": round(time.perf_counter() - t_import, 3)}
    tmpdir = tempfile.mkdtemp(prefix="podium_bench_")
    durability = "process" if kind == "sqlite-process" else "full"
    declared = not kind.endswith("-undeclared")  # (those: tools on tool threads, each round written ahead at full)
    try:
        path = os.path.join(tmpdir, "bench.db")

        def store() -> Any:
            return MemoryStore() if kind.startswith("memory") else SQLiteStore(path, durability=durability)  # type: ignore[arg-type]

        async def phases() -> None:
            backend = store()
            runtime = Runtime(backend)
            agent = build(declared=declared)
            await run_one(runtime, agent)
            if not kind.startswith("memory"):
                out["durability"] = durability
                out["fsync_ms"] = fsync_ms(tmpdir)
                out["fsync_growing_ms"] = fsync_ms(tmpdir, in_place=False)
                b0, r0 = _sqlite_payload(path)
                backend._on_thread(lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)"))  # an empty WAL
                s0, c0, f0 = _file_size(path), backend.commits, backend.synced_commits
                result = await run_one(runtime, agent)
                out["commits_per_run"] = backend.commits - c0
                out["synced_commits_per_run"] = backend.synced_commits - f0
                out["wal_bytes_per_run"] = os.path.getsize(path + "-wal")  # every page the run's commits wrote
                b1, r1 = _sqlite_payload(path)
                out["bytes_per_run"] = b1 - b0
                out["events_per_run"] = r1 - r0
                out["file_growth_per_run"] = _file_size(path) - s0
                out["rounds_per_run"] = _rounds_of(await runtime.store.read_events(result.thread_id))
                out["floor_ms"] = round(out["rounds_per_run"] * out["fsync_ms"], 3) if durability == "full" else 0
            for _ in range(5):
                await run_one(runtime, agent)
            times = []
            waited = backend.disk_seconds if not kind.startswith("memory") else 0.0
            for _ in range(runs):
                t = time.perf_counter()
                await run_one(runtime, agent)
                times.append(time.perf_counter() - t)
            if not kind.startswith(
                "memory"
            ):  # the fsynced commits' own time, as it happened (the disk's share of a run)
                out["disk_ms_per_run"] = round((backend.disk_seconds - waited) / runs * 1000, 3)
            if kind.startswith("sqlite-full"):  # the disk again, after the runs: the floor takes the quicker reading
                again = fsync_ms(tmpdir)
                out["fsync_readings_ms"] = [out["fsync_ms"], again]
                out["fsync_ms"] = min(out["fsync_ms"], again)
                out["floor_ms"] = round(out["rounds_per_run"] * out["fsync_ms"], 3)
            out["ms_per_run_p50"] = round(pct(times, 50) * 1000, 3)
            out["ms_per_run_mean"] = round(statistics.mean(times) * 1000, 3)
            out["ms_per_run_p95"] = round(pct(times, 95) * 1000, 3)

            slow = build(latency_s=latency_ms / 1000, declared=declared)
            t = time.perf_counter()
            await run_one(runtime, slow)
            out["single_run_with_latency_ms"] = round((time.perf_counter() - t) * 1000, 1)
            results = []
            for _ in range(rounds):
                started = time.perf_counter()
                latencies: list[float] = []

                async def timed(into: list[float]) -> None:
                    t0 = time.perf_counter()
                    await run_one(runtime, slow)
                    into.append(time.perf_counter() - t0)

                await asyncio.gather(*(timed(latencies) for _ in range(k)))
                wall = time.perf_counter() - started
                results.append(
                    {
                        "wall_s": round(wall, 3),
                        "runs_per_s": round(k / wall, 1),
                        "run_latency_p50_ms": round(pct(latencies, 50) * 1000, 1),
                        "run_latency_p95_ms": round(pct(latencies, 95) * 1000, 1),
                    }
                )
            out["concurrent"] = {
                "k": k,
                "latency_ms": latency_ms,
                "rounds": results,
                "ideal_runs_per_s": k / (10 * latency_ms / 1000),
            }
            out["runs_per_s"] = results[-1]["runs_per_s"]
            await backend.close()

        asyncio.run(phases())
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return out


IMPORT_SAMPLES = 7


def import_seconds(python: str = sys.executable, modules: str = "podium, podium.orchestration.supervisor") -> float:
    """Median of several cold imports of ``modules``, each in a fresh interpreter (the same way for both sides).

    A first, untimed import writes the bytecode files, as installing a package does: an environment that says not
    to write them (``PYTHONDONTWRITEBYTECODE``) would otherwise time compiling the sources.
    """
    code = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode as installed
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    subprocess.run([python, "-c", code], capture_output=True, check=True, env=env)  # writes it; not timed
    times = []
    for _ in range(IMPORT_SAMPLES):
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, env=env)
        times.append(float(done.stdout.strip()))
    return round(statistics.median(times), 3)


def profile(runs: int) -> None:
    import cProfile
    import pstats

    from podium import Runtime

    agent = build()
    runtime = Runtime()

    async def many(n: int) -> None:
        for _ in range(n):
            await run_one(runtime, agent)

    asyncio.run(many(20))
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(many(runs))
    profiler.disable()
    stats = pstats.Stats(profiler)
    by_module: dict[str, float] = {}
    for (file, _, _), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        key = file.split("/src/")[-1] if "/src/podium/" in file else ("builtins" if file == "~" else Path(file).name)
        by_module[key] = by_module.get(key, 0.0) + own
    total = sum(by_module.values())
    print(f"self time by module over {runs} in-memory runs (total {total:.2f}s with profiler overhead):")
    for name, seconds in sorted(by_module.items(), key=lambda x: -x[1])[:20]:
        print(f"  {name:44} {seconds:7.3f}s {100 * seconds / total:5.1f}%")
    stats.sort_stats("tottime").print_stats(25)
