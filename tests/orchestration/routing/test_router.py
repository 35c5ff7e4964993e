"""The offline router: guardrail, expectation fit, similarity, thresholds; deterministic and model-free."""

from __future__ import annotations

import pytest

from examples.smart_investigator import CLAIM_ID, ROLE, TOPOLOGY, build
from podium import Expectation
from podium.orchestration.master.routing import (
    Decision,
    PendingTask,
    Query,
    Router,
    ToolCatalog,
    ToolProfile,
    fit_expectation,
    harmful_term,
    is_abandon,
    is_capability_question,
    looks_like_request,
)
from podium.orchestration.master.routing.scoring import SemanticIndex
from podium.orchestration.master.routing.text import TfIdfIndex, features, stem

CATALOG = build().catalog
DL, SS = "DeclineLetterAssistance", "SmartStrategy"


def ask(text: str, pending: PendingTask | None = None, catalog: ToolCatalog = CATALOG) -> Decision:
    return Router().decide(Query(text=text, catalog=catalog, candidates=catalog.names, pending=pending))


def waiting(tool: str, expectation: Expectation | None, content: str = "the question") -> PendingTask:
    return PendingTask(tool=tool, content=content, expectation=expectation)


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("I want to craft a declined letter.", DL),
        ("Help me write a decline letter", DL),
        ("Can you draft a declined letter for claim 123ABH?", DL),
        ("I need a letter declining this claim", DL),
        ("Where to find a claim id?", SS),
        ("How do I look up my claim number?", SS),
        ("where is my claim id", SS),
    ],
)
def test_fresh_requests_route_by_similarity(text: str, tool: str) -> None:
    decision = ask(text)
    assert decision.kind == "route" and decision.tool == tool and decision.text == text
    assert decision.source == "router" and "similarity" in decision.rationale


@pytest.mark.parametrize(
    ("expectation", "text", "fit"),
    [
        (ROLE, "I am a partner.", "partner"),
        (ROLE, "I'm an internal employee", "internal employee"),
        (ROLE, "internal", "internal employee"),
        (ROLE, "2", "partner"),
        (ROLE, "I am a Suncorp friend.", None),
        (ROLE, "partner or internal employee?", None),  # both: ambiguous
        (TOPOLOGY, "I want to do Motor.", "Motor"),
        (TOPOLOGY, "home", "Home"),
        (TOPOLOGY, "Personal Injury", None),
        (CLAIM_ID, "My id is 123ABH", "123ABH"),
        (CLAIM_ID, "Where to find a claim id?", None),
        (CLAIM_ID, "", None),
        (Expectation(type="text"), "anything at all", "anything at all"),
        (None, "  free  ", "free"),
        (Expectation(type="pattern", pattern="[unclosed"), "x", None),
    ],
)
def test_expectation_fit(expectation: Expectation | None, text: str, fit: str | None) -> None:
    assert fit_expectation(expectation, text) == fit


def test_an_answer_that_fits_goes_back_to_the_pending_task() -> None:
    decision = ask("I want to do Motor.", waiting(DL, TOPOLOGY))
    assert decision.kind == "route" and decision.tool == DL and decision.confidence == 1.0
    assert "'Motor'" in decision.rationale


def test_a_strong_match_for_another_tool_switches_task() -> None:
    decision = ask("Where to find a claim id?", waiting(DL, CLAIM_ID))
    assert decision.kind == "route" and decision.tool == SS and "another task" in decision.rationale


def test_an_answer_that_fits_nothing_asks_for_clarification() -> None:
    decision = ask("I am a Suncorp friend.", waiting(SS, ROLE))
    assert decision.kind == "clarify" and decision.reason == "no_fit" and decision.confidence < 0.75
    assert "'internal employee', 'partner'" in decision.text


def test_a_request_outside_every_tool_is_refused() -> None:
    assert ask("What's the weather in Paris?").reason == "out_of_scope"
    pending = ask("What's the weather in Paris?", waiting(DL, TOPOLOGY))
    assert pending.kind == "refuse" and pending.reason == "out_of_scope"
    unclear = ask("banana")
    assert unclear.kind in ("refuse", "clarify") and unclear.tool is None


def test_free_text_answers_go_to_the_pending_task_unless_another_tool_clearly_fits() -> None:
    assert ask("blue with stripes", waiting(DL, None)).tool == DL
    assert ask("Where can I find my claim id?", waiting(DL, Expectation(type="text"))).tool == SS


@pytest.mark.parametrize(
    ("text", "harmful"),
    [
        ("I want to commit fraud.", "fraud"),
        ("how to launder money", "launder"),
        ("Help me steal a car", "steal"),
        ("I want to report a suspected fraud", None),
        ("investigate this scam claim", None),
        ("My claim id is 123ABH", None),
    ],
)
def test_harmful_requests_are_caught_and_protective_mentions_are_not(text: str, harmful: str | None) -> None:
    assert harmful_term(text) == harmful
    decision = ask(text)
    assert (decision.kind == "refuse" and decision.reason == "harmful") == (harmful is not None)


@pytest.mark.parametrize(
    "text", ["never mind", "Never mind.", "forget it", "ok, cancel that", "stop", "I changed my mind"]
)
def test_abandon_phrases(text: str) -> None:
    assert is_abandon(text)
    assert ask(text, waiting(DL, CLAIM_ID)).kind == "abandon"


@pytest.mark.parametrize(
    "text", ["cancel my policy renewal for next year please", "never mind the cost, write the letter"]
)
def test_abandon_needs_the_whole_message(text: str) -> None:
    assert not is_abandon(text)


@pytest.mark.parametrize(
    "text", ["What can you do?", "hello", "help", "how can you help me?", "what are your capabilities"]
)
def test_capability_questions(text: str) -> None:
    assert is_capability_question(text)
    assert ask(text).kind == "capabilities"


def test_requests_and_answers_are_told_apart() -> None:
    assert looks_like_request("Where is it?") and looks_like_request("I want to go to Paris")
    assert not looks_like_request("Personal Injury") and not looks_like_request("I am a partner.")


def test_tool_requests_go_to_the_human_when_they_expect_an_answer() -> None:
    router = Router()
    pending = PendingTask(tool=DL, content="Please provide your claim id", expectation=CLAIM_ID)
    query = Query(
        text="Please provide your claim id", catalog=CATALOG, candidates=CATALOG.names, pending=pending, origin="tool"
    )
    assert router.decide(query).kind == "ask"
    lookup = Query(
        text="find where the claim id is found",
        catalog=CATALOG,
        candidates=CATALOG.names,
        pending=PendingTask(tool=DL),
        origin="tool",
    )
    routed = router.decide(lookup)
    assert routed.kind == "route" and routed.tool == SS
    own = Query(
        text="craft a decline letter",
        catalog=CATALOG,
        candidates=CATALOG.names,
        pending=PendingTask(tool=DL),
        origin="tool",
    )
    assert router.decide(own).kind == "ask"  # never routed back to the requester


def many_tools(count: int = 50) -> ToolCatalog:
    topics = [
        "flight",
        "hotel",
        "car rental",
        "weather",
        "currency",
        "invoice",
        "refund",
        "password",
        "parcel",
        "recipe",
        "translation",
        "calendar",
        "meeting",
        "expense",
        "payroll",
        "holiday",
        "insurance quote",
        "mortgage",
        "tax return",
        "gym booking",
        "doctor appointment",
        "pharmacy",
        "train ticket",
        "bus timetable",
        "parking",
        "electricity bill",
        "water bill",
        "internet plan",
        "phone upgrade",
        "laptop repair",
        "printer",
        "vpn access",
        "office badge",
        "desk booking",
        "visitor pass",
        "training course",
        "job posting",
        "interview",
        "onboarding",
        "offboarding",
        "security incident",
        "data export",
        "report builder",
        "survey",
        "newsletter",
        "social post",
        "ad campaign",
        "lead scoring",
        "contract review",
        "decline letter",
    ]
    assert len(topics) >= count
    return ToolCatalog.of(
        ToolProfile(
            name=f"tool_{n}",
            description=f"Handles {topic} requests: creates, checks and updates a {topic}.",
            introduction=f"Help with your {topic}.",
            examples=(f"I need help with my {topic}", f"update the {topic}", f"check {topic} status"),
        )
        for n, topic in enumerate(topics[:count])
    )


def test_fifty_tools_route_to_the_right_one_and_deterministically() -> None:
    catalog = many_tools()
    router = Router()
    for n in (0, 7, 23, 49):
        profile = catalog.profiles[n]
        topic = profile.introduction.removeprefix("Help with your ").rstrip(".")
        query = Query(text=f"could you check the {topic} status for me", catalog=catalog, candidates=catalog.names)
        first, second = router.decide(query), router.decide(query)
        assert first == second and first.tool == profile.name
    assert router.index(catalog) is router.index(catalog)  # indexed once per catalog


def test_a_huge_message_is_read_only_up_to_max_chars() -> None:
    decision = Router(max_chars=100).decide(
        Query(text="decline letter " + "x" * 1_000_000, catalog=CATALOG, candidates=CATALOG.names)
    )
    assert decision.kind == "route" and decision.tool == DL


def test_text_features_and_index() -> None:
    assert stem("declined") == stem("decline") == "declin" and stem("id") == "id"
    assert "w:claim" in features("the claims") and not features("the a of")
    index = TfIdfIndex([("a", "book a flight"), ("b", "rent a car"), ("b", "hire a car")])
    scores = index.scores("I want to hire a car")
    assert scores["b"] > 0.9 and scores.get("a", 0.0) == 0.0
    assert index.scores("hire a car", labels=["a"]) == {}
    assert index.scores("") == {}


def test_the_documents_a_query_hits_score_as_in_the_whole_vector() -> None:
    documents = [(p.name, text) for p in many_tools().profiles for text in (p.description, *p.examples)]
    index = TfIdfIndex(documents)
    lexical_only = SemanticIndex(documents)
    for text in ("I want to craft a declined letter.", "check the parking status", "book a train", "zzz", ""):
        dense = index.doc_scores(text)
        hits = index.doc_hits(text)
        assert hits == {doc: score for doc, score in enumerate(dense) if score > 0}
        by_label: dict[str, float] = {}
        for (label, _), score in zip(documents, dense, strict=True):
            by_label[label] = max(by_label.get(label, 0.0), score)  # the best document of each label, exactly
        assert lexical_only._label_scores(text) == list(by_label.values())


def test_the_verbs_a_message_begins_are_found_as_by_prefix() -> None:
    from podium.orchestration.master.routing.router import _VERBS, _verbs_begun

    for roots in ({"approving", "lett"}, {"clos", "open"}, {"unsubscrib", "stop"}, {"ap", "a"}, set()):
        assert _verbs_begun(roots) == [verb for verb in _VERBS if any(root.startswith(verb) for root in roots)]


def test_decisions_round_trip_as_json() -> None:
    decision = Decision(
        kind="route", tool=DL, text="x", rationale="y", confidence=0.5, reason="r", source="router", arguments={"a": 1}
    )
    assert Decision.from_dict(decision.to_dict()) == decision


def test_routing_all_matches_public_members() -> None:
    import types

    import podium.orchestration.master.routing as routing

    public = {n for n, v in vars(routing).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert set(routing.__all__) == public
