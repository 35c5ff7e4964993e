"""A server that ignores ``stream: true`` and answers a streamed request with one JSON completion: the adapter reads
that completion (text, tool calls, usage) instead of an empty stream, and says so when the JSON holds no reply."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests.models.openai_standin import StandIn, completion, error

from podium import AIMessage, Event, HumanMessage, MemoryStore, ModelError, ReactAgent, Runtime, ToolCall, Usage
from podium.models import Done, ModelRequest, ModelResponse, StreamEvent, TextDelta, ToolCallDelta
from podium.models.openai import OpenAIModel


@pytest.fixture
async def model(standin: StandIn) -> AsyncIterator[OpenAIModel]:
    made = OpenAIModel("unstreamed-1", base_url=standin.base_url, api_key="sk-unstreamed-secret")
    yield made
    await made.aclose()


async def collect(model: OpenAIModel, text: str = "Weather in Lisbon?") -> list[StreamEvent]:
    return [event async for event in model.stream(ModelRequest(messages=[HumanMessage(content=text)]))]


async def test_a_whole_completion_is_read_as_the_reply(standin: StandIn, model: OpenAIModel) -> None:
    standin.script(completion("Sunny in Lisbon.", usage=(42, 5), model="served-model"))
    events = await collect(model)
    assert standin.requests[0].body["stream"] is True  # it was asked to stream
    assert events == [
        TextDelta("Sunny in Lisbon."),
        Done(
            ModelResponse(
                message=AIMessage(content="Sunny in Lisbon."),
                usage=Usage(input_tokens=42, output_tokens=5, requests=1),
                model_name="served-model",
                finish_reason="stop",
            )
        ),
    ]


async def test_a_whole_completion_s_tool_calls_are_read(standin: StandIn, model: OpenAIModel) -> None:
    standin.script(completion("", [("call_1", "get_weather", '{"city": "Lisbon"}')]))
    events = await collect(model)
    assert events[:-1] == [ToolCallDelta(index=0, id="call_1", name="get_weather", arguments='{"city": "Lisbon"}')]
    done = events[-1]
    assert isinstance(done, Done)
    assert done.response.message == AIMessage(
        tool_calls=[ToolCall(id="call_1", name="get_weather", arguments='{"city": "Lisbon"}')]
    )
    assert done.response.finish_reason == "tool_calls" and done.response.usage.total_tokens == 18


async def test_a_run_over_such_a_server_answers_rather_than_ending_empty(standin: StandIn, model: OpenAIModel) -> None:
    def get_weather(city: str) -> str:
        """The weather of a city.

        Args:
            city: the city.
        """
        return f"{city}: sunny"

    standin.script(
        completion("", [("call_1", "get_weather", '{"city": "Lisbon"}')]), completion("Lisbon is sunny today.")
    )
    seen: list[Event] = []
    runtime = Runtime(MemoryStore())
    result = await runtime.send(ReactAgent("a", model, [get_weather]), "Weather?", thread_id="t", on_event=seen.append)
    assert [r.body["stream"] for r in standin.requests] == [True, True]  # a listener: the replies were streamed
    assert result.status == "completed" and result.output == "Lisbon is sunny today."
    said = [m.content for m in await runtime.messages("t") if isinstance(m, AIMessage)]
    assert said == ["", "Lisbon is sunny today."]
    assert result.usage.total_tokens == 36 and result.usage.requests == 2
    assert any(e.kind == "token" for e in seen)


async def test_json_without_a_reply_is_a_clear_model_error(standin: StandIn, model: OpenAIModel) -> None:
    standin.script(error(200, "quota exceeded for sk-unstreamed-secret"))  # status 200, an error body
    with pytest.raises(ModelError) as raised:
        await collect(model)
    assert str(raised.value) == (
        "model 'unstreamed-1': the endpoint answered a streamed request with JSON instead of an event stream; its "
        "error: quota exceeded for [redacted]"
    )
