"""A trip helper: a ReAct agent with three small local tools.

Run it with ``podium chat trip``. Offline it replays ``cassettes/trip.json``, and answers what the cassette does
not hold with the rule-based stand-in below (the app's ``offline_fallback``: any city of its table, an unknown one,
a conversion of the city this conversation is about, a note, small talk); with ``PODIUM_MODEL`` set it talks to a
real model. Try: "What's the weather in Lisbon?", "And in Fahrenheit?", "Compare Paris and Oslo",
"Save a note: pack sunglasses for Lisbon" (or "add to my notes: ...", "jot this down: ..."; it asks you to
confirm: yes or no, "sure", "nope", "never mind", or "yes but make it ...", "sorry wrong one, ...", "don't save
that"; a question asked there is answered as far as it can be and the note asked about again, never taken as the
note). Offline follow-ups are about the conversation's
cities ("should I bring an umbrella?", "which one is warmer?"), the answer to "What should the note say?" is the
note, and a note asked for after another request ("weather in Lisbon and remind me to buy sunscreen") is saved
after it. What the helper cannot do (book a flight or a hotel, recommend sights or a restaurant, replace a lost
passport, tell tomorrow's weather) it says plainly, never with the weather of the city the request names.

The weather table and the notebook are stand-ins for real services: they say what a real one would do.
Re-record the cassette (from the stand-in below, or a real model when ``PODIUM_MODEL`` is set) with
``python examples/trip.py --record``.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import re
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
    tool,
)
from podium.app import App
from podium.human import (
    EMERGENCY_REPLY,
    declines,
    emergency,
    leaves,
    one_typo,
    pleasantry,
    requests_in,
    says_goodbye,
    straight,
    yes_or_no,
)
from podium.testing import FunctionModel, RecordingModel, tool_call

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


_SAVE = re.compile(r"(?:save it|confirm(?:ed)?|perfect|great)")
"""Yes in this question's own words (yes, "yeah", "sure, go ahead" are every yes-or-no question's)."""
_LEAD = re.compile(
    r"^(?:(?:no+|nope|nah|oh+|ah+|hmm+|um+|uh+|wait|hold on|hang on|actually|ok(?:ay)?|but)\b[\s,.!-]*)*"
)
"""Words an answer may open with before what it says ("hmm no, ...", "wait, ...")."""
_DISCARD = re.compile(
    r"(?:forget (?:the|that|this) note|(?:don'?t|do not|dont|no need to|please don'?t) (?:save|keep|write|note|add)"
    r"(?: (?:it|that|this|the note|that one|this one))?(?: down)?|discard(?: it| that)?|no need|scrap (?:it|that))"
    r"(?:[\s,.!]+(?:please|thanks|after all|any ?more|then))*"
)
"""No in this question's own words (no, "nope", "never mind" are every yes-or-no question's)."""
_QUESTION = re.compile(
    r"^(?:what|what'?s|whats|how|why|who|whom|whose|where|when|which|is|are|does|do|did|can|could|will|would|"
    r"should|am)\b\s+\S+\s+\S+"
)
"""A question that asks something, in three words or more ("is this private", "what's a trip notebook")."""
_EDIT = re.compile(
    r"^(?:(?:y\w*|ok\w*|sure)\b[\s,]*(?:but|and|just)?\s*(?:make it|change it to|call it|say|write|instead)|"
    r"(?:(?:no|actually)\b[\s,.!]*)?(?:wait\b[\s,.!]*)?(?:make it|change it to|i meant|it should (?:be|say))|"
    r"(?:(?:no|actually)\b[\s,.!]*)?(?:sorry|oops|whoops|my bad)\b[\s,.!]*(?:(?:wrong (?:one|note)|that'?s wrong|"
    r"i meant|i mean|it should (?:be|say)|make it)\b[\s,.!:]*)*|"
    r"(?:no\b[\s,.!]*)?(?:wait|actually)\b|(?:(?:no|nope|nah)\b[\s,.!]*)?(?=.+\binstead[\s.!]*$))\s*[:,]?\s*"
    r"['\"‘“]?(?P<text>.+?)['\"’”]?(?:[\s,]*\b(?:instead|actually|then|please|thanks))*[.!]?$",
    re.IGNORECASE,
)


_SAVE_ASKED = re.compile(
    r"^(?:can|could|would|will) (?:you )?(?:please )?(?:save|keep|add) (?:it|that|this|the note)\b"
)
"""A question that is a yes ("can you save it?")."""


def _asks(text: str) -> str | None:
    """The question an answer asks instead of answering ("wait, is this private?"), or ``None``: a question is
    never a note."""
    said = _LEAD.sub("", straight(text).strip().lower()).strip()
    if _QUESTION.match(said) is None:  # "And in Fahrenheit?" is no question about the note: asked again
        return None
    return said


def _answer(question: str) -> str:
    """What the helper can say to a question asked at its confirmation, before asking it again."""
    if re.search(r"\b(?:delet\w*|remov\w*|eras\w*|edit\w*|chang\w*|undo|clear\w*|get rid)\b", question):
        return "I can only save notes here: I cannot delete or change them, nor tell you whether you can later."
    if re.search(r"\b(?:note\w*|trip notebook)\b", question) and not re.search(
        r"\b(?:private|see|share\w*)\b", question
    ):
        return "The trip notebook keeps the notes you ask me to save for your trip."
    return "I cannot answer that here."


class Confirmation(Expectation):
    """A yes/no question that also takes what people say for yes and no ("sure", "nope", "never mind", "don't save
    that"), an answer that changes the note ("yes but make it 'pack warm socks'", "no wait, flight at 7pm", "sorry
    wrong one, flight at 9", answered as the text itself; the changed note is asked about in turn), and a question
    asked instead of an answer ("wait, is this private?": returned as said, and never a note).

    It is shown as the plain choice between yes and no (its JSON form is that choice's); only the check differs.
    """

    def __init__(self) -> None:
        super().__init__(type="choice", options=["yes", "no"])

    def fit(self, text: str) -> str | None:
        """'yes', 'no', a changing answer or a question as said, or ``None`` (then the question is asked again)."""
        bare = re.sub(r"[\s.!,]+$", "", straight(text).strip().lower())
        if _DISCARD.fullmatch(_LEAD.sub("", bare)):
            return "no"
        asked = _asks(text)
        if asked is not None:
            return "yes" if _SAVE_ASKED.search(asked) else text.strip()
        edit = _EDIT.match(text.strip())
        if edit:
            changed = edit["text"].strip()
            if changed.endswith("?"):  # "wait, private?": a question is never the note
                return None
            said = yes_or_no(changed) if len(changed) > 1 else None  # "wait, yes": the answer, not a note
            return text.strip() if said is None and not _DISCARD.fullmatch(changed.lower()) else "yes" if said else "no"
        if _SAVE.fullmatch(bare):
            return "yes"
        return Expectation.fit(self, text)


async def save_trip_note(ctx: RunContext[Any], text: str) -> str:
    """Save a note in the user's trip notebook, after they confirm.

    Args:
        text: the note to save.
    """
    question = f"Save this note to your trip notebook: {text!r}?"
    answer = await ctx.ask(question, expectation=Confirmation())
    while answer not in ("yes", "no"):
        asked = _asks(answer)
        if asked is not None:  # answered as far as the helper can, then the same question again
            answer = await ctx.ask(f"{_answer(asked)} {question}", expectation=Confirmation())
            continue
        edit = _EDIT.match(answer)  # "yes, but make it ...": the changed note is confirmed in turn
        if edit is None:
            break
        text = edit["text"].strip()
        question = f"Save this note to your trip notebook instead: {text!r}?"
        answer = await ctx.ask(question, expectation=Confirmation())
    if answer != "yes":
        return "The user declined; nothing was saved."
    # A real notebook service would store the note here; this stand-in only reports it.
    return f"Saved to the trip notebook: {text}"


lookup = tool(read_only=True)
"""The tools that change nothing (a lookup, a conversion): their calls need not be on disk before they run."""


def build(model: Model) -> ReactAgent:
    """The trip helper around ``model``."""
    return ReactAgent(
        "trip_helper",
        model,
        [lookup(get_weather), lookup(celsius_to_fahrenheit), save_trip_note],  # the note is saved, never read-only
        prompt=PROMPT,
        description="Answers weather questions for a trip and keeps trip notes.",
    )


# --- the stand-in model: records the cassette, and answers offline what the cassette cannot --------------------

CAPABILITIES = (
    "I can tell you today's weather in Lisbon, Paris, Oslo or Tokyo, convert it to Fahrenheit, and save a trip note "
    "(say 'Save a note: ...'; I ask you to confirm first)."
)

_NOTE = re.compile(
    r"^(?:(?:please|pls|can\s+you|could\s+you|would\s+you|will\s+you)\s+)*"
    r"(?:(?:save|add|make|take|write|create|leave|start|keep|jot|put|set)\s+(?:a\s+|this\s+|another\s+|new\s+)?"
    r"(?:note|reminder|memo)|"
    r"(?:add|put|save|write|keep|store|log|pop|stick)\s+(?:(?:this|that|it)\s+)?(?:down\s+)?"
    r"(?:to|in|into|on|onto)\s+(?:my|the|our)\s+(?:trip\s+)?(?:notes?|notebook|note\s?book)|"
    r"(?:note|jot|write|put|get)\s+(?:(?:this|that|it)\s+)?down|new\s+note|note\s+to\s+self|"
    r"remember|remind\s+me|note)\b(?:\s+(?:this|that|it)(?=\s*[:,-]|\s*$))?"
    r"(?:\s+(?:that|to|saying|about))?\s*[:,-]?\s*(.*)$",
    re.IGNORECASE | re.DOTALL,
)
"""A request to save a note, in its many wordings ("save a note: ...", "add to my notes: ...", "jot this down:
...", "note this: ...", "put in my notes that ...", "remember that ..."): group 1 is the note, without the lead-in."""
_WEATHER_WORDS = re.compile(
    r"\b(weather|temperatures?|forecast|rain\w*|sunny|sunshine|snow\w*|wind\w*|cloud\w*|hot|cold|warm|chilly|degrees|"
    r"humid\w*|climate|umbrella|compare)\b"
)
# Words that follow "in", "for", "at"... in a question without being a place ("for me", "to go", "at the moment").
_NOT_PLACES = {
    "a", "an", "be", "celsius", "check", "degrees", "do", "fahrenheit", "find", "get", "go", "here", "it", "know",
    "me", "moment", "my", "our", "see", "that", "the", "there", "this", "us", "visit", "weekend", "you", "your",
}  # fmt: skip
# Words that end a list of places ("Paris and Oslo today", "Rome in June", "Berlin pls").
_PLACE_ENDS = {
    "about", "at", "during", "for", "from", "in", "is", "like", "next", "now", "on", "please", "right", "this", "to",
    "today", "tomorrow", "tonight", "when", "will", "with", "pls", "plz", "thanks", "thank", "thx", "ty", "cheers",
    "then", "again", "too", "also", "instead", "actually", "anyway", "though", "tho", "mate",
}  # fmt: skip
_CONNECTORS = {"de", "da", "do", "del", "la", "le", "of", "upon", "am", "sur"}
"""Lowercase words inside a place's name ("Rio de Janeiro")."""
_ELSEWHERE = re.compile(
    r"\b(?:flights?|fly|flying|planes?|airlines?|airports?|hotels?|hostels?|airbnb|accommodation|book|booking|"
    r"reserve|reservations?|tickets?|trains?|bus|buses|taxis?|uber|rent|rental|passports?|visas?|embass(?:y|ies)|"
    r"consulates?|lost|stolen|restaurants?|eat|food|museums?|sights?|sightseeing|tours?|things to do|what to (?:see|"
    r"do|visit)|recommend\w*|currency|exchange|money|cash|euros|dollars|yen|insurance|luggage|baggage|translat\w*|"
    r"attractions?|landmarks?|(?:should|can|could|must) (?:i|we|you) (?:see|do|visit)|"
    r"(?:there|anything) to (?:see|do))\b"
)
"""What people ask a trip helper that this one cannot do (book, recommend, replace a passport): a city named with
it is no weather question ("book me a flight to Tokyo")."""
_UNKNOWN = re.compile(r"No weather data for (?P<city>.+?); known cities: (?P<known>.+)\.$")
_READING = re.compile(r"(?P<city>[^\W\d_a-z][\w'-]*(?: [^\W\d_a-z][\w'-]*)*): (?P<celsius>-?\d+(?:\.\d+)?) °C")
"""A city's temperature in a weather result or a reply ("Today in Lisbon: 24 °C, sunny.")."""
_NUMBER = r"(-?\d+(?:\.\d+)?)"


def _listing(names: list[str]) -> str:
    """'Lisbon, Paris and Oslo'."""
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def places(text: str) -> list[str]:
    """The places ``text`` names: the cities of the weather table it mentions, and names after "in", "for", "at",
    "to", "about", "compare" or "between" ("the weather in New York today": New York), in the order they come.

    In a text with capitals past its first word, only capitalized names count ("Is it going to rain in Oslo?" names
    Oslo, not "rain").
    """
    found = {m.start(): m[0].title() for c in WEATHER for m in re.finditer(rf"\b{c}\b", text.lower())}
    cased = any(w[0].isupper() for w in re.findall(r"[^\W\d_][\w'-]*", text)[1:])
    for listed in re.finditer(r"\b(?:in|for|at|to|about|compare|between)\s+", text, re.IGNORECASE):
        for start, name in _listed_places(text, listed.end(), cased):
            found.setdefault(start, name)
    names = [found[index] for index in sorted(found)]
    return [n for i, n in enumerate(names) if n.lower() not in (m.lower() for m in names[:i])]


def _listed_places(text: str, position: int, cased: bool) -> list[tuple[int, str]]:
    """The names listed in ``text`` from ``position`` ("Paris and New York"), each with where it starts."""
    items: list[list[re.Match[str]]] = [[]]
    for token in re.finditer(r"[\w'-]+|\S", text[position:]):
        word = token[0].lower()
        if word in ("and", "or", "vs", "versus", ",", "&"):
            items.append([])
        elif word in _PLACE_ENDS or not word[0].isalnum():
            break
        elif items[-1] or word != "the":
            items[-1].append(token)
    return [
        (position + item[0].start(), " ".join(_capitalized(w[0]) for w in item))
        for item in items
        if item and _is_place([w[0] for w in item], cased)
    ]


def _is_place(words: list[str], cased: bool) -> bool:
    """Whether these words can name a place (not "me", "rain" or "the weekend")."""
    lower = [w.lower() for w in words]
    return (
        len(words) <= 3
        and lower[0] not in _NOT_PLACES
        and not any(w in ("the", "a", "an") or _WEATHER_WORDS.fullmatch(w) for w in lower)
        and all(w.replace("'", "").replace("-", "").isalpha() for w in words)
        and (not cased or all(w[0].isupper() or w in _CONNECTORS for w in words))
    )


def _capitalized(word: str) -> str:
    return word if word in _CONNECTORS or not word.islower() else word[0].upper() + word[1:]


def describe_weather(result: str) -> str:
    """One sentence for a ``get_weather`` result: today's weather, or which cities the service knows."""
    unknown = _UNKNOWN.match(result)
    if unknown is None:
        return f"Today in {result}"
    return f"I have no weather data for {unknown['city']}; I know {_listing(unknown['known'].split(', '))}."


def _latest_weather(messages: list[Message]) -> list[str]:
    """What the conversation last said about the weather (the city it is about now): the results of its latest
    lookup, or the reply that reported one (a client may send a conversation without its tool messages)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, AIMessage):
            continue
        calls = {c.id for c in message.tool_calls if c.name == "get_weather"}
        if calls:
            return [m.content for m in messages[index:] if isinstance(m, ToolMessage) and m.tool_call_id in calls]
        if _readings([message.content]) or "no weather data" in message.content:
            return [message.content]
    return []


def _readings(said: list[str]) -> list[tuple[str, float]]:
    """The (city, °C) pairs in weather results or replies ("Lisbon: 24 °C, sunny.")."""
    return [(m["city"], float(m["celsius"])) for text in said for m in _READING.finditer(text)]


def _target_unit(words: str) -> str | None:
    """The unit a message asks to convert to, if any: "fahrenheit", "celsius" or "kelvin"."""
    named = re.search(r"\b(?:in|to|into)\s+(?:degrees\s+)?(fahrenheit|celsius|kelvin|f|c|k)\b", words)
    if named is not None:
        return {"f": "fahrenheit", "c": "celsius", "k": "kelvin"}.get(named[1], named[1])
    bare = re.search(r"\b(fahrenheit|kelvin)\b", words)
    return bare[1] if bare is not None else None


def _convert(human: str, messages: list[Message]) -> AIMessage:
    """A conversion: of the temperature given, the cities named, or the city this conversation is about."""
    words = human.lower()
    unit = _target_unit(words)
    given = re.search(_NUMBER + r"\s*(?:°|degrees?\b|deg\b)?\s*(c|celsius|f|fahrenheit)?\b", words)
    if unit == "kelvin" or (given is not None and (given[2] or "").startswith("f")):
        return AIMessage(content="I can only convert from Celsius to Fahrenheit.")
    if given is not None:
        return AIMessage(tool_calls=[tool_call("celsius_to_fahrenheit", {"celsius": float(given[1])})])
    cities = places(human)
    if cities:
        return AIMessage(tool_calls=[tool_call("get_weather", {"city": c}) for c in cities])
    latest = _latest_weather(messages)
    readings = _readings(latest)
    if not latest:
        return AIMessage(content="Which temperature? Ask me the weather in a city first, or give me one in °C.")
    if not readings:
        said = describe_weather(latest[0]) if _UNKNOWN.match(latest[0]) else latest[0]
        return AIMessage(content=f"I have no temperature to convert: {said}")
    if unit == "celsius":
        return AIMessage(content=" ".join(f"{city}: {celsius:g} °C." for city, celsius in readings))
    return AIMessage(tool_calls=[tool_call("celsius_to_fahrenheit", {"celsius": c}) for _, c in readings])


def _after_tools(human: str, messages: list[Message], results: list[ToolMessage]) -> AIMessage:
    """The reply once the tools have answered (or the next tool call, to convert what the weather said)."""
    if any(r.is_error for r in results):
        if results[0].name == "save_trip_note" and "declined to answer" in results[0].content:
            return AIMessage(content="Fine, I did not save it.")  # "never mind" to the confirmation
        return AIMessage(content=f"Sorry, that did not work: {results[0].content}")
    name = results[0].name
    readings = _readings([r.content for r in results])
    if name == "get_weather" and readings and _target_unit(human.lower()) == "fahrenheit":
        return AIMessage(tool_calls=[tool_call("celsius_to_fahrenheit", {"celsius": c}) for _, c in readings])
    later = _LATER.search(human.lower())
    if name == "get_weather" and later is not None:  # never today's weather as tomorrow's
        said = describe_weather(results[0].content) if len(results) == 1 else " ".join(_side_by_side(results))
        return AIMessage(content=f"I only have today's weather, no forecast for {later[0]}. {said}")
    compared = _compared(human.lower(), readings) if name == "get_weather" else None
    if compared is not None:  # "which is warmer, Oslo or Paris?"
        return AIMessage(content=compared)
    if name == "get_weather" and len(results) == 1:
        return AIMessage(content=_advice(human, results[0].content) + describe_weather(results[0].content))
    if name == "get_weather":
        return AIMessage(content="Side by side — " + " ".join(_side_by_side(results)))
    if name == "celsius_to_fahrenheit":
        return AIMessage(content=_fahrenheit(messages, results))
    return AIMessage(
        content="Done: " + results[0].content if "Saved" in results[0].content else "Fine, I did not save it."
    )


def _side_by_side(results: list[ToolMessage]) -> list[str]:
    """Each city's weather, then the cities the service knows if it did not know one."""
    unknown = [m for m in (_UNKNOWN.match(r.content) for r in results) if m is not None]
    said = [r.content for r in results if _UNKNOWN.match(r.content) is None]
    if unknown:
        said.append(f"I have no weather data for {_listing([m['city'] for m in unknown])}.")
        said.append(f"I know {_listing(unknown[0]['known'].split(', '))}.")
    return said


def _fahrenheit(messages: list[Message], results: list[ToolMessage]) -> str:
    """The conversions, each named after the city whose temperature it converted (when it was one)."""
    calls = next(m for m in reversed(messages) if isinstance(m, AIMessage)).tool_calls
    latest = _latest_weather(messages)
    readings = {c: city for city, c in _readings(latest)}
    pairs = [(float(json.loads(c.arguments)["celsius"]), r.content) for c, r in zip(calls, results, strict=False)]
    alone = len(readings) == 1 and not any("no weather data" in t.lower() for t in latest)
    if len(pairs) == 1 and alone and pairs[0][0] in readings:
        return f"That is {pairs[0][1]} °F."
    return " ".join(f"{readings[c]}: {f} °F." if c in readings else f"{c:g} °C is {f} °F." for c, f in pairs)


_RAIN_QUESTION = re.compile(r"\b(umbrella|raincoat|rain\w*|wet)\b")
_WARMER = re.compile(r"\b(?:(warm|hott?)(?:er|est)|(cold|cool|chilli?)(?:er|est))\b")
_ASK_NOTE = "What should the note say?"
_CANCEL = re.compile(r"(?:no|nope|cancel|stop|never ?mind|forget it|nothing|skip it)\b")


def _advice(human: str, result: str) -> str:
    """Whether to take an umbrella, when the question was about rain, before the weather it follows from."""
    if not _RAIN_QUESTION.search(human.lower()) or _UNKNOWN.match(result):
        return ""
    wet = re.search(r"\b(rain|drizzle|shower|storm|thunder|snow)", result.lower()) is not None
    return "Yes, take an umbrella. " if wet else "No umbrella needed. "


_LATER = re.compile(
    r"\b(?:tomorrow|tmrw|tmr|the day after|(?:next|this|on|coming) (?:week(?:end)?|days|month|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|(?:the )?weekend|in (?:a few|\d+|two|three|a couple of) days|"
    r"later (?:this|in the) week)\b"
)
"""A day after today: the weather service has today's conditions only."""


def _warmer(words: str, messages: list[Message]) -> str | None:
    """Which of the cities this conversation asked about is warmer (or colder), when ``words`` asks it: those of
    its latest lookup when it had several, else the last two it asked about ("weather in Tokyo", "and Oslo",
    "which one's colder?")."""
    readings = _readings(_latest_weather(messages))
    if len(readings) < 2:
        recent: dict[str, float] = {}
        for message in messages:
            if isinstance(message, ToolMessage) and message.name == "get_weather":
                for city, celsius in _readings([message.content]):
                    recent.pop(city, None)
                    recent[city] = celsius
        readings = list(recent.items())[-2:]
    return _compared(words, readings)


def _compared(words: str, readings: list[tuple[str, float]]) -> str | None:
    """Which of ``readings`` is warmer (or colder), when ``words`` asks it."""
    asked = _WARMER.search(words)
    if asked is None or len(readings) < 2:
        return None
    ordered = sorted(readings, key=lambda reading: reading[1], reverse=asked[1] is not None)
    (city, celsius), others = ordered[0], ordered[1:]
    if any(c == celsius for _, c in others):
        return "They are equally " + ("warm" if asked[1] else "cold") + f": {celsius:g} °C."
    rest = _listing([f"{c:g} °C in {other}" for other, c in others])
    return f"{city} is {'warmer' if asked[1] else 'colder'}: {celsius:g} °C, against {rest}."


def _previous_reply(messages: list[Message]) -> str:
    """What the helper said last, before the current human message."""
    last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0)
    return next((m.content for m in reversed(messages[:last_human]) if isinstance(m, AIMessage)), "")


def _small_talk(words: str) -> str:
    """A reply to a greeting, thanks, a goodbye, a question about the helper, or anything else."""
    kind = pleasantry(words)
    if kind == "thanks" and says_goodbye(words):  # "thanks, that's all": nothing more is asked
        return "You're welcome, and have a good trip!"
    if not re.search(r"[^\W\d_]", words):  # "??": what it can do, no refusal
        kind = "capabilities"
    if kind is None and says_goodbye(words):  # "ok bye!", "ok gotta dash, bye!"
        kind = "goodbye"
    if kind in ("greeting", "thanks", "goodbye"):
        return {
            "greeting": f"Hello! {CAPABILITIES}",
            "thanks": "You're welcome! Anything else for your trip?",
            "goodbye": "Goodbye, and have a good trip!",
        }[kind]
    if declines(words) or re.match(r"forget (?:the|that) note\b", words.strip()):
        return "All right. Anything else for your trip?"
    if yes_or_no(words) is not None:
        return f"There is no question waiting for an answer. {CAPABILITIES}"
    if kind == "capabilities":
        return f"I am a trip helper. {CAPABILITIES}"
    return f"I cannot help with that. {CAPABILITIES}"


def stand_in(messages: list[Message], request: ModelRequest) -> AIMessage:
    """A rule-based stand-in for a model: it recorded the shipped cassette, and answers offline what the cassette
    cannot (any input gets a true answer from the tools, or says what the helper can do).

    A note asked for after another request ("what's the weather in Lisbon and save a note to buy sunscreen") is
    saved once the other request is answered, and the reply says both."""
    human = next((m.content for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    turn = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0)
    first, note = _note_after(human)
    if not isinstance(messages[-1], ToolMessage):
        if note is None or emergency(human):
            return _respond(human, messages)
        reply = _respond(first, messages)
        return reply if reply.tool_calls else AIMessage(tool_calls=[tool_call("save_trip_note", {"text": note})])
    results: list[ToolMessage] = []
    for m in reversed(messages):
        if not isinstance(m, ToolMessage):
            break
        results.insert(0, m)
    if note is None:
        return _after_tools(human, messages, results)
    if results[0].name != "save_trip_note":  # the first request is answered: the note's turn
        reply = _after_tools(first, messages, results)
        return reply if reply.tool_calls else AIMessage(tool_calls=[tool_call("save_trip_note", {"text": note})])
    before = [i for i in range(turn, len(messages) - len(results)) if isinstance(messages[i], ToolMessage)]
    if before:  # what the first request's tools said, answered again
        earlier = [m for m in messages[before[0] : before[-1] + 1] if isinstance(m, ToolMessage)]
        said = _after_tools(first, messages[: before[-1] + 1], earlier).content
    else:
        said = _respond(first, messages[: turn + 1]).content
    if said.startswith("I cannot help with that."):  # the menu once is enough: say which request
        said = f"I cannot help with {first.strip()!r}."
    return AIMessage(content=f"{said} {_after_tools(human, messages, results).content}")


_OPENING = re.compile(r"^(?:(?:and|also|then|please|pls|can you|could you|would you|will you)\b[\s,]*)*", re.I)


def _note_after(human: str) -> tuple[str, str | None]:
    """A message's first requests and the note asked for after them ("weather in Lisbon and remind me to buy
    sunscreen": "weather in Lisbon", "buy sunscreen"), or the message and ``None`` when it asks no note after
    something else (a message that opens with the note is all note: "note: bread and milk")."""
    parts = requests_in(human)
    at = next((i for i, p in enumerate(parts) if i > 0 and _NOTE.match(_OPENING.sub("", p))), None)
    if at is None:
        return human, None
    note = _NOTE.match(_OPENING.sub("", " and ".join(parts[at:])))
    text = note[1].strip() if note is not None else ""
    return (" and ".join(parts[:at]), text) if text else (human, None)


def _respond(human: str, messages: list[Message]) -> AIMessage:
    """The reply to ``human``, the conversation's last message, before any tool has answered."""
    if emergency(human):  # never the weather: the person is sent to emergency services first
        return AIMessage(content=EMERGENCY_REPLY)
    words = human.lower()
    note = _NOTE.match(human.strip())
    if note is not None:
        text = note[1].strip()
        if not text:
            return AIMessage(content=f"{_ASK_NOTE} For example: 'Save a note: pack sunglasses'.")
        return AIMessage(tool_calls=[tool_call("save_trip_note", {"text": text})])
    human = _spelled(human)  # "whats the wether in tokio" is about the weather in Tokyo
    words = human.lower()
    if _target_unit(words) is not None:
        return _convert(human, messages)
    if leaves(human) and _WEATHER_WORDS.search(words) is None:  # "off to pack, bye": leave taken, no city named
        return AIMessage(content=_small_talk(words))
    cities = places(human)
    weather = _WEATHER_WORDS.search(words) is not None
    weather = weather or (_LATER.search(words) is not None and bool(_latest_weather(messages)))  # "and tomorrow?"
    answers_note = _previous_reply(messages).startswith(_ASK_NOTE)  # the answer to "What should the note say?"
    if not weather and not answers_note and _ELSEWHERE.search(words):  # never a booking's city's weather
        return AIMessage(content=f"I cannot help with that. {CAPABILITIES}")
    # an unknown place is a city asked about when the message or the conversation is about the weather
    if cities and (weather or any(c.lower() in WEATHER for c in cities) or _latest_weather(messages)):
        return AIMessage(tool_calls=[tool_call("get_weather", {"city": c}) for c in cities])
    if answers_note:
        if _CANCEL.match(words.strip(" .!")):
            return AIMessage(content="All right, no note.")
        return AIMessage(tool_calls=[tool_call("save_trip_note", {"text": human.strip()})])
    compared = _warmer(words, messages)
    if compared is not None:
        return AIMessage(content=compared)
    if weather:  # a follow-up ("should I bring an umbrella?") is about the city the conversation is about
        latest = [r for _, r in _latest_cities(messages)]
        if latest:
            return AIMessage(tool_calls=[tool_call("get_weather", {"city": c}) for c in latest])
        return AIMessage(content="Which city? I know the weather in Lisbon, Paris, Oslo and Tokyo.")
    return AIMessage(content=_small_talk(words))


_KNOWN_WORDS = [*WEATHER, "weather", "forecast", "temperature", "umbrella", "compare", "fahrenheit", "celsius"]
"""Words a typo is read as when it is close to one of them ("wether", "tokio", "farenheit")."""


def _spelled(text: str) -> str:
    """``text`` with each word of four letters or more that is not one of :data:`_KNOWN_WORDS` but close to one
    (difflib's ratio 0.8 or more) written as that word, capitalised as the place names are."""

    def fix(match: re.Match[str]) -> str:
        word = match[0]
        lower = word.lower()
        if len(lower) < 4 or lower in _KNOWN_WORDS:
            return word
        swapped = [k for k in _KNOWN_WORDS if len(k) == len(lower) and one_typo(lower, k, changes=False)]  # "olso"
        close = swapped or difflib.get_close_matches(lower, _KNOWN_WORDS, n=1, cutoff=0.8)
        if not close:
            return word
        return close[0].title() if close[0] in WEATHER else close[0]

    return re.sub(r"[^\W\d_]+", fix, text)


def _latest_cities(messages: list[Message]) -> list[tuple[int, str]]:
    """The cities the conversation's latest weather was about (known or not), each with its place in the reply."""
    said = " ".join(_latest_weather(messages))
    found = [(m.start(), m["city"]) for m in _READING.finditer(said)]
    found += [(m.start(), m["city"]) for m in re.finditer(r"(?:N|n)o weather data for (?P<city>[^;.]+)", said)]
    return sorted({city: (at, city) for at, city in found}.values())


app = App(
    name="trip",
    build=build,
    cassette=CASSETTE,
    offline_fallback=FunctionModel(stand_in, name="stand-in", keep=0),  # it serves: keeps no requests
    welcome="Trip helper: ask about the weather in Lisbon, Paris, Oslo or Tokyo, convert to Fahrenheit, "
    "or ask me to save a trip note.",
)


# --- recording --------------------------------------------------------------------------------------------------

# The conversations recorded into the cassette: each a list of human lines (an answer to a question included).
SCRIPT = [
    ["What's the weather in Lisbon?", "And in Fahrenheit?", "Save a note: pack sunglasses for Lisbon", "yes"],
    ["Compare Paris and Oslo", "Save a note: umbrella for Paris", "no"],
]


async def record(path: Path = CASSETTE) -> None:
    """Record the cassette from a real model when PODIUM_MODEL is set, else from the stand-in."""

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
