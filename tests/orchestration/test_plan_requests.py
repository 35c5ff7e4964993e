"""What the plan service makes of a message as a whole: a stop said with its reason stops the plan; every part of
a request in several parts planned; a thing no agent has a tool for said plainly (never planned as another thing
done the same way); one-typo spellings of the service's verbs mended alike."""

from __future__ import annotations

from typing import Any

import pytest

from examples.plan_service import app, catalogue
from podium import Runtime
from podium.orchestration.plan import OfflineAgentModel, OfflinePlanner
from podium.orchestration.plan.planner import PlanRequest
from podium.orchestration.plan.reading import ends, ends_for_a_reason
from podium.settings import Settings

_PLANNER = OfflinePlanner(catalogue(OfflineAgentModel()))
_VERBS = frozenset(name.split("_")[0] for name in (e.tool.name for e in _PLANNER.catalogue.tools))
_ONBOARDING = {"create_employee_record", "set_up_payroll", "set_up_email_account"}


def _offline() -> Any:
    return app.build(app.model(Settings.load(env={})))


def _tools(task: str) -> list[str]:
    return [step.tool or "" for step in _PLANNER.draft(PlanRequest(task=task)).steps]


_STOPS_WITH_A_REASON = [
    "actually scrap that, he's staying",
    "no forget it, she changed her mind",
    "let's drop this, not needed anymore",
    "cancel the whole thing please, he isn't leaving",
    "cancel the whole thing please he isn't leaving",
    "forget it we don't need it",
    "cancel it i changed my mind",
    "stop, she got a better offer elsewhere",
    "she's staying with us, so cancel it",
    "never mind, she decided to stay after all",
    "ok scrap that - they found someone else",
    "hmm forget about it, the position was filled",
]


@pytest.mark.parametrize("said", _STOPS_WITH_A_REASON)
async def test_a_stop_said_with_its_reason_at_a_step_stops_the_plan(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "onboard Lucy Gray next week")
    stopped = await runtime.resume(plans, first.thread_id, said)
    assert stopped.status == "completed" and not stopped.interrupts
    assert stopped.output == "Plan stopped at step 1 of 6: nothing done, 1 rejected, 5 not run.", stopped.output


@pytest.mark.parametrize("said", _STOPS_WITH_A_REASON[:4])
async def test_a_stop_said_with_its_reason_after_a_step_is_done_keeps_what_was_done(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a laptop and a monitor for Ken Ito")
    await runtime.resume(plans, first.thread_id, "approve")
    stopped = await runtime.resume(plans, first.thread_id, said)
    assert stopped.output == "Plan stopped at step 2 of 2: 1 done, 1 rejected.", stopped.output


@pytest.mark.parametrize("said", ["forget it, he's staying", "never mind, not needed any more"])
async def test_a_stop_said_with_its_reason_at_the_planner_s_question_drops_the_task(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "offboard Tom Hill")  # the date is asked
    stopped = await runtime.resume(plans, first.thread_id, said)
    assert stopped.output.startswith("Plan rejected: stopped by the human at the planner's question"), stopped.output


@pytest.mark.parametrize(
    "said",
    [
        "scrap that, she starts on the 15th",  # a new date: the plan corrected
        "forget it, order a monitor instead",
        "scrap that, order a monitor for him",
        "cancel that, make it a tablet",
        "scrap that, Tom Hall",
        "forget it, 3 monitors",
        "stop the laptop order",  # a step named, not the plan
        "cancel the laptop, he has one",
        "leave it with me",
    ],
)
def test_a_stop_followed_by_what_to_do_instead_is_no_stop_with_a_reason(said: str) -> None:
    assert not ends_for_a_reason(said, _VERBS) and not ends(said, _VERBS)


async def test_a_stop_followed_by_a_new_date_corrects_the_plan() -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "onboard Lucy Gray next week")
    again = await runtime.resume(plans, first.thread_id, "scrap that, she starts on the 15th")
    assert "Create the HR record of an employee for Lucy Gray, the 15th" in again.interrupts[0].prompt


@pytest.mark.parametrize(
    ("task", "parts"),
    [
        ("onboard Gina Holt next monday and arrange a team lunch", [_ONBOARDING, {"order_lunch"}]),
        ("Onboard Lara Fox on the 3rd and order lunch for her", [_ONBOARDING, {"order_lunch"}]),
        (
            "please onboard Ana Cruz on the 3rd, also book a meeting room for 6 people",
            [_ONBOARDING, {"book_meeting_room"}],
        ),
        ("onboard Gina Holt next monday and order her a monitor", [_ONBOARDING, {"order_monitor"}]),
        ("offboard Tom Hill on friday and order lunch for him", [{"start_offboarding"}, {"order_lunch"}]),
    ],
)
def test_every_part_of_a_request_in_several_parts_is_planned(task: str, parts: list[set[str]]) -> None:
    planned = set(_tools(task))
    assert all(part <= planned for part in parts), planned


async def test_a_request_in_two_parts_shows_both_in_the_plan() -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "onboard Gina Holt next monday and arrange a team lunch")
    prompt = first.interrupts[0].prompt
    assert prompt.startswith("Step 1 of 7 (HrAgent): Create the HR record of an employee for Gina Holt"), prompt


@pytest.mark.parametrize(
    ("task", "thing"),
    [
        ("order a tablet for Max Rowe", "tablet"),
        ("could you order an iPad for Max Rowe by friday?", "ipad"),
        ("order two tablets for the sales team", "tablets"),
        ("pls order a projector for Max Rowe", "projector"),
        ("get Max Rowe a tablet", "tablet"),
        ("schedule a haircut for Ana Cruz next monday", "haircut"),
    ],
)
def test_a_thing_no_agent_has_a_tool_for_is_said_plainly_not_planned_as_another(task: str, thing: str) -> None:
    draft = _PLANNER.draft(PlanRequest(task=task))
    question = draft.human_clarification_request or ""
    assert draft.steps == [] and question.startswith(f"I cannot plan {task!r}: no agent has a tool for "), question
    assert repr(thing) in question.partition(".")[0] and "The closest I have:" in question
    assert "how many people" not in question and "the date" not in question  # not a booking's questions


async def test_an_equipment_order_no_agent_does_gets_no_booking_questions() -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a tablet for Max Rowe")
    prompt = first.interrupts[0].prompt
    assert prompt.startswith("I cannot plan 'order a tablet for Max Rowe': no agent has a tool for 'tablet'."), prompt
    assert "Create a purchase order for goods or services (ProcurementAgent)" in prompt


@pytest.mark.parametrize(
    ("typed", "plain"),
    [
        ("ofboard Tom Hill on friday", "offboard Tom Hill on friday"),
        ("we need to ofboard Sam Reed on friday", "we need to offboard Sam Reed on friday"),
        ("offbaord Tom Hill on friday", "offboard Tom Hill on friday"),
        ("oboard Ivy Chen next monday", "onboard Ivy Chen next monday"),
        ("onbaord Lara Fox next tuesday", "onboard Lara Fox next tuesday"),
        ("rplace the broken laptop of Ana Cruz", "replace the broken laptop of Ana Cruz"),
        (
            "shcedule a performance review for Ana Cruz next monday",
            "schedule a performance review for Ana Cruz next monday",
        ),
        ("erport a security incident: a phishing email", "report a security incident: a phishing email"),
    ],
)
def test_one_typo_in_any_of_the_service_s_verbs_is_mended(typed: str, plain: str) -> None:
    steps = _PLANNER.draft(PlanRequest(task=typed)).steps
    assert (
        [(s.tool, s.action) for s in steps]
        == [(s.tool, s.action) for s in _PLANNER.draft(PlanRequest(task=plain)).steps]
        != []
    )
