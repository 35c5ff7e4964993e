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
    journaled rounds of a run and this machine's sync latency (the floor at full durability: one sync per round, of a
    page written in place, as a write-ahead log written from its start again syncs, measured before and after the
    runs, the lower median taken: a disk busy with a checkpoint reads several times slower; the sync of a growing
    file beside it)
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

Beside it: _faang_workload.py (the scripted model, the supervisor, prompt accounting), _faang_measure.py (one
store's figures in a worker process, import time, profiling), _faang_baseline.py (the baseline and the goals).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers beside this script, run or imported

from _faang_baseline import compare, goals
from _faang_measure import IMPORT_SAMPLES, fsync_ms, import_seconds, profile, worker
from _faang_workload import (
    ACCOUNT,
    FINAL_MATH,
    FINAL_SUPERVISOR,
    QUESTION,
    ROOT,
    SEARCH_RESULT,
    Stats,
    accounting,
    build,
    lc_messages,
    run_one,
    scripted_reply,
)

__all__ = [
    "ACCOUNT",
    "FINAL_MATH",
    "FINAL_SUPERVISOR",
    "IMPORT_SAMPLES",
    "QUESTION",
    "SEARCH_RESULT",
    "Stats",
    "accounting",
    "build",
    "compare",
    "fsync_ms",
    "goals",
    "import_seconds",
    "lc_messages",
    "run_one",
    "scripted_reply",
    "worker",
]

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
    kinds = ("memory", "memory-undeclared", "sqlite-full", "sqlite-full-undeclared", "sqlite-process")
    results = {kind: _sub(["--worker", kind, *common]) for kind in kinds}
    print("\n== framework time per run (sequential, zero-latency model) ==")
    print(
        f"{'store':22} {'p50 ms':>8} {'mean ms':>8} {'p95 ms':>8} {'ms/model call':>13} {'events/run':>10}"
        f" {'commits/run':>11} {'fsynced':>7} {'peak RSS MB':>11}"
    )
    for kind, r in results.items():
        print(
            f"{kind:22} {r['ms_per_run_p50']:>8} {r['ms_per_run_mean']:>8} {r['ms_per_run_p95']:>8}"
            f" {r['ms_per_run_p50'] / 10:>13.3f} {r.get('events_per_run', 0):>10} {r.get('commits_per_run', 0):>11}"
            f" {r.get('synced_commits_per_run', 0):>7} {r['peak_rss_mb']:>11}"
        )
    print(
        "  (the tools say they are read-only and inline, as they are: a tool round starts once its call is committed,"
        " on the event loop's thread;\n   -undeclared: the same tools as any tool is by default, each call on a tool"
        " thread, each tool round waiting for its call's sync at full)"
    )
    full, undeclared = results["sqlite-full"], results["sqlite-full-undeclared"]
    print(
        f"\nbytes per run (SQLite): payload {full['bytes_per_run']} B, physically written to the WAL "
        f"{full['wal_bytes_per_run']} B, file growth {full['file_growth_per_run']} B"
    )
    print(
        f"fsync on this machine: {full['fsync_ms']} ms (a page written in place: the lower of the medians "
        f"{' and '.join(str(r) for r in full.get('fsync_readings_ms', []))} ms, measured before and after the runs; "
        f"{full['fsync_growing_ms']} ms when it grows the file); a run has {full['rounds_per_run']} journaled rounds "
        f"(model calls and tool rounds), so its floor at full durability is {full['floor_ms']} ms; its fsynced "
        f"commits took {full['disk_ms_per_run']} ms per run as they happened"
    )
    print(f"\n== {a.concurrency} concurrent runs, {a.latency_ms} ms per model call ==")
    for kind, r in results.items():
        c = r["concurrent"]
        last = c["rounds"][-1]
        print(
            f"{kind:22} wall={last['wall_s']}s  throughput={last['runs_per_s']} runs/s (ideal {c['ideal_runs_per_s']})"
            f"  run p50={last['run_latency_p50_ms']}ms p95={last['run_latency_p95_ms']}ms"
            f"  single run={r['single_run_with_latency_ms']}ms  [round1 {c['rounds'][0]['runs_per_s']} runs/s]"
        )
    process = results["sqlite-process"]
    figures: dict[str, Any] = {
        "ms_per_run_memory": results["memory"]["ms_per_run_p50"],
        "ms_per_run_memory_undeclared": results["memory-undeclared"]["ms_per_run_p50"],
        "ms_per_run_sqlite_full": full["ms_per_run_p50"],
        "ms_per_run_sqlite_process": process["ms_per_run_p50"],
        "ms_per_run_sqlite_full_undeclared": undeclared["ms_per_run_p50"],
        "synced_commits_per_run_sqlite_full_undeclared": undeclared["synced_commits_per_run"],
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
        "fsync_growing_ms": full["fsync_growing_ms"],
        "floor_ms_sqlite_full": full["floor_ms"],
        "disk_ms_per_run_sqlite_full": full["disk_ms_per_run"],
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
    print("\n== goals (the project's, for full durability, concurrency and prompts) ==")
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
