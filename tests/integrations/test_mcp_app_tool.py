"""Apps served as MCP tools, in process (the ``mcp`` package's in-memory transport): several questions at once,
errors, names."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import types
from mcp.shared.memory import create_connected_server_and_client_session

from podium import AIMessage, MemoryStore, Message, ModelRequest, ReactAgent, RunContext, Runtime, ToolMessage
from podium.app import App
from podium.errors import UsageError
from podium.mcp.server import AppTool, app_server
from podium.testing import FunctionModel, tool_call


async def ask_name(ctx: RunContext[Any], who: str) -> str:
    """Ask for a name.

    Args:
        who: whose name.
    """
    return await ctx.ask(f"What is the {who}'s name?")


def model(messages: list[Message], request: ModelRequest) -> AIMessage:
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(content=" and ".join(m.content for m in messages if isinstance(m, ToolMessage)))
    return AIMessage(tool_calls=[tool_call("ask_name", {"who": "guest"}), tool_call("ask_name", {"who": "host"})])


def greeter_tool(name: str = "greeter app") -> AppTool:
    build = lambda m: ReactAgent("greeter", m, [ask_name], description="Greets people.")  # noqa: E731
    app = App(name=name, build=build)
    return AppTool(app, build(FunctionModel(model)), Runtime(MemoryStore()))


def data(result: types.CallToolResult) -> dict[str, Any]:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return dict(json.loads(first.text))


async def test_two_questions_at_once_are_answered_by_id_or_by_elicitation() -> None:
    tool = greeter_tool()
    assert tool.name == "greeter_app" and "Greets people." in tool.description
    async with create_connected_server_and_client_session(app_server([tool])) as session:
        asked = data(await session.call_tool("greeter_app", {"input": "Hi"}))
        assert asked["status"] == "waiting"
        assert asked["question"] == ["What is the guest's name?", "What is the host's name?"]
        ids = asked["question_ids"]
        wrong = data(await session.call_tool("greeter_app", {"input": "Ann", "thread_id": asked["thread_id"]}))
        assert wrong["status"] == "error" and "answer with a JSON object by id" in wrong["error"]
        answers = json.dumps({ids[0]: "Ann", ids[1]: "Bo"})
        done = data(await session.call_tool("greeter_app", {"input": answers, "thread_id": asked["thread_id"]}))
        assert done["output"] == "Ann and Bo"

    names = iter(["Cy", "Di"])

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"answer": next(names)})

    async with create_connected_server_and_client_session(app_server([tool]), elicitation_callback=elicit) as session:
        done = data(await session.call_tool("greeter_app", {"input": "Hi"}))
        assert done["status"] == "completed" and done["output"] == "Cy and Di"


async def test_errors_are_results_and_names_must_differ() -> None:
    tool = greeter_tool()
    empty = await tool.turn("  ", None)
    assert empty == {"status": "error", "error": "the input is empty: a run needs a message", "thread_id": None}
    with pytest.raises(UsageError, match="two apps are served as the MCP tool 'greeter_app'"):
        app_server([tool, greeter_tool("greeter.app")])


async def test_a_failed_run_reports_its_reason() -> None:
    def broken(messages: list[Message], request: ModelRequest) -> AIMessage:
        raise RuntimeError("the model is down")

    app = App(name="broken", build=lambda m: ReactAgent("broken", m))
    tool = AppTool(app, ReactAgent("broken", FunctionModel(broken)), Runtime(MemoryStore()))
    result = await tool.turn("Hello", None)
    assert result["status"] == "failed" and "the model is down" in result["reason"] and result["thread_id"]


async def test_the_trip_app_in_process_offers_the_choices_of_its_question() -> None:
    from examples.trip import app
    from podium.models.replay import ReplayModel

    assert app.cassette is not None
    tool = AppTool(app, app.build(ReplayModel(app.cassette)), Runtime(MemoryStore()))
    asked = await tool.turn("Save a note: umbrella for Paris", None)
    assert asked["status"] == "waiting" and asked["options"] == ["yes", "no"]
    done = await tool.turn("no", asked["thread_id"])
    assert done["output"] == "Fine, I did not save it."
    again = await tool.turn("What's the weather in Lisbon?", asked["thread_id"])
    assert again["output"] == "Today in Lisbon: 24 °C, sunny."
