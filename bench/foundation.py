#!/usr/bin/env python
"""Foundation benchmark: import time, the ReAct loop's per-step overhead, and bytes stored per step.

A "step" is one model call that asks for one tool call, plus that tool call (the unit of a ReAct loop). The model is
a zero-latency function of the messages, so the time measured is the framework's own. As a baseline measured in
the same invocation, the same loop is written by hand (call the function, call the tool, append the messages), so
the ratio says what the runtime (journal, events, store) costs on top of the bare loop.

Usage:
    python bench/foundation.py            # full run
    python bench/foundation.py --quick    # fewer rounds
    python bench/foundation.py --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = os.environ.get("PYTHONPATH") or str(Path(__file__).resolve().parents[1] / "src")
sys.path.insert(0, SRC)  # PYTHONPATH names another tree to measure (an earlier one, for a before/after figure)

STEPS = 10  # tool steps per run (plus one final answer)


def import_time(rounds: int) -> float:
    code = "import time; t = time.perf_counter(); import podium; print(time.perf_counter() - t)"
    # bytecode written as an installed package has it (an environment may say not to write it), not timed
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": SRC}
    subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, check=True)
    times = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout)
        for _ in range(rounds)
    ]
    return statistics.median(times)


def build_agent(async_tool: bool = False, inline_tool: bool = False) -> Any:
    """The benchmark's ReAct agent; its tool is a plain function, or (``async_tool``) a coroutine function, or
    (``inline_tool``) the plain function declared ``@tool(inline=True)``.

    A plain function runs on a thread of its own (a blocking call never stalls the event loop), which costs a hop
    to that thread and back per call; a coroutine function runs on the loop, so its step shows the runtime alone; so
    does an inline one (a quick function its author says never waits, run on the loop's thread).
    """
    from podium import AIMessage, ReactAgent, ToolMessage
    from podium.testing import FunctionModel, tool_call

    def model(messages: list[Any], request: Any) -> Any:
        done = sum(isinstance(m, ToolMessage) for m in messages[-2:])
        steps = sum(isinstance(m, ToolMessage) for m in messages)
        if steps >= STEPS and done:
            return AIMessage(content=f"finished {steps} steps")
        return AIMessage(tool_calls=[tool_call("lookup", {"key": f"k{steps}"}, id=f"call_{steps}")])

    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    async def lookup_async(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    if async_tool:
        lookup_async.__name__ = "lookup"
        return ReactAgent("bench", FunctionModel(model), [lookup_async], prompt="You are a benchmark.")
    if inline_tool:
        from podium import tool

        return ReactAgent("bench", FunctionModel(model), [tool(inline=True)(lookup)], prompt="You are a benchmark.")
    return ReactAgent("bench", FunctionModel(model), [lookup], prompt="You are a benchmark.")


def hand_written_loop() -> None:
    """The same loop without a runtime: the baseline."""
    from podium import AIMessage, HumanMessage, SystemMessage, ToolMessage
    from podium.testing import tool_call

    messages: list[Any] = [SystemMessage(content="You are a benchmark."), HumanMessage(content="go")]
    for step in range(STEPS + 1):
        if step == STEPS:
            messages.append(AIMessage(content="done"))
            break
        call = tool_call("lookup", {"key": f"k{step}"}, id=f"call_{step}")
        messages.append(AIMessage(tool_calls=[call]))
        args = json.loads(call.arguments)
        messages.append(ToolMessage(content=f"value of {args['key']}", tool_call_id=call.id, name="lookup"))


def open_sqlite(path: Path, durability: str) -> Any:
    """The store at ``durability``; in a tree from before that setting (always ``synchronous=NORMAL``), the only
    store it has stands for ``process``, and ``full`` is ``None``."""
    from podium import SQLiteStore

    try:
        return SQLiteStore(path, durability=durability)  # type: ignore[arg-type]
    except TypeError:
        return None if durability == "full" else SQLiteStore(path)


def on_connections(store: Any, work: Any) -> None:
    """``work(connection)`` for each connection of a SQLite store, on the thread that owns it (older trees too)."""
    if hasattr(store, "_on_thread"):
        store._on_thread(work)  # the store's thread's connection
    else:
        work(store._conn)
    direct = getattr(store, "_direct", None)  # the event loop's connection
    if direct is not None:
        work(direct.conn)


async def per_step(store_kind: str, runs: int, folder: Path) -> dict[str, float]:
    from podium import MemoryStore, Runtime, SQLiteStore

    durability = "process" if store_kind == "sqlite-process" else "full"
    store = (
        MemoryStore() if store_kind.startswith("memory") else open_sqlite(folder / f"bench-{store_kind}.db", durability)
    )
    if store is None:
        return {"ms_per_step": float("nan"), "ms_per_run": float("nan")}
    written: list[int] = []
    if isinstance(store, SQLiteStore):

        def trace(sql: str) -> None:
            if sql.startswith("INSERT") or sql.startswith("UPDATE"):
                written.append(len(sql.encode()))

        on_connections(store, lambda conn: conn.set_trace_callback(trace))
    runtime = Runtime(store)
    if store_kind == "memory-inline":
        try:
            agent = build_agent(inline_tool=True)
        except TypeError:  # a tree from before inline tools: none to measure
            await store.close()
            return {"ms_per_step": float("nan"), "ms_per_run": float("nan")}
    else:
        agent = build_agent(async_tool=store_kind == "memory-async")
    times = []
    for i in range(runs):
        written.clear()
        start = time.perf_counter()
        result = await runtime.run(agent, "go", thread_id=f"t{i}")
        times.append(time.perf_counter() - start)
        assert result.status == "completed", result.reason
    out = {"ms_per_step": statistics.median(times) * 1000 / STEPS, "ms_per_run": statistics.median(times) * 1000}
    if isinstance(store, SQLiteStore):
        out["bytes_per_step"] = sum(written) / STEPS
        path = Path(store.path)
        on_connections(store, lambda conn: conn.set_trace_callback(None))
        on_connections(store, lambda conn: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
        out["file_bytes_per_step"] = path.stat().st_size / (runs * STEPS)
    await store.close()
    return out


def baseline(runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        hand_written_loop()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000 / STEPS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    runs = 50 if args.quick else 300
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        figures: dict[str, float] = {"import_s": import_time(5 if args.quick else 15)}
        figures["baseline_ms_per_step"] = baseline(runs)
        memory = asyncio.run(per_step("memory", runs, folder))
        memory_async = asyncio.run(per_step("memory-async", runs, folder))
        memory_inline = asyncio.run(per_step("memory-inline", runs, folder))
        sqlite = asyncio.run(per_step("sqlite", runs, folder))
        process = asyncio.run(per_step("sqlite-process", runs, folder))
    figures["ms_per_step_memory"] = memory["ms_per_step"]
    figures["ms_per_step_memory_async_tool"] = memory_async["ms_per_step"]
    figures["ms_per_step_memory_inline_tool"] = memory_inline["ms_per_step"]
    figures["ms_per_step_sqlite"] = sqlite["ms_per_step"]
    figures["ms_per_step_sqlite_process"] = process["ms_per_step"]
    figures["bytes_per_step_sqlite"] = sqlite.get("bytes_per_step", process["bytes_per_step"])
    figures["file_bytes_per_step_sqlite"] = sqlite.get("file_bytes_per_step", process["file_bytes_per_step"])
    figures["ratio_memory_vs_baseline"] = figures["ms_per_step_memory"] / figures["baseline_ms_per_step"]
    figures["ratio_sqlite_vs_memory"] = figures["ms_per_step_sqlite"] / figures["ms_per_step_memory"]
    print(f"import podium                 {figures['import_s'] * 1000:8.1f} ms   (goal <= 200 ms, median)")
    print(f"hand-written loop (baseline)  {figures['baseline_ms_per_step'] * 1000:8.1f} us / step")
    print(
        f"ReAct step, in memory         {figures['ms_per_step_memory'] * 1000:8.1f} us / step   "
        f"({figures['ratio_memory_vs_baseline']:.1f}x the bare loop)"
    )
    print(
        f"ReAct step, in memory, async  {figures['ms_per_step_memory_async_tool'] * 1000:8.1f} us / step   "
        "(a coroutine tool: no hop to a tool thread)"
    )
    print(
        f"ReAct step, in memory, inline {figures['ms_per_step_memory_inline_tool'] * 1000:8.1f} us / step   "
        "(the plain function declared @tool(inline=True): run on the loop's thread)"
    )
    print(
        f"ReAct step, SQLite (full)     {figures['ms_per_step_sqlite'] * 1000:8.1f} us / step   "
        f"({figures['ratio_sqlite_vs_memory']:.1f}x in memory; an fsync per commit)"
    )
    print(
        f"ReAct step, SQLite (process)  {figures['ms_per_step_sqlite_process'] * 1000:8.1f} us / step   "
        "(commits survive a process crash, not a power cut)"
    )
    print(f"bytes written per step        {figures['bytes_per_step_sqlite']:8.0f} B (SQL statements' data)")
    print(f"file growth per step          {figures['file_bytes_per_step_sqlite']:8.0f} B (database file, with indexes)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
