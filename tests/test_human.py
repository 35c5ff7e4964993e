"""podium.human: the phrases every agent reads the same way (an emergency, yes and no, declining a question)."""

from __future__ import annotations

import pytest

from podium.human import declines, emergency, yes_or_no


@pytest.mark.parametrize(
    "text",
    [
        "I took too many pills",
        "my dad's face is drooping and he can't lift his arm",
        "I've just been in a car accident and I'm bleeding, what do I do",
        "my house is on fire right now",
        "someone is threatening to hurt me right now",
        "I'm in Lisbon and having chest pains",
        "I've been robbed in Paris and I'm hurt, help",
        "I want to kill myself",
        "help, my friend collapsed and isn't breathing",
        "my son swallowed some bleach",
        "I think I'm having a heart attack",
        "there's a gas leak in the kitchen",
        "someone is breaking into my house",
        "he has a knife",
        "please call an ambulance",
        "I can\u2019t breathe",  # a phone's apostrophe
    ],
)
def test_emergencies_said_in_everyday_words_are_caught(text: str) -> None:
    assert emergency(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "the roof collapsed after the storm, I want to claim",
        "I had a car accident last week and want to make a claim",
        "the bill is 112 dollars",
        "book physiotherapy for my arm",
        "I need a refill of my blood pressure pills",
        "my claim id is 000123",
        "the weather in Lisbon",
        "a fire drill is scheduled at the office",
    ],
)
def test_ordinary_requests_are_no_emergency(text: str) -> None:
    assert emergency(text) is None


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("yes", True),
        ("Yeah!", True),
        ("sure thing", True),
        ("yes please go ahead", True),
        ("of course", True),
        ("no", False),
        ("nope", False),
        ("no, thank you", False),
        ("never mind", False),
        ("thanks", None),
        ("yes but make it Tuesday", None),
        ("what about Tuesday?", None),
        ("", None),
    ],
)
def test_yes_and_no(text: str, verdict: bool | None) -> None:
    assert yes_or_no(text) is verdict


def test_declining_is_the_whole_message() -> None:
    assert declines("never mind") and declines("Cancel that, thanks") and declines("no thanks")
    assert not declines("cancel my appointment on Tuesday") and not declines("stop by the museum")
