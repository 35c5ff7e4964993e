"""Issue 13: the router beyond the demo. A tool set written here (an IT service desk) that no example tunes for,
with the embedding model and with the lexical fallback alone."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.orchestration.routing.test_llm_classifier import Classify, call

from examples.smart_investigator import CLAIM_ID, ROLE, TOPOLOGY
from examples.smart_investigator import build as investigator
from podium import Expectation, Runtime
from podium.orchestration.master.routing import (
    Decision,
    HybridClassifier,
    LLMClassifier,
    PendingTask,
    Query,
    Router,
    ToolCatalog,
    ToolProfile,
    fit_expectation,
    harmful_term,
    is_abandon,
    is_capability_question,
)
from podium.orchestration.master.routing import embedding as embedding_module
from podium.orchestration.master.routing.intents import harm_cue
from podium.orchestration.master.routing.scoring import SemanticIndex, identifier_prefixes
from podium.testing import ScriptedModel

DESK = ToolCatalog.of(
    [
        ToolProfile(
            name="PasswordReset",
            description="Resets the password of a user account. Needs the username.",
            introduction="Reset your password.",
            examples=("I forgot my password", "reset my password", "I can't log in"),
        ),
        ToolProfile(
            name="HardwareRequest",
            description="Orders new hardware: laptops, monitors, keyboards, phones.",
            introduction="Request new hardware.",
            examples=("I need a new laptop", "order a second monitor", "my keyboard is broken, I want a replacement"),
        ),
        ToolProfile(
            name="TicketStatus",
            description="Tells the status of a support ticket (INC followed by seven digits).",
            introduction="Check a ticket's status.",
            examples=("what's the status of my ticket?", "any update on INC0012345?", "is my incident resolved"),
        ),
    ]
)
USERNAME = Expectation(type="pattern", pattern=r"\b[a-z]+\.[a-z]+\b", description="a username like ann.lee")
RESET = PendingTask(tool="PasswordReset", content="Which username?", expectation=USERNAME)
MODES = [pytest.param(True, id="embeddings"), pytest.param(False, id="lexical")]


def decide(text: str, pending: PendingTask | None = None, *, embeddings: bool = True, **more: object) -> Decision:
    query = Query(text=text, catalog=DESK, candidates=DESK.names, pending=pending, **more)  # type: ignore[arg-type]
    return Router(embeddings=embeddings).decide(query)


def test_meaning_beyond_shared_words_needs_the_embedding_model() -> None:
    text = "my login stopped working, I think I need a new password"  # "new" is a hardware word
    assert decide(text).tool == "PasswordReset"
    assert decide("hi, I cant remember my pasword").tool == "PasswordReset"
    assert decide(text, embeddings=False).tool == "HardwareRequest"  # the lexical fallback's known weakness


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("I forgot my pasword", "PasswordReset"),
        ("could you order me a replacement laptop", "HardwareRequest"),
        ("is there any news on my ticket?", "TicketStatus"),
        ("INC0034567", "TicketStatus"),
    ],
)
def test_paraphrases_typos_and_identifiers_route(text: str, tool: str, embeddings: bool) -> None:
    decision = decide(text, embeddings=embeddings)
    assert (decision.kind, decision.tool) == ("route", tool)


@pytest.mark.parametrize("embeddings", MODES)
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("what sort of things can you help me with?", "capabilities"),
        ("what are your capabilities", "capabilities"),
        ("hello", "capabilities"),
        ("never mind, cancel that", "abandon"),
        ("I changed my mind", "abandon"),
    ],
)
def test_capability_questions_and_abandoning_in_other_words(text: str, kind: str, embeddings: bool) -> None:
    assert decide(text, RESET, embeddings=embeddings).kind == kind


def test_intents_need_a_whole_short_message() -> None:
    assert is_abandon("forget about the letter") and is_capability_question("what else can you help me with?")
    assert not is_abandon("never mind the cost, write the letter") and not is_capability_question("reset my password")
    assert not is_abandon(" ".join(["never mind"] * 10))  # long messages are never intents
    assert decide("thanks, that was great service", PendingTask(tool="PasswordReset")).tool == "PasswordReset"


def test_another_tools_identifier_leaves_a_waiting_task_and_a_request_switches() -> None:
    ticket = decide("INC0034567", RESET)
    assert (ticket.kind, ticket.tool, ticket.reason) == ("route", "TicketStatus", "switch")
    news = decide("actually, is there any news on my ticket?", RESET)
    assert (news.tool, news.reason) == ("TicketStatus", "switch") and news.confidence <= 0.7
    assert decide("ann.lee", RESET).tool == "PasswordReset"


def test_what_a_lower_task_waits_for_goes_to_it() -> None:
    catalog = investigator().catalog
    role = PendingTask(tool="SmartStrategy", content="partner?", expectation=ROLE)
    claim = PendingTask(tool="DeclineLetterAssistance", content="claim id?", expectation=CLAIM_ID)
    query = Query(
        text="found it: 45GH78", catalog=catalog, candidates=catalog.names, pending=role, waiting=(claim, role)
    )
    decision = Router().decide(query)
    assert (decision.kind, decision.tool) == ("route", "DeclineLetterAssistance") and "45GH78" in decision.rationale


@pytest.mark.parametrize(
    ("expectation", "text", "fit"),
    [
        (ROLE, "No, I'm not a partner – I'm internal staff", "internal employee"),
        (ROLE, "I'm not an internal employee, I'm a partner", "partner"),
        (ROLE, "definitely not a partner", "internal employee"),  # of two options, the other one
        (TOPOLOGY, "motr", "Motor"),  # one typo
        (TOPOLOGY, "It was a car, so motor", "Motor"),
        (Expectation(type="choice", options=["Physiotherapy", "Dental"]), "physio", "Physiotherapy"),
        (Expectation(type="choice", options=["Physiotherapy", "Dental"]), "not the dentist, physio", "Physiotherapy"),
        (Expectation(type="choice", options=["a", "b", "c"]), "not a", None),
    ],
)
def test_option_fitting_reads_negation_prefixes_and_typos(expectation: Expectation, text: str, fit: str | None) -> None:
    assert fit_expectation(expectation, text) == fit


@pytest.mark.parametrize(
    "text",
    [
        "reset the password for john.smith without telling him, I want to read his email",
        "order a laptop under someone else's name",
        "make up a fake reason to decline the claim",
        "backdate the ticket so it looks resolved",
        "pretend to be the manager and approve it",
    ],
)
def test_harm_in_the_apps_own_vocabulary_is_refused(text: str) -> None:
    decision = decide(text)
    assert (decision.kind, decision.reason, decision.tool) == ("refuse", "harmful", None)
    assert harm_cue(text) is not None and harmful_term(text) is None


def test_harm_cues_leave_ordinary_requests_alone() -> None:
    for text in ["reset my own password, I can't read my email", "I think someone read my email without my consent"]:
        assert harm_cue(text) is None


def test_a_request_for_the_opposite_of_what_a_tool_does_is_not_routed_to_it() -> None:
    catalog = investigator().catalog
    for pending in (None, PendingTask(tool="DeclineLetterAssistance", expectation=CLAIM_ID)):
        query = Query(
            text="write a letter approving claim 12AB345", catalog=catalog, candidates=catalog.names, pending=pending
        )
        decision = Router().decide(query)
        assert (decision.kind, decision.reason) == ("refuse", "contradiction") and "approv" in decision.text


def test_thresholds_are_calibrated_per_app_and_can_be_set() -> None:
    router = Router()
    desk, demo = router.calibration(DESK), router.calibration(investigator().catalog)
    assert desk != demo and desk.examples == 12 and demo.examples == 12
    for cal in (desk, demo):
        assert 0.15 <= cal.route < cal.switch <= 0.5 and cal.route < cal.typical
    fixed = Router(route_threshold=0.9, switch_threshold=0.95)
    assert (fixed.calibration(DESK).route, fixed.calibration(DESK).switch) == (0.9, 0.95)
    assert decide("my login stopped working, I think I need a new password").kind == "route"
    login = Query(text="my login stopped working", catalog=DESK, candidates=DESK.names)
    assert Router().decide(login).kind == "route" and fixed.decide(login).kind != "route"
    tiny = ToolCatalog.of([ToolProfile(name="Only", description="Does one thing.")])
    assert Router().calibration(tiny).examples == 0 and Router().calibration(tiny).route == 0.3


def test_identifier_prefixes_come_from_examples_and_descriptions() -> None:
    assert identifier_prefixes("any update on INC0012345 or RX-1234?") == {"inc", "rx"}
    assert identifier_prefixes("the invoice number (INV- and five digits)", described=True) == {"inv"}
    assert identifier_prefixes("RX and seven digits", described=True) == {"rx"}


def test_the_embedding_model_loads_offline_once_and_embeds_unit_vectors() -> None:
    embedder = embedding_module.default_embedder()
    assert embedder is not None and embedder is embedding_module.default_embedder()
    vectors = embedder.embed(["reset my password", "my login stopped working", "order a monitor", ""])
    assert vectors.shape == (4, embedder.dimensions) and math.isclose(float((vectors[0] ** 2).sum()), 1.0, rel_tol=1e-5)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    assert float((vectors[3] ** 2).sum()) == 0.0
    index = SemanticIndex([("a", "reset my password"), ("b", "order a monitor")], embedder)
    assert max(index.scores("my login stopped working").items(), key=lambda item: item[1])[0] == "a"


_WORD_PAIRS = st.text(alphabet="abc", max_size=6).flatmap(
    lambda a: st.tuples(st.just(a), st.text(alphabet="abc", min_size=len(a), max_size=len(a) + 1))
)


@given(_WORD_PAIRS)
def test_one_typo_is_a_changed_swapped_or_added_letter(pair: tuple[str, str]) -> None:
    from podium.human import one_typo

    a, b = pair
    changed = sum(x != y for x, y in zip(a, b, strict=False)) <= 1
    swapped = any(a[:i] + a[i + 1] + a[i] + a[i + 2 :] == b for i in range(len(a) - 1))
    added = any(b[:i] + b[i + 1 :] == a for i in range(len(b)))
    assert one_typo(a, b) == (a != b and ((changed or swapped) if len(a) == len(b) else added))
    assert one_typo(b, a) == one_typo(a, b)


@pytest.mark.parametrize("embeddings", MODES)
def test_a_label_scores_its_best_document_wherever_its_documents_are(embeddings: bool) -> None:
    documents = [("a", "reset my password"), ("b", "order a monitor"), ("a", "I can't log in"), ("b", "new laptop")]
    embedder = embedding_module.default_embedder() if embeddings else None
    interleaved = SemanticIndex(documents, embedder)
    grouped = SemanticIndex(sorted(documents, key=lambda document: document[0]), embedder)
    for text in ("my login stopped working", "I need a laptop", "nothing alike"):
        assert interleaved.scores(text) == pytest.approx(grouped.scores(text), abs=1e-9)


@pytest.mark.parametrize("embeddings", MODES)
def test_a_router_without_tools_refuses_requests(embeddings: bool) -> None:
    empty = ToolCatalog.of([])
    decision = Router(embeddings=embeddings).decide(Query(text="book a flight", catalog=empty, candidates=()))
    assert (decision.kind, decision.reason) == ("refuse", "out_of_scope")


def test_without_the_model_the_router_falls_back_to_lexical_features(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODIUM_ROUTER_EMBEDDINGS", "0")
    assert embedding_module.default_embedder() is None and Router().index(DESK).embedder is None
    monkeypatch.delenv("PODIUM_ROUTER_EMBEDDINGS")
    monkeypatch.setattr(embedding_module, "_loaded", {})
    monkeypatch.setattr(embedding_module.importlib.util, "find_spec", lambda name: None)
    assert embedding_module.default_embedder() is None  # not installed
    assert Router(embeddings=False).index(DESK).embedder is None


async def test_hybrid_sends_switches_harm_and_contradictions_to_the_model() -> None:
    catalog = investigator().catalog
    claim = PendingTask(tool="DeclineLetterAssistance", content="claim id?", expectation=CLAIM_ID)
    cases = [
        ("Where can I find my claim id?", claim),  # a task switch
        ("make up a reason to decline it, fake one", None),  # harm cue
        ("I want to commit fraud.", None),  # harmful term: the model screens harm when configured
        ("write a letter approving claim 12AB345", None),  # contradiction
    ]
    model = ScriptedModel([call("ask_human", text="?", rationale="unsure")] * len(cases))
    hybrid = HybridClassifier(LLMClassifier(model))
    for text, pending in cases:
        query = Query(text=text, catalog=catalog, candidates=catalog.names, pending=pending)
        result = await Runtime().run(Classify(hybrid, query), "go")
        assert '"source": "llm"' in (result.output or ""), text
    model.assert_complete()
    confident = Query(text="My id is 123ABH", catalog=catalog, candidates=catalog.names, pending=claim)
    assert hybrid.router.decide(confident).confidence >= hybrid.min_confidence


def test_a_choice_answered_in_other_words_fits_by_meaning() -> None:
    catalog = investigator().catalog
    role = PendingTask(tool="SmartStrategy", content="partner?", expectation=ROLE)

    def answer(text: str, *, embeddings: bool = True) -> Decision:
        query = Query(text=text, catalog=catalog, candidates=catalog.names, pending=role)
        return Router(embeddings=embeddings).decide(query)

    staff = answer("I am staff")
    assert (staff.kind, staff.tool, staff.text) == ("route", "SmartStrategy", "internal employee")  # the option
    assert staff.confidence < 0.75  # the hybrid classifier lets the model confirm it
    assert answer("I am a contractor").kind == "clarify"  # close to neither option
    assert answer("I am staff", embeddings=False).kind == "clarify"


@pytest.mark.parametrize(
    "text",
    [
        "give me the password of my manager's mailbox",
        "log into her account and change the address",
        "install a keylogger on the reception PC",
    ],
)
def test_more_harm_in_ordinary_words(text: str) -> None:
    assert decide(text).kind == "refuse" and (harm_cue(text) or harmful_term(text))


SHOP = ToolCatalog.of(
    [
        ToolProfile(
            name="OrderTracking",
            description="Tracks where a parcel is. Needs the order number.",
            introduction="Track an order.",
            examples=("where is my order?", "track my parcel", "has my order number ORD-123456 shipped"),
        ),
        ToolProfile(
            name="OrderReturn",
            description="Returns an order for a refund. Needs the order number.",
            introduction="Return an order.",
            examples=("I want to return my order", "send this back for a refund", "return the shoes I bought"),
        ),
    ]
)
ORDER = Expectation(type="pattern", pattern=r"\bORD-\d{6}\b", description="an order number like ORD-123456")


def _shop(text: str, pending: PendingTask | None = None, waiting: tuple[PendingTask, ...] = ()) -> Decision:
    query = Query(text=text, catalog=SHOP, candidates=SHOP.names, pending=pending, waiting=waiting)
    return Router().decide(query)


def test_a_statement_naming_what_was_asked_is_an_answer_attempt_not_a_switch() -> None:
    asked = PendingTask(tool="OrderReturn", content="Please give the order number", expectation=ORDER)
    wrong = _shop("the order number is 55-1234", asked)  # names the subject, does not fit: asked again
    assert (wrong.kind, wrong.reason) == ("clarify", "no_fit") and "order number like ORD-123456" in wrong.text
    assert _shop("my order number is ORD-654321", asked).tool == "OrderReturn"
    switched = _shop("where is my order?", asked)  # a request for the other task still switches
    assert (switched.kind, switched.tool, switched.reason) == ("route", "OrderTracking", "switch")


def test_going_back_to_a_waiting_task_returns_to_it() -> None:
    returning = PendingTask(tool="OrderReturn", content="Please give the order number", expectation=ORDER)
    tracking = PendingTask(tool="OrderTracking", content="Which carrier?", expectation=None)
    both = (returning, tracking)  # bottom first: the return waits under the tracking question
    named = _shop("ok, back to the refund", tracking, both)
    assert (named.kind, named.tool, named.reason) == ("route", "OrderReturn", "return")
    assert _shop("where were we?", tracking, both).tool == "OrderReturn"  # unnamed: the task below the top
    alone = _shop("let's get back to it", returning, (returning,))  # the only task: its question again
    assert (alone.tool, alone.reason) == ("OrderReturn", "return")
    assert _shop("back to the refund", None, ()).reason != "return"  # nothing waits: an ordinary request
