"""Plan and execute in Python: the lifecycle, verdicts, planners, clarifications, failures and restarts."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.orchestration import plan_support
from tests.orchestration.plan_support import MARKER, agent, catalogue

from podium import AIMessage, Artifact, Event, Runtime, SQLiteStore, ToolMessage
from podium.orchestration.plan import (
    LLMPlanner,
    OfflineAgentModel,
    PlanConflict,
    PlanRequest,
    SessionRecord,
    Verdict,
    agent_messages,
    answer_for,
    parse_verdict,
)
from podium.testing import FunctionModel, ScriptedModel, tool_call

SUPPORT = Path(__file__).parent / "plan_support.py"


async def _record(runtime: Runtime, thread: str) -> SessionRecord:
    return SessionRecord.from_events(thread, await runtime.store.read_events(thread))


def _changes(events: list[Event]) -> list[tuple[Any, ...]]:
    return [
        (e.content.get("order"), e.content["status"])
        for e in events
        if isinstance(e, Artifact) and e.title == "plan" and "order" in e.content
    ]


async def test_the_record_is_rebuilt_from_the_changes_each_transition_stored() -> None:
    runtime, plans = Runtime(), agent()
    result = await runtime.run(plans, "Onboard Ada Lovelace")
    result = await runtime.resume(plans, result.thread_id, "reject: not needed")
    stored = await runtime.store.read_events(result.thread_id)
    changes = [e.content for e in stored if isinstance(e, Artifact) and e.title == "plan"]
    assert [c["kind"] for c in changes] == ["plan", "step", "step", "step"]
    assert "plan" not in changes[1] and changes[2]["fields"] == {
        "human_feedback": "not needed",
        "human_approval_status": "rejected",
    }  # a transition stores only what changed
    noise = [
        Artifact(content="not a change", title="plan"),
        Artifact(content={"status": "old form, no kind"}, title="plan"),
        Artifact(content={"kind": "step", "plan_id": "elsewhere", "step_id": "x", "status": "completed"}, title="plan"),
        Artifact(content={"kind": "step", "plan_id": changes[0]["plan_id"], "step_id": "x", "status": "failed"}),
    ]
    record = SessionRecord.from_events(result.thread_id, [*stored, *noise])
    (plan,) = record.plans
    assert [s.status for s in plan.steps] == ["rejected", "awaiting_feedback", "planned"]
    assert (plan.steps[0].human_feedback, plan.rejected) == ("not needed", 1)
    assert record.session.message_to_user == "not needed"  # the feedback, not the verdict as typed
    record.apply({"kind": "step", "plan_id": plan.id, "step_id": "unknown", "status": "failed"})
    assert [s.status for s in record.plans[0].steps] == ["rejected", "awaiting_feedback", "planned"]


async def test_each_step_is_asked_about_in_order_and_runs_with_its_agent() -> None:
    runtime, plans, events = Runtime(), agent(), []
    result = await runtime.run(plans, "Onboard Ada Lovelace", on_event=events.append)
    prompts = []
    while result.status == "interrupted":
        prompts.append(result.interrupts[0].prompt)
        result = await runtime.resume(plans, result.thread_id, "approve", on_event=events.append)
    assert result.status == "completed"
    assert result.output.startswith("Plan completed: 3 of 3 steps done.")
    assert [p.split(":")[0] for p in prompts] == [
        "Step 1 of 3 (Hr)",
        "Step 2 of 3 (Procurement)",
        "Step 3 of 3 (Generic)",
    ]
    record = await _record(runtime, result.thread_id)
    (plan,) = record.plans
    assert (plan.overall_status, plan.completed_steps, plan.pending_steps) == ("completed", 3, 0)
    assert [(s.order, s.agent, s.status, s.agent_reply) for s in plan.steps] == [
        (1, "Hr", "completed", "account created for Ada Lovelace"),
        (2, "Procurement", "completed", "laptop ordered for Ada Lovelace"),
        (3, "Generic", "completed", "welcomed Ada Lovelace"),
    ]
    lifecycle = ["awaiting_feedback", "approved", "action_requested", "completed"]
    assert _changes(events) == [(n, status) for n in (1, 2, 3) for status in lifecycle]
    stored = await runtime.store.read_events(result.thread_id)
    assert _changes(stored) == _changes(events)  # every transition is stored, not only streamed
    said = agent_messages(stored)
    assert [(m.source, m.step_id) for m in said] == [("PlannerAgent", None)] + [(s.agent, s.id) for s in plan.steps]


async def test_the_agent_is_shown_the_goal_earlier_results_in_order_feedback_and_the_edited_action() -> None:
    seen: list[str] = []

    def model(messages: list[Any], request: Any) -> AIMessage | str:
        if isinstance(messages[-1], ToolMessage):
            return messages[-1].content
        seen.append(messages[-1].content)
        return AIMessage(tool_calls=[tool_call(request.tools[0].name, {"user_name": "Ada"})])

    runtime, plans = Runtime(), agent(model=FunctionModel(model))
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    await runtime.resume(plans, first.thread_id, "approve")
    rejected = await runtime.resume(plans, first.thread_id, "reject: we have spare laptops")
    done = await runtime.resume(
        plans,
        first.thread_id,
        json.dumps({"approved": True, "human_feedback": "be warm", "updated_action": "Welcome Ada on chat"}),
    )
    assert rejected.status == "interrupted" and done.status == "completed"
    assert seen[1] == (
        "Goal: Onboard Ada Lovelace\n"
        "Done so far, in order:\n"
        "1. Hr: Create the account of a new employee for Ada Lovelace -> "
        "account created for Ada\n"
        "The human's feedback on this step: be warm\n"
        "Action: Welcome Ada on chat"
    )
    (plan,) = (await _record(runtime, first.thread_id)).plans
    assert [(s.status, s.human_feedback, s.human_approval_status) for s in plan.steps] == [
        ("completed", None, "accepted"),
        ("rejected", "we have spare laptops", "rejected"),
        ("completed", "be warm", "accepted"),
    ]
    assert plan.steps[2].updated_action == "Welcome Ada on chat"
    assert len(seen) == 2  # the rejected step never ran


async def test_approve_all_runs_every_remaining_step_without_asking_again() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    done = await runtime.resume(plans, first.thread_id, "approve all")
    assert done.status == "completed"
    (plan,) = (await _record(runtime, first.thread_id)).plans
    assert [s.status for s in plan.steps] == ["completed"] * 3


async def test_an_unreadable_verdict_is_asked_again() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    again = await runtime.resume(plans, first.thread_id, "hmm, maybe")
    assert again.interrupts[0].prompt.startswith("Please answer approve, approve all, reject")
    assert again.interrupts[0].data["step_id"] == first.interrupts[0].data["step_id"]


def test_verdicts_read_from_words_and_json() -> None:
    assert parse_verdict("yes") == Verdict()
    assert parse_verdict("Approve all") == Verdict(all=True)
    assert parse_verdict("reject all: not now") == Verdict(approved=False, all=True, feedback="not now")
    assert parse_verdict("edit: order two") == Verdict(updated_action="order two")
    assert parse_verdict("clarify: she starts Monday") == Verdict(clarification="she starts Monday")
    assert parse_verdict('{"clarification": "x"}') == Verdict(clarification="x")
    assert parse_verdict('{"approved": false}') == Verdict(approved=False)
    for text in ("", "maybe", "{not json", "[1]", "edit:"):
        assert parse_verdict(text) is None


async def test_out_of_order_repeated_and_unknown_verdicts_are_conflicts() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    record = await _record(runtime, first.thread_id)
    plan = record.plans[0]
    pending = await _pending(runtime, first.thread_id)
    with pytest.raises(PlanConflict, match="step 2 is not next: step 1 waits"):
        answer_for(record, pending, plan_id=plan.id, step_id=plan.steps[1].id, approved=True)
    with pytest.raises(PlanConflict, match="no plan 'nope'"):
        answer_for(record, pending, plan_id="nope", step_id=None, approved=True)
    with pytest.raises(PlanConflict, match="no step 'nope'"):
        answer_for(record, pending, plan_id=plan.id, step_id="nope", approved=True)
    answer = answer_for(record, pending, plan_id=plan.id, step_id=plan.steps[0].id, approved=True)
    await runtime.resume(plans, first.thread_id, answer)
    record = await _record(runtime, first.thread_id)
    pending = await _pending(runtime, first.thread_id)
    with pytest.raises(PlanConflict, match="step 1 is completed; it does not wait"):
        answer_for(record, pending, plan_id=plan.id, step_id=plan.steps[0].id, approved=True)
    await runtime.resume(plans, first.thread_id, "approve all")
    record = await _record(runtime, first.thread_id)
    with pytest.raises(PlanConflict, match="is completed and waits for no verdict"):
        answer_for(record, None, plan_id=plan.id, step_id=None, approved=True)


async def _pending(runtime: Runtime, thread: str) -> Any:
    from podium import InterruptRaised

    raised = [e for e in await runtime.store.read_events(thread) if isinstance(e, InterruptRaised)]
    return raised[-1].interrupt if raised else None


def _plan_json(agent: str = "Hr", question: str | None = None) -> str:
    steps = [{"action": "Create Ada's account [create_account]", "agent": agent}]
    return json.dumps(
        {"initial_goal": "Onboard Ada", "steps": steps, "summary": "one step", "human_clarification_request": question}
    )


async def test_the_llm_planner_retries_invalid_answers_with_the_problem_and_validates_agents() -> None:
    model = ScriptedModel(["not json", _plan_json(agent="Payroll"), _plan_json(agent="hr")])
    found = catalogue()
    runtime, plans = Runtime(), agent(LLMPlanner(found, model))
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    model.assert_complete()
    assert first.status == "interrupted"
    (plan,) = (await _record(runtime, first.thread_id)).plans
    assert [s.agent for s in plan.steps] == ["Hr"]  # spelled as the catalogue spells it
    retry_1, retry_2 = (r.messages[-1].content for r in model.requests[1:])
    assert retry_1.startswith("That answer is not a valid plan (answer: Invalid JSON")
    assert "step 1 names the unknown agent 'Payroll'; the agents are Hr, Procurement, Generic" in retry_2
    assert model.requests[0].settings.response_format is not None


async def test_a_planner_that_never_answers_validly_makes_a_failed_plan_not_a_success() -> None:
    model = ScriptedModel(["{}", "{}", "[]"])
    runtime, plans = Runtime(), agent(LLMPlanner(catalogue(), model))
    result = await runtime.run(plans, "Onboard Ada Lovelace")
    assert result.status == "completed" and result.output.startswith("Plan failed: the model gave no valid plan")
    (plan,) = (await _record(runtime, result.thread_id)).plans
    assert plan.overall_status == "failed" and "in 3 tries" in (plan.reason or "")
    assert plan.steps == []


async def test_a_clarification_re_plans_as_a_new_version() -> None:
    model = ScriptedModel([_plan_json(question="Which laptop?"), _plan_json()])
    runtime, plans = Runtime(), agent(LLMPlanner(catalogue(), model))
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    assert first.interrupts[0].prompt == "Which laptop?"
    assert first.interrupts[0].data == {"plan_id": first.interrupts[0].data["plan_id"], "kind": "clarification"}
    second = await runtime.resume(plans, first.thread_id, "A developer laptop")
    assert second.interrupts[0].prompt.startswith("Step 1 of 1 (Hr)")
    assert "The user added: A developer laptop" in model.requests[1].messages[-1].content
    old, new = (await _record(runtime, first.thread_id)).plans
    assert (old.version, old.overall_status, new.version, new.supersedes) == (1, "superseded", 2, old.id)
    assert old.human_clarification_request == "Which laptop?"


async def test_a_clarification_during_approvals_re_plans_too() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    second = await runtime.resume(plans, first.thread_id, "clarify: only the account, no laptop")
    assert second.interrupts[0].prompt.startswith("Step 1 of")
    old, new = (await _record(runtime, first.thread_id)).plans
    assert (old.overall_status, new.version) == ("superseded", 2)
    assert [s.status for s in old.steps] == ["cancelled"] * 3  # none waits for a verdict any more
    assert [s.status for s in new.steps][:1] == ["awaiting_feedback"]
    with pytest.raises(PlanConflict, match=r"step 1 is cancelled: plan .* is superseded .* waits for no verdict"):
        answer_for(
            await _record(runtime, first.thread_id), None, plan_id=old.id, step_id=old.steps[0].id, approved=True
        )


async def test_a_verdict_naming_another_step_is_not_applied_to_the_waiting_one() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    (plan,) = (await _record(runtime, first.thread_id)).plans
    late = json.dumps({"approved": True, "step_id": "an-earlier-step", "updated_action": "HIJACK"})
    again = await runtime.resume(plans, first.thread_id, late)
    assert again.interrupts[0].prompt.startswith("That verdict was for another step. Step 1 of 3")
    assert again.interrupts[0].data["step_id"] == plan.steps[0].id
    (plan,) = (await _record(runtime, first.thread_id)).plans
    assert (plan.steps[0].status, plan.steps[0].updated_action) == ("awaiting_feedback", None)


async def test_the_humans_agent_message_is_what_they_said_not_the_verdict_json() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    record = await _record(runtime, first.thread_id)
    plan = record.plans[0]
    pending = await _pending(runtime, first.thread_id)
    edit = answer_for(
        record,
        pending,
        plan_id=plan.id,
        step_id=plan.steps[0].id,
        approved=True,
        human_feedback="use the new form",
        updated_action="Create the record for Ada Lovelace",
    )
    await runtime.resume(plans, first.thread_id, edit)
    record = await _record(runtime, first.thread_id)
    pending = await _pending(runtime, first.thread_id)
    reject = answer_for(
        record, pending, plan_id=plan.id, step_id=plan.steps[1].id, approved=False, human_feedback="not needed"
    )
    await runtime.resume(plans, first.thread_id, reject)
    said = [(m.source, m.step_id, m.content) for m in agent_messages(await runtime.store.read_events(first.thread_id))]
    assert [m for m in said if m[0] == "HumanAgent"] == [
        ("HumanAgent", plan.steps[0].id, "use the new form\nEdited action: Create the record for Ada Lovelace"),
        ("HumanAgent", plan.steps[1].id, "not needed"),
    ]


async def test_a_cancelled_run_ends_its_plan_cancelled_whether_it_waited_or_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(plan_support.GATE, str(tmp_path / "never"))  # step 1 runs until cancelled
    runtime, plans = Runtime(), agent()
    running = await runtime.run(plans, "Onboard Ada Lovelace")
    resumed = asyncio.create_task(runtime.resume(plans, running.thread_id, "approve"))
    while (await _record(runtime, running.thread_id)).plans[0].steps[0].status != "action_requested":  # noqa: ASYNC110 - the store is polled
        await asyncio.sleep(0.01)
    await runtime.cancel(running.run_id)
    assert (await resumed).status == "cancelled"
    (plan,) = (await _record(runtime, running.thread_id)).plans
    assert plan.overall_status == "cancelled"
    assert [s.status for s in plan.steps] == ["cancelled"] * 3
    monkeypatch.delenv(plan_support.GATE)

    first = await runtime.run(plans, "Onboard Ada Lovelace")
    await runtime.cancel(first.run_id)
    record = await _record(runtime, first.thread_id)
    (plan,) = record.plans
    assert (plan.overall_status, plan.reason) == ("cancelled", "its run was cancelled")
    assert [s.status for s in plan.steps] == ["cancelled"] * 3
    assert record.session.current_status == "idle"
    with pytest.raises(PlanConflict, match=r"step 1 is cancelled: plan .* is cancelled \(its run was cancelled\)"):
        answer_for(record, None, plan_id=plan.id, step_id=plan.steps[0].id, approved=True)
    # a later task in the session plans afresh; the cancelled plan stays cancelled
    second = await runtime.run(plans, "Onboard Bob Stone", thread_id=first.thread_id)
    old, new = (await _record(runtime, second.thread_id)).plans
    assert (old.overall_status, new.overall_status) == ("cancelled", "in_progress")


async def test_a_failing_step_is_failed_with_its_error_and_the_plan_re_plans_from_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    marker.write_text("fail")
    monkeypatch.setenv(MARKER, str(marker))

    def model(messages: list[Any], request: Any) -> AIMessage | str:
        if isinstance(messages[-1], ToolMessage):
            if messages[-1].is_error:
                raise RuntimeError(messages[-1].content)
            return messages[-1].content
        return AIMessage(tool_calls=[tool_call(request.tools[0].name, {"user_name": "Ada"})])

    runtime, plans = Runtime(), agent(model=FunctionModel(model))
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    failed = await runtime.resume(plans, first.thread_id, "approve all")
    assert failed.interrupts[0].data["kind"] == "replan"
    assert "Step 2 (Procurement) failed: RuntimeError" in failed.interrupts[0].prompt
    (plan,) = (await _record(runtime, first.thread_id)).plans
    assert [s.status for s in plan.steps] == ["completed", "failed", "planned"]
    assert "the supplier is out of laptops" in (plan.steps[1].error or "")
    assert plan.overall_status == "failed" and (plan.reason or "").startswith("step 2 failed")
    marker.unlink()
    again = await runtime.resume(plans, first.thread_id, "replan")
    old, new = (await _record(runtime, first.thread_id)).plans
    assert old.overall_status == "failed" and new.supersedes == old.id
    assert [s.tool for s in new.steps] == ["order_laptop", "welcome"]  # done work not redone
    assert again.interrupts[0].data["plan_id"] == new.id
    done = await runtime.resume(plans, first.thread_id, "approve all")
    assert done.output.startswith("Plan completed")


async def test_stop_after_a_failure_ends_the_run_with_the_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    marker.write_text("fail")
    monkeypatch.setenv(MARKER, str(marker))
    runtime, plans = Runtime(), agent(model=ScriptedModel([RuntimeError("model down")] * 1))
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    failed = await runtime.resume(plans, first.thread_id, "approve")
    stopped = await runtime.resume(plans, failed.thread_id, "stop")
    assert stopped.output == "Plan failed: step 1 failed: RuntimeError: model down"


async def test_a_vague_task_is_answered_with_a_question_and_the_answer_re_plans() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "asap")
    assert first.interrupts[0].prompt == "What should be done, for whom and by when?"
    second = await runtime.resume(plans, first.thread_id, "Onboard Ada Lovelace")
    assert second.interrupts[0].prompt.startswith("Step 1 of 3 (Hr)")


async def test_a_plan_waiting_for_approval_survives_a_restart(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "p.db")
    first = await Runtime(store).run(agent(), "Onboard Ada Lovelace", thread_id="t1")
    await store.close()
    store = SQLiteStore(tmp_path / "p.db")
    done = await Runtime(store).resume(agent(), "t1", "approve all")
    assert first.status == "interrupted" and done.output.startswith("Plan completed: 3 of 3")
    await store.close()


def test_a_process_killed_mid_step_is_resumed_by_the_next_one(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    marker.write_text("crash")
    db = tmp_path / "p.db"
    env = {**os.environ, MARKER: str(marker), "PYTHONPATH": str(Path.cwd())}
    run = subprocess.run([sys.executable, str(SUPPORT), str(db), "t1"], env=env, capture_output=True, check=False)
    assert run.returncode == 3 and marker.read_text() == "crashed", run.stderr.decode()

    import asyncio

    async def finish() -> tuple[str, list[str]]:
        store = SQLiteStore(db)
        runtime = Runtime(store)
        stuck = await _record(runtime, "t1")
        assert [s.status for s in stuck.plans[0].steps] == ["completed", "action_requested", "planned"]
        result = await runtime.resume(plan_support.agent(), "t1")
        record = await _record(runtime, "t1")
        await store.close()
        return result.output or "", [s.status for s in record.plans[0].steps]

    output, statuses = asyncio.run(finish())
    assert output.startswith("Plan completed: 3 of 3") and statuses == ["completed"] * 3


def test_retrieval_shows_the_planner_a_few_tools_not_the_catalogue() -> None:
    from examples.plan_service import DEMO_TASKS
    from examples.plan_service import catalogue as demo_catalogue

    found = demo_catalogue(OfflineAgentModel())
    assert len(found.tools) >= 150
    planner = LLMPlanner(found, ScriptedModel([]))
    for task, needed in DEMO_TASKS.items():
        messages, shown = planner.prompt(PlanRequest(task=task))
        assert 0 < shown <= 10
        assert {t.tool.name for t in found.relevant(task)} >= needed
        assert all(name in messages[0].content for name in needed)
        assert "write_blog_post" not in messages[0].content or "press" in task


async def test_a_question_is_a_task_for_a_model_planner_not_for_the_offline_one() -> None:
    model = ScriptedModel([_plan_json()])
    runtime = Runtime()
    asked = await runtime.run(agent(LLMPlanner(catalogue(), model)), "is Ada's account set up yet?")
    model.assert_complete()  # the model planned it (its catalogue may answer questions)
    assert asked.status == "interrupted" and len((await _record(runtime, asked.thread_id)).plans) == 1
    offline = await runtime.run(agent(), "is Ada's account set up yet?")
    assert offline.status == "completed" and "is a question, and I do not answer questions" in offline.output
