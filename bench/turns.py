#!/usr/bin/env python
"""Per-turn cost as a thread grows, one process under many conversations, and agent construction.

Measured (the project's goals printed beside each figure):
  * turn cost: one thread, --turns turns of an agent that answers at once (no model latency); the median time of
    the first 20 turns (after 5 of warm-up) against the last 20, in memory and on SQLite (goal: within 2x)
  * one process, --conversations conversations on SQLite (--durability), each turn's model taking --model-ms, the
    conversations pausing between turns so that together they offer about --rate turns/s: the added latency of a
    turn (its time minus the model's) at p50/p99, and the event loop's lag (how late a 5 ms timer fires), max and
    p99 (goals: p99 added latency <= 50 ms, max loop lag <= 20 ms)
  * agent construction: a ReactAgent made from two plain functions, microseconds (goal <= 5 us)

Usage:
  python bench/turns.py                 # everything (about a minute)
  python bench/turns.py --quick         # fewer turns, a shorter load phase
  python bench/turns.py --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def _agent(model_s: float = 0.0) -> Any:
    """An agent whose model echoes the last message (a whole response: the test model's own token estimate, which
    reads the whole prompt, is the model's cost, not the framework's)."""
    from podium import AIMessage, ModelResponse, ReactAgent, Usage
    from podium.testing import FunctionModel

    async def reply(messages: list[Any], request: Any) -> ModelResponse:
        if model_s:
            await asyncio.sleep(model_s)
        return ModelResponse(message=AIMessage(content=f"echo: {messages[-1].content}"), usage=Usage(10, 5, 1))

    return ReactAgent("echo", FunctionModel(reply), prompt="You echo.")


async def turn_cost(kind: str, turns: int, folder: Path, durability: str) -> dict[str, float]:
    from podium import MemoryStore, Runtime, SQLiteStore

    store = MemoryStore() if kind == "memory" else SQLiteStore(folder / f"turns-{kind}.db", durability=durability)  # type: ignore[arg-type]
    runtime = Runtime(store)
    agent = _agent()
    times = []
    for i in range(turns):
        start = time.perf_counter()
        result = await runtime.run(agent, f"turn {i}", thread_id="t")
        times.append(time.perf_counter() - start)
        assert result.status == "completed", result.reason
        model = agent.model
        model.requests.clear()  # the test model keeps every request: not the framework's memory
    await store.close()
    window = min(20, turns // 4)
    warm = min(5, turns // 10)  # the first turns also pay one-time costs (first imports, the file's first pages)
    first, last = statistics.median(times[warm : warm + window]), statistics.median(times[-window:])
    return {"first_ms": first * 1000, "last_ms": last * 1000, "ratio": last / first}


async def load(
    conversations: int, rate: float, model_ms: float, seconds: float, path: Path, durability: str
) -> dict[str, float]:
    from podium import Runtime, SQLiteStore
    from podium.events import prepare_codec

    prepare_codec()  # as a server does at start-up (a one-time cost, not a turn's)
    store = SQLiteStore(path, durability=durability)  # type: ignore[arg-type]
    runtime = Runtime(store)
    agent = _agent(model_ms / 1000)
    gc.collect()  # as `podium serve` does once started: what lives now (modules, schemas, the app) is never
    gc.freeze()  # scanned again by a full collection
    think = conversations / rate - model_ms / 1000  # seconds between a conversation's turns, for the offered rate
    added: list[float] = []
    lags: list[float] = []
    stop = time.perf_counter() + seconds
    rng = random.Random(7)

    ramp = conversations / rate  # the starts are spread over this long: the offered rate is reached after it
    steady: list[float] = []  # when each turn ended, for the rate served once every conversation has started

    async def conversation(n: int) -> None:
        await asyncio.sleep(rng.uniform(0, ramp))  # spread the starts
        turn = 0
        while time.perf_counter() < stop:
            start = time.perf_counter()
            result = await runtime.run(agent, f"turn {turn}", thread_id=f"c{n}")
            ended = time.perf_counter()
            added.append(ended - start - model_ms / 1000)
            steady.append(ended)
            assert result.status == "completed", result.reason
            if len(agent.model.requests) > 1000:  # the test model keeps every request: not the framework's memory
                agent.model.requests.clear()
            turn += 1
            pause = max(0.0, rng.uniform(0.5, 1.5) * think)
            await asyncio.sleep(min(pause, max(0.0, stop - time.perf_counter())))  # no pause past the end

    async def ticker() -> None:
        while time.perf_counter() < stop:
            start = time.perf_counter()
            await asyncio.sleep(0.005)
            lags.append(time.perf_counter() - start - 0.005)

    started = time.perf_counter()
    await asyncio.gather(ticker(), *(conversation(n) for n in range(conversations)))
    agent.model.requests.clear()
    await store.close()
    window = (started + ramp, stop)  # every conversation started, none stopping yet
    served = sum(window[0] <= t <= window[1] for t in steady) / max(window[1] - window[0], 1e-9)
    return {
        "turns_per_s": served,
        "added_p50_ms": pct(added, 50) * 1000,
        "added_p99_ms": pct(added, 99) * 1000,
        "loop_lag_p99_ms": pct(lags, 99) * 1000,
        "loop_lag_max_ms": max(lags) * 1000,
    }


def construction_us() -> dict[str, float]:
    from podium import ReactAgent
    from podium.testing import FunctionModel

    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    def web_search(query: str) -> str:
        """Search the web for information."""
        return query

    model = FunctionModel(lambda messages, request: "ok")
    for _ in range(2000):
        ReactAgent("math", model, [add, web_search], prompt="You add.")
    samples = []
    for _ in range(30):
        start = time.perf_counter()
        for _ in range(1000):
            ReactAgent("math", model, [add, web_search], prompt="You add.")
        samples.append((time.perf_counter() - start) / 1000 * 1e6)
    return {"median_us": statistics.median(samples), "min_us": min(samples)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=1000, help="turns of the one growing thread")
    ap.add_argument("--conversations", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=900.0, help="turns per second the conversations offer together")
    ap.add_argument("--model-ms", type=float, default=50.0)
    ap.add_argument("--seconds", type=float, default=15.0, help="length of the load phase")
    ap.add_argument("--durability", default="full", choices=["full", "process"])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args()
    if a.quick:
        a.turns, a.seconds = min(a.turns, 300), min(a.seconds, 6.0)
    figures: dict[str, Any] = {"args": vars(a)}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"== turn cost on one thread of {a.turns} turns (median of the first and of the last turns) ==")
        for kind in ("memory", "sqlite"):
            r = asyncio.run(turn_cost(kind, a.turns, folder, a.durability))
            figures[f"turns_{kind}"] = r
            label = kind if kind == "memory" else f"sqlite ({a.durability})"
            print(
                f"{label:16} first {r['first_ms']:7.3f} ms   last {r['last_ms']:7.3f} ms   ratio {r['ratio']:5.2f}x"
                f"   (goal <= 2x: {'met' if r['ratio'] <= 2 else 'MISSED'})"
            )
        print(
            f"\n== {a.conversations} conversations, {a.model_ms:.0f} ms model, about {a.rate:.0f} turns/s offered, "
            f"SQLite ({a.durability}), {a.seconds:.0f} s =="
        )
        r = asyncio.run(load(a.conversations, a.rate, a.model_ms, a.seconds, folder / "load.db", a.durability))
        figures["load"] = r
        print(f"served {r['turns_per_s']:.0f} turns/s (once every conversation has started)")
        print(
            f"added latency p50 {r['added_p50_ms']:.1f} ms, p99 {r['added_p99_ms']:.1f} ms   "
            f"(goal p99 <= 50 ms: {'met' if r['added_p99_ms'] <= 50 else 'MISSED'})"
        )
        print(
            f"loop lag p99 {r['loop_lag_p99_ms']:.1f} ms, max {r['loop_lag_max_ms']:.1f} ms   "
            f"(goal max <= 20 ms: {'met' if r['loop_lag_max_ms'] <= 20 else 'MISSED'})"
        )
    c = construction_us()
    figures["construction"] = c
    print(
        f"\n== agent construction from two plain functions ==\nmedian {c['median_us']:.1f} us, min {c['min_us']:.1f} us"
        f"   (goal <= 5 us: {'met' if c['median_us'] <= 5 else 'MISSED'})"
    )
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
