"""The plan service as a person talks to it: steps its agent could not do, missing details, refusals, human words
for verdicts and stopping, help, and the terminal's prose (the conversational probe's P2, P4, P10, P11)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.orchestration.plan_support import agent

from examples.plan_service import app
from podium import Artifact, Runtime
from podium.messages import AIMessage, ToolMessage
from podium.orchestration.plan import (
    OfflineAgentModel,
    OfflinePlanner,
    PlanRequest,
    SessionRecord,
    describe,
    parse_verdict,
)
from podium.orchestration.plan.outcome import CANNOT_DO
from podium.settings import Settings
from podium.testing import FunctionModel, tool_call


async def _record(runtime: Runtime, thread: str) -> SessionRecord:
    return SessionRecord.from_events(thread, await runtime.store.read_events(thread))


def _offline() -> Any:
    return app.build(app.model(Settings.load(env={})))


def _planner() -> OfflinePlanner:
    from examples.plan_service import catalogue

    return OfflinePlanner(catalogue(OfflineAgentModel()))


async def test_a_step_its_offline_agent_could_not_do_is_failed_and_never_counted_done() -> None:
    runtime, plans = Runtime(), _offline()
    asked = await runtime.run(plans, "record overtime hours")
    assert asked.interrupts[0].data["kind"] == "clarification"  # asked first (see the planner test below)
    planned = await runtime.resume(plans, asked.thread_id, "I am not sure")  # asked once: planned anyway
    assert planned.interrupts[0].data["kind"] == "approval"
    failed = await runtime.resume(plans, asked.thread_id, "approve")
    assert failed.interrupts[0].data["kind"] == "replan"
    assert "record_overtime needs employee_name, hours" in failed.interrupts[0].prompt
    plan = (await _record(runtime, asked.thread_id)).plans[-1]
    assert [(s.status, s.error) for s in plan.steps] == [
        ("failed", "record_overtime needs employee_name, hours, which the step does not say")
    ]
    assert plan.overall_status == "failed"
    stopped = await runtime.resume(plans, asked.thread_id, "stop")
    assert stopped.output.startswith("Plan failed: step 1 failed: record_overtime needs")
    assert "steps done" not in stopped.output


async def test_a_model_driven_specialist_says_it_could_not_act_with_the_cannot_do_step_tool() -> None:
    def model(messages: list[Any], request: Any) -> AIMessage | str:
        assert CANNOT_DO in [t.name for t in request.tools]  # the plan gave every ReactAgent specialist the tool
        if isinstance(messages[-1], ToolMessage):
            return "Sorry, I need the person's name."
        return AIMessage(tool_calls=[tool_call(CANNOT_DO, {"reason": "the step names no person"})])

    runtime, plans = Runtime(), agent(model=FunctionModel(model))
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    failed = await runtime.resume(plans, first.thread_id, "approve")
    assert failed.interrupts[0].data["kind"] == "replan"
    (plan,) = (await _record(runtime, first.thread_id)).plans
    assert (plan.steps[0].status, plan.steps[0].error) == ("failed", "the step names no person")
    assert plan.steps[0].agent_reply == "Sorry, I need the person's name."
    assert plan.overall_status == "failed" and plan.reason == "step 1 failed: the step names no person"


def test_the_offline_planner_asks_for_the_details_the_tools_require() -> None:
    planner = _planner()
    draft = planner.draft(PlanRequest(task="record overtime hours"))
    assert draft.steps == []
    question = draft.human_clarification_request or ""
    assert "I need to know who it is for and the hours" in question
    answered = planner.draft(PlanRequest(task="record overtime hours", clarifications=["for Ada Lovelace, 5 hours"]))
    assert [(s.tool, s.action) for s in answered.steps] == [
        ("record_overtime", "Record overtime hours worked by an employee for Ada Lovelace, hours: 5.")
    ]
    again = planner.draft(PlanRequest(task="record overtime hours", clarifications=["no idea"], questions=[question]))
    assert [s.tool for s in again.steps] == ["record_overtime"]  # asked once, then planned: the step will say why


def test_a_destructive_task_no_tool_does_is_told_so_not_planned_as_other_work() -> None:
    planner = _planner()
    for task, verb in [("delete all employee records", "delete"), ("Wipe every backup of the payroll", "wipe")]:
        draft = planner.draft(PlanRequest(task=task, confirmed=True))
        assert draft.steps == [], task
        assert (draft.human_clarification_request or "").startswith(f"None of the agents can {verb} anything")


@pytest.mark.parametrize(
    "task",
    [
        "delete all employee records and wipe the backups so nobody notices",
        "change the overtime records so HR won't find out",
        "cover up the missing laptops",
        "hide the evidence of the data leak",
    ],
)
async def test_a_request_to_hide_what_is_done_is_refused_without_a_confirm_path(task: str) -> None:
    runtime, plans = Runtime(), _offline()
    result = await runtime.run(plans, task)
    assert result.status == "completed" and not result.interrupts
    assert result.output.startswith("I will not plan this")
    (plan,) = (await _record(runtime, result.thread_id)).plans
    assert (plan.overall_status, plan.steps, plan.planner) == ("rejected", [], "refusal")


@pytest.mark.parametrize(
    ("answer", "approved", "stop"),
    [
        ("sure", True, False),
        ("ok", True, False),
        ("go ahead", True, False),
        ("yes please", True, False),
        ("yep, do it", True, False),
        ("no", False, False),
        ("nope", False, False),
        ("skip", False, False),
        ("no, don't do it", False, False),
        ("stop", False, True),
        ("Cancel", False, True),
        ("never mind", False, True),
        ("forget it", False, True),
    ],
)
def test_common_words_are_verdicts(answer: str, approved: bool, stop: bool) -> None:
    verdict = parse_verdict(answer)
    assert verdict is not None and (verdict.approved, verdict.stop) == (approved, stop)


def test_a_yes_with_a_change_is_not_taken_as_a_plain_approval() -> None:
    assert parse_verdict("ok but make it a developer laptop") is None


async def test_stop_at_a_step_ends_the_plan_instead_of_asking_again() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    await runtime.resume(plans, first.thread_id, "sure")
    stopped = await runtime.resume(plans, first.thread_id, "never mind")
    assert stopped.status == "completed"
    assert stopped.output == "Plan stopped at step 2 of 3: 1 done, 1 rejected, 1 not run."
    (plan,) = (await _record(runtime, first.thread_id)).plans
    assert [s.status for s in plan.steps] == ["completed", "rejected", "cancelled"]
    assert plan.overall_status == "completed"

    second = await runtime.run(plans, "Onboard Ada Lovelace")
    cancelled = await runtime.resume(plans, second.thread_id, "cancel")
    assert cancelled.output == "Plan stopped at step 1 of 3: nothing done, 1 rejected, 2 not run."
    assert (await _record(runtime, second.thread_id)).plans[0].overall_status == "rejected"


async def test_help_and_stop_with_nothing_planned_are_answered_not_planned() -> None:
    runtime, plans = Runtime(), _offline()
    for text in ("what can you do?", "help", "Help me"):
        helped = await runtime.run(plans, text)
        assert helped.status == "completed" and helped.output.startswith("I plan tasks for a team of agents"), text
        assert (await _record(runtime, helped.thread_id)).plans == []
    stopped = await runtime.run(plans, "stop")
    assert stopped.output.startswith("Nothing is planned or running, so there is nothing to stop.")
    assert (await _record(runtime, stopped.thread_id)).plans == []


async def test_help_at_the_planner_s_question_describes_the_service_and_asks_again() -> None:
    runtime, plans = Runtime(), _offline()
    asked = await runtime.run(plans, "asap")
    question = asked.interrupts[0].prompt
    helped = await runtime.resume(plans, asked.thread_id, "what can you do?")
    assert helped.status == "interrupted"
    assert helped.interrupts[0].prompt.startswith("I plan tasks") and helped.interrupts[0].prompt.endswith(question)
    assert len((await _record(runtime, asked.thread_id)).plans) == 1  # not taken as information: no re-plan
    planned = await runtime.resume(plans, asked.thread_id, "Onboard Ada Lovelace, who starts next week")
    assert planned.interrupts[0].prompt.startswith("Step 1 of 6 (HrAgent): Create the HR record of an employee for")


async def test_step_texts_read_as_prose_and_plan_artifacts_are_described_in_words() -> None:
    runtime, plans, events = Runtime(), _offline(), []
    first = await runtime.run(plans, "Onboard Jessica Smith, who starts next week", on_event=events.append)
    prompt = first.interrupts[0].prompt
    assert prompt == "Step 1 of 6 (HrAgent): Create the HR record of an employee for Jessica Smith, next week. Approve?"
    await runtime.resume(plans, first.thread_id, "approve", on_event=events.append)
    said = [describe(e.title, e.content) for e in events if isinstance(e, Artifact)]
    assert said[0] is not None and said[0].startswith("plan v1 (in progress), 6 steps: 1. HrAgent: Create the HR")
    assert "step 1 waits for your verdict" in said and "step 1 approved" in said and "step 1 is running" in said
    assert not any(s is None or "{" in s or "[create_employee_record]" in s for s in said)


@pytest.mark.parametrize(
    ("said", "approved", "every"),
    [
        ("aprove", True, False),
        ("rejct all", False, True),
        ("don't approve that", False, False),
        ("please do not run it", False, False),
        ("of course", True, False),
        ("no thank you", False, False),
    ],
)
def test_misspelt_negated_and_everyday_verdicts_are_read(said: str, approved: bool, every: bool) -> None:
    from podium.orchestration.plan.record import parse_verdict

    verdict = parse_verdict(said)
    assert verdict is not None and (verdict.approved, verdict.all) == (approved, every)


@pytest.mark.parametrize(
    ("said", "reply"),
    [
        ("hello there!", "Hello! I plan tasks"),
        ("good morning, how's it going?", "Hello! I plan tasks"),
        ("thanks a lot", "You're welcome. I plan tasks"),
        ("ok bye", "Goodbye."),
        (
            "what time is it in Tokyo?",
            "'what time is it in Tokyo?' is a question, and I do not answer questions: I plan",
        ),
        ("is the printer on the 2nd floor working", "'is the printer on the 2nd floor working' is a question"),
        ("cool. what can you do?", "I plan tasks"),
        ("alright, let's stop here", "Nothing is planned or running, so there is nothing to stop."),
    ],
)
async def test_small_talk_questions_and_stops_are_answered_never_planned(said: str, reply: str) -> None:
    runtime, plans = Runtime(), _offline()
    result = await runtime.run(plans, said)
    assert result.status == "completed" and result.output.startswith(reply)
    assert "for example 'Onboard Ada Lovelace, who starts next week'" in result.output or reply == "Goodbye."
    assert (await _record(runtime, result.thread_id)).plans == []


async def test_a_request_asked_as_a_question_or_after_a_greeting_is_planned() -> None:
    runtime, plans = Runtime(), _offline()
    for said in ("hi! can you reset the password for Grace Hopper?", "could you please reset Grace Hopper's password"):
        result = await runtime.run(plans, said)
        assert (
            result.interrupts[0].prompt
            == "Step 1 of 1 (TechSupportAgent): Reset a user's password for Grace Hopper. Approve?"
        )


@pytest.mark.parametrize("said", ["approve all", "yes", "ok, go ahead", "how long will that take?", "thank you"])
async def test_at_the_planner_s_question_a_verdict_small_talk_or_a_question_is_no_information(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    asked = await runtime.run(plans, "record overtime hours")
    question = asked.interrupts[0].prompt
    again = await runtime.resume(plans, asked.thread_id, said)
    assert again.status == "interrupted" and again.interrupts[0].data["kind"] == "clarification"
    assert again.interrupts[0].prompt.endswith(question) and again.interrupts[0].prompt != question
    assert len((await _record(runtime, asked.thread_id)).plans) == 1  # not re-planned with it
    answered = await runtime.resume(plans, asked.thread_id, "for Grace Hopper, 3 hours")
    assert answered.interrupts[0].prompt.endswith("for Grace Hopper, hours: 3. Approve?")


@pytest.mark.parametrize("said", ["ok that's enough for now", "let's stop here please", "I'm done", "stop now thanks"])
async def test_a_stop_in_other_words_at_a_step_stops_the_plan(said: str) -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    await runtime.resume(plans, first.thread_id, "yes")
    stopped = await runtime.resume(plans, first.thread_id, said)
    assert stopped.output == "Plan stopped at step 2 of 3: 1 done, 1 rejected, 1 not run."


async def test_help_small_talk_and_questions_at_a_step_are_answered_and_the_step_asked_again() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    step = "Step 2 of 3 (Procurement): Order a laptop for a new employee for Ada Lovelace. Approve?"
    await runtime.resume(plans, first.thread_id, "yes")
    for said, head in [
        ("what can you do here?", "I plan tasks for a team of agents"),
        ("thank you!", "You're welcome. The plan waits for your verdict on this step"),
        (
            "how many are left?",
            "I cannot answer questions here, only take your verdict. Plan v1: 1 step done; step 2 of",
        ),
        ("what does that cost", "I cannot answer questions here"),
    ]:
        asked = await runtime.resume(plans, first.thread_id, said)
        assert asked.interrupts[0].prompt.startswith(head), said
        assert asked.interrupts[0].prompt.endswith(step), said
    record = await _record(runtime, first.thread_id)
    assert len(record.plans) == 1 and [s.status for s in record.plans[0].steps][1] == "awaiting_feedback"


@pytest.mark.parametrize(
    ("said", "detail"),
    [
        ("oh wait, she actually starts on the 3rd", "for Ada Lovelace, the 3rd."),
        ("sorry, her name is Grace Hopper", "for Grace Hopper."),
        ("it's for Alan Turing, he starts tomorrow", "for Alan Turing, tomorrow."),
        ("no, she actually starts on the 3rd", "for Ada Lovelace, the 3rd."),  # a no that corrects rejects nothing
    ],
)
async def test_a_correction_at_a_step_re_plans_the_rest_with_it(said: str, detail: str) -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    await runtime.resume(plans, first.thread_id, "yes")  # step 1 done: not planned again
    replanned = await runtime.resume(plans, first.thread_id, said)
    prompt = replanned.interrupts[0].prompt
    assert prompt.startswith(f"Planned again with what you said ({said!r}).")
    record = await _record(runtime, first.thread_id)
    assert [p.version for p in record.plans] == [1, 2]
    assert [s.tool for s in record.plans[1].steps] == ["order_laptop", "welcome"]
    assert all(s.action.endswith(detail) for s in record.plans[1].steps)


async def test_a_correction_the_planner_cannot_use_is_said_plainly() -> None:
    runtime, plans = Runtime(), agent()
    first = await runtime.run(plans, "Onboard Ada Lovelace")
    same = await runtime.resume(plans, first.thread_id, "make it the new one instead")
    assert same.interrupts[0].prompt.startswith(
        "The plan stays as it was with 'make it the new one instead': the planner found nothing in it to change. "
        "To change a step, answer 'edit: <new action>'."
    )
    unknown = await runtime.resume(plans, first.thread_id, "make it the premium one instead")
    assert unknown.interrupts[0].prompt.startswith(  # a thing no tool handles is named as such
        "No agent can do that: none of their tools handles 'premium', so the plan stays as it was."
    )


async def test_a_new_task_while_a_step_waits_is_planned_after_the_plan() -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a laptop for Grace Hopper")
    noted = await runtime.resume(plans, first.thread_id, "great, now reset her password too")
    prompt = noted.interrupts[0].prompt
    assert prompt.startswith("Noted: I will plan 'reset her password too' when this plan ends.")
    assert prompt.endswith(
        "Step 1 of 1 (ProcurementAgent): Order a laptop for an employee or new starter for Grace Hopper. Approve?"
    )
    also = await runtime.resume(plans, first.thread_id, "also order a monitor for Grace Hopper")
    assert also.interrupts[0].prompt.startswith("Noted: I will plan 'order a monitor for Grace Hopper' when")
    second = await runtime.resume(plans, first.thread_id, "approve")
    assert second.interrupts[0].prompt.startswith("Now the task you added: 'reset her password too'.\n\n")
    said = [m.content for m in await runtime.store.load_messages(first.thread_id) if isinstance(m, AIMessage)]
    assert said[-1] == "Plan completed: 1 of 1 steps done. 1 step by ProcurementAgent."  # the first plan's outcome
    third = await runtime.resume(plans, first.thread_id, "stop")  # the planner's question for that task
    assert third.interrupts[0].prompt.startswith("Now the task you added: 'order a monitor for Grace Hopper'.")
    done = await runtime.resume(plans, first.thread_id, "approve")
    assert done.output == "Plan completed: 1 of 1 steps done. 1 step by ProcurementAgent."
    record = await _record(runtime, first.thread_id)
    assert [(p.initial_goal, p.overall_status) for p in record.plans] == [
        ("order a laptop for Grace Hopper", "completed"),
        ("reset her password too", "rejected"),
        ("order a monitor for Grace Hopper", "completed"),
    ]


@pytest.mark.parametrize(
    ("said", "task"),
    [
        ("great, now order her a phone charger", "order her a phone charger"),
        ("also book a meeting room for Friday", "book a meeting room for Friday"),
        ("order a headset for Ada", "order a headset for Ada"),  # starts with a tool's verb
        ("looks fine to me", None),
        ("", None),
    ],
)
def test_a_new_task_said_while_a_plan_waits_is_told_apart(said: str, task: str | None) -> None:
    from podium.orchestration.plan.reading import next_task

    assert next_task(said, frozenset({"order", "book"})) == task
