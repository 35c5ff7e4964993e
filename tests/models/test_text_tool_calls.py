"""Issue 17, item 5: tool calls written as text (bare, fenced, in ``<tool_call>`` tags) are tool calls, in text mode
(tools described in the prompt) and, when obviously a call of a known tool, in native mode too."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from tests.models.openai_standin import StandIn, completion

from podium import AIMessage, HumanMessage, MemoryStore, ReactAgent, Runtime, SystemMessage, ToolMessage, UsageError
from podium.models import ModelRequest
from podium.models.openai import OpenAIModel
from podium.models.openai_format import request_to_openai
from podium.models.text_tools import parse_tool_calls, text_tools_request
from podium.settings import Settings
from podium.testing import tool_call
from podium.tools import Tool


def get_weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: the city's name.
    """
    return {"lisbon": "Lisbon: 24 °C, sunny."}.get(city.lower(), f"No data for {city}.")


SHAPES = [
    '{"name": "get_weather", "arguments": {"city": "Lisbon"}}',
    '```json\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n```',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n</tool_call>',
    'I will look it up.\n<tool_call>{"name": "get_weather", "parameters": {"city": "Lisbon",}}</tool_call>',
    '```\n{"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Lisbon\\"}"}}\n```',
    "{'name': 'get_weather', 'arguments': {'city': 'Lisbon'}}",
]


@pytest.mark.parametrize("text", SHAPES)
def test_each_common_shape_is_a_call(text: str) -> None:
    parsed = parse_tool_calls(text, {"get_weather"})
    assert parsed is not None
    rest, (call,) = parsed
    assert call.name == "get_weather" and json.loads(call.arguments) == {"city": "Lisbon"}
    assert rest in ("", "I will look it up.")


@pytest.mark.parametrize(
    "text",
    [
        "The weather in Lisbon is sunny.",
        '{"name": "Lisbon", "population": 545000}',  # JSON, but no call
        '{"name": "delete_everything", "arguments": {}}',  # not a known tool
        'Here is an example: {"name": "get_weather", "arguments": {"city": "Lisbon"}} -- try it.',  # prose around
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Lis',  # cut off
    ],
)
def test_what_is_not_obviously_a_call_of_a_known_tool_stays_text(text: str) -> None:
    assert parse_tool_calls(text, {"get_weather"}) is None


def test_text_mode_takes_calls_of_unknown_tools_and_several_calls() -> None:
    text = '<tool_call>{"name": "nope", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "args": {"x": 1}}</tool_call>'
    parsed = parse_tool_calls(text)
    assert parsed is not None and [(c.name, c.arguments) for c in parsed[1]] == [("nope", "{}"), ("b", '{"x": 1}')]
    listed = parse_tool_calls('[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]')
    assert listed is not None and [c.name for c in listed[1]] == ["a", "b"]


def test_a_text_mode_request_describes_the_tools_and_writes_calls_as_text() -> None:
    spec = Tool(get_weather).spec
    call = tool_call("get_weather", {"city": "Lisbon"}, id="c1")
    request = ModelRequest(
        messages=[
            SystemMessage(content="Be brief."),
            HumanMessage(content="Weather in Lisbon?"),
            AIMessage(tool_calls=[call]),
            ToolMessage(content="Lisbon: 24 °C, sunny.", tool_call_id="c1", name="get_weather"),
        ],
        tools=[spec],
    )
    sent = text_tools_request(request)
    assert sent.tools == [] and request_to_openai(sent).get("tools") is None
    system = sent.messages[0]
    assert isinstance(system, SystemMessage) and system.content.startswith("Be brief.\n\nYou can call tools.")
    assert f"- get_weather: Today's weather in a city.\n  arguments (JSON schema): {json.dumps(spec.parameters)}" in (
        system.content
    )
    assert [type(m).__name__ for m in sent.messages] == ["SystemMessage", "HumanMessage", "AIMessage", "HumanMessage"]
    assert sent.messages[2].content == '<tool_call>{"name": "get_weather", "arguments": {"city": "Lisbon"}}</tool_call>'
    assert sent.messages[3].content == '<tool_response name="get_weather">\nLisbon: 24 °C, sunny.\n</tool_response>'


@pytest.fixture
async def text_model(standin: StandIn) -> AsyncIterator[OpenAIModel]:
    env = {"PODIUM_MODEL": "small", "PODIUM_BASE_URL": standin.base_url, "PODIUM_TOOL_FORMAT": "text"}
    made = Settings.load(env=env).model_or_none()
    assert isinstance(made, OpenAIModel) and made.tool_format == "text"
    yield made
    await made.aclose()


async def test_a_react_agent_runs_a_tool_a_text_mode_model_writes(standin: StandIn, text_model: OpenAIModel) -> None:
    standin.script(
        completion('<tool_call>{"name": "get_weather", "arguments": {"city": "Lisbon"}}</tool_call>'),
        completion("It is 24 °C and sunny in Lisbon."),
    )
    agent = ReactAgent("helper", text_model, [get_weather])
    result = await Runtime(MemoryStore()).run(agent, "Weather in Lisbon?")
    assert result.output == "It is 24 °C and sunny in Lisbon."
    first, second = standin.bodies
    assert "tools" not in first and "tools" not in second
    assert "<tool_call>" in first["messages"][0]["content"]
    assert second["messages"][-1] == {
        "role": "user",
        "content": '<tool_response name="get_weather">\nLisbon: 24 °C, sunny.\n</tool_response>',
    }


async def test_native_mode_recognises_an_obvious_call_of_a_known_tool(standin: StandIn) -> None:
    model = OpenAIModel("small", base_url=standin.base_url)
    standin.script(
        completion('```json\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n```'),
        completion("Sunny, 24 °C."),
    )
    agent = ReactAgent("helper", model, [get_weather])
    result = await Runtime(MemoryStore()).run(agent, "Weather in Lisbon?")
    await model.aclose()
    assert result.output == "Sunny, 24 °C."
    assert [t["function"]["name"] for t in standin.bodies[0]["tools"]] == ["get_weather"]  # native: the API's field
    tool_result = standin.bodies[1]["messages"][-1]
    assert tool_result["role"] == "tool" and tool_result["content"] == "Lisbon: 24 °C, sunny."


def test_the_tool_format_is_checked() -> None:
    with pytest.raises(UsageError, match="tool_format must be 'native' or 'text', not 'json'"):
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1", tool_format="json")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="bad setting tool_format: 'json'; choose native or text"):
        Settings.load(env={"PODIUM_TOOL_FORMAT": "json"})
