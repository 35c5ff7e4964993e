"""The plan service read in the words people use: verdicts on the remaining steps, with or without a plan waiting;
stops said in other words; small talk before a task; changes of mind; parts of a task no agent can do."""

from __future__ import annotations

from typing import Any

import pytest

from examples.plan_service import app
from podium import Runtime
from podium.orchestration.plan import SessionRecord, is_verdict, parse_verdict
from podium.orchestration.plan.reading import ends
from podium.settings import Settings

_NO_PLAN = "No plan is waiting for approval, so there is nothing to approve or reject"


def _offline() -> Any:
    return app.build(app.model(Settings.load(env={})))


async def _record(runtime: Runtime, thread: str) -> SessionRecord:
    return SessionRecord.from_events(thread, await runtime.store.read_events(thread))


_ON_STEPS = [
    "approve the rest",
    "approve everything else",
    "all good, approve all",
    "skip the rest",
    "reject the remaining ones",
    "accept the rest of them",
    "decline those",
    "ok approve the remaining steps",
    "go ahead with the rest",
    "looks great, accept everything",
]


@pytest.mark.parametrize("said", _ON_STEPS)
async def test_a_verdict_on_steps_after_a_plan_ended_is_never_planned(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a monitor for Ken Ito")
    done = await runtime.resume(plans, first.thread_id, "approve")
    assert done.output.startswith("Plan completed")
    after = await runtime.run(plans, said, thread_id=first.thread_id)
    assert after.status == "completed" and after.output.startswith(_NO_PLAN), after.output
    assert len((await _record(runtime, first.thread_id)).plans) == 1  # no new plan, nothing run


@pytest.mark.parametrize("said", [*_ON_STEPS, "skip the laptop step", "approve step 2"])
async def test_a_verdict_on_steps_as_a_first_message_is_never_planned(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    result = await runtime.run(plans, said)
    assert result.output.startswith(_NO_PLAN) and (await _record(runtime, result.thread_id)).plans == []


@pytest.mark.parametrize(
    "task", ["approve a purchase request 4711", "approve all purchase requests 4711", "decline the meeting invite"]
)
def test_a_task_that_starts_with_a_verdict_word_is_still_a_task(task: str) -> None:
    assert not is_verdict(task)


@pytest.mark.parametrize(
    ("said", "approved", "every"),
    [
        ("all good, approve all", True, True),
        ("approve the rest", True, True),
        ("approve everything else", True, True),
        ("approve all of them", True, True),
        ("skip the rest", False, True),
        ("reject the remaining ones", False, True),
        ("no to all", False, True),
        ("yes to all", True, True),
        ("looks great, accept everything", True, True),
        ("all good", True, False),
        ("approve this step", True, False),
    ],
)
def test_verdicts_on_the_remaining_steps_are_read_at_a_step(said: str, approved: bool, every: bool) -> None:
    verdict = parse_verdict(said)
    assert verdict is not None and (verdict.approved, verdict.all) == (approved, every)


def test_two_verdicts_in_one_answer_are_not_half_taken() -> None:
    assert parse_verdict("approve this one, skip the rest") is None


async def test_all_good_approve_all_at_a_step_approves_every_step() -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a laptop and a monitor for Aisha Khan")
    done = await runtime.resume(plans, first.thread_id, "all good, approve all")
    assert done.output.startswith("Plan completed: 2 of 2 steps done")


_STOPS = [
    "hold on, cancel all that",
    "let's leave it there",
    "scrap the whole thing",
    "forget the whole thing",
    "i changed my mind, cancel it",
    "let's call it a day",
    "you know what, never mind",
    "hang on, cancel everything please",
]


@pytest.mark.parametrize("said", _STOPS)
async def test_a_stop_in_other_words_at_a_step_ends_the_plan(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "onboard Lucy Gray next week")
    stopped = await runtime.resume(plans, first.thread_id, said)
    assert stopped.status == "completed"
    assert stopped.output == "Plan stopped at step 1 of 6: nothing done, 1 rejected, 5 not run."


@pytest.mark.parametrize("said", [*_STOPS, "not now", "nvm"])
def test_stops_in_other_words_are_read(said: str) -> None:
    assert ends(said)


@pytest.mark.parametrize("said", ["cancel the laptop order", "stop the laptop step", "leave it with me"])
def test_a_stop_naming_something_is_no_stop_of_the_plan(said: str) -> None:
    assert not ends(said)


@pytest.mark.parametrize(
    "said", ["hey! busy day?", "hello, anyone there?", "hi, how was your weekend?", "good morning! all well?"]
)
async def test_a_greeting_with_a_chatty_question_is_small_talk_and_the_task_after_it_is_planned(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    chat = await runtime.run(plans, said)
    assert chat.status == "completed" and chat.output.startswith("Hello! I plan tasks")
    asked = await runtime.run(plans, "can you help me onboard someone", thread_id=chat.thread_id)
    assert asked.interrupts[0].prompt.startswith("To plan 'can you help me onboard someone' I need to know who")


@pytest.mark.parametrize("said", ["hey, can you onboard Ada Lovelace next monday?", "hi, order a laptop for Ken Ito?"])
async def test_a_greeting_with_a_task_after_it_is_planned(said: str) -> None:
    runtime, plans = Runtime(), _offline()
    result = await runtime.run(plans, said)
    assert result.interrupts[0].data["kind"] == "approval"


@pytest.mark.parametrize("chat", ["busy day huh", "zorp blib"])
async def test_a_task_said_in_other_words_after_one_that_fit_nothing_is_the_task(chat: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, chat)
    assert first.interrupts[0].prompt.startswith(f"I could not make a plan for {chat!r}")
    asked = await runtime.resume(plans, first.thread_id, "can you help me onboard someone")
    assert asked.interrupts[0].prompt.startswith("To plan 'can you help me onboard someone' I need to know who")
    planned = await runtime.resume(plans, first.thread_id, "for Ada Lovelace next monday")
    assert planned.interrupts[0].prompt.endswith("for Ada Lovelace, next monday. Approve?")
    plan = (await _record(runtime, first.thread_id)).plans[-1]
    assert plan.initial_goal == "can you help me onboard someone"


@pytest.mark.parametrize(
    ("said", "thing"),
    [
        ("actually make it a tablet", "tablet"),
        ("no, a tablet instead", "tablet"),
        ("sorry I meant a chromebook not a laptop", "chromebook"),
        ("oh wait, change that to an ipad please", "ipad"),
    ],
)
async def test_a_change_of_mind_to_a_thing_no_tool_handles_says_so_and_keeps_the_plan(said: str, thing: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a laptop for Eva Stone")
    step = first.interrupts[0].prompt
    kept = await runtime.resume(plans, first.thread_id, said)
    prompt = kept.interrupts[0].prompt
    assert prompt.startswith(f"No agent can do that: none of their tools handles {thing!r}, so the plan stays as it")
    assert prompt.endswith(step)
    done = await runtime.resume(plans, first.thread_id, "approve")
    assert done.output.startswith("Plan completed: 1 of 1 steps done")


@pytest.mark.parametrize(
    ("said", "tools"),
    [
        ("actually make it a monitor", ["order_monitor"]),
        ("no, a mobile phone instead", ["order_mobile_phone"]),
        ("sorry, I meant a monitor", ["order_monitor"]),
    ],
)
async def test_a_change_of_mind_to_a_thing_a_tool_handles_replaces_it(said: str, tools: list[str]) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a laptop for Eva Stone")
    again = await runtime.resume(plans, first.thread_id, said)
    assert again.interrupts[0].prompt.startswith(f"Planned again with what you said ({said!r}).")
    plan = (await _record(runtime, first.thread_id)).plans[-1]
    assert [s.tool for s in plan.steps] == tools and all("Eva Stone" in s.action for s in plan.steps)


async def test_a_change_of_mind_naming_what_it_replaces_keeps_the_rest() -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a laptop and a monitor for Eva Stone")
    await runtime.resume(plans, first.thread_id, "actually make it a mobile phone rather than the laptop")
    plan = (await _record(runtime, first.thread_id)).plans[-1]
    assert sorted(s.tool or "" for s in plan.steps) == ["order_mobile_phone", "order_monitor"]


@pytest.mark.parametrize(
    ("said", "who"),
    [
        ("and the same for his manager", "his manager"),
        ("same again for her boss", "her boss"),
        ("do that for my colleague too", "your colleague"),
    ],
)
async def test_a_follow_up_for_a_person_named_by_relation_asks_who_that_is(said: str, who: str) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, "order a monitor for Ken Ito")
    await runtime.resume(plans, first.thread_id, "approve")
    asked = await runtime.run(plans, said, thread_id=first.thread_id)
    assert asked.output.startswith(f"Who is {who}? I plan for people by name")
    assert asked.output.endswith("(for example 'order a monitor for Ada Lovelace').")
    assert len((await _record(runtime, first.thread_id)).plans) == 1


async def test_a_task_for_a_person_named_by_relation_asks_who_that_is() -> None:
    runtime, plans = Runtime(), _offline()
    asked = await runtime.run(plans, "order a laptop for my new boss")
    assert asked.output.startswith("Who is your new boss?")
    assert asked.output.endswith("(for example 'order a laptop for Ada Lovelace').")


@pytest.mark.parametrize(
    ("task", "action", "items"),
    [
        ("order a headset for Leo Park", "Order a headset for an employee for Leo Park.", ["headset"]),
        ("need a new keyboard for Leo Park", "Order a keyboard for an employee for Leo Park.", ["keyboard"]),
        (
            "order a keyboard and a mouse for Leo Park",
            "Order a keyboard and mouse for an employee for Leo Park.",
            ["keyboard", "mouse"],
        ),
    ],
)
async def test_a_step_orders_only_the_things_asked_for(task: str, action: str, items: list[str]) -> None:
    runtime, plans = Runtime(), _offline()
    first = await runtime.run(plans, task)
    assert first.interrupts[0].prompt == f"Step 1 of 1 (ProcurementAgent): {action.rstrip('.')}. Approve?"
    await runtime.resume(plans, first.thread_id, "approve")
    (step,) = (await _record(runtime, first.thread_id)).plans[-1].steps
    thing = items[0] if len(items) == 1 else " and ".join(items)
    assert step.agent_reply is not None and f"Would order a {thing} for an employee" in step.agent_reply
    assert f"items={', '.join(items)}, employee_name=Leo Park" in step.agent_reply
