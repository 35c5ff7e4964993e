"""The acceptance scenario through ``podium chat smart-investigator --jsonl`` in real processes (stdin lines)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.orchestration.master_support import Turn, check_turn

from examples.smart_investigator import DEMO, build
from podium import Event, InterruptRaised, RunEnded, RunResult, event_from_dict

ROOT = Path(__file__).parents[2]


def chat(*args: str, stdin: str, tmp: Path, said: list[str] | None = None) -> list[dict[str, Any]]:
    """The stdout lines of one ``podium chat --jsonl`` process (its stderr, the notes for a person, added to
    ``said``)."""
    env = {**os.environ, "PODIUM_DATA_DIR": str(tmp / "data"), "PODIUM_BLOCK_MODEL_REQUESTS": "1"}
    env.pop("PODIUM_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "podium", "chat", "smart-investigator", "--jsonl", "--store", str(tmp / "si.db"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    if said is not None:
        said.append(done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines()]


def turns(lines: list[dict[str, Any]], texts: list[str]) -> list[Turn]:
    """Split a --jsonl transcript into turns (each ends with ``run_ended``) and read the events back."""
    out: list[Turn] = []
    events: list[Event] = []
    for line in lines:
        if line["kind"] == "thread":  # the command's own first line; every other one is an event
            continue
        event = event_from_dict(line)
        events.append(event)
        if isinstance(event, RunEnded):
            asked = [e.interrupt for e in events if isinstance(e, InterruptRaised)]
            result = RunResult(
                status=event.status,  # type: ignore[arg-type]
                thread_id="",
                run_id=event.run_id,
                output=event.output,
                interrupts=asked[-1:],
            )
            out.append(Turn(texts[len(out)], result, events))
            events = []
    return out


def test_the_demo_in_one_process(tmp_path: Path) -> None:
    said: list[str] = []
    lines = chat(stdin="".join(text + "\n" for text in DEMO), tmp=tmp_path, said=said)
    assert build().welcome in said[0]  # for a person: on stderr
    assert lines[0]["kind"] == "thread"
    found = turns(lines, DEMO)
    assert len(found) == len(DEMO)
    for number, turn in enumerate(found):
        check_turn(turn, number)


def test_a_new_process_for_every_turn(tmp_path: Path) -> None:
    first = chat(stdin=DEMO[0] + "\n", tmp=tmp_path)
    thread = next(line["thread_id"] for line in first if line["kind"] == "thread")
    check_turn(turns(first, DEMO[:1])[0], 0)
    for number, text in enumerate(DEMO[1:], 1):
        said: list[str] = []
        lines = chat("--thread", thread, stdin=text + "\n", tmp=tmp_path, said=said)
        assert "Hello" not in said[0]  # no second welcome
        (turn,) = turns(lines, [text])
        check_turn(turn, number)
