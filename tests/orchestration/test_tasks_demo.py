"""The tasks demo app runs offline: its cassette replays its script, it matches a fresh recording, ``podium chat``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from examples import tasks_demo
from podium import Runtime, Settings
from podium.app import load_app
from podium.testing import ReplayModel

ROOT = Path(__file__).parents[2]

EXPECTED = [
    "12 × 7 = 84.",
    "1250 + 380 = 1630.",
    None,
    "Your day in Lisbon: a walk through the old town in the morning, lunch by the river, the afternoon at the "
    "beaches. Today in Lisbon: 24 °C, sunny.",
    None,
    "Your day in Oslo: a walk through the old town in the morning, lunch by the river, the afternoon at the museums. "
    "Today in Oslo: 9 °C, cloudy.",
]


async def test_the_demo_replays_its_whole_script_from_the_cassette() -> None:
    app = load_app("tasks-demo")
    model = app.model(Settings.load(env={}))
    task = app.build(model)
    runtime = Runtime()
    outputs, questions = [], []
    for lines in tasks_demo.SCRIPT:
        thread = None
        for line in lines:
            ran = await runtime.send(task, line, thread_id=thread)
            thread = ran.thread_id
            outputs.append(ran.output)
            questions.extend((i.path, i.prompt) for i in ran.interrupts)
    assert outputs == EXPECTED
    assert questions == [
        (("coordinator", "planner.1"), "Do you prefer museums or beaches in Lisbon?"),
        (("coordinator", "planner.1"), "Do you prefer museums or beaches in Oslo?"),
    ]
    offline = task.agent.model
    assert isinstance(offline, ReplayModel) and offline.match == "exact" and offline.fallback_replies == 0


async def test_the_shipped_cassette_matches_a_fresh_recording(tmp_path: Path) -> None:
    fresh = tmp_path / "tasks_demo.json"
    await tasks_demo.record(fresh)

    def shape(path: Path) -> list[object]:
        data = json.loads(path.read_text())
        return [
            (
                [m.get("content") for m in item["request"]["messages"]],
                item["response"]["message"].get("content"),
                [c["function"] for c in item["response"]["message"].get("tool_calls") or []],
            )
            for item in data["interactions"]
        ]

    assert shape(fresh) == shape(tasks_demo.CASSETTE)


async def test_requests_the_cassette_does_not_hold_are_answered_by_the_stand_in() -> None:
    app = load_app("tasks-demo")
    task = app.build(app.model(Settings.load(env={})))
    assert (await task.run("What is 9 minus 4?")).content == "9 - 4 = 5."
    assert (await task.run("hello")).content.startswith("I can do arithmetic")
    assert tasks_demo.get_weather("Madrid").startswith("No weather data for Madrid")


def test_podium_chat_runs_the_demo_offline(tmp_path: Path) -> None:
    env = {**os.environ, "PODIUM_DATA_DIR": str(tmp_path), "PODIUM_BLOCK_MODEL_REQUESTS": "1"}
    env.pop("PODIUM_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "podium", "chat", "tasks-demo", "--jsonl"],
        input="What is 12 times 7?\nPlan a day in Lisbon\nbeaches\nline\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    events: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]
    said = [
        e["message"]["content"]
        for e in events
        if e["kind"] == "message" and e["namespace"] == "" and e["message"]["kind"] == "ai"
    ]
    assert said == [
        EXPECTED[0],
        EXPECTED[3],
        "I can do arithmetic ('What is 12 times 7?') or plan a day ('Plan a day in Lisbon').",
    ]
    [interrupt] = [e["interrupt"] for e in events if e["kind"] == "interrupt"]
    expected = {"type": "choice", "options": ["museums", "beaches"], "pattern": None, "description": ""}
    assert interrupt["expectation"] == expected
    progress = [e["text"] for e in events if e["kind"] == "side"]
    assert progress[:2] == [
        "coordinator → calculator",
        "calculator → coordinator (done: nobody answered the message from llm)",
    ]
    assert "planner → researcher" in progress
