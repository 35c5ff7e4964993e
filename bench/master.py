#!/usr/bin/env python
"""The Master Agent (seed 000): offline router speed, orchestration overhead, LLM calls per turn in hybrid mode.

Measured:
  * offline router decision time with 50 tools: every message of a mixed set (fresh requests, answers that fit a
    pending expectation, answers that fit nothing, out-of-scope and harmful requests), many repetitions; median and
    p95 per message, with the embedding model and lexical only (goal: median <= 2 ms with the model)
  * router start-up: loading the embedding model (once per process, in a fresh process), then building the index
    and calibrating the thresholds per app (goal: <= 300 ms per app), and the memory the model adds
  * the eval set (``evals/``, 49 conversations): the score of the router, of the lexical fallback, of the hybrid
    classifier with a scripted model (it answers what each turn expects) and of the offline router before its
    rewrite (from git), and the hybrid's LLM calls per human turn (goal: <= 0.3)
  * the SmartInvestigator demo conversation (8 turns) end to end with a zero-latency model: framework time per
    conversation and per turn, for the offline router and the LLM classifier (``FunctionModel``), in memory and on
    SQLite (durability full and process). A turn that answers a question re-executes its run from the journal (the
    replay is included).
  * LLM calls per turn of the hybrid classifier on the demo

Usage:
  python bench/master.py                   # full benchmark
  python bench/master.py --quick           # a few seconds
  python bench/master.py --json out.json   # also write the figures
  python bench/master.py --old-router REF  # the git commit whose router is the baseline (default: before the router's rewrite)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from examples.smart_investigator import DEMO, ROLE, TOPOLOGY, DeclineLetterAssistance, SmartStrategy, stand_in  # noqa: E402
from podium import MemoryStore, Runtime, SQLiteStore, Store  # noqa: E402
from podium.evaluation import Conversation  # noqa: E402
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


def bench_router(repetitions: int, embeddings: bool = True) -> dict[str, Any]:
    catalog = fifty_tools()
    router = Router(embeddings=embeddings)
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
    Router(embeddings=embeddings).index(catalog)
    return {
        "embeddings": embeddings,
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
        path = folder / f"{kind}-{store_kind}-{number}.db"
        durability = "process" if store_kind == "sqlite-process" else "full"  # (full: an fsync at every commit)
        store: Store = MemoryStore() if store_kind == "memory" else SQLiteStore(path, durability=durability)
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


OLD_ROUTER = (
    "5c015768d043437eb1a757efdc9687d42a0545cb"  # main before the router's rewrite: the eval set, the old router
)
APPS = {"smart-investigator": "smart_investigator", "clinic-desk": "clinic_desk"}

_STARTUP = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
def rss():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS")) / 1024
from podium.orchestration.master import Router
from examples.smart_investigator import build as si
from examples.clinic_desk import build as clinic
import bench.master as bm
from podium.orchestration.master.routing.embedding import default_embedder
before = rss(); start = time.perf_counter(); default_embedder(); load = time.perf_counter() - start; after = rss()
per_app = {}
for name, catalog in (("smart-investigator", si().catalog), ("clinic-desk", clinic().catalog), ("50 tools", bm.fifty_tools())):
    start = time.perf_counter(); Router().index(catalog); per_app[name] = (time.perf_counter() - start) * 1000
print(json.dumps({"model_load_ms": load * 1000, "model_rss_mb": after - before, "per_app_ms": per_app}))
"""


def startup() -> dict[str, Any]:
    """Model load time and memory, and per-app start-up, in a fresh process (nothing cached)."""
    done = subprocess.run([sys.executable, "-c", _STARTUP, str(ROOT)], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def oracle(conversations: list[Conversation]) -> Any:
    """A scripted LLM classifier: for each human message it calls what the eval expects (a perfect model)."""
    from podium import AIMessage
    from podium.testing import tool_call

    expected = {turn.human: turn for c in conversations for turn in c.turns}
    controls = {"refuse": "refuse_request", "clarify": "ask_human", "capabilities": "describe_capabilities",
                "abandon": "abandon_task"}  # fmt: skip

    def reply(messages: list[Any], request: Any) -> AIMessage:
        turn = expected.get(messages[-1].content)
        name, text = "ask_human", "Could you say more?"
        if turn is not None and turn.decision in controls:
            name = controls[turn.decision]
        elif turn is not None and turn.tools:
            name, text = turn.tools[0], turn.human
        elif turn is not None and turn.not_tools:
            name, text = "refuse_request", "I can't help with that."
        return AIMessage(tool_calls=[tool_call(name, {"text": text, "rationale": "scripted"})])

    return reply


def old_router(ref: str, folder: Path) -> Classifier:
    """The router of commit ``ref``, loaded from git under another package name."""
    package = folder / "old_routing"
    package.mkdir()
    listing = subprocess.run(["git", "ls-tree", "--name-only", ref, "src/podium/orchestration/master/routing/"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    for path in listing:
        text = subprocess.run(
            ["git", "show", f"{ref}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        (package / Path(path).name).write_text(text.replace("podium.orchestration.master.routing", "old_routing"))
    sys.path.insert(0, str(folder))
    from old_routing.router import Router as OldRouter  # type: ignore[import-not-found]

    return OldRouter()  # type: ignore[no-any-return]


async def bench_eval(ref: str) -> dict[str, Any]:
    import importlib

    from podium.evaluation import load_conversations, run_eval

    scores: dict[str, dict[str, int]] = {}
    calls = turns = 0
    with tempfile.TemporaryDirectory() as tmp:
        old = old_router(ref, Path(tmp))
        for app, folder in APPS.items():
            conversations = load_conversations([ROOT / "evals" / folder])
            module = importlib.import_module(f"examples.{folder}")
            model = FunctionModel(oracle(conversations))
            variants: dict[str, Classifier] = {
                "router": Router(),
                "lexical router": Router(embeddings=False),
                "hybrid (scripted model)": HybridClassifier(LLMClassifier(model)),
                "old router": old,
            }
            for name, classifier in variants.items():
                agent = module.build()
                agent.classifier = classifier
                report = (await run_eval(app, conversations, agent=agent)).to_dict()
                row = scores.setdefault(name, {"conversations": 0, "passed": 0, "turns": 0, "passed_turns": 0})
                for key in row:
                    row[key] += report[key]
            calls += len(model.requests)
            turns += sum(len(c.turns) for c in conversations)
    return {"scores": scores, "llm_calls": calls, "human_turns": turns, "llm_calls_per_turn": calls / turns}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a few seconds)")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--old-router", default=OLD_ROUTER, help="git commit of the baseline router")
    args = parser.parse_args()
    reps_router, reps_demo = (200, 5) if args.quick else (2000, 30)

    figures: dict[str, Any] = {"startup": startup()}
    st = figures["startup"]
    print(
        f"embedding model: loaded in {st['model_load_ms']:.0f} ms (once per process), adds {st['model_rss_mb']:.1f} MB"
    )
    for name, ms in st["per_app_ms"].items():
        print(f"  router start-up for {name}: {ms:.1f} ms (index and calibration; goal <= 300 ms)")
    figures["router"] = bench_router(reps_router)
    figures["router_lexical"] = bench_router(reps_router, embeddings=False)
    for r in (figures["router"], figures["router_lexical"]):
        kind = "with the embedding model" if r["embeddings"] else "lexical only"
        print(f"offline router {kind}, {r['tools']} tools, {r['messages']} decisions:")
        print(
            f"  median {r['median_ms']:.3f} ms  p95 {r['p95_ms']:.3f} ms  max {r['max_ms']:.3f} ms  (goal: median <= 2 ms)"
        )
        print(f"  index build and calibration (once per tool set): {r['index_build_ms']:.2f} ms")

    figures["eval"] = await bench_eval(args.old_router)
    ev = figures["eval"]
    for name, row in ev["scores"].items():
        print(
            f"eval set, {name}: {row['passed']}/{row['conversations']} conversations, {row['passed_turns']}/{row['turns']} turns"
        )
    print(f"hybrid on the eval set: {ev['llm_calls']} LLM calls in {ev['human_turns']} human turns = "
          f"{ev['llm_calls_per_turn']:.2f} per turn (goal: <= 0.3)")  # fmt: skip

    figures["demo"] = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("router", "llm"):
            for store_kind in ("memory", "sqlite", "sqlite-process"):
                row = await bench_demo(kind, store_kind, reps_demo, Path(tmp))
                figures["demo"].append(row)
    print(
        f"demo conversation ({len(DEMO)} turns), zero-latency model, median of {reps_demo} "
        "(sqlite: durability full, an fsync at every commit; sqlite-process: commits survive a process crash):"
    )
    for row in figures["demo"]:
        print(
            f"  {row['classifier']:>6} classifier, {row['store']:>14} store: "
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
