"""The tasks demo's offline stand-in reads calculations told in everyday words, follow-ups on the last result, and
several requests in one message, each done in turn."""

from __future__ import annotations

import pytest
from tests.app_talk import talk

PLAN_OSLO = "Do you prefer museums or beaches in Oslo?"
DAY_OSLO = (
    "Your day in Oslo: a walk through the old town in the morning, lunch by the river, the afternoon at the museums. "
    "Today in Oslo: 9 °C, cloudy."
)


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        ("tip of 18% on a $65 bill?", "18% of 65 = 11.7."),
        ("whats the tax of 20% on a 45 euro meal", "20% of 45 = 9."),
        ("jacket is 120 with 25% off, how much do i pay", "120 - 25% of 120 = 90."),
        ("shoes cost 80 but there's 10% discount, what do they come to", "80 - 10% of 80 = 72."),
        ("how much do we pay in all with an 18% tip on 65", "65 + 18% of 65 = 76.7."),
        ("i bought 3 coffees at 4.50 each how much did i spend", "3 × 4.5 = 13.5."),
        ("4 tickets for 12 dollars apiece, total?", "4 × 12 = 48."),
        ("wat is 17 tims 4", "17 × 4 = 68."),
        ("what's 9 pluss 3", "9 + 3 = 12."),
        ("how much is 100 dividd by 8", "100 ÷ 8 = 12.5."),
        ("double 56", "56 × 2 = 112."),
        ("half of 90", "90 ÷ 2 = 45."),
    ],
)
async def test_a_calculation_in_everyday_words_or_with_a_typo_is_worked_out(asked: str, answer: str) -> None:
    assert await talk([asked], "tasks-demo") == [answer]


@pytest.mark.parametrize(
    "asked",
    [
        "3 coffees at 4.50 each and a muffin at 3, how much",  # three amounts: never two of them alone
        "what time is 4 o'clock",
        "we are 4 people at 8pm",  # no money: no price at all
        "im 40% done with 3 tasks",
    ],
)
async def test_an_everyday_calculation_it_cannot_read_whole_is_not_answered_in_part(asked: str) -> None:
    [said] = await talk([asked], "tasks-demo")
    assert said is not None and "=" not in said


@pytest.mark.parametrize(
    ("follow_up", "answer"),
    [
        ("divide that by 5", "55 ÷ 5 = 11."),
        ("thanks, now double it", "55 × 2 = 110."),
        ("what's 20% of that?", "20% of 55 = 11."),
        ("ok multiply the result by 3", "55 × 3 = 165."),
        ("add 5 to it", "5 + 55 = 60."),
    ],
)
async def test_a_follow_up_that_names_the_last_result_uses_it(follow_up: str, answer: str) -> None:
    assert await talk(["what's 90 minus 35", follow_up], "tasks-demo") == ["90 - 35 = 55.", answer]


async def test_a_word_for_the_result_with_no_result_yet_is_no_calculation() -> None:
    [said] = await talk(["double it"], "tasks-demo")
    assert said is not None and "=" not in said


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        ("what's 12 times 3 and 40 minus 8", "12 × 3 = 36. 40 - 8 = 32."),
        ("what is 5 plus 5 and also 9 over 3?", "5 + 5 = 10. 9 ÷ 3 = 3."),
        ("what's 6 times 7 and tell me a joke", "6 × 7 = 42. I cannot help with 'tell me a joke'."),
    ],
)
async def test_two_requests_in_one_message_are_each_answered(asked: str, answer: str) -> None:
    assert await talk([asked], "tasks-demo") == [answer]


@pytest.mark.parametrize(
    ("asked", "done"),
    [
        ("what's 6 times 7, and also plan a day in oslo", f"6 × 7 = 42. {DAY_OSLO}"),
        ("plan a day in oslo and what's 6 times 7", f"{DAY_OSLO} 6 × 7 = 42."),
    ],
)
async def test_a_calculation_and_a_plan_in_one_message_are_both_done(asked: str, done: str) -> None:
    assert await talk([asked, "museums"], "tasks-demo") == [f"6 × 7 = 42. {PLAN_OSLO}", done]


async def test_words_after_a_plan_stay_with_it() -> None:
    assert await talk(["plan a day in oslo and we love museums"], "tasks-demo") == [DAY_OSLO]


@pytest.mark.parametrize(
    ("asked", "city"),
    [
        ("can you sort out a day of sightseeing in oslo", "Oslo"),
        ("organise a day out in lisbon", "Lisbon"),
        ("what should we do for a day in paris?", "Paris"),
        ("could you put together an itinerary for tokyo", "Tokyo"),
        ("help me spend a whole day in oslo", "Oslo"),
        ("we want a fun day exploring lisbon", "Lisbon"),
        ("what can we see in tokyo tomorrow?", "Tokyo"),
        ("can you organize a nice day for us in tokyo?", "Tokyo"),
        ("we have a free day in lisbon, any ideas?", "Lisbon"),
    ],
)
async def test_a_day_plan_asked_in_other_words_is_planned(asked: str, city: str) -> None:
    assert await talk([asked], "tasks-demo") == [f"Do you prefer museums or beaches in {city}?"]


@pytest.mark.parametrize(
    "asked",
    ["is it a nice day in oslo?", "what day of the week is it in tokyo", "the day after i land in oslo, 5 times 5"],
)
async def test_a_day_named_without_asking_for_a_plan_is_no_plan(asked: str) -> None:
    said = await talk([asked], "tasks-demo")
    assert said[0] is not None and "museums or beaches" not in said[0]


@pytest.mark.parametrize(
    ("then", "answer"),
    [
        ("now subtract 17", "81 - 17 = 64."),
        ("now add 5", "81 + 5 = 86."),
        ("then divide by 3", "81 ÷ 3 = 27."),
        ("ok now multiply by 2", "81 × 2 = 162."),
        ("take away 1", "81 - 1 = 80."),
        ("deduct 11 please", "81 - 11 = 70."),
    ],
)
async def test_a_verb_and_one_number_continue_the_last_result(then: str, answer: str) -> None:
    assert await talk(["9 times 9", then], "tasks-demo") == ["9 × 9 = 81.", answer]


async def test_a_verb_and_one_number_with_no_result_before_asks_for_both_numbers() -> None:
    said = await talk(["subtract 17"], "tasks-demo")
    assert said == ["subtract 17: of what? Give me both numbers, for example 'What is 50 minus 30?'."]


@pytest.mark.parametrize("left", ["you pick", "you decide", "whatever you think", "up to you", "dunno, surprise me"])
async def test_a_choice_left_to_the_planner_is_said_to_be_the_person_s(left: str) -> None:
    assert await talk(["plan a day in lisbon for us", left, "beaches"], "tasks-demo") == [
        "Do you prefer museums or beaches in Lisbon?",
        "That choice is yours: museums or beaches in Lisbon?",
        "Your day in Lisbon: a walk through the old town in the morning, lunch by the river, the afternoon at the "
        "beaches. Today in Lisbon: 24 °C, sunny.",
    ]


@pytest.mark.parametrize(
    "question",
    ["are the beaches nice in oslo?", "which one is less crowded?", "are museums open on mondays?", "which is better"],
)
async def test_a_question_about_the_options_is_said_to_be_beyond_the_planner(question: str) -> None:
    assert await talk(["plan a day in oslo", question], "tasks-demo") == [
        PLAN_OSLO,
        "I cannot tell you more than that: museums or beaches in Oslo?",
    ]


@pytest.mark.parametrize(
    ("asked", "first"),
    [
        ("what's 6 times 7, and also plan a day in oslo", "6 × 7 = 42."),
        ("plan a day in oslo and what's 6 times 7", "6 × 7 = 42."),
        ("what is 12 plus 30 and organise a day out in oslo", "12 + 30 = 42."),
        ("sort out a day in oslo, and also 100 divided by 4", "100 ÷ 4 = 25."),
        ("60 minus 18, then plan a day in oslo", "60 - 18 = 42."),
    ],
)
async def test_a_calculation_asked_with_a_plan_is_said_with_the_plan_s_question(asked: str, first: str) -> None:
    assert (await talk([asked], "tasks-demo"))[0] == f"{first} {PLAN_OSLO}"


@pytest.mark.parametrize(
    ("asked", "city"),
    [
        ("put together a tokyo day for me", "Tokyo"),
        ("can you sort me out a nice lisbon day", "Lisbon"),
        ("we want a fun oslo day", "Oslo"),
    ],
)
async def test_a_day_named_by_its_city_before_day_is_planned(asked: str, city: str) -> None:
    assert await talk([asked], "tasks-demo") == [f"Do you prefer museums or beaches in {city}?"]


@pytest.mark.parametrize("said", ["actually i'm off, bye", "ok gotta go, bye!", "right, i'm off now, see you"])
async def test_a_goodbye_in_other_words_with_nothing_waiting_gets_a_goodbye(said: str) -> None:
    assert await talk(["9 times 9", said], "tasks-demo") == ["9 × 9 = 81.", "Goodbye!"]


async def test_an_emergency_in_other_words_gets_the_emergency_reply() -> None:
    from podium.human import EMERGENCY_REPLY

    said = "someone's face just went droopy and they can't talk, what do i do"
    assert await talk([said], "tasks-demo") == [EMERGENCY_REPLY]
    assert await talk(["plan a day in Oslo", said], "tasks-demo") == [PLAN_OSLO, EMERGENCY_REPLY]
