"""A trip helper: a ReAct agent with three small local tools.

Run it with ``podium chat trip``. Offline it replays ``cassettes/trip.json``; with ``PODIUM_MODEL`` set it talks
to a real model. Try: "What's the weather in Lisbon?", "And in Fahrenheit?", "Compare Paris and Oslo",
"Save a note: pack sunglasses for Lisbon" (it asks you to confirm: answer yes or no).

The weather table and the notebook are stand-ins for real services: they say what a real one would do.
Re-record the cassette (from the stand-in below, or a real model when ``PODIUM_MODEL`` is set) with
``python examples/trip.py --record``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from podium import (
    AIMessage,
    Expectation,
    HumanMessage,
    Message,
    Model,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    Settings,
    ToolMessage,
)
from podium.app import App

CASSETTE = Path(__file__).parent / "cassettes" / "trip.json"

PROMPT = (
    "You are a concise trip helper. Use get_weather for weather questions, celsius_to_fahrenheit for "
    "conversions, and save_trip_note when the user asks to remember something."
)

# Stand-in for a weather service: today's conditions for a few cities.
WEATHER = {
    "lisbon": (24, "sunny"),
    "paris": (18, "light rain"),
    "oslo": (9, "cloudy"),
    "tokyo": (21, "clear"),
}


def get_weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: the city's name, e.g. "Lisbon".
    """
    found = WEATHER.get(city.strip().lower())
    if found is None:
        return f"No weather data for {city}; known cities: {', '.join(c.title() for c in WEATHER)}."
    return f"{city.title()}: {found[0]} °C, {found[1]}."


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit.

    Args:
        celsius: the temperature in °C.
    """
    return round(celsius * 9 / 5 + 32, 1)


async def save_trip_note(ctx: RunContext[Any], text: str) -> str:
    """Save a note in the user's trip notebook, after they confirm.

    Args:
        text: the note to save.
    """
    answer = await ctx.ask(
        f"Save this note to your trip notebook: {text!r}?",
        expectation=Expectation(type="choice", options=["yes", "no"]),
    )
    if answer.strip().lower() not in ("yes", "y"):
        return "The user declined; nothing was saved."
    # A real notebook service would store the note here; this stand-in only reports it.
    return f"Saved to the trip notebook: {text}"


def build(model: Model) -> ReactAgent:
    """The trip helper around ``model``."""
    return ReactAgent(
        "trip_helper",
        model,
        [get_weather, celsius_to_fahrenheit, save_trip_note],
        prompt=PROMPT,
        description="Answers weather questions for a trip and keeps trip notes.",
    )


app = App(
    name="trip",
    build=build,
    cassette=CASSETTE,
    welcome="Trip helper: ask about the weather in Lisbon, Paris, Oslo or Tokyo, convert to Fahrenheit, "
    "or ask me to save a trip note.",
)

# --- recording --------------------------------------------------------------------------------------------------

# The conversations recorded into the cassette: each a list of human lines (an answer to a question included).
SCRIPT = [
    ["What's the weather in Lisbon?", "And in Fahrenheit?", "Save a note: pack sunglasses for Lisbon", "yes"],
    ["Compare Paris and Oslo", "Save a note: umbrella for Paris", "no"],
]


def stand_in(messages: list[Message], request: ModelRequest) -> AIMessage:
    """A rule-based stand-in for a model, used to record the shipped cassette without a network."""
    from podium.testing import tool_call

    last = messages[-1]
    human = next(m for m in reversed(messages) if isinstance(m, HumanMessage)).content
    if isinstance(last, ToolMessage):
        results = []
        for m in reversed(messages):
            if not isinstance(m, ToolMessage):
                break
            results.insert(0, m)
        if results[0].name == "get_weather" and len(results) == 1:
            return AIMessage(content=f"Today in {results[0].content}")
        if results[0].name == "get_weather":
            return AIMessage(content="Side by side — " + " ".join(r.content for r in results))
        if results[0].name == "celsius_to_fahrenheit":
            return AIMessage(content=f"That is {results[0].content} °F.")
        return AIMessage(
            content="Done: " + results[0].content if "Saved" in results[0].content else "Fine, I did not save it."
        )
    words = human.lower()
    cities = [c for c in WEATHER if c in words]
    if words.startswith("save a note:"):
        return AIMessage(tool_calls=[tool_call("save_trip_note", {"text": human.split(":", 1)[1].strip()})])
    if "fahrenheit" in words:
        earlier = next(m.content for m in reversed(messages) if isinstance(m, ToolMessage) and m.name == "get_weather")
        celsius = float(earlier.split(":")[1].split("°")[0])
        return AIMessage(tool_calls=[tool_call("celsius_to_fahrenheit", {"celsius": celsius})])
    if cities:
        return AIMessage(tool_calls=[tool_call("get_weather", {"city": c.title()}) for c in cities])
    return AIMessage(content="I can help with the weather, conversions to Fahrenheit, and trip notes.")


async def record(path: Path = CASSETTE) -> None:
    """Record the cassette from a real model when PODIUM_MODEL is set, else from the stand-in."""
    from podium.testing import FunctionModel, RecordingModel

    path.unlink(missing_ok=True)  # noqa: ASYNC240 - a one-off script step
    model = RecordingModel(Settings.load().model_or_none() or FunctionModel(stand_in, name="stand-in"), path)
    runtime = Runtime()
    agent = build(model)
    for lines in SCRIPT:
        thread = None
        for line in lines:
            result = await runtime.send(agent, line, thread_id=thread)
            thread = result.thread_id
            print(json.dumps({"human": line, "status": result.status, "output": result.output}))


if __name__ == "__main__":
    if "--record" in sys.argv:
        asyncio.run(record())
    else:
        print(__doc__)
