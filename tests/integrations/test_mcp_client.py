"""Tools of a real MCP server (made with the ``mcp`` package) used by a ReAct agent and by the master agent."""

from __future__ import annotations

import asyncio
import sys

import pytest
from tests.integrations.conftest import SERVER

from podium import (
    AIMessage,
    MemoryStore,
    Message,
    ModelRequest,
    ReactAgent,
    Runtime,
    ToolMessage,
    UsageError,
)
from podium.mcp import MCPError, MCPServer, MCPTool
from podium.orchestration.master import LLMClassifier, MasterAgent
from podium.testing import FunctionModel, ScriptedModel, tool_call


def forecaster(city: str):  # a model asking for a forecast, then answering with what came back
    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return AIMessage(content=("error: " if last.is_error else "") + last.content)
        return AIMessage(tool_calls=[tool_call("weather_forecast", {"city": city})])

    return reply


async def test_tools_are_listed_with_prefixed_names_and_the_servers_schemas(weather: MCPServer) -> None:
    tools = weather.list_tools()
    assert [t.name for t in tools] == ["weather_forecast", "weather_convert"]
    assert all(isinstance(t, MCPTool) for t in tools)
    forecast, convert = tools
    assert forecast.description.startswith("Tomorrow's weather in a city.")
    assert forecast.parameters["properties"]["city"]["type"] == "string"
    assert forecast.parameters["required"] == ["city"]
    assert convert.parameters["properties"]["celsius"]["type"] == "number"
    assert forecast.metadata.expose_to_user and forecast.metadata.introduction == forecast.description
    assert (forecast.read_only, convert.read_only) == (False, True)  # as the server's hints say


async def test_a_react_agent_calls_the_tools_and_sees_their_errors(weather: MCPServer) -> None:
    model = ScriptedModel(
        [
            AIMessage(
                tool_calls=[
                    tool_call("weather_forecast", {"city": "Lisbon"}),
                    tool_call("weather_convert", {"celsius": 24}),
                ]
            ),
            AIMessage(tool_calls=[tool_call("weather_forecast", {"city": "Paris"})]),
            AIMessage(tool_calls=[tool_call("weather_convert", {"celsius": "warm"})]),
            AIMessage(content="Lisbon: sunny, 24 °C (75.2 °F)."),
        ]
    )
    agent = ReactAgent("helper", model, [weather])
    runtime = Runtime(MemoryStore())
    result = await runtime.run(agent, "Weather in Lisbon, in Fahrenheit?")
    assert result.status == "completed" and result.output == "Lisbon: sunny, 24 °C (75.2 °F)."
    model.assert_complete()
    messages = await runtime.messages(result.thread_id)
    results = [(m.name, m.content, m.is_error) for m in messages if isinstance(m, ToolMessage)]
    assert results[:2] == [("weather_forecast", "Lisbon: sunny, 24 °C", False), ("weather_convert", "75.2", False)]
    name, text, is_error = results[2]  # the tool raised on the server: the model reads why
    assert (name, is_error) == ("weather_forecast", True) and "no forecast for Paris; try Lisbon or Oslo" in text
    name, text, is_error = results[3]  # the server rejected the arguments against its schema
    assert (name, is_error) == ("weather_convert", True) and "celsius" in text
    assert [s.name for s in model.requests[0].tools] == ["weather_forecast", "weather_convert"]


async def test_the_master_agent_routes_to_an_mcp_tool(weather: MCPServer) -> None:
    def classify(messages: list[Message], request: ModelRequest) -> AIMessage:
        names = [spec.name for spec in request.tools]
        assert names[:2] == ["weather_forecast", "weather_convert"]
        arguments = {"text": "forecast for Oslo", "rationale": "a forecast", "city": "Oslo"}
        return AIMessage(tool_calls=[tool_call("weather_forecast", arguments)])

    master = MasterAgent(weather.list_tools(), classifier=LLMClassifier(FunctionModel(classify)))
    result = await Runtime(MemoryStore()).run(master, "What will the weather be in Oslo tomorrow?")
    assert result.status == "completed", result.reason
    assert "Oslo: cloudy, 9 °C" in result.output


async def test_the_tool_list_is_read_again_when_the_server_says_it_changed(weather: MCPServer) -> None:
    model = FunctionModel(forecaster("Atlantis"))
    agent = ReactAgent("helper", model, [weather])
    result = await Runtime(MemoryStore()).run(agent, "Weather in Atlantis?")
    assert result.output.startswith("error: ") and "no forecast for Atlantis" in result.output
    for _ in range(200):
        if weather.refreshes == 2:
            break
        await asyncio.sleep(0.01)
    assert [t.name for t in weather.list_tools()] == ["weather_forecast", "weather_convert", "weather_tides"]
    await Runtime(MemoryStore()).run(agent, "And now?")
    assert [s.name for s in model.requests[-1].tools] == ["weather_forecast", "weather_convert", "weather_tides"]


async def test_a_server_dying_mid_call_is_a_clear_tool_error() -> None:
    async with MCPServer("weather", command=sys.executable, args=[SERVER, "stdio"], timeout=20) as weather:
        agent = ReactAgent("helper", FunctionModel(forecaster("Crash")), [weather])
        runtime = Runtime(MemoryStore())
        result = await runtime.run(agent, "Weather in Crash?")
        assert result.status == "completed"
        (message,) = [m for m in await runtime.messages(result.thread_id) if isinstance(m, ToolMessage)]
        assert message.is_error
        assert message.content.startswith("Error: tool 'weather_forecast' failed with MCPError: MCP server 'weather'")
        assert "the call to 'forecast' failed" in message.content
        with pytest.raises(MCPError, match="'weather'"):
            await weather.call_tool("convert", {"celsius": 1})


async def test_connection_problems_and_misuse_are_clear_errors() -> None:
    with pytest.raises(UsageError, match="either command"):
        MCPServer("x")
    with pytest.raises(UsageError, match="either command"):
        MCPServer("x", command="a", url="http://b")
    with pytest.raises(MCPError, match="MCP server 'gone': cannot connect"):
        async with MCPServer("gone", url="http://127.0.0.1:9/mcp", timeout=5):
            pass
    idle = MCPServer("idle", command=sys.executable, args=[SERVER, "stdio"])
    assert idle.list_tools() == []
    with pytest.raises(MCPError, match="not connected"):
        await idle.refresh()
    await idle.close()


async def test_a_prefix_can_be_chosen_and_bad_arguments_are_answered() -> None:
    async with MCPServer("w", command=sys.executable, args=[SERVER, "stdio"], prefix="") as weather:
        forecast = weather.list_tools()[0]
        assert forecast.name == "forecast"
        with pytest.raises(Exception, match="not valid JSON"):
            forecast.validate("{oops")
        with pytest.raises(Exception, match="must be a JSON object"):
            forecast.validate("[1]")
        assert forecast.validate('{"city": "Oslo"}') == {"arguments": {"city": "Oslo"}}
