#!/usr/bin/env python
"""Fault injection: random SIGKILLs at random moments, resuming after each, and what the kills cost.

Two conversations are driven to their end by worker processes (this script with ``--worker``):
  * react: a ReAct agent making four tool calls in turn (a sync tool and an async one, alternating), then answering;
  * supervisor: a supervisor handing a task to a worker whose tool asks the human a question; the worker process
    answers it ("yes") as a script would, and the run finishes.
Each trial starts a worker on a new thread; once the worker says it is running, the campaign waits a random time
and kills it (SIGKILL) if it still runs, then starts another worker that resumes the thread, up to three kills per
trial, and lets the last one finish. On SQLite (a file) and on PostgreSQL ($PODIUM_TEST_POSTGRES_URL, a schema of
its own, dropped at the end) when that is set.

Every model reply and tool execution writes a line to a log (with its own execution id, which it puts in the reply
or result) before it returns, so after each trial the stored events tell, for every call, which executions ran and
which one's result was kept:
  * completed calls repeated: an execution after one whose result was stored (must be 0);
  * in-flight calls re-run: an execution after one that was killed before its result was stored (expected);
  * messages lost / duplicated: the thread's final history against the expected one (must be 0);
  * runs resumed: workers that found the run unfinished (status running) and resumed it;
  * errors: workers that ended with an error instead of finishing (must be 0).

Usage:
  python bench/faults.py                  # 200 kills over both stores (about ten minutes)
  python bench/faults.py --kills 20 --backends sqlite
  python bench/faults.py --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from podium import RunContext  # noqa: E402  (the tools' annotations name it)

SCENARIOS = ("react", "supervisor")
STEPS = 4
TOOLS = ("step_sync", "step_async", "approve")
EID = re.compile(r"\[x([0-9a-f]{10})\]")


# --- the worker ------------------------------------------------------------------------------------------------------
def _open_store(backend: str, where: str) -> Any:
    from podium import SQLiteStore

    durability = os.environ.get("PODIUM_FAULTS_DURABILITY", "process")
    if backend == "sqlite":
        return SQLiteStore(where, durability=durability)  # type: ignore[arg-type]
    from podium.store.postgres import PostgresStore

    url, schema = where.rsplit("#", 1)
    return PostgresStore(url, schema=schema, durability=durability)  # type: ignore[arg-type]


async def _store(backend: str, where: str) -> Any:
    store = _open_store(backend, where)
    if backend == "postgres":
        await store.open()
    return store


def _agent(scenario: str, thread: str, log_fd: int) -> Any:
    from podium import AIMessage, ReactAgent, ToolMessage
    from podium.orchestration.supervisor.supervisor import create_supervisor
    from podium.testing import FunctionModel, tool_call

    def executed(call: str) -> str:
        eid = uuid.uuid4().hex[:10]
        os.write(log_fd, (json.dumps({"thread": thread, "call": call, "exec": eid}) + "\n").encode())
        return f"[x{eid}]"

    async def pause() -> None:
        await asyncio.sleep(random.uniform(0, 0.02))

    if scenario == "react":

        def step_sync(n: int) -> str:
            """Record a step of the job."""
            time.sleep(random.uniform(0, 0.02))
            return f"step {n} recorded {executed(f'tool step {n}')}"

        async def step_async(n: int) -> str:
            """Record a step of the job."""
            await pause()
            return f"step {n} recorded {executed(f'tool step {n}')}"

        async def reply(messages: list[Any], request: Any) -> AIMessage:
            await pause()
            done = sum(isinstance(m, ToolMessage) for m in messages)
            mark = executed(f"model {done}")
            if done < STEPS:
                name = "step_sync" if done % 2 == 0 else "step_async"
                return AIMessage(content=mark, tool_calls=[tool_call(name, {"n": done + 1})])
            return AIMessage(content=f"all steps recorded {mark}")

        return ReactAgent("worker", FunctionModel(reply), [step_sync, step_async])

    async def approve(ctx: RunContext[Any], query: str) -> str:
        """Search, once the human agrees.

        Args:
            query: what to search.
        """
        answer = await ctx.ask(f"Search for {query!r}?")
        await pause()
        return f"searched ({answer}) {executed('tool approve')}"

    async def team(messages: list[Any], request: Any) -> AIMessage:
        await pause()
        results = _results(messages, ToolMessage)
        if "approve" in {t.name for t in request.tools}:
            mark = executed(f"model researcher {len(results)}")
            if not results:
                return AIMessage(content=mark, tool_calls=[tool_call("approve", {"query": "staff"})])
            return AIMessage(content=f"found: {results[0]} {mark}")
        mark = executed(f"model supervisor {len(results)}")
        if not results:
            return AIMessage(content=mark, tool_calls=[tool_call("transfer_to_researcher", {"task": "count staff"})])
        return AIMessage(content=f"answer: {results[0]} {mark}")

    model = FunctionModel(team)
    researcher = ReactAgent("researcher", model, [approve], prompt="Research.")
    return create_supervisor([researcher], model=model, prompt="Lead.")


def _results(messages: list[Any], tool_message: type) -> list[str]:
    """The tool results a model is shown: tool messages, and the lines of a scoped worker's "Done so far" note."""
    notes = [m.content.split("Done so far:\n", 1)[-1] for m in messages if "Done so far:" in (m.content or "")]
    folded = [line.split(" -> ", 1)[1] for note in notes for line in note.splitlines() if " -> " in line]
    return folded + [m.content for m in messages if isinstance(m, tool_message)]


async def _work(backend: str, where: str, scenario: str, thread: str, log: str) -> None:
    from podium import Runtime

    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    store = await _store(backend, where)
    runtime = Runtime(store)
    agent = _agent(scenario, thread, fd)
    print("ready", flush=True)
    for _ in range(20):
        last = await store.last_run(thread) if await store.get_thread(thread) else None
        if last is None:
            await runtime.run(agent, "do the job", thread_id=thread, if_busy="wait", busy_timeout=30)
        elif last.status == "completed":
            break
        elif last.status == "interrupted":
            await runtime.resume(agent, thread, "yes", if_busy="wait", busy_timeout=30)
        elif last.status == "running":
            os.write(fd, (json.dumps({"thread": thread, "resumed": last.id}) + "\n").encode())
            await runtime.resume(agent, thread, if_busy="wait", busy_timeout=30)
        else:
            raise SystemExit(f"run {last.id} ended {last.status}: {(last.result or {}).get('reason')}")
    else:
        raise SystemExit("the thread did not complete in 20 executions")
    await store.close()


# --- the campaign ----------------------------------------------------------------------------------------------------
EXPECTED = {
    "react": [
        "human do the job",
        *[f"ai {i}->step_{'sync' if i % 2 == 0 else 'async'}" for i in range(STEPS)],
        *[f"tool step {n} recorded" for n in range(1, STEPS + 1)],
        "ai all steps recorded",
    ],
    "supervisor": ["human do the job", "ai ->transfer_to_researcher", "tool", "ai answer: found: searched (yes)"],
}


def _canonical(scenario: str, message: Any) -> str:
    text = " ".join(EID.sub("", message.content or "").split())
    if message.kind == "ai" and message.tool_calls:
        names = ",".join(c.name for c in message.tool_calls)
        if scenario == "react":
            return f"ai {json.loads(message.tool_calls[0].arguments)['n'] - 1}->{names}"
        return f"ai ->{names}"
    if scenario == "supervisor" and message.kind == "tool":
        return "tool"
    return f"{message.kind} {text}".strip()


async def _check(backend: str, where: str, scenario: str, thread: str, log: Path) -> dict[str, int]:
    """The figures of one trial, from the log of executions and the stored events."""
    from podium import MessageAdded, Runtime

    store = await _store(backend, where)
    try:
        if await store.get_thread(thread) is None:
            return {"stuck_threads": 0, "messages_lost": len(EXPECTED[scenario])}
        events = await store.read_events(thread)
        history = await Runtime(store).messages(thread)
    finally:
        await store.close()
    stored: Counter[str] = Counter()
    for event in events:
        if not isinstance(event, MessageAdded):
            continue
        message = event.message  # its own mark is its last one (a reply may quote a result's)
        own = message.kind == "ai" or (message.kind == "tool" and message.name in TOOLS)
        marks = EID.findall(message.content or "")
        if own and marks:
            stored[marks[-1]] += 1
    executions: dict[str, list[str]] = {}
    resumed = 0
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if entry["thread"] != thread:
            continue
        if "resumed" in entry:
            resumed += 1
        else:
            executions.setdefault(entry["call"], []).append(entry["exec"])
    figures = Counter(runs_resumed=resumed)
    for eids in executions.values():
        kept = [i for i, eid in enumerate(eids) if stored[eid]]
        if not kept:
            figures["calls_without_result"] += 1
            continue
        figures["in_flight_calls_rerun"] += kept[0]
        figures["completed_calls_repeated"] += len(eids) - 1 - kept[0]
        figures["results_stored_twice"] += sum(stored[eids[i]] for i in kept) - 1
    want = Counter(EXPECTED[scenario])
    got = Counter(_canonical(scenario, m) for m in history)
    figures["messages_lost"] = sum((want - got).values())
    figures["messages_duplicated"] = sum((got - want).values())
    return dict(figures)


def _worker(backend: str, where: str, scenario: str, thread: str, log: Path) -> subprocess.Popen[str]:
    command = [sys.executable, __file__, "--worker", backend, where, scenario, thread, str(log)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _trial(backend: str, where: str, scenario: str, log: Path, window: list[float], kills_left: int) -> Counter[str]:
    thread = f"{scenario}-{uuid.uuid4().hex[:8]}"
    figures: Counter[str] = Counter()
    planned = random.randint(1, 3)
    for attempt in range(planned + 4):
        proc = _worker(backend, where, scenario, thread, log)
        assert proc.stdout is not None
        ready = proc.stdout.readline().strip() == "ready"
        started = time.monotonic()
        if ready and attempt < planned and figures["kills"] < kills_left:
            time.sleep(random.uniform(0, statistics.median(window)))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                figures["kills"] += 1
                continue
        _, err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            window.append((time.monotonic() - started) * 1.2)
            del window[:-9]
            break
        figures["errors"] += 1
        print(f"  worker failed ({backend}, {scenario}, exit {proc.returncode}): {err.strip()[-400:]}", file=sys.stderr)
    else:
        figures["stuck_threads"] += 1
    figures.update(asyncio.run(_check(backend, where, scenario, thread, log)))
    figures["trials"] += 1
    return figures


def _postgres_where() -> str | None:
    url = os.environ.get("PODIUM_TEST_POSTGRES_URL")
    return f"{url}#podium_faults_{uuid.uuid4().hex[:10]}" if url else None


def _drop_schema(where: str) -> None:
    import psycopg
    from psycopg import sql

    url, schema = where.rsplit("#", 1)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


FIGURES = (
    "kills",
    "runs_resumed",
    "completed_calls_repeated",
    "messages_lost",
    "messages_duplicated",
    "in_flight_calls_rerun",
    "calls_without_result",
    "results_stored_twice",
    "stuck_threads",
    "errors",
    "trials",
)


def campaign(kills: int, backends: list[str], seed: int | None) -> dict[str, Any]:
    """Run the campaign: ``kills`` SIGKILLs shared between ``backends``; the figures, per store and in all."""
    random.seed(seed)
    per: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory(prefix="podium-faults-") as folder:
        log = Path(folder) / "executions.log"
        places: dict[str, str] = {}
        for backend in backends:
            if backend == "sqlite":
                places[backend] = str(Path(folder) / "faults.db")
            else:
                where = _postgres_where()
                if where is None:
                    print("PODIUM_TEST_POSTGRES_URL is not set: PostgreSQL skipped", file=sys.stderr)
                    continue
                places[backend] = where
        if not places:
            raise SystemExit("no store to test")
        try:
            share = {b: kills // len(places) + (i < kills % len(places)) for i, b in enumerate(places)}
            for backend, where in places.items():
                totals: Counter[str] = Counter()
                windows = {s: [0.4] for s in SCENARIOS}
                turn = 0
                while totals["kills"] < share[backend]:
                    scenario = SCENARIOS[turn % len(SCENARIOS)]
                    turn += 1
                    left = share[backend] - totals["kills"]
                    totals.update(_trial(backend, where, scenario, log, windows[scenario], left))
                per[backend] = totals
        finally:
            for backend, where in places.items():
                if backend == "postgres":
                    _drop_schema(where)
    overall: Counter[str] = Counter()
    for totals in per.values():
        overall.update(totals)
    return {
        "figures": {name: overall[name] for name in FIGURES},
        "per_store": {b: {name: t[name] for name in FIGURES} for b, t in per.items()},
        "durability": os.environ.get("PODIUM_FAULTS_DURABILITY", "process"),
        "goal": "every figure 0 except kills, runs_resumed, in_flight_calls_rerun and trials",
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        backend, where, scenario, thread, log = sys.argv[2:7]
        asyncio.run(_work(backend, where, scenario, thread, log))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=200, help="SIGKILLs in all (default 200)")
    parser.add_argument("--backends", default="sqlite,postgres", help="comma-separated: sqlite, postgres")
    parser.add_argument(
        "--durability",
        choices=("process", "full"),
        default="process",
        help="the stores' durability (default process: a SIGKILL is a process crash, which both survive; "
        "full adds an fsync per commit and changes nothing a kill can show)",
    )
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", nargs="?", const="-", default=None, help="write the figures as JSON (- : stdout)")
    args = parser.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(backends) - {"sqlite", "postgres"})
    if unknown or args.kills < 1:
        parser.error(f"unknown backend(s) {', '.join(unknown)}" if unknown else "--kills must be at least 1")
    os.environ["PODIUM_FAULTS_DURABILITY"] = args.durability  # the workers inherit it
    started = time.monotonic()
    result = campaign(args.kills, backends, args.seed)
    result["seconds"] = round(time.monotonic() - started, 1)
    if args.json == "-":
        print(json.dumps(result, indent=2))
        return
    for name in FIGURES:
        row = "  ".join(f"{b}={t[name]}" for b, t in result["per_store"].items())
        print(f"{name:26} {result['figures'][name]:6}   {row}")
    print(f"({result['seconds']} s; goal: {result['goal']})")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
