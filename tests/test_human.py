"""podium.human: the phrases every agent reads the same way (an emergency, yes and no, declining a question)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podium import Expectation
from podium.human import Caseless, declines, emergency, joined_codes, pleasantry, yes_or_no


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
        "i dont want to be alive anymore",
        "I do not want to live anymore.",
        "honestly I'd be better off dead",
        "the claimant just called and said he'll come here and hurt me",
        "my ex says she is going to come over and kill us",
        "my toddler got into my pills and swallowed a handful",
        "my colleague is clutching his chest and can't talk",
        "there's smoke coming from the server room",
        "my friend fell off a cliff and isn't moving",
        "my dad just fainted and he's not responding",
        "my dad's arm went numb and one side of his face dropped",  # the signs of a stroke, in other words
        "one side of my mum's face has dropped suddenly",
        "my grandad suddenly can't speak properly and his arm is weak",
        "I think she's showing signs of a stroke",
        "my mum says her words are coming out jumbled and her smile is crooked",
        "someone's face just went droopy and they can't talk",
        "someone in the office just fainted and isn't waking up",
        "my wife got stung by a bee and her face is swelling up fast",
        "bee sting, her throat is closing up",
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
        "I don't want to live in Paris after all",
        "this delay will hurt my credit score",
        "he said he would sue me over the bill",
        "the app is not responding",
        "I swallowed my pride and called them",
        "a fire in the fireplace would be nice",
        "the stock fell off a cliff",
        "my arm went numb from sleeping on it",
        "her face dropped when she saw the bill",
        "I want to improve my swimming stroke",
        "the smile on the logo looks crooked",
        "my words are jumbled in this email, can you fix it",
        "my face is swollen from the dentist yesterday",
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
        ("no wait, flight at 7pm", False),  # a no that goes on is a no: in doubt, the answer that does nothing
        ("no. wrong time", False),
        ("No thanks, maybe later", False),
        ("i guess not", False),
        ("no problem, go ahead", True),
        ("no doubt", True),
        ("no idea", None),
        ("no worries", None),
        ("Approve", True),
        ("i accept", True),
        ("rejected", False),
    ],
)
def test_yes_and_no(text: str, verdict: bool | None) -> None:
    assert yes_or_no(text) is verdict


@pytest.mark.parametrize("text", ["no, 7pm", "no. wrong time", "no wait, I meant the hotel", "No thanks, maybe later"])
def test_an_answer_that_begins_with_no_is_never_taken_as_yes(text: str) -> None:
    assert Expectation(type="choice", options=["yes", "no"]).fit(text) == "no"
    assert Expectation(type="choice", options=["Yes", "No"]).fit("no worries") is None  # neither: asked again


def test_declining_is_the_whole_message() -> None:
    assert declines("never mind") and declines("Cancel that, thanks") and declines("no thanks")
    assert not declines("cancel my appointment on Tuesday") and not declines("stop by the museum")


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("P 123 456", "P123456"),
        ("my number is 0412 345 678", "my number is 0412345678"),
        ("123-ABH", "123ABH"),
        ("call 123 to book", "call 123 to book"),  # words stay apart
        ("in 2 weeks", "in 2 weeks"),
    ],
)
def test_codes_typed_with_gaps_are_joined(text: str, joined: str) -> None:
    assert joined_codes(text) == joined


def test_a_pattern_question_takes_a_code_typed_with_gaps() -> None:
    from podium import Expectation
    from podium.orchestration.master import fit_expectation

    patient = Expectation(type="pattern", pattern=r"\b[Pp][- ]?\d{6}\b")
    assert patient.fit("it's P 123 456") == "it's P123456"
    assert fit_expectation(patient, "it's P 123 456") == "P123456"
    claim = Expectation(type="pattern", pattern=r"\b\d{3}[A-Z]{3}\b")
    assert claim.fit("123-ABH") == "123ABH" and fit_expectation(claim, "my claim is 123-ABH") == "123ABH"
    assert patient.fit("I don't have one") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Hi there!", "greeting"),
        ("good morning", "greeting"),
        ("thanks a lot", "thanks"),
        ("ok thank you", "thanks"),
        ("bye", "goodbye"),
        ("what can you do?", "capabilities"),
        ("can you help me", "capabilities"),
        ("what can u do", "capabilities"),
        ("so what can I ask?", "capabilities"),
        ("who are you", "capabilities"),
        ("what do you know", "capabilities"),
        ("what kind of stuff do you know about", "capabilities"),
        ("what sorts of questions can you answer?", "capabilities"),
        ("what's the weather in Oslo?", None),
        ("actually i'm off, bye", "goodbye"),
        ("ok gotta run", "goodbye"),
        ("I have to go to the pharmacy", None),
        ("ok ciao", "goodbye"),
        ("right, i'm heading off now, thanks", "thanks"),
        ("I'm heading out to the pharmacy", None),
        ("ta", "thanks"),
        ("ok cool, ta", "thanks"),
        ("Ta very much!", "thanks"),
        ("cheers ta", "thanks"),
        ("lovely, ta mate", "thanks"),
        ("ta ta for now", "goodbye"),
        ("ta-da", None),
        ("tata motors headcount", None),
        ("book the TA session", None),
        ("what is ta in french", None),
        ("stay at the hotel", None),
    ],
)
def test_pleasantries_are_told_apart_from_requests(text: str, kind: str | None) -> None:
    assert pleasantry(text) == kind


_PHRASE = r"\b(?:can'?t\s+breath\w*|kill(?:ing)?\s+(?:my|him)sel(?:f|ves)|[a-z]{2}-\d+|stop(?:ped)?)\b"
_PIECES = ["can't ", "CANT ", "Breathe ", "KILLING ", "himself", "Myself ", "ab-12 ", "Stopped", "stop", "\u212a", "\u017f",
           "\u0130", "\u2019", "x", " ", ".", "-", "9"]  # fmt: skip


@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_a_caseless_pattern_finds_what_a_case_insensitive_search_finds(text: str) -> None:
    found = re.search(_PHRASE, text, re.IGNORECASE)
    assert Caseless(_PHRASE).find(text) == (found.group(0) if found else None)


@pytest.mark.parametrize("pattern", [r"\bStop\b", r"\x53top", r"(?i)stop", r"caf\u00e9", "café"])
def test_a_caseless_pattern_is_lowercase_ascii_without_codes_or_flags(pattern: str) -> None:
    with pytest.raises(ValueError, match="lowercase ASCII"):
        Caseless(pattern)


def test_an_answer_that_changes_its_mind_or_picks_by_place_fits_what_it_means() -> None:
    topology = Expectation(type="choice", options=["Home", "Motor"])
    assert topology.fit("Motor. no wait, home") == "Home"
    assert topology.fit("the second one") == "Motor" and topology.fit("option 1") == "Home"
    assert topology.fit("motor and home") is None  # two named: neither
    claim = Expectation(type="pattern", pattern=r"\b\d{3}[A-Z]{3}\b")
    assert claim.fit("123ABH, sorry I meant 456DEF") == "456DEF"
    assert claim.fit("123ABH") == "123ABH"
    yes_no = Expectation(type="choice", options=["yes", "no"])
    assert yes_no.fit("no, actually yes") == "no"  # a no first stays no: the answer that does nothing
    assert yes_no.fit("yes. actually no") == "no"


def test_an_edit_that_is_not_a_json_object_is_no_decision() -> None:
    from podium.human import approval

    assert approval("edit: {amount: 40}") is None and approval('edit: {"amount": 40}') == 'edit: {"amount":40}'
    assert approval("no, too expensive") == "reject: too expensive" and approval("no thank you") == "reject"


@pytest.mark.parametrize(
    ("text", "leaves"),
    [
        ("thanks, bye", True),
        ("ok I have to go", True),
        ("that's all for now", True),
        ("good night!", True),
        ("I need to buy a bag", False),  # "buy" is no "bye"
        ("what museums are nearby", False),
        ("bye the way, is it raining? and what about Oslo and Tokyo and Lisbon", False),  # long: a request
    ],
)
def test_taking_leave_is_told_apart(text: str, leaves: bool) -> None:
    from podium.human import says_goodbye

    assert says_goodbye(text) is leaves


@pytest.mark.parametrize(
    ("typed", "word", "typo", "slip"),
    [
        ("decilne", "decline", True, True),  # two neighbours swapped
        ("leter", "letter", True, True),  # a letter left out
        ("idd", "id", True, True),  # a letter added
        ("hope", "home", True, False),  # a letter changed: a typo, but no slip
        ("home", "home", False, False),
        ("hmeo", "home", False, False),  # two slips
        ("lettters", "letter", False, False),
    ],
)
def test_one_typo_tells_a_slip_from_a_changed_letter(typed: str, word: str, typo: bool, slip: bool) -> None:
    from podium.human import one_typo

    assert one_typo(typed, word) == typo and one_typo(word, typed) == typo
    assert one_typo(typed, word, changes=False) == slip


SIZES = Expectation(
    type="choice",
    options=["Small", "Large"],
    synonyms={"Small": ["tiny", "little one"], "Large": ["big", "huge"], "Medium": ["middle"]},
)


@pytest.mark.parametrize(
    ("text", "option"),
    [
        ("the tiny one", "Small"),
        ("BIG please", "Large"),
        ("the little one", "Small"),
        ("huge", "Large"),
        ("bigs", "Large"),
        ("tiny, no wait, huge", "Large"),
        ("not the big one", "Small"),  # in a choice of two, the other
        ("big or tiny", None),
        ("the middle one", None),  # a synonym of no option of the choice
        ("bigger", None),  # a word of its own, not a synonym with an ending
    ],
)
def test_a_choice_takes_an_option_said_in_its_synonyms(text: str, option: str | None) -> None:
    from podium.orchestration.master import fit_expectation

    assert SIZES.fit(text) == option
    assert fit_expectation(SIZES, text) == option


def test_synonyms_travel_in_the_json_form() -> None:
    again = Expectation.from_dict(SIZES.to_dict())
    assert again == SIZES and again.fit("the tiny one") == "Small"
    assert "synonyms" not in Expectation(type="choice", options=["a", "b"]).to_dict()
