"""Issue 17, item 4: a reply cut off by the length limit is recorded as such and never taken as an answer."""

from __future__ import annotations

import pytest
from tests.models.openai_standin import StandIn, completion, stream

from podium import AIMessage, HumanMessage, MemoryStore, Message, MessageAdded, Runtime, ToolMessage
from podium.agents.react import ReactAgent
from podium.events import Event
from podium.models import ModelRequest, ModelResponse, cut_off
from podium.models.openai import OpenAIModel
from podium.orchestration.master.agent import MasterAgent
from podium.orchestration.master.routing import LLMClassifier
from podium.orchestration.supervisor.supervisor import create_supervisor
from podium.testing import FunctionModel, tool_call


async def test_the_adapter_marks_a_cut_off_reply_streamed_or_not(standin: StandIn) -> None:
    standin.script(completion("The answer is", finish_reason="length"), stream(["The ", "ans"], finish_reason="length"))
    model = OpenAIModel("m", base_url=standin.base_url)
    whole = await model.reply(ModelRequest(messages=[HumanMessage(content="q")]))
    streamed = [e async for e in model.stream(ModelRequest(messages=[HumanMessage(content="q")]))][-1]
    await model.aclose()
    assert whole.finish_reason == "length" and cut_off(whole.message)
    assert streamed.kind == "done" and cut_off(streamed.response.message)
    assert not cut_off(AIMessage(content="fine"))


async def test_a_cut_off_tool_call_is_not_run_and_the_model_is_told() -> None:
    ran: list[str] = []

    def save(note: str) -> str:
        """Save a note."""
        ran.append(note)
        return "saved"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage | ModelResponse:
        last = messages[-1]
        if isinstance(last, HumanMessage):  # a rambling call, cut off mid-arguments
            message = AIMessage(tool_calls=[tool_call("save", '{"note": "a very long no')])
            return ModelResponse(message=message, finish_reason="length")
        if isinstance(last, ToolMessage) and last.is_error:
            return AIMessage(tool_calls=[tool_call("save", {"note": "short"})])
        return AIMessage(content="Saved.")

    events: list[Event] = []
    agent = ReactAgent("notes", FunctionModel(model), [save])
    result = await Runtime(MemoryStore()).send(agent, "save my note", thread_id="t", on_event=events.append)
    assert result.status == "completed" and result.output == "Saved."
    assert ran == ["short"]  # the truncated call never ran
    added = [e.message for e in events if isinstance(e, MessageAdded)]
    assert cut_off(added[1])  # the event records why the reply ended
    error = added[2]
    assert isinstance(error, ToolMessage) and error.is_error and "cut off by the length limit" in error.content


async def test_a_cut_off_routing_decision_goes_back_to_the_model_then_asks_the_human() -> None:
    seen: list[list[Message]] = []

    def model(messages: list[Message], request: ModelRequest) -> ModelResponse:
        seen.append(list(messages))
        call = tool_call("ask_human", {"text": "Which one do you", "rationale": "vague"})
        return ModelResponse(message=AIMessage(tool_calls=[call]), finish_reason="length")

    agent = MasterAgent([], name="m", classifier=LLMClassifier(FunctionModel(model)))
    result = await Runtime(MemoryStore()).send(agent, "hello", thread_id="t")
    assert len(seen) == 2  # one retry with the error, then a typed outcome
    feedback = seen[1][-1]
    assert isinstance(feedback, ToolMessage) and "cut off by the length limit" in feedback.content
    assert result.output is not None and result.output.startswith("Sorry, I did not understand that.")
    assert "Which one do you" not in result.output  # the truncated question never reached the human


@pytest.mark.parametrize("streamed", [False, True])
async def test_cut_off_text_is_no_answer_it_fails_the_run_saying_how_to_raise_the_cap(
    standin: StandIn, streamed: bool
) -> None:
    cut = "The weather in Lisbon is sunny and the temperature is about"
    standin.script(stream([cut], finish_reason="length") if streamed else completion(cut, finish_reason="length"))
    model = OpenAIModel("small", base_url=standin.base_url, max_tokens=12)
    events: list[Event] = []
    on_event = events.append if streamed else None  # a listener makes the runtime stream
    result = await Runtime(MemoryStore()).send(ReactAgent("a", model), "Weather?", thread_id="t", on_event=on_event)
    await model.aclose()
    assert result.status == "failed" and result.output is None
    assert result.reason == (
        "ModelError: the reply of model 'small' was cut off at its length limit of 12 tokens (finish_reason "
        "'length'), so it is no answer; raise the cap: PODIUM_MAX_TOKENS, or the agent's "
        "ModelSettings(max_tokens=...)"
    )
    assert len(standin.requests) == 1
    assert result.usage.requests == 1 and result.usage.output_tokens == 7  # what it cost is counted
    assert not [e for e in events if isinstance(e, MessageAdded) and isinstance(e.message, AIMessage)]


async def test_cut_off_text_is_no_answer_for_any_agent() -> None:
    def model(messages: list[Message], request: ModelRequest) -> ModelResponse:
        return ModelResponse(message=AIMessage(content="The total is 1,5"), finish_reason="length")

    supervisor = create_supervisor([ReactAgent("math", FunctionModel(lambda m, r: "2"))], model=FunctionModel(model))
    result = await Runtime(MemoryStore()).send(supervisor, "Add them up", thread_id="t")
    assert result.status == "failed"
    assert result.reason is not None and "was cut off at its length limit" in result.reason
