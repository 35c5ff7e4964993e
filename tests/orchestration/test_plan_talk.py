"""The plan service's chat in a person's words: an emergency at any point, wishes that name a day, a no that corrects
the plan, and tasks said without the catalogue's verbs."""

from __future__ import annotations

import pytest
from tests.app_talk import talk

from podium.human import EMERGENCY_REPLY

EMERGENCIES = [
    "someone in the office just fainted and isn't waking up",
    "a colleague fainted",
    "someone in the office is unconscious",
    "my manager collapsed and isn't breathing",
]


@pytest.mark.parametrize("said", EMERGENCIES)
@pytest.mark.parametrize(
    "before",
    [[], ["order a monitor for Jon Bell"], ["asap"]],  # nothing waits, a step waits, the planner's question waits
)
async def test_an_emergency_gets_the_emergency_reply_wherever_it_is_said(before: list[str], said: str) -> None:
    replies = await talk([*before, said], "plan-service")
    assert replies[-1] is not None and replies[-1].startswith(EMERGENCY_REPLY)
    if before:  # what waited is asked again, and nothing of the emergency went into the plan
        assert replies[-1].endswith(replies[-2].rpartition("\n\n")[2])


@pytest.mark.parametrize(
    "greeting", ["hey, happy friday!", "morning! happy monday", "happy friday!", "hi, have a great weekend"]
)
async def test_a_wish_naming_a_day_is_small_talk_and_its_day_no_date_of_the_next_task(greeting: str) -> None:
    hello, step = await talk([greeting, "order a keyboard for Ivo Marsh"], "plan-service")
    assert hello is not None and "I plan tasks for a team of agents" in hello and "could not make a plan" not in hello
    assert step is not None and "for Ivo Marsh. Approve?" in step  # no day: none was asked


@pytest.mark.parametrize(
    ("said", "detail"),
    [
        ("no wait, Jon Ball, not Jon Bell", "for Jon Ball."),
        ("no, Jon Ball", "for Jon Ball."),
        ("nope, it should go to Jon Ball", "for Jon Ball."),
        ("no, make it friday", "for Jon Bell, friday."),
    ],
)
async def test_a_no_followed_by_a_correction_re_plans(said: str, detail: str) -> None:
    _, replanned = await talk(["order a monitor for Jon Bell", said], "plan-service")
    assert replanned is not None and replanned.startswith(f"Planned again with what you said ({said!r}).")
    assert f"{detail[:-1]}. Approve?" in replanned


@pytest.mark.parametrize("said", ["no", "no, Jon Bell has one already", "no, not now", "nope, we have spare ones"])
async def test_a_no_with_a_reason_still_rejects_the_step(said: str) -> None:
    replies = await talk(["order a monitor for Jon Bell", said], "plan-service")
    assert replies[-1] is not None and replies[-1].startswith("Plan rejected: nothing was done")


@pytest.mark.parametrize(
    ("task", "part", "step"),
    [
        ("offboard Carl Dunn on friday and book him a farewell cake", "book him a farewell cake", "offboarding"),
        (
            "offboard Carl Dunn on friday, and order a farewell cake for him",
            "order a farewell cake for him",
            "offboard",
        ),
        ("order a laptop for Ivy Chen and book her a parking pass", "book her a parking pass", "Order a laptop"),
        (
            "reset the password of Tom Hale and order him a bouquet of flowers",
            "order him a bouquet of flowers",
            "password",
        ),
    ],
)
async def test_a_part_with_a_tool_s_verb_but_a_thing_no_tool_knows_is_named_as_not_planned(
    task: str, part: str, step: str
) -> None:
    (said,) = await talk([task], "plan-service")
    assert said is not None and said.startswith(f"No agent can do {part!r}: none of their tools does that")
    assert "Step 1 of 1" in said and step in said.rpartition("Step 1 of 1")[2]


@pytest.mark.parametrize(
    ("task", "who"),
    [
        ("can you have Zoe Kim set up by next wednesday", "for Zoe Kim, next wednesday"),
        ("set up Zoe Kim by next wednesday", "for Zoe Kim, next wednesday"),
        ("get Zoe Kim set up by next wednesday", "for Zoe Kim, next wednesday"),
        ("please set up Omar Said for friday", "for Omar Said, friday"),
        ("Lea Park joins us on monday, can you get everything ready for her", "for Lea Park, on monday"),
        (
            "Ben Ortiz is joining the team next monday, please get everything ready for him",
            "for Ben Ortiz, next monday",
        ),
    ],
)
async def test_setting_up_or_getting_ready_for_a_person_with_a_date_plans_their_onboarding(task: str, who: str) -> None:
    (said,) = await talk([task], "plan-service")
    assert said is not None and "percent" not in said
    assert said.startswith(f"Step 1 of 6 (HrAgent): Create the HR record of an employee {who}. Approve?")


async def test_setting_up_a_thing_of_a_person_is_not_their_onboarding() -> None:
    (said,) = await talk(["set up Zoe Kim's laptop"], "plan-service")
    assert said is not None and said.startswith("Step 1 of 1 (TechSupportAgent): Set up a laptop")
