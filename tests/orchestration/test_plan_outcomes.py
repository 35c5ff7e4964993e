"""What a plan ends as, and what is never planned: rejected plans, stray verdicts, destructive and unmappable tasks."""

from __future__ import annotations

from tests.orchestration.plan_support import agent

from examples.plan_service import app
from podium import Artifact, Runtime
from podium.orchestration.plan import SessionRecord, concern, is_verdict
from podium.settings import Settings


async def _record(runtime: Runtime, thread: str) -> SessionRecord:
    return SessionRecord.from_events(thread, await runtime.store.read_events(thread))


async def test_a_plan_whose_every_step_was_rejected_is_stored_and_reported_rejected() -> None:
    runtime, plans = Runtime(), agent()
    waiting = await runtime.run(plans, "Onboard Ada Lovelace")
    result = await runtime.resume(plans, waiting.thread_id, "reject all")
    assert result.output == "Plan rejected: nothing was done (all 3 steps rejected)"
    (plan,) = (await _record(runtime, waiting.thread_id)).plans
    assert (plan.overall_status, plan.reason, plan.rejected, plan.completed) == (
        "rejected",
        "nothing was done (all 3 steps rejected)",
        3,
        0,
    )


async def test_a_plan_with_some_steps_rejected_counts_them() -> None:
    runtime, plans = Runtime(), agent()
    result = await runtime.run(plans, "Onboard Ada Lovelace")
    for verdict in ("approve", "reject: we have spare laptops", "approve"):
        result = await runtime.resume(plans, result.thread_id, verdict)
    assert result.output == "Plan completed: 2 of 3 steps done, 1 rejected. 3 steps by Hr, Procurement, Generic."
    (plan,) = (await _record(runtime, result.thread_id)).plans
    assert (plan.overall_status, plan.reason) == ("completed", "2 of 3 steps done, 1 rejected")


async def test_a_stray_verdict_is_answered_not_planned() -> None:
    runtime, plans = Runtime(), app.build(app.model(Settings.load(env={})))
    for verdict in ("approve all", "Approved.", "looks good", "yes please", "reject", "no", "ok, go ahead"):
        result = await runtime.run(plans, verdict)
        assert result.status == "completed", verdict
        assert result.output.startswith("No plan is waiting for approval, so there is nothing to approve or reject")
        stored = await runtime.store.read_events(result.thread_id)
        assert not any(isinstance(e, Artifact) and e.title == "plan" for e in stored), verdict
    done = await runtime.run(plans, "Reset the password of John Doe")
    done = await runtime.resume(plans, done.thread_id, "approve all")
    assert done.output.startswith("Plan completed: 1 of 1 steps done")
    after = await runtime.run(plans, "approve all", thread_id=done.thread_id)
    assert after.output.startswith("No plan is waiting for approval")
    assert len((await _record(runtime, done.thread_id)).plans) == 1


def test_a_verdict_is_told_from_a_task() -> None:
    for verdict in ("approve all", "APPROVE", "yes", "y", "looks good to me", "lgtm", "reject all", "nope", "all"):
        assert is_verdict(verdict), verdict
    assert is_verdict('{"approved": true}') and is_verdict("clarify: she starts Monday")
    for task in (
        "Approve the purchase request for 3 monitors",
        "Go and order a laptop for Ada Lovelace",
        "No more paper in the printer, order some",
        "edit:",
        "",
    ):
        assert not is_verdict(task), task


def test_the_caution_check_asks_about_bulk_or_covert_destruction_only() -> None:
    for task in (
        "Delete all customer records from the CRM",
        "Wipe the entire shared drive",
        "Terminate Bob Stone's contract secretly",
        "Lay off the whole support team",
        "Revoke every user's access before the audit",
    ):
        assert (concern(task) or "").startswith("Please confirm first: this task looks destructive"), task
    for task in (
        "Delete the draft I sent yesterday",
        "Onboard everyone in the new team",
        "Remove Ada Lovelace from the mailing list",
        "Order a fire extinguisher for the office",
    ):
        assert concern(task) is None, task


async def test_a_destructive_task_is_confirmed_before_anything_is_planned() -> None:
    runtime, plans = Runtime(), app.build(app.model(Settings.load(env={})))
    task = "Remove all employees of the sales department from payroll without informing them"
    asked = await runtime.run(plans, task)
    assert asked.status == "interrupted" and asked.interrupts[0].prompt == concern(task)
    assert asked.interrupts[0].data["kind"] == "confirmation"
    (plan,) = (await _record(runtime, asked.thread_id)).plans
    assert (plan.steps, plan.planner) == ([], "caution check")
    stopped = await runtime.resume(plans, asked.thread_id, "stop")
    assert stopped.output == "Plan rejected: stopped by the human at the planner's question; nothing was done"
    assert (await _record(runtime, asked.thread_id)).plans[0].overall_status == "rejected"

    # confirmed, the task names nobody the matching tools need: the planner asks instead of planning steps
    again = await runtime.run(plans, task)
    asked = await runtime.resume(plans, again.thread_id, "confirm")
    assert asked.interrupts[0].data["kind"] == "clarification"
    assert "I need to know who it is for" in asked.interrupts[0].prompt
    first, second = (await _record(runtime, again.thread_id)).plans
    assert (first.overall_status, second.steps) == ("superseded", [])

    task = "Remove all system access of Tom Baker without telling him"
    again = await runtime.run(plans, task)
    assert again.interrupts[0].prompt == concern(task)
    confirmed = await runtime.resume(plans, again.thread_id, "confirm")
    assert confirmed.status == "interrupted" and confirmed.interrupts[0].data["kind"] == "approval"
    first, second = (await _record(runtime, again.thread_id)).plans
    assert (first.overall_status, second.planner) == ("superseded", "offline")
    assert [s.tool for s in second.steps] == ["remove_system_access"]


async def test_an_unmappable_task_gets_a_question_not_a_plan() -> None:
    runtime, plans = Runtime(), app.build(app.model(Settings.load(env={})))
    asked = await runtime.run(plans, "Flurb the wibbly gronks")
    assert asked.status == "interrupted"
    assert asked.interrupts[0].prompt.startswith("I could not make a plan for 'Flurb the wibbly gronks'")
    (plan,) = (await _record(runtime, asked.thread_id)).plans
    assert plan.steps == [] and plan.overall_status == "in_progress"
    replanned = await runtime.resume(plans, asked.thread_id, "reset the password of Ada Lovelace")
    assert "Reset a user's password for Ada Lovelace." in replanned.interrupts[0].prompt
    stopped = await runtime.resume(plans, replanned.thread_id, "reject all")
    assert stopped.output == "Plan rejected: nothing was done (step rejected)"
