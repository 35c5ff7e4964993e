"""What a desk does with the messages people send besides requests and answers: thanks and greetings, a question
while a choice waits, "cancel" said in passing or meant, an emergency, a protected trait given as a reason, a choice
named by its initials or in other words. A tool set written here (a library desk) that no example tunes for, with
the embedding model and with the lexical fallback alone."""

from __future__ import annotations

import pytest

from examples.smart_investigator import build as investigator
from podium import Expectation, Runtime
from podium.orchestration.master.routing import Decision, PendingTask, Query, Router, ToolCatalog, ToolProfile
from podium.orchestration.master.routing.rules import cancels, emergency, fit_expectation, small_talk

LIBRARY = ToolCatalog.of(
    [
        ToolProfile(
            name="RenewLoan",
            description="Renews a borrowed book's loan for two more weeks. Needs the loan number (L and six digits).",
            introduction="Renew a loan.",
            examples=("renew my book", "I need more time with the novel I borrowed", "extend my loan"),
        ),
        ToolProfile(
            name="OpeningTimes",
            description="Tells when the library opens and closes, and its address.",
            introduction="Opening times.",
            examples=("when are you open?", "what are your hours", "where is the library"),
        ),
        ToolProfile(
            name="RoomBooking",
            description="Books a study room: the quiet room or the group room.",
            introduction="Book a study room.",
            examples=("book a study room", "I need a room to study with friends", "reserve the quiet room"),
        ),
    ]
)
ROOM = Expectation(type="choice", options=["Quiet room", "Group study room"])
LOAN = Expectation(type="pattern", pattern=r"\bL\d{6}\b", description="a loan number like L123456")
ROOM_ASKED = PendingTask(
    tool="RoomBooking", content="Which room: the quiet room or the group study room?", expectation=ROOM
)
LOAN_ASKED = PendingTask(tool="RenewLoan", content="What is the loan number?", expectation=LOAN)
MODES = [pytest.param(True, id="embeddings"), pytest.param(False, id="lexical")]


def decide(text: str, pending: PendingTask | None = None, *, embeddings: bool = True) -> Decision:
    query = Query(text=text, catalog=LIBRARY, candidates=LIBRARY.names, pending=pending)
    return Router(embeddings=embeddings).decide(query)


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize("text", ["thanks a lot!", "cheers", "ok great", "okay thank you so much", "👍", "alright"])
def test_thanks_and_acknowledgements_keep_the_pending_task(text: str, embeddings: bool) -> None:
    decision = decide(text, LOAN_ASKED, embeddings=embeddings)
    assert (decision.kind, decision.reason) == ("clarify", "small_talk")  # the question is asked again after it
    assert "can't help" not in decision.text


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    "text",
    ["thank u so much!!", "many thanks, have a lovely day", "ty, hope you're doing well", "cheers, nice to meet u"],
)
def test_thanks_with_a_courtesy_are_small_talk(text: str, embeddings: bool) -> None:
    for pending in (None, LOAN_ASKED):
        decision = decide(text, pending, embeddings=embeddings)
        assert decision.reason == "small_talk" and "can't help" not in decision.text, (text, decision)


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    "text",
    [
        "good evening",
        "hey there",
        "hello!",
        "hi there, hope you're well",
        "good morning! how's your day going",
        "how are you?",
        "hey, how r u doing today",
        "hello, nice to meet you",
        "hiya, what's up",
    ],
)
def test_a_greeting_gets_the_menu(text: str, embeddings: bool) -> None:
    assert decide(text, embeddings=embeddings).kind == "capabilities"
    assert decide(text, LOAN_ASKED, embeddings=embeddings).kind == "capabilities"


def test_small_talk_is_told_from_requests() -> None:
    assert small_talk("thank you, goodbye") == "goodbye"
    assert small_talk("many thanks") == "thanks"
    assert small_talk("how many refills are left, thanks") is None
    assert small_talk("thanks, and can you renew my book") is None
    assert small_talk("ok") == "ack"


@pytest.mark.parametrize(
    "text", ["ta", "ok cool, ta", "ta very much", "cheers ta", "thanks for your help", "ta for all the help"]
)
def test_ta_and_thanks_for_the_help_thank(text: str) -> None:
    assert small_talk(text) == "thanks"


@pytest.mark.parametrize("text", ["book the ta session", "ta 1234", "what does ta mean"])
def test_ta_in_a_request_is_no_thanks(text: str) -> None:
    assert small_talk(text) is None


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize("text", ["yes please", "that sounds fine", "I'll take whatever is free", "sure, go on"])
def test_only_a_word_of_cancelling_abandons(text: str, embeddings: bool) -> None:
    assert not cancels(text)
    assert decide(text, ROOM_ASKED, embeddings=embeddings).kind != "abandon"


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize("text", ["nah, cancel it", "nvm", "actually forget it", "I changed my mind", "stop please"])
def test_cancelling_abandons_even_a_task_whose_words_oppose_it(text: str, embeddings: bool) -> None:
    """ "cancel" is the opposite of "renew" for the contradiction guard; said to a waiting renewal, it abandons it."""
    assert decide(text, LOAN_ASKED, embeddings=embeddings).kind == "abandon"
    assert decide(text, ROOM_ASKED, embeddings=embeddings).kind == "abandon"


def test_a_question_that_mentions_stopping_is_not_a_cancel() -> None:
    decision = decide("should I stop reading the second volume first?", LOAN_ASKED)
    assert decision.kind != "abandon"


@pytest.mark.parametrize("embeddings", MODES)
def test_cancelling_everything_says_so(embeddings: bool) -> None:
    decision = decide("cancel all of it", LOAN_ASKED, embeddings=embeddings)
    assert (decision.kind, decision.reason) == ("abandon", "all")
    assert decide("cancel that", LOAN_ASKED, embeddings=embeddings).reason == ""


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    "text",
    [
        "my friend collapsed and is not breathing",
        "he took an overdose of sleeping tablets",
        "I keep thinking about killing myself",
        "my toddler drank some antifreeze",
        "I'm having chest pains right now",
    ],
)
def test_an_emergency_is_sent_to_emergency_services(text: str, embeddings: bool) -> None:
    for pending in (None, ROOM_ASKED):
        decision = decide(text, pending, embeddings=embeddings)
        assert (decision.kind, decision.reason) == ("refuse", "emergency")
        assert "emergency number" in decision.text


def test_ordinary_words_are_no_emergency() -> None:
    for text in ("I need a break from breathing exercises books", "the stroke of midnight", "book the quiet room"):
        assert emergency(text) is None


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    "text",
    [
        "refuse her room booking because she is pregnant",
        "don't renew his loan, since he's a foreigner",
        "cancel their booking due to their religion",
    ],
)
def test_a_protected_trait_given_as_a_reason_is_refused(text: str, embeddings: bool) -> None:
    decision = decide(text, embeddings=embeddings)
    assert (decision.kind, decision.reason) == ("refuse", "harmful")


@pytest.mark.parametrize("embeddings", MODES)
def test_a_question_that_names_an_option_is_not_the_answer(embeddings: bool) -> None:
    """ "Is the quiet room open late?" names an option but asks something else: it goes to what it asks about."""
    decision = decide("until what time is the quiet room open tonight?", ROOM_ASKED, embeddings=embeddings)
    assert not (decision.kind == "route" and decision.tool == "RoomBooking")
    assert decide("the quiet room?", ROOM_ASKED, embeddings=embeddings).tool == "RoomBooking"  # the option alone


def test_initials_name_an_option() -> None:
    assert fit_expectation(ROOM, "GSR") == "Group study room"
    assert fit_expectation(ROOM, "the gsr please") == "Group study room"
    assert fit_expectation(ROOM, "QR") == "Quiet room"
    both = Expectation(type="choice", options=["Quiet room", "Queen room"])  # the same initials: neither
    assert fit_expectation(both, "QR") is None


@pytest.mark.parametrize("embeddings", MODES)
def test_asking_for_the_question_again_repeats_it(embeddings: bool) -> None:
    for text in ("sorry, what was the question?", "can you repeat that", "what did you ask me?"):
        decision = decide(text, LOAN_ASKED, embeddings=embeddings)
        assert (decision.kind, decision.reason) == ("clarify", "repeat")


def test_a_refusal_names_the_word_as_written() -> None:
    """The contradiction guard compares word roots; what the human reads is their own word ("approving")."""
    catalog = investigator().catalog
    query = Query(text="please write a letter approving claim 12AB34", catalog=catalog, candidates=catalog.names)
    decision = Router().decide(query)
    assert (decision.kind, decision.reason) == ("refuse", "contradiction")
    assert "it asks to approving," in decision.text


async def test_a_choice_answered_in_other_words_reaches_the_task_as_the_option() -> None:
    """The router reads "I work here, on staff" as the option "internal employee"; the task is given that option,
    so its own check of the answer agrees (it used to ask the same question again)."""
    runtime, agent = Runtime(), investigator()
    first = await runtime.send(agent, "how do I look up my claim number?")
    assert first.status == "interrupted"
    answered = await runtime.send(agent, "I'm on staff", thread_id=first.thread_id)
    assert answered.status == "completed"
    assert "Claims Hub" in (answered.output or "")


@pytest.mark.parametrize("embeddings", MODES)
def test_the_request_inside_a_long_story_is_found(embeddings: bool) -> None:
    text = (
        "Good afternoon. My daughter and her two classmates have a chemistry exam on Friday, and the kitchen table "
        "at home is far too noisy with the twins running around all evening. Their teacher suggested the library. "
        "Could you reserve the group study room for the three of them on Thursday evening? "
        "They promise to keep their voices down. Many thanks in advance."
    )
    decision = decide(text, embeddings=embeddings)
    assert (decision.kind, decision.tool) == ("route", "RoomBooking")


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    ("text", "then"),
    [
        ("nevermind, where are you located?", "where are you located?"),
        ("cancel that and book a study room", "book a study room"),
        ("forget it. when are you open on Sunday?", "when are you open on Sunday?"),
    ],
)
def test_a_cancel_followed_by_a_request_drops_the_task_and_passes_the_request_on(
    text: str, then: str, embeddings: bool
) -> None:
    decision = decide(text, LOAN_ASKED, embeddings=embeddings)
    assert (decision.kind, decision.reason, decision.text) == ("abandon", "then", then)
    assert decide("nevermind", LOAN_ASKED, embeddings=embeddings).reason == ""  # nothing asked after it
    mine = decide("forget it, I'll renew it myself", LOAN_ASKED, embeddings=embeddings)
    assert (mine.kind, mine.reason) == ("abandon", "")  # what the person will do is no request


async def test_the_desk_stops_the_task_and_answers_what_follows_the_cancel() -> None:
    agent, runtime = investigator(), Runtime()
    asked = await runtime.run(agent, "I want to craft a declined letter.")
    assert asked.interrupts[0].prompt == "Please provide your claim id"
    moved = await runtime.send(agent, "nevermind, where do I find my claim id", thread_id=asked.thread_id)
    assert moved.interrupts[0].prompt.startswith("Please tell me if you are an internal employee or a partner")
    said = [m.content for m in await runtime.store.load_messages(asked.thread_id) if m.kind == "ai"]
    assert "OK, I stopped the decline letter assistance task." in said


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    "text",
    [
        "and on sunday?",
        "what about bank holidays?",
        "ok and for saturday?",
        "same again for tomorrow",
        "and today",
        "and the same for the weekend",
        "do one more for next week",
    ],
)
def test_a_follow_up_goes_back_to_the_tool_that_answered_last(text: str, embeddings: bool) -> None:
    query = Query(text=text, catalog=LIBRARY, candidates=LIBRARY.names, previous="OpeningTimes")
    decision = Router(embeddings=embeddings).decide(query)
    assert (decision.kind, decision.tool, decision.reason) == ("route", "OpeningTimes", "follow_up")
    alone = Router(embeddings=embeddings).decide(Query(text=text, catalog=LIBRARY, candidates=LIBRARY.names))
    assert alone.reason != "follow_up"  # with nothing answered before, nothing to follow up


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize("text", ["and can you tell me a joke?", "also, do you sell coffee?", "and book a study room"])
def test_a_new_request_after_and_is_no_follow_up(text: str, embeddings: bool) -> None:
    query = Query(text=text, catalog=LIBRARY, candidates=LIBRARY.names, previous="OpeningTimes")
    decision = Router(embeddings=embeddings).decide(query)
    assert decision.reason != "follow_up" and decision.tool != "OpeningTimes", decision


def test_words_one_typo_from_the_tools_words_are_read_as_them() -> None:
    from podium.orchestration.master.routing.text import TfIdfIndex

    index = TfIdfIndex(
        [("a", "I want to decline a claim by letter"), ("b", "where to find my claim id, home or motor")]
    )
    assert index.respelled("decilne leter for 6610HJ") == "decline letter for 6610HJ"  # swapped, left out
    assert index.respelled("wherre is my clam") == "where is my clam"  # added; "clam" is too short to mend
    assert index.respelled("hope you are well, Jonathan") == "hope you are well, Jonathan"  # nothing one typo away


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("extnd my laon please", "RenewLoan"),
        ("reserev the quite room", "RoomBooking"),
        ("where is the librray", "OpeningTimes"),
    ],
)
def test_a_request_with_typos_is_routed(text: str, tool: str, embeddings: bool) -> None:
    decision = decide(text, embeddings=embeddings)
    assert (decision.kind, decision.tool) == ("route", tool), decision


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    "text", ["whatever you think is best", "you decide", "the usual", "doesn't matter", "either one"]
)
def test_a_choice_left_to_the_assistant_is_asked_of_the_human_again(text: str, embeddings: bool) -> None:
    decision = decide(text, ROOM_ASKED, embeddings=embeddings)
    assert (decision.kind, decision.reason) == ("clarify", "no_fit")
    assert decision.text == "I can't choose that for you: please pick one of 'Quiet room', 'Group study room'."


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize("text", ["which is better?", "what's the difference between them?", "which one is quieter?"])
def test_a_question_about_a_choice_s_options_is_told_to_pick_not_refused(text: str, embeddings: bool) -> None:
    decision = decide(text, ROOM_ASKED, embeddings=embeddings)
    assert (decision.kind, decision.reason) == ("clarify", "no_fit"), decision
    assert decision.text.startswith("I can't tell you more about the choices than the question says: please pick")
    assert "outside what I can do" not in decision.text


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    "text", ["gotta run, talk later", "ok. bye then", "ok i'll come back to this later", "need to dash, ttyl"]
)
def test_a_goodbye_in_other_words_is_a_goodbye_with_or_without_a_question_waiting(text: str, embeddings: bool) -> None:
    for pending in (None, LOAN_ASKED):
        decision = decide(text, pending, embeddings=embeddings)
        assert (decision.kind, decision.reason) == ("clarify", "goodbye"), (text, pending, decision)


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize("text", ["hey there, hope your week's going ok", "good afternoon, thanks for being there"])
def test_a_greeting_with_a_courtesy_in_other_words_gets_the_menu(text: str, embeddings: bool) -> None:
    assert decide(text, embeddings=embeddings).kind == "capabilities"


def test_going_somewhere_is_no_goodbye() -> None:
    from podium.human import says_goodbye

    assert not says_goodbye("i have to go to the pharmacy")
    assert not says_goodbye("I'm off to work, book me a GP")
    assert small_talk("gotta run, talk later") == "goodbye"


@pytest.mark.parametrize(
    ("text", "fit"),
    [
        ("i'll collect it", "pharmacy pickup"),
        ("can you send it to my house", "home delivery"),
        ("post it to my address please", "home delivery"),
        ("I'll fetch it myself", "pharmacy pickup"),
        ("what's the weather", None),
    ],
)
def test_everyday_words_for_pickup_and_delivery_fit_the_options(text: str, fit: str | None) -> None:
    pickup = Expectation(type="choice", options=["pharmacy pickup", "home delivery"])
    assert fit_expectation(pickup, text) == fit


def test_lowercase_initials_without_a_vowel_name_their_option_in_a_longer_request() -> None:
    department = Expectation(type="choice", options=["General practice", "Physiotherapy", "Dental"])
    assert fit_expectation(department, "book a gp appointment for next week please") == "General practice"
    it = Expectation(type="choice", options=["Information technology", "Human resources"])
    assert fit_expectation(it, "can you tell me what it is about today") is None  # "it" is a word, not initials


@pytest.mark.parametrize(
    ("text", "fit"),
    [
        ("hoem", "Home"),
        ("motr", "Motor"),
        ("mootor pls", "Motor"),
        ("it was my car", "Motor"),
        ("a vehicle", "Motor"),
        ("I hope so", None),  # a word of its own, one letter from "home": no slip
        ("come on", None),
    ],
)
def test_a_slip_or_an_everyday_word_in_a_short_answer_names_its_option(text: str, fit: str | None) -> None:
    assert fit_expectation(Expectation(type="choice", options=["Home", "Motor"]), text) == fit


def test_dropping_it_round_is_a_delivery_not_a_cancel() -> None:
    from podium.human import cancels

    pickup = Expectation(type="choice", options=["pharmacy pickup", "home delivery"])
    assert not cancels("just drop it round to my place") and cancels("drop it")
    assert fit_expectation(pickup, "just drop it round to my place") == "home delivery"
