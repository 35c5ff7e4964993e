"""The tasks demo app runs offline: its cassette replays its script, it matches a fresh recording, ``podium chat``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.app_talk import talk

from examples import tasks_demo
from examples.tasks.calculations import ARITHMETIC, read_calculation
from podium import Event, MessageAdded, Runtime, Settings, ToolMessage
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
    assert isinstance(offline, ReplayModel) and offline.fallback is app.offline_fallback
    assert offline.fallback_replies == 0


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
    assert (await task.run("hello")).content.startswith("Hello! I am a small desk of tasks. I can do arithmetic")
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
    expected = {"type": "choice", "options": ["museums", "beaches"], "pattern": None, "description": "", "synonyms": {}}
    assert interrupt["expectation"] == expected
    progress = [e["text"] for e in events if e["kind"] == "side"]
    assert progress[:2] == [
        "coordinator → calculator",
        "calculator → coordinator (done: nobody answered the message from llm)",
    ]
    assert "planner → researcher" in progress


async def _answers_with(asked: str, answer: str, tools: list[str]) -> None:
    """tasks-demo answers ``asked`` with ``answer``, running ``tools`` (by name, in order)."""
    app = load_app("tasks-demo")
    task = app.build(app.model(Settings.load(env={})))
    events: list[Event] = []
    ran = await Runtime().send(task, asked, on_event=events.append)
    assert ran.output == answer
    used = [e.message.name for e in events if isinstance(e, MessageAdded) and isinstance(e.message, ToolMessage)]
    assert used == tools


@pytest.mark.parametrize(
    ("asked", "answer", "tools"),
    [
        ("what's 15% of 240?", "15% of 240 = 36.", ["multiply", "divide"]),
        ("add 2 and 2 and 2", "2 + 2 + 2 = 6.", ["add", "add"]),
        ("divide 10 by 4", "10 ÷ 4 = 2.5.", ["divide"]),
        ("what is twelve times seven", "12 × 7 = 84.", ["multiply"]),
        ("subtract 4 from 9", "9 - 4 = 5.", ["add"]),
        ("2 plus 3 times 4", "2 + 3 × 4 = 14.", ["multiply", "add"]),
        ("What is the product of 3, 4 and five?", "3 × 4 × 5 = 60.", ["multiply", "multiply"]),
        ("the average of 2, 4 and 9", "(2 + 4 + 9) ÷ 3 = 5.", ["add", "add", "divide"]),
        ("how much is one hundred and five minus twenty-one?", "105 - 21 = 84.", ["add"]),
        ("what is 10 divided by 0?", "I could not compute 10 ÷ 0: cannot divide by zero.", ["divide"]),
        ("square root of 16", f"I cannot compute square roots. {ARITHMETIC}", []),
        ("what is 6 times 7 apples", f"I could not read a calculation in 'what is 6 times 7 apples'. {ARITHMETIC}", []),
    ],
)
async def test_the_stand_in_computes_with_the_calculator_s_tools_or_says_it_cannot(
    asked: str, answer: str, tools: list[str]
) -> None:
    await _answers_with(asked, answer, tools)


async def test_the_planner_asks_again_for_an_answer_that_is_not_an_option() -> None:
    app = load_app("tasks-demo")
    task = app.build(app.model(Settings.load(env={})))
    runtime = Runtime()
    said = []
    thread = None
    for line in ["Plan a day in Berlin", "neither, I like food", "what is 6 times 7?", "the beach", "hello"]:
        ran = await runtime.send(task, line, thread_id=thread)
        thread = ran.thread_id
        said.append(ran.output if ran.status == "completed" else ran.interrupts[0].prompt)
    assert said == [
        "Do you prefer museums or beaches in Berlin?",
        "Please answer museums or beaches: which do you prefer in Berlin?",
        "I cannot answer that while planning your day: museums or beaches in Berlin?",  # a question: said so
        "Your day in Berlin: a walk through the old town in the morning, lunch by the river, the afternoon at the "
        "beaches. I have no weather data for Berlin; I know Lisbon, Paris, Oslo and Tokyo.",
        f"Hello! I am a small desk of tasks. {tasks_demo.HELP}",
    ]


async def test_a_calculation_follow_up_applies_to_the_previous_result() -> None:
    said = await talk(
        ["what is 1250 plus 380", "minus 30?", "and divided by 4?", "now times 2", "hello", "+ 5"], "tasks-demo"
    )
    assert said == [
        "1250 + 380 = 1630.",
        "1630 - 30 = 1600.",
        "1600 ÷ 4 = 400.",
        "400 × 2 = 800.",
        f"Hello! I am a small desk of tasks. {tasks_demo.HELP}",
        "800 + 5 = 805.",  # the last result, also after other turns
    ]


@pytest.mark.parametrize("line", ["minus 30", "minus 30?", "and divided by 4?"])
async def test_a_follow_up_with_no_previous_result_asks_for_both_numbers_never_a_false_equation(line: str) -> None:
    [said] = await talk([line], "tasks-demo")
    assert said == f"{line}: of what? Give me both numbers, for example 'What is 50 minus 30?'."
    # the calculator alone, handed a number without a calculation, says so too
    assert read_calculation("minus 30") == (
        f"'minus 30' needs two numbers, for example 'What is 50 minus 30?'. {ARITHMETIC}"
    )


async def test_the_answer_to_which_city_plans_that_city() -> None:
    assert await talk(["plan a day", "Lisbon", "museums"], "tasks-demo") == [
        "Which city? Say, for example, 'Plan a day in Lisbon'.",
        "Do you prefer museums or beaches in Lisbon?",
        "Your day in Lisbon: a walk through the old town in the morning, lunch by the river, the afternoon at the "
        "museums. Today in Lisbon: 24 °C, sunny.",
    ]
    assert await talk(["plan a day", "never mind"], "tasks-demo") == [
        "Which city? Say, for example, 'Plan a day in Lisbon'.",
        "All right: no plan.",
    ]


@pytest.mark.parametrize(
    ("asked", "answer", "tools"),
    [
        ("what is -5 plus 12", "-5 + 12 = 7.", ["add"]),  # the minus sign kept, never "5 + 12 = 7."
        ("what's -3 times -4?", "-3 × -4 = 12.", ["multiply"]),
        ("whats a 20 percent tip on 85 dollars", "20% of 85 = 17.", ["multiply", "divide"]),
        ("18% tax on 50 euros?", "18% of 50 = 9.", ["multiply", "divide"]),
        ("what's 25% off $60", "60 - 25% of 60 = 45.", ["multiply", "divide", "add"]),
        ("hello! quick one: 18 plus 27?", "18 + 27 = 45.", ["add"]),
        ("hey there, what is 9 times 9", "9 × 9 = 81.", ["multiply"]),
        ("sorry i meant 45 times 4", "45 × 4 = 180.", ["multiply"]),
        ("we spent 240 and there are 4 of us, how much each", "240 ÷ 4 = 60.", ["divide"]),
        ("split 90 dollars between 3 people", "90 ÷ 3 = 30.", ["divide"]),
        ("dinner was 150 for 6 people, how much per person?", "150 ÷ 6 = 25.", ["divide"]),
        # out of reach: said so, never a different calculation
        ("5 friends pay 40 each, how much in total", "5 × 40 = 200.", ["multiply"]),  # a count at a price each
        ("the square of 5 plus 2", f"I could not read a calculation in 'the square of 5 plus 2'. {ARITHMETIC}", []),
        ("what is 2 plus 2, and 3 times 3", "2 + 2 = 4. 3 × 3 = 9.", ["add", "multiply"]),  # each of them
        ("what is 2 plus 2. 3 times 3", "One calculation at a time, please: '2 + 2' or '3 × 3'?", []),
    ],
)
async def test_the_stand_in_reads_a_calculation_in_everyday_words(asked: str, answer: str, tools: list[str]) -> None:
    await _answers_with(asked, answer, tools)


async def test_a_correction_replaces_the_previous_calculation_or_its_last_step() -> None:
    said = await talk(
        [
            "what is 45 times 3",
            "sorry i meant 45 times 4",
            "no, I meant times 5",
            "oops, 6",
            "actually make that plus 2",
        ],
        "tasks-demo",
    )
    assert said == ["45 × 3 = 135.", "45 × 4 = 180.", "45 × 5 = 225.", "45 × 6 = 270.", "45 + 2 = 47."]
    assert await talk(["sorry, I meant 4"], "tasks-demo") == [
        "Which calculation do you mean? Give me the whole of it, for example 'What is 45 times 4?'."
    ]


async def test_a_stated_choice_is_planned_with_words_around_it_and_after_the_plan_too() -> None:
    lisbon = "Your day in Lisbon: a walk through the old town in the morning, lunch by the river, the afternoon at the "
    weather = " Today in Lisbon: 24 °C, sunny."
    assert await talk(
        ["plan a day in lisbon", "museums", "actually i changed my mind, beaches", "what about museums instead?"],
        "tasks-demo",
    ) == [
        "Do you prefer museums or beaches in Lisbon?",
        lisbon + "museums." + weather,
        lisbon + "beaches." + weather,
        lisbon + "museums." + weather,
    ]
    assert await talk(["plan a day in lisbon", "no wait, beaches"], "tasks-demo") == [
        "Do you prefer museums or beaches in Lisbon?",
        lisbon + "beaches." + weather,
    ]
    assert await talk(["plan a day in lisbon, I love the beach"], "tasks-demo") == [lisbon + "beaches." + weather]
    again = "Please answer museums or beaches: which do you prefer in Lisbon?"
    assert await talk(["plan a day in lisbon", "not museums", "museums and beaches"], "tasks-demo") == [
        "Do you prefer museums or beaches in Lisbon?",
        again,
        again,
    ]


async def test_taking_leave_at_the_planners_question_ends_the_plan() -> None:
    said = await talk(["plan a day in lisbon", "thanks, bye"], "tasks-demo")
    assert said[1] == "All right: no plan for Lisbon."
