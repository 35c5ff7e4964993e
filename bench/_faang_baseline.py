"""The comparison side of ``bench/faang.py``: langgraph-supervisor's script at both durabilities, and the goals."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _faang_measure import IMPORT_SAMPLES, import_seconds
from _faang_workload import BASELINE


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
            f"{full} ms, floor {floor} ms ({rounds} rounds x {figures['fsync_ms']} ms; "
            f"the run's own fsynced commits: {figures['disk_ms_per_run_sqlite_full']} ms; with its tools "
            f"undeclared: {figures['ms_per_run_sqlite_full_undeclared']} ms, "
            f"{figures['ms_per_run_sqlite_full_undeclared'] / floor:.1f}x)",
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
