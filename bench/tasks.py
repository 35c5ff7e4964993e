"""Benchmark: a two-level Task delegation (parent → worker with one tool call → result), zero-latency model.

Each run goes through the whole runtime (a run on an in-memory store: journal, events, messages), as
``Task.run`` does. Reports the median time per run reusing the tasks and rebuilding them for every run, the memory
of one run (tracemalloc peak), the memory left behind by many runs, and the import time of the module.

    python bench/tasks.py [--quick] [--json FILE]

Reference (measured on this machine): Langroid 0.69 takes 69 ms per run reusing tasks, 235 ms rebuilding them, 2.0-2.5 s to
import. Goal: at most 1 ms per run. The same runs with the worker's tool declared ``@tool(inline=True)`` (no hand-over
to a tool thread) are reported beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from typing import Any

from podium import AIMessage, HumanMessage, Message, ModelRequest, ToolMessage, tool
from podium.orchestration.tasks import ResponderAgent, Task
from podium.testing import FunctionModel, tool_call


def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: the first factor.
        b: the second factor.
    """
    return a * b


def script(messages: list[Message], request: ModelRequest) -> AIMessage | str:
    """The zero-latency model: the parent delegates, the worker calls its tool, both report."""
    last = messages[-1]
    if request.tools:  # the worker
        if isinstance(last, ToolMessage):
            return f"The product is {last.content}."
        return AIMessage(tool_calls=[tool_call("multiply", {"a": 6, "b": 7}, id="call_1")])
    if isinstance(last, HumanMessage) and last.name == "worker":
        return f"DONE {last.content}"
    return "TO[worker]: multiply 6 by 7"


def build(model: FunctionModel, inline: bool = False) -> Task:
    """The parent task with its worker sub-task; ``inline``: the worker's tool declared ``@tool(inline=True)`` (run on
    the event loop's thread; by default a sync tool runs on a tool thread)."""
    worker_tool = tool(inline=True)(multiply) if inline else multiply
    worker = Task(ResponderAgent("worker", model, prompt="Multiply with the tool.", tools=[worker_tool]))
    return Task(ResponderAgent("parent", model, prompt="Delegate arithmetic to the worker."), sub_tasks=[worker])


async def one_run(task: Task, model: FunctionModel) -> None:
    result = await task.run("What is 6 times 7?")
    model.requests.clear()  # the test double records every request; keep the benchmark's memory about tasks
    if result.content != "The product is 42.":
        raise AssertionError(f"unexpected result: {result}")


async def timed(runs: int, rebuild: bool, inline: bool = False) -> list[float]:
    model = FunctionModel(script, name="zero-latency")
    task = build(model, inline)
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        if rebuild:
            task = build(model, inline)
        await one_run(task, model)
        times.append(time.perf_counter() - start)
    return times


async def memory(runs: int, inline: bool = False) -> dict[str, float]:
    model = FunctionModel(script, name="zero-latency")
    task = build(model, inline)
    for _ in range(50):
        await one_run(task, model)
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    await one_run(task, model)
    _, peak = tracemalloc.get_traced_memory()
    gc.collect()
    start, _ = tracemalloc.get_traced_memory()
    for _ in range(runs):
        await one_run(task, model)
    gc.collect()
    end, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"peak_kib_per_run": (peak - before) / 1024, "retained_kib_after_runs": (end - start) / 1024}


def import_seconds(samples: int = 7) -> float:
    """Median of ``samples`` imports, each in a fresh interpreter, after an untimed one that writes the bytecode."""
    code = "import time; t = time.perf_counter(); import podium.orchestration.tasks; print(time.perf_counter() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env)
    times = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout)
        for _ in range(samples)
    ]
    return statistics.median(times)


async def main(quick: bool) -> dict[str, Any]:
    runs = 300 if quick else 3000
    await timed(50, rebuild=False)  # warm up
    reuse = await timed(runs, rebuild=False)
    rebuild = await timed(max(runs // 3, 100), rebuild=True)
    mem = await memory(200 if quick else 1000)
    await timed(50, rebuild=False, inline=True)
    reuse_inline = await timed(runs, rebuild=False, inline=True)
    mem_inline = await memory(200 if quick else 1000, inline=True)
    return {
        "runs": runs,
        "median_ms_reusing_tasks": statistics.median(reuse) * 1000,
        "p90_ms_reusing_tasks": statistics.quantiles(reuse, n=10)[-1] * 1000,
        "median_ms_rebuilding_tasks": statistics.median(rebuild) * 1000,
        **mem,
        "median_ms_reusing_inline_tool": statistics.median(reuse_inline) * 1000,
        "peak_kib_per_run_inline_tool": mem_inline["peak_kib_per_run"],
        "import_seconds": import_seconds(),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    figures = asyncio.run(main(args.quick))
    for key, value in figures.items():
        print(f"{key:>28}: {value:.3f}" if isinstance(value, float) else f"{key:>28}: {value}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=2)
