"""Issue 9: the fault-injection campaign, at a small count (``bench/faults.py --kills 200`` is the full one).

Real SIGKILLs of worker processes at random moments of a ReAct run and of a supervisor whose worker asks a
question, on SQLite and (when ``PODIUM_TEST_POSTGRES_URL`` is set) PostgreSQL, each thread then resumed to its end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "faults.py"


@pytest.mark.slow
def test_random_kills_repeat_no_completed_call_and_lose_no_message(tmp_path: Path) -> None:
    backends = "sqlite,postgres" if os.environ.get("PODIUM_TEST_POSTGRES_URL") else "sqlite"
    out = tmp_path / "faults.json"
    command = [sys.executable, str(BENCH), "--kills", "6", "--backends", backends, "--json", str(out)]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
    result = json.loads(out.read_text())
    figures = result["figures"]
    assert figures["kills"] == 6 and figures["trials"] >= 2
    assert set(result["per_store"]) == set(backends.split(","))
    for name in (
        "completed_calls_repeated",
        "messages_lost",
        "messages_duplicated",
        "calls_without_result",
        "results_stored_twice",
        "stuck_threads",
        "errors",
    ):
        assert figures[name] == 0, (name, result)
