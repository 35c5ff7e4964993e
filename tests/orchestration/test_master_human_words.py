"""Issue 17, item 1: the tool gets the human's own words; the classifier's wording is a separate argument."""

from __future__ import annotations

from typing import Any

from tests.orchestration.master_support import DL, SS, Conversation

from examples.smart_investigator import DEMO, DeclineLetterAssistance, SmartStrategy
from podium import AIMessage, MemoryStore, Message, Runtime
from podium.models.base import ModelRequest
from podium.orchestration.master.agent import MasterAgent
from podium.orchestration.master.routing import LLMClassifier
from podium.orchestration.master.tools import FunctionTool
from podium.orchestration.master.types import ToolContent, ToolInput
from podium.testing import FunctionModel, tool_call


def _rewriting_model(messages: list[Message], request: ModelRequest) -> AIMessage:
    """A small model that routes right but paraphrases, inventing details the human never gave."""
    text = messages[-1].content
    if "partner" in text:
        return AIMessage(tool_calls=[tool_call(SS, {"text": "Please let me know your claim id.", "rationale": "r"})])
    if "Motor" in text:
        return AIMessage(tool_calls=[tool_call(DL, {"text": text, "rationale": "the topology"})])
    if "claim id?" in text:
        return AIMessage(tool_calls=[tool_call(SS, {"text": "Where is the id?", "rationale": "asks for the id"})])
    if "123ABH" in text:
        return AIMessage(tool_calls=[tool_call(DL, {"text": "claim 123ABH", "rationale": "the id 123ABH"})])
    invented = "Craft a declined letter for claim 999ZZZ, topology Motor."
    return AIMessage(tool_calls=[tool_call(DL, {"text": invented, "rationale": "wants a letter"})])


async def test_the_human_message_reaches_the_tool_not_the_classifiers_paraphrase() -> None:
    seen: list[ToolInput] = []

    class Recording(SmartStrategy):
        async def call(self, ctx: Any, request: ToolInput) -> ToolContent:
            seen.append(request)
            return await super().call(ctx, request)

    agent = MasterAgent(
        [DeclineLetterAssistance(), Recording()],
        name="si",
        classifier=LLMClassifier(FunctionModel(_rewriting_model)),
    )
    conversation = Conversation(Runtime(MemoryStore()), agent)
    first = await conversation.say(DEMO[0])  # "I want to craft a declined letter."
    # the invented claim id and topology filled no slot: the letter tool still asks for the claim id
    assert first.question == "Please provide your claim id"
    await conversation.say(DEMO[1])  # where to find a claim id?
    await conversation.say("I am a partner.")
    answer = seen[-1]
    assert answer.tool == SS and answer.text == "I am a partner."
    assert answer.classifier_text == "Please let me know your claim id."
    assert "partner" in conversation.turns[-1].question  # SmartStrategy answered the role the human gave
    assert ToolInput.from_dict(answer.to_dict()) == answer


async def test_a_function_tool_may_declare_the_classifiers_wording() -> None:
    calls: list[tuple[str, str]] = []

    def lookup(text: str, classifier_text: str) -> str:
        """Look something up."""
        calls.append((text, classifier_text))
        return "found"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        assert "classifier_text" not in request.tools[0].parameters["properties"]  # never asked of the model
        return AIMessage(tool_calls=[tool_call("lookup", {"text": "look up order 42", "rationale": "lookup"})])

    agent = MasterAgent([FunctionTool(lookup)], name="m", classifier=LLMClassifier(FunctionModel(model)))
    result = await Runtime(MemoryStore()).send(agent, "where is my order 42?", thread_id="t")
    assert result.status == "completed"
    assert calls == [("where is my order 42?", "look up order 42")]

    same: list[tuple[str, str]] = []

    def echo(messages: list[Message], request: ModelRequest) -> AIMessage:
        return AIMessage(tool_calls=[tool_call("lookup", {"text": messages[-1].content, "rationale": "same"})])

    calls.clear()
    agent = MasterAgent([FunctionTool(lookup)], name="m", classifier=LLMClassifier(FunctionModel(echo)))
    await Runtime(MemoryStore()).send(agent, "order 7", thread_id="t")
    assert calls == [("order 7", "")] and same == []  # the same words are not repeated as a restatement
