"""What people say while a master agent's task waits: corrections of what they said before, answers by place
("the second one"), abbreviations in the request, questions that name an opposite verb, and corrections inside one
answer."""

from __future__ import annotations

from typing import Any

import pytest
from tests.app_talk import talk

from podium import Artifact, Expectation, MemoryStore, Runtime, ToolMetadata
from podium.app import load_app
from podium.human import corrected, corrects, ordinal
from podium.orchestration.master import MasterAgent, MasterTool, Router, ToolContent, ToolInput, corrections
from podium.settings import Settings

ID = Expectation(type="pattern", pattern=r"\b[A-Z]{2}\d{4}\b", description="a booking code: two capitals, four digits")
SEAT = Expectation(type="choice", options=["Window", "Aisle"], description="window or aisle")


class SeatChange(MasterTool):
    """Two slots, the code then the seat; reads corrections when ``takes_corrections``."""

    name = "SeatChange"
    description = "Changes the seat of a flight booking. It needs the booking code and window or aisle."

    def __init__(self, *, takes_corrections: bool) -> None:
        self.metadata = ToolMetadata(
            expose_to_user=True,
            introduction="Change your seat.",
            can_generate_task=True,
            takes_corrections=takes_corrections,
            examples=["I want to change my seat", "move me to another seat on my flight"],
        )
        self.seen: list[ToolInput] = []

    async def call(self, ctx: Any, request: ToolInput) -> ToolContent:
        self.seen.append(request)
        slots = dict(request.state or {}) if request.resumed else {}
        if request.correction:
            slots.update(corrections(request.text, {"code": ID, "seat": SEAT}))
        slots.setdefault("code", None)
        slots["code"] = slots["code"] or next(iter(corrections(request.text, {"code": ID}).values()), None)
        if not slots["code"]:
            return ToolContent.ask("Your booking code?", expectation=ID, state=slots)
        slots["seat"] = slots.get("seat") or corrections(request.text, {"seat": SEAT}).get("seat")
        if not slots["seat"]:
            return ToolContent.ask("Window or aisle?", expectation=SEAT, state=slots)
        return ToolContent(value=f"Seat changed on {slots['code']}: {slots['seat']}.")


async def _say(tool: SeatChange, lines: list[str]) -> list[str | None]:
    agent = MasterAgent(tools=[tool], classifier=Router())
    runtime, thread, said = Runtime(), None, []
    for line in lines:
        result = await runtime.send(agent, line, thread_id=thread)
        thread = result.thread_id
        said.append(result.output if result.status == "completed" else result.interrupts[0].prompt)
    return said


async def test_a_correction_while_a_task_waits_reaches_a_tool_that_takes_corrections() -> None:
    tool = SeatChange(takes_corrections=True)
    said = await _say(tool, ["I want to change my seat, booking AB1234", "oops, I meant AB1243", "aisle"])
    assert said[1] == "Window or aisle?" and tool.seen[1].correction and tool.seen[1].text == "oops, I meant AB1243"
    assert said[2] is not None and "Seat changed on AB1243: Aisle." in said[2]


async def test_a_tool_that_does_not_take_corrections_never_sees_one() -> None:
    tool = SeatChange(takes_corrections=False)
    said = await _say(tool, ["I want to change my seat, booking AB1234", "oops, I meant AB1243", "aisle"])
    assert said[1] is not None and "does not fit" in said[1]  # refused as an answer, the question asked again
    assert not any(request.correction for request in tool.seen)
    assert said[2] is not None and "Seat changed on AB1234: Aisle." in said[2]


async def test_the_example_apps_read_a_correction_of_an_earlier_answer() -> None:
    letter = await talk(
        ["decline letter please", "claim 4411AB", "no wait, I meant 4411BA", "motor"], "smart-investigator"
    )
    assert letter[2] is not None and "Home or Motor" in letter[2]
    assert letter[3] is not None and "4411AB" not in letter[3]
    booking = await talk(["book an appointment for P-111222", "sorry wrong one, it's P-111223", "2"], "clinic-desk")
    assert booking[1] == "Which department: General practice, Physiotherapy or Dental?"
    unread = await talk(["book an appointment for P-111222", "sorry, I meant P-12"], "clinic-desk")
    assert unread[1] is not None and unread[1].startswith("I could not tell what to change")


@pytest.mark.parametrize(
    ("said", "reply"),
    [
        ("sorry, I don't know it", "That's all right."),
        ("sorry can you repeat that", "Here is my question again."),
        ("sorry, that's wrong", '"sorry, that\'s wrong" does not fit'),  # no new value in it: no correction
        ("actually I need a refill instead", "What is the prescription number?"),  # another task, not a correction
    ],
)
async def test_an_apology_or_another_request_is_no_correction(said: str, reply: str) -> None:
    answered = await talk(["book an appointment", said], "clinic-desk")
    assert answered[1] is not None and answered[1].startswith(reply)


@pytest.mark.parametrize(
    ("lines", "booked"),
    [
        (["book a GP appointment for P-343434"], "General practice"),  # an abbreviation in the request itself
        (["book an appointment", "P-343434", "the second one"], "Physiotherapy"),
        (["book an appointment", "P-343434", "dentist. no wait, physio"], "Physiotherapy"),
        (["book an appointment", "P-343434", "I'll take the last one"], "Dental"),
    ],
)
async def test_a_choice_is_answered_by_abbreviation_place_or_a_changed_mind(lines: list[str], booked: str) -> None:
    app = load_app("clinic-desk")
    agent = app.build(app.model(Settings.load(env={})))
    runtime = Runtime(MemoryStore())
    thread = None
    for line in lines:
        result = await runtime.send(agent, line, thread_id=thread)
        thread = result.thread_id
    assert result.status == "completed", result.output
    letters = [e.content for e in await runtime.store.read_events(result.thread_id) if isinstance(e, Artifact)]
    assert letters and f"in {booked}:" in str(letters[-1])


@pytest.mark.parametrize(
    ("lines", "booked"),
    [
        (["book P-454545 in", "the teeth one"], "Dental"),
        (["book P-454545 in", "the tooth one pls"], "Dental"),
        (["book P-454545 in", "dentist one"], "Dental"),
        (["book an appointment", "P-343434", "it's for my toothache"], "Dental"),
        (["book an appointment", "P-343434", "the physical therapist please"], "Physiotherapy"),
        (["book an appointment", "P-343434", "the tooth one, no wait, physio"], "Physiotherapy"),
        (["i need my teeth looked at, P-445566"], "Dental"),
    ],
)
async def test_a_department_named_by_what_it_is_about_is_that_department(lines: list[str], booked: str) -> None:
    app = load_app("clinic-desk")
    agent = app.build(app.model(Settings.load(env={})))
    runtime = Runtime(MemoryStore())
    thread = None
    for line in lines:
        result = await runtime.send(agent, line, thread_id=thread)
        thread = result.thread_id
    assert result.status == "completed", result.output
    letters = [e.content for e in await runtime.store.read_events(result.thread_id) if isinstance(e, Artifact)]
    assert letters and f"in {booked}:" in str(letters[-1])


@pytest.mark.parametrize("said", ["teeth or physio?", "not the teeth one"])
async def test_a_synonym_of_two_options_or_a_refused_one_chooses_nothing(said: str) -> None:
    answered = await talk(["book P-454545 in", said], "clinic-desk")
    assert answered[1] is not None and "does not fit" in answered[1]


@pytest.mark.parametrize(
    "question",
    [
        "and what time do you close on saturday",
        "btw do you close at lunch?",
        "so are you closed on sundays?",
        "what time do you close?",  # the opposite of what the hours say (open) is their subject too
    ],
)
async def test_a_question_naming_the_opposite_verb_asks_for_information(question: str) -> None:
    (said,) = await talk([question], "clinic-desk")
    assert said is not None and "We are open" in said and "does the opposite" not in said


async def test_asking_to_do_the_opposite_is_still_refused() -> None:
    (said,) = await talk(["I need to cancel my appointment tomorrow"], "clinic-desk")
    assert said is not None and "it asks to cancel" in said


@pytest.mark.parametrize(
    ("text", "place"),
    [("the second one", 1), ("option 3", 2), ("#1", 0), ("the last one please", 2), ("I'll take the first", 0)],
)
def test_an_option_is_picked_by_its_place(text: str, place: int) -> None:
    assert ordinal(text, 3) == place


@pytest.mark.parametrize("text", ["the fourth one", "second opinion please", "one", "the second appointment"])
def test_words_that_are_no_place_among_the_options_pick_none(text: str) -> None:
    assert ordinal(text, 3) is None


def test_corrections_are_told_from_answers() -> None:
    assert corrects("no wait, I meant 4411BA") and corrects("sorry, wrong one") and corrects("oops, typo")
    assert corrects("actually make it 9") and corrects("it should be P-111223")
    assert not corrects("motor") and not corrects("P-111223") and not corrects("I want to change my seat")
    assert corrected("dentist. no wait, physio") == "physio" and corrected("AB1234, sorry I meant AB1243") == "AB1243"
    assert corrected("sorry") is None and corrected("motor") is None


async def test_a_refill_reads_a_corrected_prescription_number() -> None:
    said = await talk(["refill please", "RX2000001", "sorry wrong one, RX2000010", "delivery"], "clinic-desk")
    assert said[3] is not None and "Refill of RX2000010 ordered" in said[3]


async def test_no_thanks_to_a_choice_that_is_no_yes_or_no_ends_its_task() -> None:
    said = await talk(["refill RX1234567", "no thanks"], "clinic-desk")
    assert said[1] is not None and said[1].startswith("OK, I stopped the prescription refill task.")


@pytest.mark.parametrize(
    "change", ["hmm actually can we do dental instead", "switch it to dental please", "I'd rather see the dentist"]
)
async def test_clinic_a_later_booking_keeps_the_patient_and_one_said_instead_replaces_the_last(change: str) -> None:
    booked, moved = await talk(["book physio for P-808080", change], "clinic-desk")
    assert booked is not None and booked.startswith("Your appointment is booked.")
    assert moved is not None and moved.startswith(
        "Your Physiotherapy appointment is cancelled and replaced by this one in Dental."
    )
    _, again = await talk(["book physio for P-808080", "and a GP appointment too please"], "clinic-desk")
    assert again is not None and again.startswith("Your appointment is booked.")  # the patient is not asked again
    _, other = await talk(["book physio for P-808080", "and a dental check-up for my son"], "clinic-desk")
    assert other is not None and other.startswith("What is your patient number?")  # another person: asked
