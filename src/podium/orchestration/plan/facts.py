"""The people, dates, times and numbers a message to the plan service names, as the offline planner and agents
read them.

A person is a capitalised first and last name ("Ada Lovelace"); one the message rules out ("for Mia Chen, not Mia
Wong", "Mia Chen instead of Mia Wong") is not taken. A date is a weekday, a day of a month, "next week" and the
like; a time after it ("on friday at 10", "3pm", "9:30") goes with it, and is never a number. A number of people is
taken only from words that say people ("for 8 people", "a team of 8", "people: 8"); any other number is the
message's number.
"""

from __future__ import annotations

import re

__all__ = ["DATE", "MONTHS", "TIME", "WEEKDAYS", "facts", "people", "ruled_out"]

_NAME = re.compile(r"\b([A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|[A-Z]\.))+)")
_NOT_NAMES = frozenset({"Tech Support", "Human Resources"})
MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
"""The month names and their short forms a date may use, ``|``-separated."""
WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
"""The weekday names, ``|``-separated."""
DATE = re.compile(
    rf"\b(\d{{4}}-\d{{2}}-\d{{2}}|(?:next|this|coming)\s+(?:week|month|{WEEKDAYS})|"
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:to\s+\d{{1,2}}(?:st|nd|rd|th)?\s+)?(?:of\s+)?(?:{MONTHS})|"
    rf"(?:{MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?)(?:\s+\d{{4}})?|"
    rf"tomorrow|today|(?:on\s+)?(?:{WEEKDAYS})|"
    rf"(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)(?!\s+(?:of\s+)?(?:{MONTHS})\b))\b",
    re.IGNORECASE,
)
"""A date ("next week", "on friday", "the 15th", "3 June", "2025-06-01")."""
_AMOUNT = r"(?!\s*(?:%|percent|per\b|[$€£]|dollars?|euros?|pounds?|each|off\b|units?|items?|people|persons?|seats?))"
TIME = re.compile(
    r"\b(?:at\s+)?\d{1,2}[:.]\d{2}\s*(?:am|pm|a\.m\.|p\.m\.|h)?(?![\w.:])|"
    r"\b(?:at\s+)?\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.|o'?clock)(?!\w)|"
    rf"\bat\s+\d{{1,2}}\b(?![:.]\d){_AMOUNT}|\bat\s+(?:noon|midday|midnight)\b",
    re.IGNORECASE,
)
"""A time of day ("at 10", "10am", "9:30", "at noon"): never a count."""
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_PEOPLE_WORDS = r"(?:people|persons?|attendees?|guests?|participants?|colleagues|heads|pax|of\s+us|of\s+them)"
_HEADCOUNT = re.compile(
    rf"\b(\d+)\s+(?:more\s+|other\s+)?{_PEOPLE_WORDS}\b|"
    r"\b(?:team|group|party)\s+of\s+(\d+)\b|"
    r"\b(?:people|persons|attendees|guests|participants|headcount)\s*[:=]\s*(\d+)\b|"
    rf"\bfor\s+(\d+)(?=\s*(?:$|[,;!?]|\.(?!\d)|\b(?:on|at|in|next|this|tomorrow|today|from|{WEEKDAYS})\b))",
    re.IGNORECASE,
)
"""A number of people, said as one ("8 people", "a team of 8", "people: 8", "a room for 8 on friday")."""
_NEGATION_BEFORE = re.compile(
    r"(?:\bnot|\bnever|\binstead\s+of|\brather\s+than|\bno\s+longer|n't)\s+(?:(?:for|on|to|with|by|at|the|about|"
    r"it's|its|is|was)\s+){0,2}$",
    re.IGNORECASE,
)
"""What comes right before a value a message rules out ("not Mia Wong", "instead of Mia Wong", "not on monday")."""
_WISH_BEFORE = re.compile(
    r"\b(?:happy|enjoy\s+(?:your|the)|(?:have|had)\s+a\s+(?:good|great|nice|lovely|happy|relaxing)|"
    r"(?:good|great|nice|lovely)|hope\s+(?:you|u)\s+(?:have|had|enjoy)\s+a\s+(?:good|great|nice|lovely))\s+$",
    re.IGNORECASE,
)
"""What comes right before a day named only in a wish ("happy friday", "have a good monday"): no date of a task."""


def _negated_at(text: str, start: int) -> bool:
    return _NEGATION_BEFORE.search(text[:start]) is not None


def _names(text: str) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for match in _NAME.finditer(text):
        name, start = match.group(1), match.start()
        first = start == 0 or text[:start].rstrip().endswith((".", ":", "!", "?"))
        if first and name.count(" ") >= 2:
            name = name.partition(" ")[2]  # a sentence's first word is capitalised anyway ("Onboard Jessica Smith")
            start = match.start() + len(match.group(1)) - len(name)
        if " " in name and name not in _NOT_NAMES and name not in [n for n, _ in found]:
            found.append((name, start))
    return found


def people(text: str) -> list[str]:
    """The people ``text`` names (capitalised first and last names), in order, each once: those it rules out
    ("Mia Chen, not Mia Wong") too (see :func:`ruled_out`)."""
    return [name for name, _ in _names(text)]


def ruled_out(text: str) -> list[str]:
    """The people ``text`` names only to rule them out: "not Mia Wong", "instead of Mia Wong", "it isn't for Mia
    Wong" (a correction naming who is *not* meant)."""
    return [name for name, start in _names(text) if _negated_at(text, start)]


def _date(text: str) -> str | None:
    """The first date ``text`` names and does not rule out ("tuesday, not monday" is tuesday), nor names in a wish
    ("happy friday!"), with the time of day it gives ("on friday at 10")."""
    for match in DATE.finditer(text):
        if _negated_at(text, match.start()) or _WISH_BEFORE.search(text[: match.start()]):
            continue
        time = TIME.search(text)
        return f"{match.group(1)} {' '.join(time.group(0).split())}" if time else match.group(1)
    return None


def facts(text: str) -> dict[str, str]:
    """The person, date, number of people and other number ``text`` names, if any (``name``, ``date``,
    ``people``, ``number``); the first of each that it does not rule out. A time of day goes with the date and
    is never a number."""
    found: dict[str, str] = {}
    out = ruled_out(text)
    named = [name for name in people(text) if name not in out]
    if named:
        found["name"] = named[0]
    date = _date(text)
    if date:
        found["date"] = date
    headcount = _HEADCOUNT.search(TIME.sub(" ", text))
    if headcount:
        found["people"] = next(group for group in headcount.groups() if group)
    number = _NUMBER.search(TIME.sub(" ", DATE.sub(" ", text)))
    if number:
        found["number"] = number.group(0)
    return found
