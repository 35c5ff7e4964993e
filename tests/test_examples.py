"""Examples are modules that run offline: their cassettes replay, and they still match their recording script."""

from __future__ import annotations

import json
from pathlib import Path

from examples import trip
from podium import Runtime, Settings
from podium.app import load_app


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
