#!/usr/bin/env python
"""The Master Agent (seed 000): offline router speed, orchestration overhead, LLM calls per turn in hybrid mode.

Measured:
  * offline router decision time with 50 tools: every message of a mixed set (fresh requests, answers that fit a
    pending expectation, answers that fit nothing, out-of-scope and harmful requests), many repetitions; median and
    p95 per message (goal: median under 1 ms)
  * the SmartInvestigator demo conversation (8 turns) end to end with a zero-latency model: framework time per
    conversation and per turn, for the offline router and the LLM classifier (``FunctionModel``), in memory and on
    SQLite. A turn that answers a question re-executes its run from the journal (the replay is included).
  * LLM calls per turn of the hybrid classifier on the demo (goal: under 1)

Usage:
  python bench/master.py                   # full benchmark
  python bench/master.py --quick           # a few seconds
  python bench/master.py --json out.json   # also write the figures
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from examples.smart_investigator import DEMO, ROLE, TOPOLOGY, DeclineLetterAssistance, SmartStrategy, stand_in  # noqa: E402
from podium import MemoryStore, Runtime, SQLiteStore, Store  # noqa: E402
from podium.orchestration.master import (  # noqa: E402
    Classifier,
    HybridClassifier,
    LLMClassifier,
    MasterAgent,
    PendingTask,
    Query,
    Router,
    ToolCatalog,
    ToolProfile,
)
from podium.testing import FunctionModel  # noqa: E402

TOPICS = [
    "flight", "hotel", "car rental", "weather", "currency", "invoice", "refund", "password", "parcel", "recipe",
    "translation", "calendar", "meeting", "expense", "payroll", "holiday", "insurance quote", "mortgage",
    "tax return", "gym booking", "doctor appointment", "pharmacy", "train ticket", "bus timetable", "parking",
    "electricity bill", "water bill", "internet plan", "phone upgrade", "laptop repair", "printer", "vpn access",
    "office badge", "desk booking", "visitor pass", "training course", "job posting", "interview", "onboarding",
    "offboarding", "security incident", "data export", "report builder", "survey", "newsletter", "social post",
    "ad campaign", "lead scoring", "contract review",
]  # fmt: skip


def fifty_tools() -> ToolCatalog:
    """The two demo tools and 48 others, each with a description, an introduction and three examples."""
    demo = MasterAgent([DeclineLetterAssistance(), SmartStrategy()]).catalog.profiles
    others = [
        ToolProfile(
            name=f"tool_{n}",
            description=f"Handles {topic} requests: creates, checks and updates a {topic} for the user.",
            introduction=f"Help with your {topic}.",
            examples=(f"I need help with my {topic}", f"update the {topic}", f"check {topic} status"),
        )
        for n, topic in enumerate(TOPICS[:48])
    ]
    return ToolCatalog.of([*demo, *others])


def router_queries(catalog: ToolCatalog) -> list[Query]:
    role = PendingTask(tool="SmartStrategy", content="internal employee or partner?", expectation=ROLE)
    topology = PendingTask(tool="DeclineLetterAssistance", content="Home or Motor?", expectation=TOPOLOGY)
    texts: list[tuple[str, PendingTask | None]] = [
        ("I want to craft a declined letter.", None),
        ("Where to find a claim id?", topology),
        ("I am a Suncorp friend.", role),
        ("I am a partner.", role),
        ("Personal Injury", topology),
        ("I want to commit fraud.", topology),
        ("I want to do Motor.", topology),
        ("could you check the parking status for me", None),
        ("my laptop needs a repair, the screen is broken", None),
        ("What's the weather like in Paris tomorrow?", None),
        ("book me a train ticket to Melbourne for Friday morning", role),
        ("never mind", role),
        ("what can you do?", None),
        ("I need help with the quarterly tax return and the expense report for the team offsite", None),
    ]
    return [Query(text=t, catalog=catalog, candidates=catalog.names, pending=p) for t, p in texts]


def bench_router(repetitions: int) -> dict[str, Any]:
    catalog = fifty_tools()
    router = Router()
    queries = router_queries(catalog)
    router.index(catalog)  # built once per catalog, like an orchestrator does at start
    per_message: list[float] = []
    for _ in range(repetitions):
        for query in queries:
            start = time.perf_counter()
            router.decide(query)
            per_message.append(time.perf_counter() - start)
    per_message.sort()
    index_start = time.perf_counter()
    Router().index(catalog)
    return {
        "tools": len(catalog.profiles),
        "messages": len(queries) * repetitions,
        "median_ms": statistics.median(per_message) * 1000,
        "p95_ms": per_message[int(len(per_message) * 0.95)] * 1000,
        "max_ms": per_message[-1] * 1000,
        "index_build_ms": (time.perf_counter() - index_start) * 1000,
    }


def master(classifier: Classifier) -> MasterAgent:
    return MasterAgent([DeclineLetterAssistance(), SmartStrategy()], title="Smart Investigator", classifier=classifier)


async def conversation(runtime: Runtime, agent: MasterAgent, thread: str) -> None:
    status = None
    for text in DEMO:
        if status == "interrupted":
            result = await runtime.resume(agent, thread, text)
        else:
            result = await runtime.run(agent, text, thread_id=thread)
        status = result.status
        if status not in ("completed", "interrupted"):
            raise RuntimeError(f"turn {text!r} ended {status}: {result.reason}")
    if status != "completed":
        raise RuntimeError("the demo did not complete")


async def bench_demo(kind: str, store_kind: str, repetitions: int, folder: Path) -> dict[str, Any]:
    times: list[float] = []
    classifier: Classifier = Router() if kind == "router" else LLMClassifier(FunctionModel(stand_in))
    agent = master(classifier)  # one agent serves every conversation, as in a server
    for number in range(repetitions):
        store: Store = MemoryStore() if store_kind == "memory" else SQLiteStore(folder / f"{kind}-{number}.db")
        runtime = Runtime(store)
        start = time.perf_counter()
        await conversation(runtime, agent, f"t{number}")
        times.append(time.perf_counter() - start)
        await store.close()
    median = statistics.median(times)
    return {
        "classifier": kind,
        "store": store_kind,
        "conversations": repetitions,
        "median_ms_per_conversation": median * 1000,
        "median_ms_per_turn": median * 1000 / len(DEMO),
    }


async def bench_hybrid() -> dict[str, Any]:
    model = FunctionModel(stand_in)
    await conversation(Runtime(MemoryStore()), master(HybridClassifier(LLMClassifier(model))), "hybrid")
    return {"turns": len(DEMO), "llm_calls": len(model.requests), "llm_calls_per_turn": len(model.requests) / len(DEMO)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a few seconds)")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    reps_router, reps_demo = (200, 5) if args.quick else (2000, 30)

    figures: dict[str, Any] = {"router": bench_router(reps_router)}
    r = figures["router"]
    print(f"offline router, {r['tools']} tools, {r['messages']} decisions:")
    print(
        f"  median {r['median_ms']:.3f} ms  p95 {r['p95_ms']:.3f} ms  max {r['max_ms']:.3f} ms  (goal: median < 1 ms)"
    )
    print(f"  index build (once per tool set): {r['index_build_ms']:.2f} ms")

    figures["demo"] = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("router", "llm"):
            for store_kind in ("memory", "sqlite"):
                row = await bench_demo(kind, store_kind, reps_demo, Path(tmp))
                figures["demo"].append(row)
    print(f"demo conversation ({len(DEMO)} turns), zero-latency model, median of {reps_demo}:")
    for row in figures["demo"]:
        print(
            f"  {row['classifier']:>6} classifier, {row['store']:>6} store: "
            f"{row['median_ms_per_conversation']:.1f} ms per conversation, {row['median_ms_per_turn']:.2f} ms per turn"
        )

    figures["hybrid"] = await bench_hybrid()
    h = figures["hybrid"]
    print(f"hybrid classifier on the demo: {h['llm_calls']} LLM calls in {h['turns']} turns = "
          f"{h['llm_calls_per_turn']:.2f} per turn (goal: < 1)")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
