"""The user responder is a durable interrupt: a task tree waiting on the human survives a restart; memory stays flat."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from tests.orchestration.tasks_support import THREAD, requests_of, routed

from podium import AIMessage, Event, HumanMessage, InterruptRaised, Message, Runtime, SQLiteStore, ToolMessage
from podium.orchestration.tasks.task import ResponderAgent, Task
from podium.testing import FunctionModel, tool_call

SUPPORT = Path(__file__).parent / "tasks_support.py"


async def test_a_non_interactive_task_asks_the_human_only_when_addressed() -> None:
    model = routed(w=lambda m: "Hello there")
    result = await Task(ResponderAgent("w", model, prompt="w")).run("hi")
    assert (result.outcome, result.content) == ("done", "Hello there")

    model = routed(w=lambda m: "@user What is your name?" if len(m) == 2 else f"DONE Hi {m[-1].content}")
    events: list[Event] = []
    runtime = Runtime()
    task = Task(ResponderAgent("w", model, prompt="w"))
    waiting = await task.run("hi", runtime=runtime, on_event=events.append)
    assert (waiting.outcome, waiting.content) == ("interrupted", "What is your name?")
    asked = [e.interrupt for e in events if isinstance(e, InterruptRaised)]
    assert [(i.path, i.prompt, i.data) for i in asked] == [(("w",), "What is your name?", {"task": "w"})]
    answered = await task.resume("Ada", runtime=runtime, thread_id=waiting.thread_id or "")
    assert (answered.outcome, answered.content) == ("done", "Hi Ada")


async def test_an_interactive_task_hands_every_unanswered_message_to_the_user() -> None:
    model = routed(w=lambda m: f"you said {m[-1].content}")
    runtime = Runtime()
    task = Task(ResponderAgent("w", model, prompt="w"), interactive=True)
    first = await task.run("hello", runtime=runtime)
    assert (first.outcome, first.content) == ("interrupted", "you said hello")
    second = await task.resume("more", runtime=runtime, thread_id=first.thread_id or "")
    assert (second.outcome, second.content) == ("interrupted", "you said more")
    last = await task.resume("DONE bye", runtime=runtime, thread_id=first.thread_id or "")
    assert (last.outcome, last.content, last.reason) == ("done", "bye", "user signalled done")


async def test_a_default_answer_runs_the_user_responder_unattended() -> None:
    model = routed(w=lambda m: "@user favourite colour?" if len(m) == 2 else f"DONE {m[-1].content}")
    assert (await Task(ResponderAgent("w", model, prompt="w")).run("go", user_default="blue")).content == "blue"
    agent = ResponderAgent("w", model, prompt="w", user_default="green")
    assert (await Task(agent).run("go")).content == "green"


async def test_a_tree_waiting_on_the_human_three_levels_down_resumes_in_the_same_process(tmp_path: Path) -> None:
    from tests.orchestration.tasks_support import restart_model, restart_tree

    log = tmp_path / "log.jsonl"
    store = SQLiteStore(tmp_path / "s.db")
    model = restart_model(log)
    task = restart_tree(model, log)
    waiting = await task.run("Plan a sunny trip", runtime=Runtime(store), thread_id=THREAD)
    assert [i.path for i in waiting.interrupts] == [("desk", "planner.1", "scout.1")]
    done = await task.resume("Lisbon", runtime=Runtime(store), thread_id=THREAD)
    await store.close()
    assert done.content == "Plan: go where it is Lisbon: 24 °C, sunny"
    assert requests_of(model, "scout")[1] == [
        ("human", "find a sunny city"),
        ("ai", "@user Which city should I check?"),  # the model's own words stay in its history
        ("human", "Lisbon"),
    ]


def test_a_tree_waiting_on_the_human_three_levels_down_survives_a_process_restart(tmp_path: Path) -> None:
    db, log = tmp_path / "tasks.db", tmp_path / "log.jsonl"

    def child(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, str(SUPPORT), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    first = child("start", str(db), str(log))
    assert first == {
        "outcome": "interrupted",
        "content": "Which city should I check?",
        "paths": [["desk", "planner.1", "scout.1"]],
    }
    before = log.read_text().splitlines()
    second = child("resume", str(db), str(log), "Lisbon")
    assert second == {"outcome": "done", "content": "Plan: go where it is Lisbon: 24 °C, sunny", "paths": []}
    after = [json.loads(line) for line in log.read_text().splitlines()[len(before) :]]
    # Nothing done before the restart runs again: the new process replays it from the journal.
    assert [(e["what"], e.get("agent", e.get("city"))) for e in after] == [
        ("model", "scout"),
        ("tool", "Lisbon"),
        ("model", "scout"),
        ("model", "planner"),
        ("model", "desk"),
    ]


def _delegation(model: FunctionModel) -> Task:
    def multiply(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    worker = Task(ResponderAgent("worker", model, prompt="worker", tools=[multiply]))
    return Task(ResponderAgent("boss", model, prompt="boss"), sub_tasks=[worker])


def _script() -> FunctionModel:
    def boss(messages: list[Message]) -> str:
        last = messages[-1]
        return f"DONE {last.content}" if isinstance(last, HumanMessage) and last.name == "worker" else "TO[worker]: 6*7"

    def worker(messages: list[Message]) -> Any:
        last = messages[-1]
        return (
            last.content
            if isinstance(last, ToolMessage)
            else AIMessage(tool_calls=[tool_call("multiply", {"a": 6, "b": 7}, id="c")])
        )

    return routed(boss=boss, worker=worker)


async def test_a_thousand_two_level_delegations_leave_memory_flat() -> None:
    model = _script()
    reused = _delegation(model)

    async def one(task: Task) -> None:
        result = await task.run("What is 6 times 7?")
        model.requests.clear()  # the test double's own record of requests
        assert result.content == "42"

    for _ in range(50):
        await one(reused)
    gc.collect()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        for n in range(1000):
            await one(reused if n % 2 else _delegation(model))  # reusing the tasks, and rebuilding them
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Each run's journal, events and messages take about 20 KiB: a leak of even one run in ten would show.
    assert end - start < 64 * 1024, f"memory grew by {(end - start) / 1024:.1f} KiB over 1000 runs"


async def test_concurrent_runs_share_one_task_tree_without_mixing_their_state() -> None:

    def boss(messages: list[Message]) -> str:
        last = messages[-1]
        return (
            f"DONE {last.content}"
            if isinstance(last, HumanMessage) and last.name == "worker"
            else f"TO[worker]: {last.content}"
        )

    def worker(messages: list[Message]) -> Any:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return last.content
        n = int(last.content)
        return AIMessage(tool_calls=[tool_call("multiply", {"a": n, "b": n})])

    task = _delegation(routed(boss=boss, worker=worker))
    runtime = Runtime()
    results = await asyncio.gather(*(task.run(str(n), runtime=runtime) for n in range(30)))
    assert [r.content for r in results] == [str(n * n) for n in range(30)]
