"""The faang example's offline stand-in: every figure it gives is the one asked for, or it says it cannot."""

from __future__ import annotations

import json

import pytest
from tests.app_talk import talk

from examples import faang
from podium import AIMessage, Event, MessageAdded, Runtime
from podium.testing import FunctionModel

AMAZON_NETFLIX = "In 2024 Amazon has 110.8 times as many employees as Netflix (1,551,000 against 14,000)."


@pytest.mark.parametrize(
    "asked",
    [
        "how many times bigger is amazon than netflix by employees",
        "how many times bigger is amazon than netflix",
        "amazon has how many times as many employees as netflix",
        "what's the ratio of amazon to netflix employees",
        "how many times smaller is netflix than amazon?",
        "is amazon's workforce twice as big as netflix's",
    ],
)
async def test_a_ratio_is_worked_out_never_answered_with_a_sum(asked: str) -> None:
    assert await talk([asked], "faang") == [AMAZON_NETFLIX]


@pytest.mark.parametrize("context", ["shared", "scoped"])
async def test_a_ratio_is_one_multiplication_of_the_math_tools_in_either_context(context: str) -> None:
    events: list[Event] = []
    agent = faang.build(FunctionModel(faang.stand_in), context)  # type: ignore[arg-type]
    result = await Runtime().run(
        agent, "how many times larger is Apple than Meta by headcount?", on_event=events.append
    )
    assert result.output == "In 2024 Apple has 2.4 times as many employees as Meta (164,000 against 67,317)."
    calls = [
        (c.name, json.loads(c.arguments))
        for e in events
        if isinstance(e, MessageAdded) and isinstance(e.message, AIMessage)
        for c in e.message.tool_calls
        if c.name in ("add", "multiply")
    ]
    assert calls == [("multiply", {"a": 164000.0, "b": 1 / 67317})]


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        ("is apple bigger than meta", "Apple has more employees than Meta in 2024: 164,000 against 67,317."),
        ("is netflix smaller than google?", "Netflix has fewer employees than Alphabet in 2024: 14,000 against 181,269."),
        ("amazon vs netflix headcount", "In 2024 Amazon has 1,537,000 more employees than Netflix (1,551,000 against 14,000)."),
        ("how much bigger is apple than meta", "In 2024 Apple has 96,683 more employees than Meta (164,000 against 67,317)."),
        ("is apple's headcount ten times meta's?", "In 2024 Apple has 2.4 times as many employees as Meta (164,000 against 67,317)."),
        ("headcount of apple per meta employee", f"Offline I cannot work that out from the headcounts. {faang.CAPABILITIES}"),
        ("how many times bigger is faang than apple", f"I compare the headcounts of two companies at a time: which two? {faang.CAPABILITIES}"),
    ],
)  # fmt: skip
async def test_a_comparison_gets_its_own_figure_or_a_plain_cannot(asked: str, answer: str) -> None:
    assert await talk([asked], "faang") == [answer]


@pytest.mark.parametrize(
    "left_out",
    ["hmm, leave meta out", "take meta out", "except meta", "minus meta", "not meta", "ok now without facebook",
     "drop meta", "leaving out meta please"],
)  # fmt: skip
async def test_leaving_a_company_out_of_a_total_counts_the_rest(left_out: str) -> None:
    assert await talk(["combined headcount of netflix, apple and meta", left_out], "faang") == [
        "The combined headcount of Netflix, Apple and Meta in 2024 is 245,317.",
        "The combined headcount of Netflix and Apple in 2024 is 178,000.",
    ]


async def test_a_no_that_names_no_company_leaves_none_out() -> None:
    assert await talk(["i'm not sure, how many at meta"], "faang") == ["In 2024 Meta has 67,317 employees."]


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        ("how many work at google", "In 2024 Alphabet has 181,269 employees."),
        ("how many emplyees does googel have", "In 2024 Alphabet has 181,269 employees."),
        ("nteflix headcount?", "In 2024 Netflix has 14,000 employees."),
        ("how many are at amazn", "In 2024 Amazon has 1,551,000 employees."),
        ("who works for appel, how many", "In 2024 Apple has 164,000 employees."),
        (
            "how many at meta and how many at apple, and what's the total",
            "In 2024 Meta has 67,317 employees and Apple has 164,000 employees. "
            "The combined headcount of Meta and Apple in 2024 is 231,317.",
        ),
    ],
)
async def test_plain_headcount_questions_in_other_words_and_typos_are_answered(asked: str, answer: str) -> None:
    assert await talk([asked], "faang") == [answer]


async def test_a_follow_up_after_a_reworded_question_uses_it() -> None:
    assert await talk(["how many work at google", "and apple?"], "faang") == [
        "In 2024 Alphabet has 181,269 employees.",
        "In 2024 Apple has 164,000 employees.",
    ]


@pytest.mark.parametrize("asked", ["what % of total faang is that", "and what share of all faang staff is that?"])
async def test_a_share_is_said_to_be_out_of_reach_in_plain_words(asked: str) -> None:
    said = await talk(["amazon headcount", asked], "faang")
    assert said[1] == f"Offline I cannot work out a percentage or a share. {faang.CAPABILITIES}"


@pytest.mark.parametrize(
    "asked", ["??", "...", "what kind of stuff do you know about", "what sort of things can you do"]
)
async def test_what_it_knows_is_said_without_a_refusal(asked: str) -> None:
    assert await talk([asked], "faang") == [
        f"I am a supervisor with a research expert and a math expert. {faang.CAPABILITIES}"
    ]


@pytest.mark.parametrize("said", ["thanks that's all", "thank you, that's all for now", "cheers, bye"])
async def test_thanks_that_takes_leave_asks_nothing_more(said: str) -> None:
    assert await talk(["how many people work at meta", said], "faang") == [
        "In 2024 Meta has 67,317 employees.",
        "You're welcome, goodbye!",
    ]


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        ("who has more employees, google or meta", "Alphabet has more employees than Meta in 2024: 181,269 against 67,317."),
        ("who has more staff, netflix or apple?", "Apple has more employees than Netflix in 2024: 164,000 against 14,000."),
        ("which has fewer people, amazon or apple", "Apple has fewer employees than Amazon in 2024: 164,000 against 1,551,000."),
        ("does meta or netflix employ more people?", "Meta has more employees than Netflix in 2024: 67,317 against 14,000."),
        ("who has the least staff: apple or google", "Apple has fewer employees than Alphabet in 2024: 164,000 against 181,269."),
        ("netflix or amazon, whose workforce is larger?", "Amazon has more employees than Netflix in 2024: 1,551,000 against 14,000."),
    ],
)  # fmt: skip
async def test_which_of_two_has_more_or_fewer_is_answered_with_both_figures_never_their_sum(
    asked: str, answer: str
) -> None:
    assert await talk([asked], "faang") == [answer]


@pytest.mark.parametrize(
    ("asked", "company"),
    [
        ("microsoft, how many people there?", "microsoft"),
        ("tesla, how many employees?", "tesla"),
        ("Nvidia: how many staff do they have", "nvidia"),
        ("General Motors, what's the headcount", "general motors"),
        ("ibm headcount?", "ibm"),
        ("who has more staff, oracle or apple?", "oracle"),
        ("how many employees at meta or samsung", "samsung"),
        ("does apple have more workers than intel", "intel"),
        ("uber or lyft, who has more staff", "uber"),
        ("who has fewer employees, lyft or uber?", "lyft"),
    ],
)
async def test_a_company_it_has_no_figures_for_is_said_so_wherever_it_is_named(asked: str, company: str) -> None:
    assert await talk([asked], "faang") == [
        f"Offline I only know the FAANG companies' headcounts, not {company}'s. {faang.CAPABILITIES}"
    ]


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        ("so, how many employees?", "The combined headcount of the FAANG companies in 2024 is 1,977,586."),
        ("ok, how many people at apple", "In 2024 Apple has 164,000 employees."),
        ("hmm, how many work at netflix, more or less?", "In 2024 Netflix has 14,000 employees."),
        ("Apple: how many employees?", "In 2024 Apple has 164,000 employees."),
    ],
)
async def test_words_before_a_comma_that_name_no_company_are_no_unknown_company(asked: str, answer: str) -> None:
    assert await talk([asked], "faang") == [answer]


@pytest.mark.parametrize(
    "asked",
    [
        "how many more people work at amazon than at google",
        "how many more employees does amazon have than the google",
        "how many more work at amazon than in google?",
    ],
)
async def test_a_preposition_after_than_names_no_company(asked: str) -> None:
    assert await talk([asked], "faang") == [
        "In 2024 Amazon has 1,369,731 more employees than Alphabet (1,551,000 against 181,269)."
    ]


@pytest.mark.parametrize("asked", ["what's the mean headcount of the five", "average headcount of the five companies"])
async def test_a_number_word_after_of_names_no_company(asked: str) -> None:
    assert await talk([asked], "faang") == ["The average headcount of the FAANG companies in 2024 is 395,517.2."]


APPLE_THEN_GOOGLE = ["headcount of apple", "and google?"]
AMAZON_THEN_META = ["how many ppl work at amazon", "and meta"]


@pytest.mark.parametrize(
    ("before", "asked", "answer"),
    [
        (APPLE_THEN_GOOGLE, "which of the two is larger?", "Alphabet has more employees than Apple in 2024: 181,269 against 164,000."),
        (APPLE_THEN_GOOGLE, "which of those two is bigger?", "Alphabet has more employees than Apple in 2024: 181,269 against 164,000."),
        (APPLE_THEN_GOOGLE, "which one is larger?", "Alphabet has more employees than Apple in 2024: 181,269 against 164,000."),
        (APPLE_THEN_GOOGLE, "ok which is bigger then", "Alphabet has more employees than Apple in 2024: 181,269 against 164,000."),
        (APPLE_THEN_GOOGLE, "which of them has fewer staff?", "Apple has fewer employees than Alphabet in 2024: 164,000 against 181,269."),
        (AMAZON_THEN_META, "add those two together", "The combined headcount of Amazon and Meta in 2024 is 1,618,317."),
        (AMAZON_THEN_META, "add them up", "The combined headcount of Amazon and Meta in 2024 is 1,618,317."),
        (AMAZON_THEN_META, "what's the sum of those two", "The combined headcount of Amazon and Meta in 2024 is 1,618,317."),
        (AMAZON_THEN_META, "both combined?", "The combined headcount of Amazon and Meta in 2024 is 1,618,317."),
        (AMAZON_THEN_META, "put them together please", "The combined headcount of Amazon and Meta in 2024 is 1,618,317."),
        (AMAZON_THEN_META, "what's the difference between them", "In 2024 Amazon has 1,483,683 more employees than Meta (1,551,000 against 67,317)."),
        (AMAZON_THEN_META, "and the average of the two?", "The average headcount of Amazon and Meta in 2024 is 809,158.5."),
        (["headcount of apple and google"], "add them up", "The combined headcount of Apple and Alphabet in 2024 is 345,269."),
        (["headcount of apple and google"], "which one is bigger?", "Alphabet has more employees than Apple in 2024: 181,269 against 164,000."),
        (["how many at meta", "and apple", "and netflix"], "add those two", "The combined headcount of Apple and Netflix in 2024 is 178,000."),
    ],
)  # fmt: skip
async def test_those_two_and_them_are_the_companies_of_the_answers_before(
    before: list[str], asked: str, answer: str
) -> None:
    said = await talk([*before, asked], "faang")
    assert said[-1] == answer


@pytest.mark.parametrize(
    ("before", "asked", "given", "which"),
    [
        ([], "add those two together", "I have not given any headcount yet in this conversation", "which two"),
        ([], "which one is larger?", "I have not given any headcount yet in this conversation", "which two"),
        ([], "what's the difference between them?", "I have not given any headcount yet in this conversation", "which two"),
        ([], "add them up", "I have not given any headcount yet in this conversation", "which"),
        (["headcount of apple"], "which of the two is bigger", "So far I have only given Apple's headcount", "which two"),
        (["headcount of apple"], "sum of those two?", "So far I have only given Apple's headcount", "which two"),
        (["total faang headcount"], "add those two", "I gave the headcounts of Meta, Apple, Amazon, Netflix and Alphabet", "which two"),
    ],
)  # fmt: skip
async def test_those_two_without_two_figures_before_says_what_is_missing(
    before: list[str], asked: str, given: str, which: str
) -> None:
    said = await talk([*before, asked], "faang")
    assert said[-1] == f'{given}: {which} companies do you mean? Name them ("Apple and Meta"). {faang.CAPABILITIES}'


async def test_a_superlative_after_a_total_still_ranks_all_the_companies_of_that_total() -> None:
    said = await talk(["total faang headcount", "which one is largest?", "add them up"], "faang")
    assert said[1:] == [
        "Of the FAANG companies, Amazon has the most employees in 2024: 1,551,000.",
        "The combined headcount of the FAANG companies in 2024 is 1,977,586.",
    ]


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        ("aple headcount", "In 2024 Apple has 164,000 employees."),
        ("how many ppl at apel", "In 2024 Apple has 164,000 employees."),
        ("how many work at appl?", "In 2024 Apple has 164,000 employees."),
        ("metta headcount", "In 2024 Meta has 67,317 employees."),
        ("how many employees does mtea have", "In 2024 Meta has 67,317 employees."),
        ("gogle staff?", "In 2024 Alphabet has 181,269 employees."),
        ("how many at amazn", "In 2024 Amazon has 1,551,000 employees."),
        ("netflx workforce", "In 2024 Netflix has 14,000 employees."),
        ("nflx headcount", "In 2024 Netflix has 14,000 employees."),
        ("compare netflix with aple", "In 2024 Netflix has 150,000 fewer employees than Apple (14,000 against 164,000)."),
        ("aapl vs amzn headcount", "In 2024 Apple has 1,387,000 fewer employees than Amazon (164,000 against 1,551,000)."),
    ],
)  # fmt: skip
async def test_a_short_company_name_with_a_slip_or_its_ticker_is_that_company(asked: str, answer: str) -> None:
    assert await talk([asked], "faang") == [answer]


async def test_it_with_a_misspelt_short_name_compares_the_company_before() -> None:
    assert await talk(["netflx headcount?", "compare it with aple"], "faang") == [
        "In 2024 Netflix has 14,000 employees.",
        "In 2024 Netflix has 150,000 fewer employees than Apple (14,000 against 164,000).",
    ]


@pytest.mark.parametrize("word", ["metal", "mega", "able", "axle", "ample"])
async def test_an_english_word_a_letter_off_a_short_name_is_no_company(word: str) -> None:
    assert await talk([f"how many employees at {word} inc"], "faang") == [
        f"Offline I only know the FAANG companies' headcounts, not {word}'s. {faang.CAPABILITIES}"
    ]


async def test_meat_is_not_meta() -> None:
    assert await talk(["how many people work at meat packers"], "faang") == [
        f"Offline I only know the FAANG companies' headcounts, not meat's. {faang.CAPABILITIES}"
    ]
