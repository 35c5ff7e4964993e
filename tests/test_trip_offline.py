"""The trip example's offline stand-in: a question is never a note, a day after today is never answered with today's
weather, and a second request in a message is a request of its own."""

from __future__ import annotations

import pytest
from tests.app_talk import talk

from examples import trip

MUSEUM = "Save this note to your trip notebook: 'museum pass'?"
CANNOT = f"I cannot help with that. {trip.CAPABILITIES}"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("wait, is this private?", "I cannot answer that here."),
        ("hold on, who can see it", "I cannot answer that here."),
        ("wait what's a trip notebook?", "The trip notebook keeps the notes you ask me to save for your trip."),
        ("hmm where does the note go?", "The trip notebook keeps the notes you ask me to save for your trip."),
    ],
)
async def test_a_question_at_the_note_question_is_answered_and_the_note_kept(question: str, answer: str) -> None:
    assert await talk(["save a note: museum pass", question, "yes"]) == [
        MUSEUM,
        f"{answer} {MUSEUM}",
        "Done: Saved to the trip notebook: museum pass",
    ]


@pytest.mark.parametrize("answer", ["wait, private?", "no wait, is it?"])
async def test_a_short_question_at_the_note_question_is_never_the_note(answer: str) -> None:
    said = await talk(["save a note: museum pass", answer])
    assert said[1] is not None and said[1].endswith(f"{MUSEUM} (Please answer yes or no.)")


@pytest.mark.parametrize(
    "answer",
    ["don't save that", "hmm no dont save that", "wait, don't save it", "please don't save that one",
     "no need to keep it", "oh no, do not write that down"],
)  # fmt: skip
async def test_saying_not_to_save_discards_the_note(answer: str) -> None:
    assert await talk(["save note: pick up rental car at 10", answer]) == [
        "Save this note to your trip notebook: 'pick up rental car at 10'?",
        "Fine, I did not save it.",
    ]


@pytest.mark.parametrize(
    "answer",
    ["sorry wrong one, museum tickets for sunday", "oops, museum tickets for sunday", "my bad: museum tickets for sunday",
     "sorry, I meant museum tickets for sunday"],
)  # fmt: skip
async def test_a_correction_at_the_note_question_changes_the_note(answer: str) -> None:
    assert await talk(["save a note: museum tickets for saturday", answer, "yes"]) == [
        "Save this note to your trip notebook: 'museum tickets for saturday'?",
        "Save this note to your trip notebook instead: 'museum tickets for sunday'?",
        "Done: Saved to the trip notebook: museum tickets for sunday",
    ]


async def test_a_question_that_asks_to_save_is_a_yes() -> None:
    assert (await talk(["save a note: museum pass", "can you save it?"]))[1] == (
        "Done: Saved to the trip notebook: museum pass"
    )


@pytest.mark.parametrize(
    ("asked", "when", "today"),
    [
        ("will it rain in paris tomorrow", "tomorrow", "Today in Paris: 18 °C, light rain."),
        ("is it going to rain in oslo tomorrow", "tomorrow", "Today in Oslo: 9 °C, cloudy."),
        ("weather in tokyo next week?", "next week", "Today in Tokyo: 21 °C, clear."),
        ("should i pack an umbrella for lisbon this weekend", "this weekend", "Today in Lisbon: 24 °C, sunny."),
        ("how hot will paris be in 3 days", "in 3 days", "Today in Paris: 18 °C, light rain."),
    ],
)
async def test_a_day_after_today_is_never_answered_with_today_s_weather(asked: str, when: str, today: str) -> None:
    assert await talk([asked]) == [f"I only have today's weather, no forecast for {when}. {today}"]


async def test_a_follow_up_about_tomorrow_says_only_today_is_known() -> None:
    assert await talk(["weather in lisbon", "and tomorrow?"]) == [
        "Today in Lisbon: 24 °C, sunny.",
        "I only have today's weather, no forecast for tomorrow. Today in Lisbon: 24 °C, sunny.",
    ]


@pytest.mark.parametrize(
    ("asked", "weather", "note"),
    [
        ("what's the weather in lisbon and save a note to buy sunscreen", "Today in Lisbon: 24 °C, sunny.",
         "buy sunscreen"),
        ("weather in paris and remind me to buy sunscreen", "Today in Paris: 18 °C, light rain.", "buy sunscreen"),
        ("how cold is oslo today, and also jot down: gloves", "Today in Oslo: 9 °C, cloudy.", "gloves"),
    ],
)  # fmt: skip
async def test_a_note_asked_after_another_request_is_a_request_of_its_own(asked: str, weather: str, note: str) -> None:
    assert await talk([asked, "yes"]) == [
        f"Save this note to your trip notebook: {note!r}?",
        f"{weather} Done: Saved to the trip notebook: {note}",
    ]


async def test_a_request_it_cannot_do_before_a_note_is_said_and_the_note_saved() -> None:
    assert await talk(["book me a hotel in oslo and also save a note: passport in bag", "yes"]) == [
        "Save this note to your trip notebook: 'passport in bag'?",
        "I cannot help with 'book me a hotel in oslo'. Done: Saved to the trip notebook: passport in bag",
    ]


async def test_a_message_that_opens_with_a_note_is_all_note() -> None:
    assert await talk(["save a note: buy bread and pick up the keys"]) == [
        "Save this note to your trip notebook: 'buy bread and pick up the keys'?"
    ]


async def test_which_is_warmer_or_colder_is_answered_from_the_cities_asked_about() -> None:
    assert await talk(["weather in tokyo", "and oslo", "which one's colder", "and the warmer one?"]) == [
        "Today in Tokyo: 21 °C, clear.",
        "Today in Oslo: 9 °C, cloudy.",
        "Oslo is colder: 9 °C, against 21 °C in Tokyo.",
        "Tokyo is warmer: 21 °C, against 9 °C in Oslo.",
    ]
    assert await talk(["which is warmer today, oslo or paris?"]) == ["Paris is warmer: 18 °C, against 9 °C in Oslo."]
    assert await talk(["is lisbon hotter than tokyo"]) == ["Lisbon is warmer: 24 °C, against 21 °C in Tokyo."]


@pytest.mark.parametrize(
    "asked",
    ["what should i see in paris", "what is there to do in lisbon", "any attractions in oslo?",
     "what can we visit in tokyo"],
)  # fmt: skip
async def test_sights_are_said_to_be_out_of_reach_never_the_weather(asked: str) -> None:
    assert await talk([asked]) == [CANNOT]


async def test_impatience_and_thanks_that_takes_leave() -> None:
    assert await talk(["weather in paris", "??", "thanks that's all"]) == [
        "Today in Paris: 18 °C, light rain.",
        f"I am a trip helper. {trip.CAPABILITIES}",
        "You're welcome, and have a good trip!",
    ]


@pytest.mark.parametrize(
    ("asked", "note"),
    [
        ("add to my notes: ferry leaves pier 3 at 9:15", "ferry leaves pier 3 at 9:15"),
        ("jot this down: taxi booked for 5am", "taxi booked for 5am"),
        ("note this: taxi at 5am", "taxi at 5am"),
        ("put in my notes that the museum closes at 6", "the museum closes at 6"),
        ("remember that the hotel code is 4411", "the hotel code is 4411"),
        ("can you add this to my trip notebook: buy a SIM card", "buy a SIM card"),
        ("write this down - gate B12", "gate B12"),
        ("please save to my notes: pharmacy on rua augusta", "pharmacy on rua augusta"),
        ("note to self: call grandma on sunday", "call grandma on sunday"),
        ("keep a note: bus 28 to the castle", "bus 28 to the castle"),
        ("add a reminder: check in online", "check in online"),
    ],
)
async def test_a_note_asked_in_other_words_is_saved_without_its_lead_in(asked: str, note: str) -> None:
    assert await talk([asked, "yes please"]) == [
        f"Save this note to your trip notebook: {note!r}?",
        f"Done: Saved to the trip notebook: {note}",
    ]


async def test_a_note_asked_in_other_words_after_the_weather_is_saved_after_it() -> None:
    assert await talk(["weather in lisbon and add to my notes: buy sunscreen", "yes"]) == [
        "Save this note to your trip notebook: 'buy sunscreen'?",
        "Today in Lisbon: 24 °C, sunny. Done: Saved to the trip notebook: buy sunscreen",
    ]


@pytest.mark.parametrize(
    "answer",
    [
        "oops, check out at 10 actually",
        "sorry, check out at 10 instead",
        "my bad: check out at 10 then",
        "actually, check out at 10 instead",
        "no, check out at 10 instead",
    ],
)
async def test_a_correction_s_trailing_filler_is_no_part_of_the_note(answer: str) -> None:
    assert (await talk(["save a note: check out at 11", answer]))[1] == (
        "Save this note to your trip notebook instead: 'check out at 10'?"
    )


@pytest.mark.parametrize(
    "said", ["ok bye!", "ok gotta dash, bye!", "alright, see you later", "right, I have to go", "off to pack, bye"]
)
async def test_a_goodbye_in_other_words_after_an_answer_gets_a_goodbye(said: str) -> None:
    assert await talk(["weather in oslo", said]) == ["Today in Oslo: 9 °C, cloudy.", "Goodbye, and have a good trip!"]


@pytest.mark.parametrize(
    ("asked", "city"),
    [
        ("weather in berlin pls", "Berlin"),
        ("weather in madrid thanks", "Madrid"),
        ("temperature in rome then?", "Rome"),
    ],
)
async def test_politeness_after_a_city_is_no_part_of_its_name(asked: str, city: str) -> None:
    assert await talk([asked]) == [f"I have no weather data for {city}; I know Lisbon, Paris, Oslo and Tokyo."]


@pytest.mark.parametrize(
    "question", ["can i delete notes later?", "can I edit it afterwards?", "how do I remove a note"]
)
async def test_a_question_about_deleting_notes_says_plainly_what_it_cannot_then_asks_again(question: str) -> None:
    asked = "Save this note to your trip notebook: 'pharmacy closes at 7'?"
    assert await talk(["note: pharmacy closes at 7", question, "yes"]) == [
        asked,
        f"I can only save notes here: I cannot delete or change them, nor tell you whether you can later. {asked}",
        "Done: Saved to the trip notebook: pharmacy closes at 7",
    ]
