"""The LLM classifier (one tool-calling request, rationale required, errors sent back once) and the hybrid."""

from __future__ import annotations

import json
from typing import Any

from examples.smart_investigator import ROLE, build
from podium import Agent, AgentResult, AIMessage, HumanMessage, RunContext, Runtime, ToolMessage
from podium.orchestration.master.routing import (
    Classifier,
    Decision,
    HybridClassifier,
    LLMClassifier,
    PendingTask,
    Query,
)
from podium.testing import ScriptedModel, tool_call

CATALOG = build().catalog
SS = "SmartStrategy"
PENDING = PendingTask(
    tool=SS,
    content="Please tell me if you are an internal employee or a partner of Suncorp.",
    context="SmartStrategy needs to know whether the user is an internal employee or a partner.",
    expectation=ROLE,
)


class Classify(Agent):
    """Runs one classification in a run, so model calls are journaled like the orchestrator's."""

    name = "classify"

    def __init__(self, classifier: Classifier, query: Query) -> None:
        self.classifier = classifier
        self.query = query

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        decision = await self.classifier.classify(ctx, self.query)
        return AgentResult(output=json.dumps(decision.to_dict()))


async def classify(classifier: Classifier, text: str, pending: PendingTask | None = PENDING) -> Decision:
    query = Query(text=text, catalog=CATALOG, candidates=CATALOG.names, pending=pending)
    result = await Runtime().run(Classify(classifier, query), "go")
    assert result.status == "completed", result.reason
    return Decision.from_dict(json.loads(result.output or "{}"))


def call(name: str, **arguments: Any) -> AIMessage:
    return AIMessage(tool_calls=[tool_call(name, arguments)])


async def test_one_request_with_the_pending_task_and_a_required_rationale() -> None:
    model = ScriptedModel([call(SS, text="I am a partner.", rationale="It answers the pending question.")])
    decision = await classify(LLMClassifier(model, title="Smart Investigator"), "I am a partner.")
    model.assert_complete()
    assert decision == Decision(
        kind="route", tool=SS, text="I am a partner.", rationale="It answers the pending question.", source="llm"
    )
    (request,) = model.requests
    system = request.messages[0].content
    assert system.startswith("You are the intent classifier of Smart Investigator")
    assert f"Pending task: {SS} is waiting for an answer to: {PENDING.content!r}" in system
    assert f"Context: {PENDING.context}" in system
    assert "Expected answer: one of 'internal employee', 'partner'" in system
    assert request.messages[1] == HumanMessage(content="I am a partner.")
    assert request.settings.tool_choice == "required"
    for spec in request.tools:
        assert "rationale" in spec.parameters["required"]


async def test_control_tools_map_to_decisions() -> None:
    replies = {
        "ask_human": ("ask", {"text": "Which one?"}),
        "refuse_request": ("refuse", {"text": "No."}),
        "describe_capabilities": ("capabilities", {}),
        "abandon_task": ("abandon", {}),
    }
    for name, (kind, extra) in replies.items():
        model = ScriptedModel([call(name, rationale="because", **extra)])
        decision = await classify(LLMClassifier(model), "whatever")
        assert decision.kind == kind and decision.rationale == "because" and decision.text == extra.get("text", "")


async def test_an_unusable_reply_goes_back_to_the_model_once() -> None:
    model = ScriptedModel(
        [
            call(SS, text="I am a partner."),  # no rationale
            call(SS, text="I am a partner.", rationale="Fits the expected answer."),
        ]
    )
    decision = await classify(LLMClassifier(model), "I am a partner.")
    model.assert_complete()
    assert decision.kind == "route" and decision.rationale == "Fits the expected answer."
    correction = model.requests[1].messages[-1]
    assert isinstance(correction, ToolMessage) and correction.is_error and "rationale" in correction.content


async def test_text_or_unknown_tools_twice_end_in_a_request_to_rephrase() -> None:
    model = ScriptedModel([AIMessage(content="I think SmartStrategy"), call("Nope", text="x", rationale="y")])
    decision = await classify(LLMClassifier(model), "hmm")
    model.assert_complete()
    assert decision.kind == "ask" and decision.reason == "classifier_error" and decision.confidence == 0.0
    assert isinstance(model.requests[1].messages[-1], HumanMessage)  # text answer: corrected as a user message
    assert "Unknown tool 'Nope'" in decision.rationale


async def test_no_pending_task_and_tool_requests_are_stated() -> None:
    model = ScriptedModel([call("ask_human", text="?", rationale="r")] * 2)
    await classify(LLMClassifier(model), "hello", pending=None)
    assert "There is no pending task." in model.requests[0].messages[0].content
    query = Query(
        text="Please provide your claim id", catalog=CATALOG, candidates=CATALOG.names, pending=PENDING, origin="tool"
    )
    await Runtime().run(Classify(LLMClassifier(model), query), "go")
    assert f"request from the tool {SS}, not from the human" in model.requests[1].messages[0].content


async def test_hybrid_uses_the_router_when_confident_and_the_model_otherwise() -> None:
    model = ScriptedModel([call("ask_human", text="Are you a partner?", rationale="Unclear answer.")])
    hybrid = HybridClassifier(LLMClassifier(model))
    confident = await classify(hybrid, "I am a partner.")
    assert confident.source == "router" and confident.tool == SS and model.requests == []
    unsure = await classify(hybrid, "I am a Suncorp friend.")
    assert unsure.source == "llm" and unsure.kind == "ask" and len(model.requests) == 1
    model.assert_complete()
