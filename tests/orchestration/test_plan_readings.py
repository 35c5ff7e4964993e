"""The plan service reads what people name in their own words: a person ruled out by a correction, a time that is
no headcount, a task said with another form of a tool's verb, typos, follow-ups for another person, parts of a
task no agent can do, and small talk."""

from __future__ import annotations

from typing import Any

import pytest

from examples.plan_service import app, catalogue
from podium import Runtime
from podium.orchestration.plan import OfflineAgentModel, OfflinePlanner, SessionRecord, facts
from podium.orchestration.plan.planner import PlanRequest
from podium.settings import Settings

_PLANNER = OfflinePlanner(catalogue(OfflineAgentModel()))


def _offline() -> Any:
    return app.build(app.model(Settings.load(env={})))


def _steps(task: str, *clarifications: str) -> list[tuple[str | None, str]]:
    draft = _PLANNER.draft(PlanRequest(task=task, clarifications=list(clarifications)))
    return [(step.tool, step.action) for step in draft.steps]


async def _record(runtime: Runtime, thread: str) -> SessionRecord:
    return SessionRecord.from_events(thread, await runtime.store.read_events(thread))


@pytest.mark.parametrize(
    "correction",
    [
        "sorry, it's for Mia Chen not Mia Wong",
        "Mia Chen, not Mia Wong",
        "for Mia Chen instead of Mia Wong",
        "oops, Mia Chen rather than Mia Wong",
        "it isn't for Mia Wong, it's for Mia Chen",
        "not Mia Wong but Mia Chen",
    ],
)
async def test_a_correction_that_rules_a_person_out_plans_for_the_one_named_only(correction: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a laptop for Mia Wong")
    again = await runtime.resume(plans, first.thread_id, correction)
    assert "Step 1 of 1" in again.interrupts[0].prompt and "for Mia Chen" in again.interrupts[0].prompt, (
        again.interrupts[0].prompt
    )
    done = await runtime.resume(plans, first.thread_id, "approve all")
    assert done.output.startswith("Plan completed: 1 of 1 steps done")
    record = await _record(runtime, first.thread_id)
    ran = [s.action for p in record.plans for s in p.steps if s.status == "completed"]
    assert len(ran) == 1 and "Mia Chen" in ran[0] and "Mia Wong" not in ran[0]


def test_a_person_ruled_out_keeps_the_others_named_before() -> None:
    steps = _steps("order a laptop for Mia Wong and Ben Hart", "Mia Chen, not Mia Wong")
    assert [action.rpartition(" for ")[2] for _, action in steps] == ["Mia Chen.", "Ben Hart."]
    assert _steps("order a laptop for Mia Chen, not Mia Wong") == [
        ("order_laptop", "Order a laptop for an employee or new starter for Mia Chen.")
    ]


@pytest.mark.parametrize(
    ("said", "found"),
    [
        ("sorry, it's for Mia Chen not Mia Wong", {"name": "Mia Chen"}),
        ("not Mia Wong but Mia Chen", {"name": "Mia Chen"}),
        ("he starts tuesday, not monday", {"date": "tuesday"}),
        ("on friday at 10", {"date": "on friday at 10"}),
        ("at 3pm next monday", {"date": "next monday at 3pm"}),
    ],
)
def test_facts_leave_out_what_is_ruled_out_and_keep_the_time_with_the_date(said: str, found: dict[str, str]) -> None:
    assert facts(said) == found


@pytest.mark.parametrize(
    "task",
    [
        "book a meeting room for the sales team on friday at 10",
        "book a meeting room for the sales team on friday at 10am",
        "book a meeting room on monday at 9:30 for the design team",
        "book a meeting room at 2 pm next tuesday for marketing",
        "order catering for the board meeting on the 12th at 12",
    ],
)
def test_a_time_is_never_a_headcount_the_people_are_asked(task: str) -> None:
    draft = _PLANNER.draft(PlanRequest(task=task))
    assert not draft.steps and "how many people" in (draft.human_clarification_request or ""), draft


@pytest.mark.parametrize(
    ("task", "people"),
    [
        ("book a meeting room for 8 people on friday at 10", "8"),
        ("book a meeting room for a team of 6 on monday at 9:30", "6"),
        ("book a meeting room for 12 on friday", "12"),
        ("book a meeting room for 4 attendees tomorrow at 3pm", "4"),
    ],
)
def test_a_headcount_is_taken_from_words_that_say_people(task: str, people: str) -> None:
    [(tool, action)] = _steps(task)
    assert tool == "book_meeting_room" and action.endswith(f"people: {people}."), action


async def test_a_time_and_a_headcount_reach_the_tool() -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "book a meeting room for the sales team on friday at 10")
    assert "how many people" in first.interrupts[0].prompt
    step = await runtime.resume(plans, first.thread_id, "8 people")
    assert "Book a meeting room on friday at 10, people: 8" in step.interrupts[0].prompt, step.interrupts[0].prompt
    done = await runtime.resume(plans, first.thread_id, "approve")
    assert done.output.startswith("Plan completed")
    record = await _record(runtime, first.thread_id)
    [reply] = [s.agent_reply for p in record.plans for s in p.steps if s.agent_reply]
    assert "date=on friday at 10" in (reply or "") and "people=8" in (reply or ""), reply


_ONBOARDING = [
    "create_employee_record",
    "set_up_payroll",
    "enroll_in_benefits",
    "schedule_orientation",
    "set_up_email_account",
    "set_up_laptop",
]


@pytest.mark.parametrize(
    "task",
    [
        "please get Sam Ortiz onboarded, starts next thursday",
        "we have a new hire, Sam Ortiz, starting next thursday, please get her onboarded",
        "can you get Sam Ortiz onboarded by next thursday",
        "Sam Ortiz needs to be onboarded next thursday",
        "have Sam Ortiz onboarded for next thursday please",
    ],
)
def test_a_task_said_with_another_form_of_its_verb_plans_what_the_plain_one_does(task: str) -> None:
    plain = _steps("onboard Sam Ortiz, starting next thursday")
    assert [tool for tool, _ in plain] == _ONBOARDING
    assert _steps(task) == plain


@pytest.mark.parametrize(
    ("task", "plain"),
    [
        (
            "get a performance review scheduled for Ben Hart next tuesday",
            "schedule a performance review for Ben Hart next tuesday",
        ),
        ("have the meeting room booked for 8 people on friday", "book the meeting room for 8 people on friday"),
        ("can you have Ana Cruz set up with a laptop", "set up a laptop for Ana Cruz"),
        ("Ana Cruz's password needs resetting", "reset the password of Ana Cruz"),
        ("the contract should be reviewed before friday", "review the contract before friday"),
    ],
)
def test_inflected_and_passive_forms_of_a_tool_s_verb_read_as_the_verb(task: str, plain: str) -> None:
    assert [tool for tool, _ in _steps(task)] == [tool for tool, _ in _steps(plain)] != []


@pytest.mark.parametrize(
    ("task", "plain"),
    [
        ("ordr a new moniter for Ada Kerr", "order a monitor for Ada Kerr"),
        ("order a moniter for Ada Kerr", "order a monitor for Ada Kerr"),
        ("onbaord Ivy Chen next monady", "onboard Ivy Chen next monday"),
        ("Onbaord Ivy Chen tomorow", "onboard Ivy Chen tomorrow"),
        ("order a keybord and a headsett for Ana Cruz", "order a keyboard and a headset for Ana Cruz"),
        (
            "shedule a performance review for Ben Hart on wendesday",
            "schedule a performance review for Ben Hart on wednesday",
        ),
        ("reset the pasword of Ana Cruz", "reset the password of Ana Cruz"),
    ],
)
def test_typos_in_the_words_the_planner_matches_are_mended(task: str, plain: str) -> None:
    assert _steps(task) == _steps(plain) != []


def test_names_and_words_made_from_a_known_one_are_not_mended() -> None:
    from podium.orchestration.plan.mending import Mending

    mending = Mending(catalogue(OfflineAgentModel()))
    assert mending.mend("order a phone charger for Laura Smith") == "order a phone charger for Laura Smith"
    assert mending.mend("Mia Chen rather than Mia Wong") == "Mia Chen rather than Mia Wong"


@pytest.mark.parametrize(
    "said",
    [
        "same for Joe Park",
        "do that for Joe Park",
        "and one for Joe Park too",
        "the same again for Joe Park please",
        "what about Joe Park?",
        "great, now the same for Joe Park",
        "order the same for Joe Park",
    ],
)
async def test_a_follow_up_naming_another_person_plans_the_last_task_for_them(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a headset for Lin Ma")
    await runtime.resume(plans, first.thread_id, "approve")
    again = await runtime.run(plans, said, thread_id=first.thread_id)
    prompt = again.interrupts[0].prompt
    assert "Step 1 of 1 (ProcurementAgent): Order a headset for an employee for Joe Park." in prompt, prompt


async def test_a_follow_up_keeps_the_task_and_takes_a_new_date() -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "onboard Pia Lund next monday")
    await runtime.resume(plans, first.thread_id, "approve all")
    again = await runtime.run(plans, "and one for Joe Park too, next friday", thread_id=first.thread_id)
    assert "Step 1 of 6 (HrAgent): Create the HR record of an employee for Joe Park, next friday." in (
        again.interrupts[0].prompt
    )
    nothing = await Runtime().run(plans, "same for Joe Park")
    assert nothing.output.startswith("Which task should I plan for Joe Park?")


async def test_a_follow_up_for_another_person_at_a_step_is_planned_after_the_plan() -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a laptop for Lin Ma")
    noted = await runtime.resume(plans, first.thread_id, "same for Joe Park")
    assert noted.interrupts[0].prompt.startswith(
        "Noted: I will plan 'order a laptop for Joe Park' when this plan ends."
    )
    after = await runtime.resume(plans, first.thread_id, "approve")
    assert "Order a laptop for an employee or new starter for Joe Park" in after.interrupts[0].prompt
    record = await _record(runtime, first.thread_id)
    assert [s.action for s in record.plans[0].steps] == ["Order a laptop for an employee or new starter for Lin Ma."]


@pytest.mark.parametrize(
    ("said", "reply"),
    [
        ("cheers, that's everything", "You're welcome."),
        ("thanks, all sorted", "You're welcome."),
        ("ok that's all i needed, thanks", "You're welcome."),
        ("morning! coffee kicked in yet?", "Hello!"),
        ("morning! how's it going?", "Hello!"),
        ("good evening", "Hello!"),
        ("afternoon all, busy day?", "Hello!"),
    ],
)
async def test_small_talk_in_other_words_is_never_planned(said: str, reply: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a keyboard for Ana Cruz")
    await runtime.resume(plans, first.thread_id, "approve all")
    after = await runtime.run(plans, said, thread_id=first.thread_id)
    assert after.status == "completed" and after.output.startswith(reply), after.output
    assert len((await _record(runtime, first.thread_id)).plans) == 1


@pytest.mark.parametrize(
    "task", ["morning, order a laptop for Ana Cruz", "evening! can you order a monitor for Ana Cruz?"]
)
async def test_a_task_after_a_greeting_is_still_planned(task: str) -> None:
    result = await Runtime().run(_offline(), task)
    assert result.interrupts and result.interrupts[0].data["kind"] == "approval"


@pytest.mark.parametrize(
    ("task", "tools", "left_out"),
    [
        ("onboard Ivy Chen next monday, and order a parking pass for her too", _ONBOARDING, "order a parking pass"),
        ("order a laptop and a phone charger for Ben Hart", ["order_laptop"], "a phone charger"),
        ("order a monitor for Ben Hart and also water the office plants", ["order_monitor"], "water the office plants"),
    ],
)
async def test_the_parts_of_a_task_an_agent_can_do_are_planned_and_the_rest_said(
    task: str, tools: list[str], left_out: str
) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, task)
    prompt = first.interrupts[0].prompt
    assert prompt.startswith("No agent can do '") and left_out in prompt.partition("\n")[0], prompt
    assert "Step 1 of" in prompt
    plan = (await _record(runtime, first.thread_id)).plans[-1]
    assert [s.tool for s in plan.steps] == tools
    assert all(person in s.action for s in plan.steps for person in ["Ivy Chen", "Ben Hart"] if person in task)


@pytest.mark.parametrize(
    "task", ["onboard Ada Lovelace and Bob Stone next monday", "order a laptop and a monitor for Ben Hart"]
)
def test_a_task_whose_every_part_fits_is_planned_whole(task: str) -> None:
    draft = _PLANNER.draft(PlanRequest(task=task))
    assert draft.steps and not draft.unplanned


def test_what_was_not_planned_is_not_in_the_schema_a_model_is_shown() -> None:
    from podium.orchestration.plan import PlanDraft

    assert "unplanned" not in PlanDraft.model_json_schema()["properties"]


def test_short_real_words_are_not_mended_into_the_catalogue_s() -> None:
    from podium.orchestration.plan.mending import Mending

    assert Mending(catalogue(OfflineAgentModel())).mend("water the plants later") == "water the plants later"
