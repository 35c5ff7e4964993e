"""``podium chat`` end to end in real processes: offline replay, --jsonl, --thread across processes, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]


def podium(*args: str, stdin: str = "", data: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PODIUM_DATA_DIR": str(data), "PODIUM_BLOCK_MODEL_REQUESTS": "1"}
    env.pop("PODIUM_MODEL", None)
    return subprocess.run(
        [sys.executable, "-m", "podium", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )


def lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines()]


def test_chat_jsonl_interrupt_then_answer_in_a_new_process(tmp_path: Path) -> None:
    first = podium(
        "chat",
        "trip",
        "--jsonl",
        stdin="What's the weather in Lisbon?\nSave a note: pack sunglasses for Lisbon\n",
        data=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    events = lines(first.stdout)
    thread = next(e["thread_id"] for e in events if e["kind"] == "thread")
    said = [
        e["message"]["content"]
        for e in events
        if e["kind"] == "message" and e["message"]["kind"] == "ai" and e["message"]["content"]
    ]
    assert said == ["Today in Lisbon: 24 °C, sunny."]
    tools = [e["message"] for e in events if e["kind"] == "message" and e["message"]["kind"] == "tool"]
    assert tools[0]["name"] == "get_weather" and tools[0]["content"] == "Lisbon: 24 °C, sunny."
    [interrupt] = [e["interrupt"] for e in events if e["kind"] == "interrupt"]
    assert interrupt["prompt"] == "Save this note to your trip notebook: 'pack sunglasses for Lisbon'?"
    assert interrupt["expectation"] == {
        "type": "choice",
        "options": ["yes", "no"],
        "pattern": None,
        "description": "",
        "synonyms": {},
    }
    assert interrupt["path"][0] == "trip_helper" and len(interrupt["path"]) == 2
    assert [e["status"] for e in events if e["kind"] == "run_ended"] == ["completed", "interrupted"]

    second = podium("chat", "trip", "--jsonl", "--thread", thread, stdin="yes\n", data=tmp_path)
    assert second.returncode == 0, second.stderr
    after = lines(second.stdout)
    assert [e["answer"] for e in after if e["kind"] == "answer"] == ["yes"]
    final = [e for e in after if e["kind"] == "run_ended"]
    assert final[-1]["status"] == "completed"
    assert final[-1]["output"] == "Done: Saved to the trip notebook: pack sunglasses for Lisbon"

    history = podium("history", thread, data=tmp_path)
    kinds = [e["message"]["kind"] for e in lines(history.stdout) if e["kind"] == "message"]
    assert kinds == ["human", "ai", "tool", "ai", "human", "ai", "tool", "ai"]
    listing = podium("threads", data=tmp_path)
    assert listing.stdout.split("\t")[0] == thread


def test_pretty_chat_shows_the_conversation(tmp_path: Path) -> None:
    result = podium("chat", "trip", stdin="Compare Paris and Oslo\n\n", data=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "trip_helper> Side by side — Paris: 18 °C, light rain. Oslo: 9 °C, cloudy." in result.stdout
    assert "→ get_weather" in result.stdout
    assert "empty message ignored" in result.stdout


def test_unknown_thread_app_and_unrecorded_question_are_clear(tmp_path: Path) -> None:
    ghost = podium("chat", "trip", "--thread", "ghost", stdin="hi\n", data=tmp_path)
    assert ghost.returncode == 2 and "no thread 'ghost'" in ghost.stderr
    missing = podium("chat", "no-such-app", data=tmp_path)
    assert missing.returncode == 2 and "no app 'no-such-app'" in missing.stderr and "trip" in missing.stderr
    # an app whose cassette has no reply for a question, and nothing to fall back on offline
    cassette = ROOT / "examples" / "cassettes" / "trip.json"
    bare = tmp_path / "bare.py"
    bare.write_text(
        "from pathlib import Path\nfrom podium import ReactAgent\nfrom podium.app import App\n"
        f"app = App(name='bare', build=lambda model: ReactAgent('bare', model, []), cassette=Path({str(cassette)!r}))\n"
    )
    offscript = podium("chat", str(bare), "--jsonl", stdin="Tell me a joke\n", data=tmp_path)
    assert offscript.returncode == 1
    [ended] = [e for e in lines(offscript.stdout) if e["kind"] == "run_ended"]
    assert ended["status"] == "failed" and "no recorded reply" in ended["reason"] and "PODIUM_MODEL" in ended["reason"]


def test_corrupt_store_is_reported_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "podium.db").write_bytes(b"garbage" * 50)
    result = podium("chat", "trip", stdin="hi\n", data=tmp_path)
    assert result.returncode == 2 and "not a usable Podium database" in result.stderr
    assert (tmp_path / "podium.db").read_bytes() == b"garbage" * 50


def test_chat_loads_apps_only_from_the_examples_package_and_says_from_where(tmp_path: Path) -> None:
    planted = tmp_path / "examples"
    planted.mkdir()
    (planted / "evil.py").write_text("raise SystemExit('planted code ran')\n")
    inner = tmp_path / "work"
    inner.mkdir()
    env = {**os.environ, "PODIUM_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT / "src")}
    ran = subprocess.run(
        [sys.executable, "-m", "podium", "chat", "evil"], capture_output=True, text=True, cwd=inner, env=env, timeout=60
    )
    assert ran.returncode == 2 and "no app 'evil'" in ran.stderr and "planted" not in ran.stderr
    trip = podium("chat", "trip", stdin="\n", data=tmp_path)
    assert f"app 'trip' loaded from {ROOT / 'examples' / 'trip.py'}" in trip.stderr


def test_pretty_chat_prints_plan_updates_as_prose_and_jsonl_keeps_them_as_data(tmp_path: Path) -> None:
    stdin = "Onboard Jessica Smith, who starts next week\nsure\nstop\n"
    result = podium("chat", "plan-service", stdin=stdin, data=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "▣ plan v1 (in progress), 6 steps: 1. HrAgent: Create the HR record of an employee for Jessica" in (
        result.stdout
    )
    assert "▣ step 1 approved" in result.stdout and "▣ step 2 rejected (stopped by the human)" in result.stdout
    assert "{'kind'" not in result.stdout and "[create_employee_record]" not in result.stdout
    assert "Plan stopped at step 2 of 6: 1 done, 1 rejected, 4 not run." in result.stdout
    data = lines(podium("chat", "plan-service", "--jsonl", stdin=stdin, data=tmp_path / "j").stdout)
    changes = [e["content"] for e in data if e.get("kind") == "artifact" and e.get("title") == "plan"]
    assert changes[0]["kind"] == "plan" and {"kind": "step", "status": "approved"}.items() <= changes[2].items()


def test_serve_on_a_taken_port_stops_before_it_opens_its_store(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        store = tmp_path / "never.db"
        served = podium("serve", "trip", "--port", str(port), "--store", str(store), data=tmp_path)
    assert served.returncode == 2
    assert served.stderr.strip().endswith(f"error: cannot listen on 127.0.0.1:{port}: Address already in use")
    assert not store.exists()  # nothing opened, nothing resumed


def _read_jsonl(stdout: str) -> tuple[str, list[Any]]:
    """The documented reading of ``chat --jsonl``: the first line names the thread, every other line is an event."""
    from podium import event_from_dict, event_to_dict

    first, *rest = [json.loads(line) for line in stdout.splitlines()]
    assert first == {"kind": "thread", "thread_id": first["thread_id"]}
    events = [event_from_dict(data) for data in rest]
    assert [event_to_dict(e) for e in events] == rest  # read back exactly
    return first["thread_id"], events


def test_chat_jsonl_prints_the_thread_line_then_only_events(tmp_path: Path) -> None:
    # a welcome, blank lines ignored, a reply, an interrupt: the notes for a person go to stderr
    done = podium("chat", "trip", "--jsonl", stdin="\n   \nCompare Paris and Oslo\nSave a note: x\n", data=tmp_path)
    assert done.returncode == 0, done.stderr
    thread, events = _read_jsonl(done.stdout)
    assert [e.kind for e in events if e.kind == "run_ended"] == ["run_ended"] * 2
    assert done.stderr.count("empty message ignored") == 2 and "Trip helper:" in done.stderr
    # continuing the thread (the pending question answered): the thread line first again
    again = podium("chat", "trip", "--jsonl", "--thread", thread, stdin="yes\n\n", data=tmp_path)
    assert again.returncode == 0, again.stderr
    assert _read_jsonl(again.stdout)[0] == thread


def test_chat_jsonl_names_the_thread_before_the_events_of_a_run_it_finishes(tmp_path: Path) -> None:
    import asyncio

    from podium import HumanMessage, SQLiteStore, message_to_dict
    from podium.store.base import RunRecord

    async def unfinished() -> None:  # a run its process left running (it stopped)
        store = SQLiteStore(tmp_path / "data" / "podium.db")
        await store.create_thread("t")
        message = message_to_dict(HumanMessage(content="What's the weather in Lisbon?"))
        await store.create_run(RunRecord(id="r1", thread_id="t", input=message, agent="trip_helper"))
        await store.close()

    asyncio.run(unfinished())
    done = podium("chat", "trip", "--jsonl", "--thread", "t", data=tmp_path / "data")
    assert done.returncode == 0, done.stderr
    thread, events = _read_jsonl(done.stdout)
    assert thread == "t" and events[0].kind == "run_started" and events[-1].kind == "run_ended"
    assert "finishing the unfinished run of thread t" in done.stderr
