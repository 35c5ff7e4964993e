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
    assert await talk([asked, "museums"], "tasks-demo") == [PLAN_OSLO, done]


async def test_words_after_a_plan_stay_with_it() -> None:
    assert await talk(["plan a day in oslo and we love museums"], "tasks-demo") == [DAY_OSLO]
