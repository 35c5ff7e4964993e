#!/usr/bin/env python
"""Podium on the FAANG-headcount workload of ``shared/bench/langgraph_supervisor_faang.py``.

The same scripted, stateless model replays the same 10-call trace (it decides from the tools it is offered and the
messages it is shown, so concurrent runs share one instance):

  supervisor -> transfer_to_research_expert      research -> web_search(...)     research -> the five headcounts
  supervisor -> transfer_to_math_expert          math -> add x 4                 math -> "... is 1,977,586."
  supervisor -> final answer

Measured, each store in a fresh subprocess (like the baseline):
  * prompt characters per run for each context policy / option (``len(json.dumps(messages))`` with the messages
    in the layout langchain's ``convert_to_openai_messages`` gives them, as the baseline counts)
  * framework time per run: sequential runs with a zero-latency model (median, mean, p95)
  * throughput: K concurrent runs, each model call sleeping --latency-ms
  * SQLite at both durabilities (full: fsync per commit; process): commits and fsynced commits per run, the
    journaled rounds of a run and this machine's fsync latency (the floor at full durability: one fsync per round)
  * bytes per run (SQLite): the payload of the rows a run adds, the bytes its commits physically wrote to the WAL,
    file growth; peak RSS; import time (median of several cold imports, measured the same way for the baseline)
  * --compare: the baseline at SQLite's synchronous=FULL and at NORMAL (async runs on both sides), and the goals

Usage:
  python bench/faang.py                     # full benchmark
  python bench/faang.py --quick             # under a minute
  python bench/faang.py --json out.json     # also write the figures
  python bench/faang.py --compare           # also run langgraph-supervisor's script: install the bench extra
                                            # (in its own venv) and set LANGGRAPH_PYTHON to that venv's python
  python bench/faang.py --profile           # where the time goes (cProfile of sequential in-memory runs)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT.parent / "shared" / "bench" / "langgraph_supervisor_faang.py"

QUESTION = "what's the combined headcount of the FAANG companies in 2024?"
FINAL_MATH = "The combined headcount of the FAANG companies in 2024 is 1,977,586."
FINAL_SUPERVISOR = (
    "The combined headcount of the FAANG companies (Meta, Apple, Amazon, Netflix, "
    "Alphabet) in 2024 is 1,977,586 employees."
)
RESEARCH_TEXT = (
    "FAANG headcounts for 2024:\n"
    "- Meta (Facebook): 67,317\n"
    "- Apple: 164,000\n"
    "- Amazon: 1,551,000\n"
    "- Netflix: 14,000\n"
    "- Alphabet (Google): 181,269\n"
    "Summing them is a job for the math expert."
)
SEARCH_RESULT = (
    "2024 employee headcounts of the FAANG companies:\n"
    "1. Meta (Facebook): 67,317 employees.\n"
    "2. Apple: 164,000 employees.\n"
    "3. Amazon: 1,551,000 employees.\n"
    "4. Netflix: 14,000 employees.\n"
    "5. Alphabet (Google): 181,269 employees."
)
ADD_STEPS = [(67317, 164000), (231317, 1551000), (1782317, 14000), (1796317, 181269)]
SUPERVISOR_PROMPT = (
    "You supervise two experts: research_expert (current events, web search) and "
    "math_expert (arithmetic). Delegate research to research_expert and any "
    "calculation to math_expert, then answer the user."
)
RESEARCH_PROMPT = "You are an expert researcher with a web search tool. Never do arithmetic yourself."
MATH_PROMPT = "You are a math expert. Use exactly one tool call at a time."
# Scoped policy: the tasks the scripted supervisor writes. As the handoff tool's ``task`` description asks, a task
# quotes the user's question and carries the facts the agent needs (the math task: the research result's figures).
RESEARCH_TASK = QUESTION + " Find each company's 2024 headcount."

# --------------------------------------------------------------------------------------------------------------------
# Prompt accounting: the baseline's measure (messages as langchain's convert_to_openai_messages lays them out).
# --------------------------------------------------------------------------------------------------------------------


class Stats:
    """Model calls and prompt characters of one run, per agent."""

    def __init__(self) -> None:
        self.calls = 0
        self.prompt_chars = 0
        self.prompt_messages = 0
        self.tool_schema_chars = 0
        self.wire_chars = 0
        self.per_agent: dict[str, list[int]] = {}

    def as_dict(self) -> dict[str, Any]:
        return {
            "model_calls": self.calls,
            "prompt_chars": self.prompt_chars,
            "prompt_messages": self.prompt_messages,
            "tool_schema_chars": self.tool_schema_chars,
            "wire_chars": self.wire_chars,
            "per_agent": {
                k: {"calls": v[0], "prompt_chars": v[1], "prompt_messages": v[2]} for k, v in self.per_agent.items()
            },
        }


ACCOUNT: list[Stats | None] = [None]


def lc_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """``messages`` in the layout of langchain_core's ``convert_to_openai_messages`` (the baseline's measure)."""
    from podium import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            out.append({"role": "system", "content": m.content})
            continue
        d: dict[str, Any] = {"role": {HumanMessage: "user", AIMessage: "assistant", ToolMessage: "tool"}[type(m)]}
        if getattr(m, "name", None):
            d["name"] = m.name
        if isinstance(m, AIMessage) and m.tool_calls:
            d["tool_calls"] = [
                {"type": "function", "id": c.id, "function": {"name": c.name, "arguments": c.arguments}}
                for c in m.tool_calls
            ]
        if isinstance(m, ToolMessage):
            d["tool_call_id"] = m.tool_call_id
        d["content"] = m.content
        out.append(d)
    return out


def _account(messages: list[Any], request: Any, agent: str) -> None:
    from podium.models.openai_format import request_to_openai, tool_to_openai

    stats = ACCOUNT[0]
    if stats is None:
        return
    chars = len(json.dumps(lc_messages(messages), ensure_ascii=False))
    stats.calls += 1
    stats.prompt_chars += chars
    stats.prompt_messages += len(messages)
    stats.wire_chars += len(json.dumps(request_to_openai(request)["messages"], ensure_ascii=False))
    stats.tool_schema_chars += len(json.dumps([tool_to_openai(t) for t in request.tools], ensure_ascii=False))
    row = stats.per_agent.setdefault(agent, [0, 0, 0])
    row[0] += 1
    row[1] += chars
    row[2] += len(messages)


# --------------------------------------------------------------------------------------------------------------------
# The workload
# --------------------------------------------------------------------------------------------------------------------


def scripted_reply(messages: list[Any], request: Any) -> Any:
    """The scripted model: the reply depends only on the offered tools and the messages shown."""
    from podium import AIMessage, HumanMessage, ModelResponse, ToolCall, ToolMessage, Usage

    def call(name: str, arguments: dict[str, Any], tag: str) -> ModelResponse:
        message = AIMessage(tool_calls=[ToolCall(id=f"call_{tag}", name=name, arguments=json.dumps(arguments))])
        return ModelResponse(message=message, usage=Usage(0, 0, 1), finish_reason="tool_calls")

    def text(content: str) -> ModelResponse:
        return ModelResponse(message=AIMessage(content=content), usage=Usage(0, 0, 1), finish_reason="stop")

    tools = request.tools
    names = {t.name for t in tools}
    if "transfer_to_research_expert" in names:
        _account(messages, request, "supervisor")
        scoped = bool(tools[0].parameters.get("required"))
        answered = {m.name for m in messages if isinstance(m, AIMessage) and not m.tool_calls and m.name}
        results = [m for m in messages if isinstance(m, ToolMessage) and m.name.startswith("transfer_to_")]
        answered |= {m.name[len("transfer_to_") :] for m in results if not m.content.startswith("Successfully")}
        notes = "\n".join(m.content for m in messages if isinstance(m, HumanMessage) and "Done so far:" in m.content)
        answered |= {
            line.split("(")[0][len("transfer_to_") :] for line in notes.splitlines() if line.startswith("transfer_to_")
        }
        if "research_expert" not in answered:
            return call("transfer_to_research_expert", {"task": RESEARCH_TASK} if scoped else {}, "sup_1")
        if "math_expert" not in answered:
            if not scoped:
                return call("transfer_to_math_expert", {}, "sup_2")
            research = next(
                (
                    m.content
                    for m in messages
                    if (isinstance(m, ToolMessage) and m.name == "transfer_to_research_expert")
                    or (isinstance(m, AIMessage) and m.name == "research_expert" and not m.tool_calls)
                ),
                notes,  # folded into a "Done so far" note
            )
            figures = "; ".join(line[2:] for line in research.splitlines() if line.startswith("- "))
            return call("transfer_to_math_expert", {"task": f"{QUESTION} Add up: {figures}."}, "sup_2")
        return text(FINAL_SUPERVISOR)
    if "web_search" in names:
        _account(messages, request, "research_expert")
        seen = sum(1 for m in messages if isinstance(m, ToolMessage) and m.name == "web_search")
        seen += sum(m.content.count("web_search(") for m in messages if isinstance(m, HumanMessage))  # folded
        return call("web_search", {"query": "FAANG headcount 2024"}, "res_1") if seen == 0 else text(RESEARCH_TEXT)
    if "add" in names:
        _account(messages, request, "math_expert")
        # results it is shown: tool messages, and the lines of a "Done so far" note (scoped workers' folded rounds)
        seen = sum(1 for m in messages if isinstance(m, ToolMessage) and m.name in names)
        seen += sum(
            m.content.count(") -> ") for m in messages if isinstance(m, HumanMessage) and "Done so far:" in m.content
        )
        if seen < len(ADD_STEPS):
            a, b = ADD_STEPS[seen]
            return call("add", {"a": a, "b": b}, f"math_{seen + 1}")
        return text(FINAL_MATH)
    raise RuntimeError(f"unknown caller with tools {sorted(names)}")


def build(latency_s: float = 0.0, **options: Any) -> Any:
    """The FAANG supervisor around the scripted model (``options`` go to ``create_supervisor``)."""
    from podium import ReactAgent
    from podium.orchestration.supervisor import create_supervisor
    from podium.testing import FunctionModel

    if latency_s:

        async def slow(messages: list[Any], request: Any) -> Any:
            await asyncio.sleep(latency_s)
            return scripted_reply(messages, request)

        model = FunctionModel(slow, name="scripted-faang")
    else:
        model = FunctionModel(scripted_reply, name="scripted-faang")

    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    def multiply(a: float, b: float) -> float:
        """Multiply two numbers."""
        return a * b

    def web_search(query: str) -> str:
        """Search the web for information."""
        return SEARCH_RESULT

    math_agent = ReactAgent("math_expert", model, [add, multiply], prompt=MATH_PROMPT)
    research_agent = ReactAgent("research_expert", model, [web_search], prompt=RESEARCH_PROMPT)
    return create_supervisor([research_agent, math_agent], model=model, prompt=SUPERVISOR_PROMPT, **options)


def _model_of(agent: Any) -> Any:
    return agent.model


async def run_one(runtime: Any, agent: Any) -> Any:
    result = await runtime.run(agent, QUESTION)
    if result.output != FINAL_SUPERVISOR:
        raise AssertionError(f"unexpected outcome {result.status}: {result.output or result.reason}")
    model = _model_of(agent)
    if len(model.requests) > 10_000:  # FunctionModel keeps every request; forget them between runs
        model.requests.clear()
    return result


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# --------------------------------------------------------------------------------------------------------------------
# Workers (one per store, each in its own process)
# --------------------------------------------------------------------------------------------------------------------


def accounting() -> list[dict[str, Any]]:
    """Prompt characters of one run for each policy / option."""
    from podium import Runtime

    variants: list[tuple[str, dict[str, Any]]] = [
        ("context=scoped (default)", {}),
        ("context=scoped, no handoff msgs", {"add_handoff_messages": False}),
        ("context=shared, last_message", {"context": "shared"}),
        ("context=shared, full_history", {"context": "shared", "output_mode": "full_history"}),
        ("context=shared, no handoff msgs", {"context": "shared", "add_handoff_messages": False}),
    ]
    rows = []
    for label, options in variants:
        ACCOUNT[0] = stats = Stats()
        asyncio.run(run_one(Runtime(), build(**options)))
        ACCOUNT[0] = None
        rows.append({"variant": label, **stats.as_dict()})
    return rows


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


def fsync_ms(folder: str, samples: int = 50) -> float:
    """This machine's fsync latency where the database lives: median of ``samples`` 4 KiB write + fsync."""
    times = []
    with open(os.path.join(folder, "fsync.probe"), "wb") as file:
        for _ in range(samples):
            file.write(b"x" * 4096)
            file.flush()
            t = time.perf_counter()
            os.fsync(file.fileno())
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
    try:
        path = os.path.join(tmpdir, "bench.db")

        def store() -> Any:
            return MemoryStore() if kind == "memory" else SQLiteStore(path, durability=durability)  # type: ignore[arg-type]

        async def phases() -> None:
            backend = store()
            runtime = Runtime(backend)
            agent = build()
            await run_one(runtime, agent)
            if kind != "memory":
                out["durability"] = durability
                out["fsync_ms"] = fsync_ms(tmpdir)
                b0, r0 = _sqlite_payload(path)
                backend._on_thread(lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)"))  # an empty WAL
                s0, c0, f0 = _file_size(path), backend.commits, backend._writer.synced_commits
                result = await run_one(runtime, agent)
                out["commits_per_run"] = backend.commits - c0
                out["synced_commits_per_run"] = backend._writer.synced_commits - f0
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
            for _ in range(runs):
                t = time.perf_counter()
                await run_one(runtime, agent)
                times.append(time.perf_counter() - t)
            out["ms_per_run_p50"] = round(pct(times, 50) * 1000, 3)
            out["ms_per_run_mean"] = round(statistics.mean(times) * 1000, 3)
            out["ms_per_run_p95"] = round(pct(times, 95) * 1000, 3)

            slow = build(latency_s=latency_ms / 1000)
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
    """Median of several cold imports of ``modules``, each in a fresh interpreter (the same way for both sides)."""
    code = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
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


# --------------------------------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------------------------------


def _sub(args: list[str]) -> Any:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, os.path.abspath(__file__), *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"worker {args} failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _langgraph_python() -> str | None:
    candidates = [os.environ.get("LANGGRAPH_PYTHON", ""), sys.executable]
    for python in candidates:
        if python and os.path.exists(python):
            probe = subprocess.run([python, "-c", "import langgraph_supervisor"], capture_output=True)
            if probe.returncode == 0:
                return python
    return None


_NORMAL = (
    "import runpy, sqlite3, sys\n"
    "_connect = sqlite3.connect\n"
    "def connect(*args, **kwargs):\n"
    "    conn = _connect(*args, **kwargs)\n"
    "    conn.execute('PRAGMA synchronous=NORMAL')\n"
    "    return conn\n"
    "sqlite3.connect = connect\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def _baseline(python: str, a: argparse.Namespace, normal: bool) -> dict[str, Any] | None:
    """Run the baseline script (at SQLite's default ``synchronous=FULL``, or patched to ``NORMAL``)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "baseline.json")
        args = [str(BASELINE), "--runs", str(a.runs), "-k", str(a.concurrency), "--latency-ms", str(a.latency_ms)]
        args += ["--json", out, "--configs", "none,sqlite"]
        cmd = [python, "-c", _NORMAL, *args] if normal else [python, *args]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-3000:])
            print("baseline failed; no comparison")
            return None
        return dict(json.loads(Path(out).read_text()))


def compare(a: argparse.Namespace, ours: dict[str, Any]) -> dict[str, Any] | None:
    """Both sides at both durabilities, async against async, import time sampled the same way on both sides."""
    python = _langgraph_python()
    if python is None or not BASELINE.exists():
        print(
            "\n--compare: langgraph-supervisor is not installed here (pip install -e '.[bench]', ideally in a venv "
            "of its own, and point LANGGRAPH_PYTHON at its python) or the "
            f"baseline script is missing ({BASELINE}); skipped"
        )
        return None
    print(f"\n== running the baseline twice (synchronous=FULL, then NORMAL): {python} {BASELINE.name} ... ==")
    full, normal = _baseline(python, a, normal=False), _baseline(python, a, normal=True)
    if full is None or normal is None:
        return None
    by_full = {r["config"]: r for r in full["results"]}
    by_normal = {r["config"]: r for r in normal["results"]}
    lg = {
        "ms_per_run_memory": by_full["none"]["seq_async_ms_p50"],
        "ms_per_run_sqlite_full": by_full["sqlite"]["seq_async_ms_p50"],
        "ms_per_run_sqlite_process": by_normal["sqlite"]["seq_async_ms_p50"],
        "runs_per_s_memory": by_full["none"]["concurrent"]["rounds"][-1]["runs_per_s"],
        "runs_per_s_sqlite_full": by_full["sqlite"]["concurrent"]["rounds"][-1]["runs_per_s"],
        "runs_per_s_sqlite_process": by_normal["sqlite"]["concurrent"]["rounds"][-1]["runs_per_s"],
        "bytes_per_run_sqlite": by_full["sqlite"]["ckpt_bytes_per_run"],
        "file_growth_per_run_sqlite": by_full["sqlite"].get("sqlite_file_growth_per_run"),
        "prompt_chars_shared": full["accounting"][0]["prompt_chars"],
        "import_s": import_seconds(python, "langgraph_supervisor, langgraph.checkpoint.memory"),
    }
    print(
        f"\n== Podium vs langgraph-supervisor {full['versions'].get('langgraph-supervisor')} (same machine, same run;"
        " async runs on both sides; sqlite_full: synchronous=FULL on both, sqlite_process: NORMAL on both) =="
    )
    print(f"{'figure':28} {'podium':>12} {'langgraph':>12} {'ratio':>8}")
    for key, theirs in lg.items():
        mine = ours.get(key)
        if mine is None or theirs is None:
            continue
        lower_is_better = key.startswith(("ms_", "bytes_", "import_", "file_"))
        ratio = (theirs / mine if mine else 0) if lower_is_better else (mine / theirs if theirs else 0)
        print(f"{key:28} {mine:>12} {theirs:>12} {ratio:>7.1f}x")
    print("(ratio: how many times better Podium is; prompt_chars_shared should be 1.0x)")
    return {"langgraph": lg, "versions": full["versions"]}


def goals(figures: dict[str, Any], lg: dict[str, Any] | None) -> list[tuple[str, str, bool | None]]:
    """Issue 18's goals: (what, the figures, met or not; None when the comparison did not run)."""
    floor = figures["floor_ms_sqlite_full"]
    full = figures["ms_per_run_sqlite_full"]
    synced = figures["synced_commits_per_run_sqlite_full"]
    rounds = figures["rounds_per_run"]
    rows: list[tuple[str, str, bool | None]] = [
        (
            "full: a run within 1.5x the fsync floor",
            f"{full} ms, floor {floor} ms ({rounds} rounds x {figures['fsync_ms']} ms)",
            full <= 1.5 * floor,
        ),
        ("full: fsynced commits per run <= rounds", f"{synced} for {rounds} rounds", synced <= rounds),
        (
            "full: 100 concurrent runs >= 150 runs/s",
            f"{figures['runs_per_s_sqlite_full']} runs/s",
            figures["runs_per_s_sqlite_full"] >= 150,
        ),
        (
            "process: <= 2 ms per run",
            f"{figures['ms_per_run_sqlite_process']} ms",
            figures["ms_per_run_sqlite_process"] <= 2.0,
        ),
        (
            "scoped prompts <= 6,000 chars",
            f"{figures['prompt_chars_scoped']} chars",
            figures["prompt_chars_scoped"] <= 6000,
        ),
        (
            "import podium <= 0.2 s",
            f"{figures['import_s']} s (median of {IMPORT_SAMPLES})",
            figures["import_s"] <= 0.2,
        ),
    ]
    if lg is not None:
        theirs = lg["ms_per_run_sqlite_full"]
        rows.append(("full: >= 3x faster than langgraph-supervisor", f"{full} ms vs {theirs} ms", theirs >= 3 * full))
    else:
        rows.append(("full: >= 3x faster than langgraph-supervisor", "needs --compare", None))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200, help="sequential runs per timing loop")
    ap.add_argument("-k", "--concurrency", type=int, default=100, help="concurrent runs")
    ap.add_argument("--latency-ms", type=float, default=50.0, help="simulated model latency (concurrent phase)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of concurrent runs (the last is reported)")
    ap.add_argument("--quick", action="store_true", help="fewer runs: finishes in well under a minute")
    ap.add_argument("--json", help="write the figures to this JSON file")
    ap.add_argument("--compare", action="store_true", help="also run the langgraph-supervisor baseline script")
    ap.add_argument("--profile", action="store_true", help="cProfile sequential in-memory runs and stop")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.quick:
        a.runs = min(a.runs, 100)
    if a.profile:
        profile(a.runs)
        return
    if a.worker:
        if a.worker == "accounting":
            print(json.dumps(accounting()))
        else:
            print(json.dumps(worker(a.worker, a.runs, a.concurrency, a.latency_ms, a.rounds)))
        return

    print(f"python {sys.version.split()[0]}  runs={a.runs} concurrency={a.concurrency} latency_ms={a.latency_ms}\n")
    acc = _sub(["--worker", "accounting"])
    print("== prompt accounting per run (chars = len(json.dumps(messages)), langchain's message layout) ==")
    print(
        f"{'variant':34} {'calls':>5} {'prompt_chars':>12} {'~tokens':>8} {'prompt_msgs':>11} {'schema_chars':>12}"
        f" {'wire_chars':>10}"
    )
    for r in acc:
        print(
            f"{r['variant']:34} {r['model_calls']:>5} {r['prompt_chars']:>12} {r['prompt_chars'] // 4:>8}"
            f" {r['prompt_messages']:>11} {r['tool_schema_chars']:>12} {r['wire_chars']:>10}"
        )
    print("  (wire_chars: the messages as Podium sends them; tool results carry no name on the wire)")
    for r in (acc[0], acc[2]):
        print(
            f"  {r['variant']} per agent: "
            + ", ".join(f"{k}: {v['calls']} calls/{v['prompt_chars']} chars" for k, v in r["per_agent"].items())
        )

    common = [
        "--runs",
        str(a.runs),
        "-k",
        str(a.concurrency),
        "--latency-ms",
        str(a.latency_ms),
        "--rounds",
        str(a.rounds),
    ]
    kinds = ("memory", "sqlite-full", "sqlite-process")
    results = {kind: _sub(["--worker", kind, *common]) for kind in kinds}
    print("\n== framework time per run (sequential, zero-latency model) ==")
    print(
        f"{'store':15} {'p50 ms':>8} {'mean ms':>8} {'p95 ms':>8} {'ms/model call':>13} {'events/run':>10}"
        f" {'commits/run':>11} {'fsynced':>7} {'peak RSS MB':>11}"
    )
    for kind, r in results.items():
        print(
            f"{kind:15} {r['ms_per_run_p50']:>8} {r['ms_per_run_mean']:>8} {r['ms_per_run_p95']:>8}"
            f" {r['ms_per_run_p50'] / 10:>13.3f} {r.get('events_per_run', 0):>10} {r.get('commits_per_run', 0):>11}"
            f" {r.get('synced_commits_per_run', 0):>7} {r['peak_rss_mb']:>11}"
        )
    full = results["sqlite-full"]
    print(
        f"\nbytes per run (SQLite): payload {full['bytes_per_run']} B, physically written to the WAL "
        f"{full['wal_bytes_per_run']} B, file growth {full['file_growth_per_run']} B"
    )
    print(
        f"fsync on this machine: {full['fsync_ms']} ms (median); a run has {full['rounds_per_run']} journaled rounds "
        f"(model calls and tool rounds), so its floor at full durability is {full['floor_ms']} ms"
    )
    print(f"\n== {a.concurrency} concurrent runs, {a.latency_ms} ms per model call ==")
    for kind, r in results.items():
        c = r["concurrent"]
        last = c["rounds"][-1]
        print(
            f"{kind:15} wall={last['wall_s']}s  throughput={last['runs_per_s']} runs/s (ideal {c['ideal_runs_per_s']})"
            f"  run p50={last['run_latency_p50_ms']}ms p95={last['run_latency_p95_ms']}ms"
            f"  single run={r['single_run_with_latency_ms']}ms  [round1 {c['rounds'][0]['runs_per_s']} runs/s]"
        )
    process = results["sqlite-process"]
    figures: dict[str, Any] = {
        "ms_per_run_memory": results["memory"]["ms_per_run_p50"],
        "ms_per_run_sqlite_full": full["ms_per_run_p50"],
        "ms_per_run_sqlite_process": process["ms_per_run_p50"],
        "runs_per_s_memory": results["memory"]["runs_per_s"],
        "runs_per_s_sqlite_full": full["runs_per_s"],
        "runs_per_s_sqlite_process": process["runs_per_s"],
        "bytes_per_run_sqlite": full["bytes_per_run"],
        "wal_bytes_per_run_sqlite": full["wal_bytes_per_run"],
        "file_growth_per_run_sqlite": full["file_growth_per_run"],
        "commits_per_run_sqlite_full": full["commits_per_run"],
        "synced_commits_per_run_sqlite_full": full["synced_commits_per_run"],
        "rounds_per_run": full["rounds_per_run"],
        "fsync_ms": full["fsync_ms"],
        "floor_ms_sqlite_full": full["floor_ms"],
        "prompt_chars_scoped": acc[0]["prompt_chars"],
        "prompt_chars_scoped_no_handoff_messages": acc[1]["prompt_chars"],
        "prompt_chars_shared": acc[2]["prompt_chars"],
        "prompt_chars_shared_full_history": acc[3]["prompt_chars"],
        "prompt_chars_shared_no_handoff_messages": acc[4]["prompt_chars"],
        "import_s": import_seconds(),
        "peak_rss_mb_memory": results["memory"]["peak_rss_mb"],
        "peak_rss_mb_sqlite": full["peak_rss_mb"],
    }
    comparison = compare(a, figures) if a.compare else None
    print("\n== goals (issue 18) ==")
    for what, value, met in goals(figures, comparison["langgraph"] if comparison else None):
        print(f"{what:46} {'met' if met else 'MISSED' if met is not None else '-':7} {value}")
    print(f"(parity: prompt_chars_shared {figures['prompt_chars_shared']}, the baseline's layout gives 15905)")
    if a.json:
        data = {"figures": figures, "accounting": acc, "results": results, "args": vars(a), **figures}
        if comparison is not None:
            data["comparison"] = comparison
        Path(a.json).write_text(json.dumps(data, indent=1))


if __name__ == "__main__":
    main()
