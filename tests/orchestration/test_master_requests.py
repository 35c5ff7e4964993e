"""A message holding requests for two tools: the master agent serves them one after the other, says what waits, and
shows each answer; a request that merely names two things stays one request."""

from __future__ import annotations

import pytest
from tests.app_talk import talk

from podium.human import requests_in

AFTER = "\n\n(After this, I will turn to: refill my prescription RX7654321.)"


async def test_two_requests_are_served_one_after_the_other() -> None:
    said = await talk(
        ["I'd like to book an appointment and refill my prescription RX7654321", "P-204118", "General practice"],
        "clinic-desk",
    )
    assert said[0] == "What is your patient number? It starts with P- and has six digits, e.g. P-204118." + AFTER
    assert said[1] is not None and said[1].endswith(AFTER)  # the booking's next question, the refill still waiting
    assert said[2] == "Your appointment is booked.\n\nWould you like pharmacy pickup or home delivery?"


async def test_two_answers_in_one_reply_when_neither_asks() -> None:
    (said,) = await talk(["What are your opening hours and how much do I owe on INV-12345?"], "clinic-desk")
    assert said is not None
    hours, invoice = said.index("We are open"), said.index("Invoice INV-12345: $85.00 charged")
    assert hours < invoice and said.count("What else can I help you with?") == 1  # one closing prompt, at the end


async def test_cancelling_everything_drops_the_requests_that_wait() -> None:
    said = await talk(
        ["book a GP appointment and also refill my prescription RX7654321", "cancel everything", "hello"],
        "clinic-desk",
    )
    assert said[1] is not None and said[1].startswith(
        "OK, I stopped the appointment booking task, and dropped what waited its turn (refill my prescription "
        "RX7654321)."
    )
    assert said[2] is not None and "pharmacy pickup" not in said[1] + said[2]


async def test_one_request_naming_two_things_stays_one() -> None:
    (said,) = await talk(["book a physio appointment for my mum and me"], "clinic-desk")
    assert said == "What is your patient number? It starts with P- and has six digits, e.g. P-204118."


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        (
            "I'd like to book a GP appointment and refill my prescription RX7654321",
            ["I'd like to book a GP appointment", "refill my prescription RX7654321"],
        ),
        ("What are your hours? And how much do I owe?", ["What are your hours", "how much do I owe?"]),
        ("book a room; also I need a car", ["book a room", "I need a car"]),
        ("Compare Paris and Oslo", ["Compare Paris and Oslo"]),  # a part of one word is no request
        ("salt and pepper", ["salt and pepper"]),
        ("hello", ["hello"]),
    ],
)
def test_requests_in_splits_where_one_sentence_joins_another(text: str, parts: list[str]) -> None:
    assert requests_in(text) == parts


async def test_not_having_what_a_task_asks_is_told_the_way_out() -> None:
    said = await talk(["I need a refill", "I'm not sure, I'm a new patient", "cancel"], "clinic-desk")
    assert said[1] is not None and said[1].startswith(
        "That's all right. The prescription refill task needs a prescription number: RX and seven digits. If you "
        "don't have it now, say 'cancel' to stop the prescription refill task, or ask me something else."
    )
    assert said[2] is not None and said[2].startswith("OK, I stopped the prescription refill task.")
    wrong = await talk(["I need a refill", "RX12"], "clinic-desk")  # a wrong answer is still told it does not fit
    assert wrong[1] is not None and wrong[1].startswith("'RX12' does not fit what the prescription refill task needs")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm not sure", True),
        ("I don't have one", True),
        ("no idea", True),
        ("I can't find it", True),
        ("I forgot my number", True),
        ("P-204118", False),
        ("sure", False),
        ("I know it: RX1234567", False),
    ],
)
def test_unsure_reads_not_knowing_or_having(text: str, expected: bool) -> None:
    from podium.human import unsure

    assert unsure(text) is expected


async def test_another_value_for_the_same_request_is_a_request_of_its_own() -> None:
    letters = await talk(["decline letters for claims 1122AA and 3344BB, both motor", "motor"], "smart-investigator")
    assert letters[0] is not None and letters[0].endswith(
        "(After this, I will turn to: decline letters for claims 3344BB, both motor.)"
    )
    assert letters[1] is not None and letters[1].count("Letter generated!") == 2
    bare = await talk(["refill RX1234567 and RX7654321", "pharmacy pickup", "pharmacy pickup"], "clinic-desk")
    assert bare[2] is not None and "Refill of RX7654321 ordered" in bare[2]  # a value alone is a request too
    refills = await talk(["refill RX1234567 and RX7654321 please", "pharmacy pickup"], "clinic-desk")
    assert refills[1] is not None and "Would you like pharmacy pickup or home delivery?" in refills[1]
    assert refills[0] is not None and "(After this, I will turn to: refill RX7654321 please.)" in refills[0]


@pytest.mark.parametrize(
    ("before", "part", "whole"),
    [
        ("decline letters for claims 1122AA", "3344BB, both motor", "decline letters for claims 3344BB, both motor"),
        ("refill RX1234567", "RX7654321 please", "refill RX7654321 please"),
        ("refill RX1234567", "home delivery", None),  # no value of its own: not another item
        ("book an appointment", "P-111222 too", None),  # nothing before to give another value for
    ],
)
def test_a_part_that_only_gives_another_value_is_made_whole(before: str, part: str, whole: str | None) -> None:
    from podium.human import elided

    assert elided(before, part) == whole


async def test_a_request_that_depends_on_the_answer_before_it_is_not_done_blindly() -> None:
    (said,) = await talk(["are you open sunday? if so book me a GP, P-565656"], "clinic-desk")
    assert said is not None and "closed on Sundays" in said and "appointment is booked" not in said


async def test_a_follow_up_after_an_answer_goes_back_to_the_tool_that_gave_it() -> None:
    hours, sunday, joke = await talk(
        ["what are your opening hours", "and on sunday?", "and can you tell me a joke?"], "clinic-desk"
    )
    assert hours is not None and sunday is not None and joke is not None
    assert sunday.startswith(hours.partition("\n")[0])  # the hours again, which say Sunday is closed
    assert "closed on Sundays" in sunday
    assert joke.startswith("I can't help with 'and can you tell me a joke?'")


async def test_a_follow_up_while_a_question_waits_goes_back_to_the_tool_that_answered_last() -> None:
    asked, hours, sunday, booked = await talk(
        ["book an appointment for P-123456", "what are your opening hours", "and on sunday?", "dental"], "clinic-desk"
    )
    assert asked is not None and asked.startswith("Which department")
    assert hours is not None and sunday is not None and "closed on Sundays" in sunday
    assert sunday.endswith(asked)  # the hours again, then the department asked again
    assert booked is not None and booked.startswith("Your appointment is booked.")
