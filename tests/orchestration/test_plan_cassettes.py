"""The plan service's demo tasks replayed from their cassette: the LLM planner's path offline, end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from examples.plan.cassette import PLANS, write
from examples.plan_service import CASSETTE, DEMO_TASKS, REPLAY, app
from examples.plan_service import catalogue as demo_catalogue
from podium import Artifact, Runtime, ToolMessage
from podium.models.replay import ReplayModel, load_cassette
from podium.orchestration.plan import LLMPlanner, OfflineAgentModel, SessionRecord
from podium.settings import Settings


@pytest.mark.parametrize("task", list(DEMO_TASKS))
async def test_each_demo_task_plans_and_runs_through_the_replay_model(
    task: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(REPLAY, "1")
    model = app.model(Settings.load(env={}))
    assert isinstance(model, ReplayModel) and model.path == CASSETTE
    plans = app.build(model)
    assert isinstance(plans.planner, LLMPlanner)  # type: ignore[attr-defined]
    runtime, events = Runtime(), []
    result = await runtime.run(plans, task, on_event=events.append)
    while result.status == "interrupted":
        assert result.interrupts[0].data["kind"] == "approval"
        result = await runtime.resume(plans, result.thread_id, "approve", on_event=events.append)
    assert result.status == "completed", result
    record = SessionRecord.from_events(result.thread_id, await runtime.store.read_events(result.thread_id))
    (plan,) = record.plans
    written = json.loads(PLANS[task][-1])  # the answer that passed validation (an earlier one may have failed)
    assert (plan.overall_status, plan.planner) == ("completed", "replay:plan_service.json")
    assert 0 < plan.tools_shown <= 10  # the planner was shown the relevant tools, not the catalogue's 152
    assert [(s.agent, s.action) for s in plan.steps] == [(s["agent"], s["action"]) for s in written["steps"]]
    assert all(s.status == "completed" and s.agent_reply for s in plan.steps)
    called = {e.message.name for e in events if hasattr(e, "message") and isinstance(e.message, ToolMessage)}
    assert DEMO_TASKS[task] <= called  # every tool the task needs was called by its specialist
    replies = [e.content["content"] for e in events if isinstance(e, Artifact) and e.title == "agent_message"]
    assert replies[1:] == [s.agent_reply for s in plan.steps]


def test_the_recorded_planner_requests_show_the_relevant_tools_and_retry_bad_answers() -> None:
    planner_requests = [i["request"] for i in load_cassette(CASSETTE) if "response_format" in i["request"]]
    assert len(planner_requests) == len(DEMO_TASKS) + 2  # two answers were wrong at first and sent back
    full = len(demo_catalogue(OfflineAgentModel()).tools)
    for request in planner_requests:
        listed = re.findall(r"^- \w+\.\w+: ", request["messages"][0]["content"], flags=re.M)
        assert 0 < len(listed) <= 10 < full  # never the whole catalogue
    problems = [r["messages"][-1]["content"] for r in planner_requests if len(r["messages"]) > 2]
    assert any("Invalid JSON" in p for p in problems)  # the fenced answer
    assert any("unknown agent 'MobileAgent'" in p for p in problems)


async def test_a_task_the_cassette_does_not_hold_is_a_failed_plan_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REPLAY, "yes")
    plans = app.build(app.model(Settings.load(env={})))
    result = await Runtime().run(plans, "Book a meeting room for Friday")
    assert result.status == "completed"
    assert result.output.startswith("Plan failed: cassette") and "has no recorded reply" in result.output


def test_the_cassette_writer_reproduces_the_shipped_cassette(tmp_path: Path) -> None:
    outcomes = write(tmp_path / "plan.json")
    assert [o["status"] for o in outcomes] == ["completed"] * len(DEMO_TASKS)
    assert load_cassette(tmp_path / "plan.json") == load_cassette(CASSETTE)
