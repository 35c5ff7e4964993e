"""Examples are modules that run offline: their cassettes replay, and they still match their recording script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examples import trip
from podium import Runtime, Settings, UsageError
from podium.app import App, load_app
from podium.testing import ReplayModel


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


async def talk(lines: list[str]) -> list[str | None]:
    """What the offline trip app says to ``lines``, sent one by one in one conversation (a question's prompt when
    a turn ends waiting for an answer); a failed run fails the test."""
    app = load_app("trip")
    agent = app.build(app.model(Settings.load(env={})))
    runtime, thread, said = Runtime(), None, []
    for line in lines:
        result = await runtime.send(agent, line, thread_id=thread)
        assert result.status in ("completed", "interrupted"), (line, result.reason)
        thread = result.thread_id
        said.append(result.output if result.status == "completed" else result.interrupts[0].prompt)
    return said


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
    with pytest.raises(UsageError, match="no cassette"):
        App(name="bare", build=trip.build).model(Settings.load(env={}))
