"""Examples are modules that run offline: their cassettes replay, and they still match their recording script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.app_talk import talk

from examples import faang, trip
from podium import AIMessage, Event, MessageAdded, Runtime, Settings
from podium.app import App, load_app
from podium.models.replay import NothingRecorded
from podium.testing import FunctionModel, ReplayModel


async def test_trip_replays_its_whole_script_offline() -> None:
    app = load_app("trip")
    agent = app.build(app.model(Settings.load(env={})))
    runtime = Runtime()
    outputs = []
    for script in trip.SCRIPT:
        thread = None
        for line in script:
            result = await runtime.send(agent, line, thread_id=thread)
            thread = result.thread_id
            outputs.append(result.output)
    assert outputs == [
        "Today in Lisbon: 24 °C, sunny.",
        "That is 75.2 °F.",
        None,
        "Done: Saved to the trip notebook: pack sunglasses for Lisbon",
        "Side by side — Paris: 18 °C, light rain. Oslo: 9 °C, cloudy.",
        None,
        "Fine, I did not save it.",
    ]


async def test_shipped_cassette_matches_a_fresh_recording(tmp_path: Path) -> None:
    fresh = tmp_path / "trip.json"
    await trip.record(fresh)

    def shape(path: Path) -> list[object]:
        data = json.loads(path.read_text())
        return [
            (
                [m.get("content") for m in item["request"]["messages"]],
                item["response"]["message"].get("content"),
                [c["function"] for c in item["response"]["message"].get("tool_calls", [])],
            )
            for item in data["interactions"]
        ]

    assert shape(fresh) == shape(trip.CASSETTE)


def test_tools_are_honest_stand_ins() -> None:
    assert trip.get_weather("Madrid").startswith("No weather data for Madrid")
    assert trip.celsius_to_fahrenheit(100) == 212.0


async def test_trip_answers_what_its_cassette_does_not_hold_offline() -> None:
    said = await talk(
        [
            "hi",
            "What's the weather in Paris?",
            "And in Fahrenheit?",
            "what about Berlin?",
            "Compare Oslo and Tokyo",
            "And in Fahrenheit?",
            "thanks",
            "book me a flight",
            "remember to pack a scarf",
            "yes",
        ]
    )
    assert said == [
        f"Hello! {trip.CAPABILITIES}",
        "Today in Paris: 18 °C, light rain.",
        "That is 64.4 °F.",  # Paris's 18 °C, not the cassette's Lisbon
        "I have no weather data for Berlin; I know Lisbon, Paris, Oslo and Tokyo.",
        "Side by side — Oslo: 9 °C, cloudy. Tokyo: 21 °C, clear.",
        "Oslo: 48.2 °F. Tokyo: 69.8 °F.",
        "You're welcome! Anything else for your trip?",
        f"I cannot help with that. {trip.CAPABILITIES}",
        "Save this note to your trip notebook: 'pack a scarf'?",
        "Done: Saved to the trip notebook: pack a scarf",
    ]


async def test_a_conversion_is_of_the_conversation_s_city_never_a_recorded_one() -> None:
    # "And in Fahrenheit?" was recorded after Lisbon's weather; here it follows other questions
    assert await talk(["What's the weather in Tokyo?", "And in Fahrenheit?"]) == [
        "Today in Tokyo: 21 °C, clear.",
        "That is 69.8 °F.",
    ]
    assert await talk(["And in Fahrenheit?"]) == [
        "Which temperature? Ask me the weather in a city first, or give me one in °C."
    ]
    assert await talk(["weather in new york today", "And in Fahrenheit?"]) == [
        "I have no weather data for New York; I know Lisbon, Paris, Oslo and Tokyo.",
        "I have no temperature to convert: I have no weather data for New York; I know Lisbon, Paris, Oslo and Tokyo.",
    ]
    # a recorded question after a different history still replays, and the conversion after it is Lisbon's
    assert await talk(["hello", "What's the weather in Lisbon?", "And in Fahrenheit?", "convert 30 °C to F"]) == [
        f"Hello! {trip.CAPABILITIES}",
        "Today in Lisbon: 24 °C, sunny.",
        "That is 75.2 °F.",
        "30 °C is 86.0 °F.",
    ]


def test_an_app_model_offline_replays_its_cassette_falling_back_on_its_stand_in() -> None:
    offline = trip.app.model(Settings.load(env={}))
    assert isinstance(offline, ReplayModel) and offline.fallback is trip.app.offline_fallback
    alone = App(name="alone", build=trip.build, offline_fallback=trip.app.offline_fallback)
    assert alone.model(Settings.load(env={})) is trip.app.offline_fallback
    bare = App(name="bare", build=trip.build).model(Settings.load(env={}))  # nothing recorded: it refuses requests
    assert isinstance(bare, NothingRecorded) and "no cassette for offline use" in bare.message


async def test_faang_offline_answers_any_headcount_question_and_says_what_it_cannot_do() -> None:
    said = await talk(
        [
            "hi",
            "What is the combined headcount of FAANG companies in 2024",  # the advertised question, reworded
            "thanks",
            "whats the combined headcount of apple and meta",
            "and without Meta?",
            "how many people work at Netflix and Google?",
            "the combined headcount of all but Amazon",
            "how many employees does Microsoft have?",
            "what was the headcount in 2019?",
            "what's the capital of France?",
        ],
        "faang",
    )
    assert said == [
        f"Hello! I am a supervisor with a research expert and a math expert. {faang.CAPABILITIES}",
        "The combined headcount of the FAANG companies in 2024 is 1,977,586.",
        "You're welcome! Anything else about the FAANG companies' headcounts?",
        "The combined headcount of Apple and Meta in 2024 is 231,317.",
        "In 2024 Apple has 164,000 employees.",
        "The combined headcount of Netflix and Alphabet in 2024 is 195,269.",
        "The combined headcount of Meta, Apple, Netflix and Alphabet in 2024 is 426,586.",
        f"Offline I only know the FAANG companies' headcounts, not microsoft's. {faang.CAPABILITIES}",
        f"Offline I only have the headcounts of 2024, not 2019. {faang.CAPABILITIES}",
        f"I cannot answer that offline. {faang.CAPABILITIES}",
    ]


@pytest.mark.parametrize("context", ["shared", "scoped"])
async def test_faang_stand_in_adds_up_with_the_math_tools_in_either_context(context: str) -> None:
    model = FunctionModel(faang.stand_in)
    result = await Runtime().run(faang.build(model, context), "headcount of Amazon, Netflix and Apple?")  # type: ignore[arg-type]
    assert result.output == "The combined headcount of Amazon, Netflix and Apple in 2024 is 1,729,000."
    adds = [r for r in model.requests if r.tools[0].name == "add"]
    assert len(adds) == 3  # two add calls, then the answer from their last result


async def test_faang_replays_its_recorded_question_exactly_and_the_stand_in_answers_the_rest() -> None:
    app = load_app("faang")
    model = app.model(Settings.load(env={}))
    assert isinstance(model, ReplayModel) and model.fallback is app.offline_fallback
    runtime, agent = Runtime(), app.build(model)
    first = await runtime.run(agent, faang.QUESTION, thread_id="t")
    assert first.output == faang.FINAL_ANSWER and model.fallback_replies == 0  # the seed's recording, whole
    again = await runtime.run(agent, faang.QUESTION.upper(), thread_id="t")
    assert again.status == "completed" and again.output == faang.FINAL_ANSWER and model.fallback_replies > 0


async def test_trip_follow_ups_use_the_conversation() -> None:
    assert await talk(["How's the weather in Paris today?", "should I bring an umbrella?"]) == [
        "Today in Paris: 18 °C, light rain.",
        "Yes, take an umbrella. Today in Paris: 18 °C, light rain.",  # the city just discussed
    ]
    assert await talk(["weather in Tokyo", "will it rain?"]) == [
        "Today in Tokyo: 21 °C, clear.",
        "No umbrella needed. Today in Tokyo: 21 °C, clear.",
    ]
    assert await talk(["compare oslo and tokyo", "which one is warmer?", "and which is colder?"]) == [
        "Side by side — Oslo: 9 °C, cloudy. Tokyo: 21 °C, clear.",
        "Tokyo is warmer: 21 °C, against 9 °C in Oslo.",
        "Oslo is colder: 9 °C, against 21 °C in Tokyo.",
    ]
    # the answer to the helper's own question is the note
    assert await talk(["Save a note", "pack socks", "yes"]) == [
        "What should the note say? For example: 'Save a note: pack sunglasses'.",
        "Save this note to your trip notebook: 'pack socks'?",
        "Done: Saved to the trip notebook: pack socks",
    ]
    assert await talk(["Save a note", "never mind"]) == [
        "What should the note say? For example: 'Save a note: pack sunglasses'.",
        "All right, no note.",
    ]


async def test_trip_reads_typos_of_its_words_and_cities() -> None:
    assert await talk(["whats the wether in tokio", "Compare Pariss and Olso", "and in farenheit?"]) == [
        "Today in Tokyo: 21 °C, clear.",
        "Side by side — Paris: 18 °C, light rain. Oslo: 9 °C, cloudy.",
        "Paris: 64.4 °F. Oslo: 48.2 °F.",
    ]
    assert await talk(["also tell me a joke"]) == await talk(["tell me a joke"])  # "also" is not Oslo


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("yeah", "Done: Saved to the trip notebook: buy sim card"),
        ("ok", "Done: Saved to the trip notebook: buy sim card"),
        ("Sure!", "Done: Saved to the trip notebook: buy sim card"),
        ("y", "Done: Saved to the trip notebook: buy sim card"),
        ("nope", "Fine, I did not save it."),
        ("n", "Fine, I did not save it."),
        ("never mind", "Fine, I did not save it."),
        ("cancel", "Fine, I did not save it."),
        ("forget the note", "Fine, I did not save it."),
    ],
)
async def test_trip_confirmation_takes_what_people_say_for_yes_and_no(answer: str, said: str) -> None:
    assert await talk(["save a note: buy sim card", answer]) == [
        "Save this note to your trip notebook: 'buy sim card'?",
        said,
    ]


async def test_trip_confirmation_asks_about_a_changed_note() -> None:
    assert await talk(["save a note: pack socks", "yes but make it 'pack warm socks'", "yes"]) == [
        "Save this note to your trip notebook: 'pack socks'?",
        "Save this note to your trip notebook instead: 'pack warm socks'?",
        "Done: Saved to the trip notebook: pack warm socks",
    ]
    assert await talk(["save a note: flight at 7am", "no wait, flight at 7pm", "yes"]) == [
        "Save this note to your trip notebook: 'flight at 7am'?",
        "Save this note to your trip notebook instead: 'flight at 7pm'?",
        "Done: Saved to the trip notebook: flight at 7pm",
    ]
    refused = await talk(["save a note: hotel Miramar", "no. wrong hotel"])
    assert refused[1] is not None and "Saved" not in refused[1]  # a no that goes on saves nothing
    left = await talk(["save a note: hotel Miramar", "thanks, bye"])
    assert left[1] is not None and "Saved" not in left[1] and "Save this note" not in left[1]  # not asked again
    # the question still shows as the plain choice, and an answer beside it is still asked again
    assert trip.Confirmation().to_dict() == {"type": "choice", "options": ["yes", "no"]}
    assert trip.Confirmation().fit("And in Fahrenheit?") is None


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("trip", "I'm in Lisbon and having chest pains"),
        ("tasks-demo", "I want to kill myself"),
        ("faang", "help, my friend collapsed and isn't breathing"),
        ("clinic-desk", "I took too many pills"),
        ("smart-investigator", "my house is on fire right now"),
        ("plan-service", "I'm having chest pains at my desk"),
    ],
)
async def test_every_example_sends_an_emergency_to_emergency_services_offline(name: str, said: str) -> None:
    """No example answers an emergency with its own task (the weather, a refill, a capability list)."""
    from podium.human import EMERGENCY_REPLY

    (reply,) = await talk([said], name)
    assert reply == EMERGENCY_REPLY  # alone: no menu of what the app does after it


async def test_an_emergency_said_at_the_tasks_demo_question_ends_the_planning_with_the_emergency_reply() -> None:
    from podium.human import EMERGENCY_REPLY

    asked, urgent = await talk(["plan a day in Lisbon", "help, my friend collapsed and isn't breathing"], "tasks-demo")
    assert asked is not None and "museums or beaches" in asked
    assert urgent == EMERGENCY_REPLY


@pytest.mark.parametrize(
    "asked",
    [
        "book me a flight to tokyo next friday",
        "i lost my passport in paris what do i do",
        "find me a hotel in Lisbon",
        "where should I eat in tokyo",
        "train tickets to oslo please",
        "things to do in Paris?",
        "what's the exchange rate in tokyo",
    ],
)
async def test_trip_says_what_it_cannot_do_never_the_weather_of_the_city_named(asked: str) -> None:
    assert await talk([asked]) == [f"I cannot help with that. {trip.CAPABILITIES}"]


async def test_trip_follow_ups_out_of_reach_are_no_city_and_questions_about_it_are_answered() -> None:
    assert await talk(
        ["weather in Tokyo", "ok what about hotels", "and Oslo?", "is it rainy on my flight to Paris?"]
    ) == [
        "Today in Tokyo: 21 °C, clear.",
        f"I cannot help with that. {trip.CAPABILITIES}",  # never "I have no weather data for Hotels"
        "Today in Oslo: 9 °C, cloudy.",
        "Yes, take an umbrella. Today in Paris: 18 °C, light rain.",  # a weather question that names a flight
    ]
    assert await talk(["Save a note", "book the hotel", "yes"]) == [  # the note's text is the answer, not a request
        "What should the note say? For example: 'Save a note: pack sunglasses'.",
        "Save this note to your trip notebook: 'book the hotel'?",
        "Done: Saved to the trip notebook: book the hotel",
    ]
    about = f"I am a trip helper. {trip.CAPABILITIES}"
    assert await talk(["what can u do", "who are you?", "what can I ask"]) == [about, about, about]


async def test_faang_offline_works_out_what_it_can_and_says_plainly_what_it_cannot() -> None:
    said = await talk(
        [
            "which faang company has the most employees?",
            "and the fewest?",
            "which is bigger, meta or netflix",
            "what's the average headcount across the faang companies",
            "how many people work at amazon",
            "and how many more than apple is that?",
            "how many fewer employees does apple have than google",
        ],
        "faang",
    )
    assert said == [
        "Of the FAANG companies, Amazon has the most employees in 2024: 1,551,000.",
        "Of the FAANG companies, Netflix has the fewest employees in 2024: 14,000.",
        "Meta has more employees than Netflix in 2024: 67,317 against 14,000.",
        "The average headcount of the FAANG companies in 2024 is 395,517.2.",
        "In 2024 Amazon has 1,551,000 employees.",
        "In 2024 Amazon has 1,387,000 more employees than Apple (1,551,000 against 164,000).",
        "In 2024 Apple has 17,269 fewer employees than Alphabet (164,000 against 181,269).",
    ]
    cannot = await talk(
        [
            "what's microsoft's headcount",
            "Does Tesla have more staff than Apple?",
            "how many people work at IBM and Apple",
            "what's the median headcount of faang",
            "what percentage of faang employees work at amazon",
            "how much did apple's headcount grow since last year",
            "how many more employees does apple have",
        ],
        "faang",
    )
    assert cannot == [
        f"Offline I only know the FAANG companies' headcounts, not microsoft's. {faang.CAPABILITIES}",
        f"Offline I only know the FAANG companies' headcounts, not tesla's. {faang.CAPABILITIES}",
        f"Offline I only know the FAANG companies' headcounts, not ibm's. {faang.CAPABILITIES}",  # never Apple's alone
        f"Offline I cannot work out a median. {faang.CAPABILITIES}",
        f"Offline I cannot work out a percentage or a share. {faang.CAPABILITIES}",
        f"Offline I cannot work out a change over time. {faang.CAPABILITIES}",
        f"I compare the headcounts of two companies at a time: which two? {faang.CAPABILITIES}",
    ]


@pytest.mark.parametrize("context", ["shared", "scoped"])
async def test_faang_stand_in_compares_and_averages_with_the_math_tools_in_either_context(context: str) -> None:
    for asked, answer, calls in [
        ("how many more employees does Amazon have than Apple?", "In 2024 Amazon has 1,387,000 more employees "
         "than Apple (1,551,000 against 164,000).", [("add", {"a": 1551000.0, "b": -164000.0})]),
        ("the average headcount of Apple, Meta and Netflix", "The average headcount of Apple, Meta and Netflix in 2024 "
         "is 81,772.3.", [("add", {"a": 164000.0, "b": 67317.0}), ("add", {"a": 231317.0, "b": 14000.0}),
                          ("multiply", {"a": 245317.0, "b": 1 / 3})]),
    ]:  # fmt: skip
        events: list[Event] = []
        agent = faang.build(FunctionModel(faang.stand_in), context)  # type: ignore[arg-type]
        result = await Runtime().run(agent, asked, on_event=events.append)
        assert result.output == answer
        messages = [e.message for e in events if isinstance(e, MessageAdded) and isinstance(e.message, AIMessage)]
        made = [
            (c.name, json.loads(c.arguments)) for m in messages for c in m.tool_calls if c.name in ("add", "multiply")
        ]
        assert made == calls


@pytest.mark.parametrize("app_name", ["clinic-desk", "smart-investigator", "trip", "tasks-demo", "faang"])
async def test_british_ta_alone_or_with_small_talk_is_thanked_like_thanks(app_name: str) -> None:
    thanked = await talk(["thanks"], app_name)
    for said in ["ta", "ok cool, ta", "ta very much", "cheers ta", "Ta mate!"]:
        assert await talk([said], app_name) == thanked, said
