"""The demo conversation with the LLM classifier (a function-of-the-messages model) and with the hybrid."""

from __future__ import annotations

from tests.orchestration.master_support import DL, SS, Conversation

from examples.smart_investigator import DEMO, DeclineLetterAssistance, SmartStrategy, stand_in
from podium import MemoryStore, Runtime
from podium.orchestration.master.agent import MasterAgent
from podium.orchestration.master.routing import HybridClassifier, LLMClassifier
from podium.testing import FunctionModel


def master(classifier: LLMClassifier | HybridClassifier) -> MasterAgent:
    return MasterAgent(
        [DeclineLetterAssistance(), SmartStrategy()], name="si", title="Smart Investigator", classifier=classifier
    )


async def test_llm_classifier_sees_the_pending_task_and_its_rationale_goes_to_the_side_channel() -> None:
    model = FunctionModel(stand_in)
    conversation = Conversation(Runtime(MemoryStore()), master(LLMClassifier(model, title="Smart Investigator")))
    for text in DEMO:
        await conversation.say(text)
    turns = conversation.turns
    assert len(model.requests) == len(DEMO)  # one tool-calling request per human message

    prompts = [request.messages[0].content for request in model.requests]
    assert [request.messages[-1].content for request in model.requests] == DEMO
    assert "There is no pending task." in prompts[0]
    assert (
        "Pending task: DeclineLetterAssistance is waiting for an answer to: 'Please provide your claim id'"
        in prompts[1]
    )
    assert "Context: DeclineLetterAssistance needs the claim id of the letter" in prompts[1]
    assert "Expected answer: a claim id: letters and digits, e.g. 123ABH" in prompts[1]
    assert "Pending task: SmartStrategy is waiting for an answer to: 'Please tell me if you are" in prompts[2]
    assert "Expected answer: one of 'internal employee', 'partner'" in prompts[2]
    assert "Expected answer: one of 'Home', 'Motor'" in prompts[5]
    for request in model.requests:
        names = [spec.name for spec in request.tools]
        assert names == [DL, SS, "ask_human", "refuse_request", "describe_capabilities", "abandon_task"]
        assert all("rationale" in spec.parameters["required"] for spec in request.tools)

    # routing by the model, rationale on the side channel
    assert [t.decisions[0]["source"] for t in turns] == ["llm"] * len(DEMO)
    assert [t.decisions[0]["kind"] for t in turns] == [
        "route",
        "route",
        "ask",
        "route",
        "route",
        "ask",
        "refuse",
        "route",
    ]
    assert turns[0].rationales == [f"Choosing {DL} due to: The user wants a decline letter."]
    assert turns[1].rationales == [f"Choosing {SS} due to: The user asks where to find a claim id."]
    assert turns[3].rationales == [f"Choosing {SS} due to: The answer matches one of the expected options."]
    assert turns[2].question.endswith("Please tell me if you are an internal employee or a partner of Suncorp.")
    assert [t.stacks for t in turns] == [[[DL]], [[DL, SS]], [], [[DL]], [[DL]], [], [], [[]]]
    assert "123ABH" in turns[-1].artifacts[0] and "Motor" in turns[-1].artifacts[0]

    # side-channel texts never reach the model
    seen = " ".join(m.content for r in model.requests for m in r.messages)
    for turn in turns:
        for text in turn.rationales + turn.progress:
            assert text not in seen
    assert "Choosing" not in seen and "Obtaining" not in seen


async def test_hybrid_asks_the_model_only_when_the_router_is_unsure() -> None:
    model = FunctionModel(stand_in)
    conversation = Conversation(Runtime(MemoryStore()), master(HybridClassifier(LLMClassifier(model))))
    for text in DEMO:
        await conversation.say(text)
    sources = [t.decisions[0]["source"] for t in conversation.turns]
    # the model judges the task switch, the answers that fit nothing and the harmful request (issue 13)
    assert sources == ["router", "llm", "llm", "router", "router", "llm", "llm", "router"]
    assert len(model.requests) == 4 < len(DEMO)
    assert conversation.turns[-1].result.output and conversation.turns[-1].result.output.startswith("Letter generated!")


async def test_a_model_reply_is_journaled_so_a_resumed_run_does_not_ask_again() -> None:
    model = FunctionModel(stand_in)
    runtime = Runtime(MemoryStore())
    conversation = Conversation(runtime, master(LLMClassifier(model)))
    for text in DEMO[:4]:
        await conversation.say(text)
    # four turns of one run, re-executed three times: still one model call per human message
    assert len(model.requests) == 4
