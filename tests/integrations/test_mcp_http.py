"""``podium serve`` answers MCP at ``/mcp``: the ``mcp`` package's client (through podium.mcp.MCPServer, and raw)
lists and calls the served apps over streamable HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from tests.server.conftest import example_apps, live_server

from podium import MemoryStore
from podium.mcp import MCPServer


@pytest.fixture
def base_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.chdir(Path(__file__).parents[2])
    with live_server(example_apps("trip", "faang"), MemoryStore(), close_store=True) as url:
        yield url


def data(result: types.CallToolResult) -> dict[str, Any]:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return dict(json.loads(first.text))


async def test_the_served_apps_are_mcp_tools(base_url: str) -> None:
    async with MCPServer.http("podium", f"{base_url}/mcp", prefix="") as podium:
        assert sorted(t.name for t in podium.list_tools()) == ["faang", "trip"]
        answered = json.loads(await podium.call_tool("trip", {"input": "What's the weather in Lisbon?"}))
        assert answered["status"] == "completed" and answered["output"] == "Today in Lisbon: 24 °C, sunny."
        faang = json.loads(
            await podium.call_tool("faang", {"input": "what's the combined headcount of the FAANG companies in 2024?"})
        )
        assert faang["output"] == "The combined headcount of the FAANG companies in 2024 is 1,977,586."


async def test_a_question_is_elicited_over_http(base_url: str) -> None:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"answer": "yes"})

    async with (
        streamable_http_client(f"{base_url}/mcp") as (read, write, _),
        ClientSession(read, write, elicitation_callback=elicit) as session,
    ):
        await session.initialize()
        done = data(await session.call_tool("trip", {"input": "Save a note: pack sunglasses for Lisbon"}))
        assert done["output"] == "Done: Saved to the trip notebook: pack sunglasses for Lisbon"


def test_mcp_is_not_served_when_callers_authenticate(monkeypatch: pytest.MonkeyPatch) -> None:
    """With API keys required, /mcp (whose conversations are not yet per user) is not mounted: 404, no tool call."""
    import httpx

    from podium.server.auth import AuthConfig

    monkeypatch.chdir(Path(__file__).parents[2])
    with live_server(example_apps("trip"), MemoryStore(), close_store=True, auth=AuthConfig()) as url:
        response = httpx.post(
            f"{url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert response.status_code in (401, 404)
        assert "jsonrpc" not in response.text
        if response.status_code == 404:
            assert "served only without API keys" in response.json()["detail"]


def test_another_mcp_version_leaves_the_server_up_without_mcp(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An mcp package without the server API the extra's version has (2.x renamed it): a warning, no /mcp, no crash."""
    import sys

    import httpx

    monkeypatch.setitem(sys.modules, "mcp.server.fastmcp", None)  # importing it fails, as on mcp 2.x
    monkeypatch.chdir(Path(__file__).parents[2])
    with (
        caplog.at_level("WARNING", logger="podium.server"),
        live_server(example_apps("trip"), MemoryStore(), close_store=True) as url,
    ):
        assert httpx.get(f"{url}/health").status_code == 200
        response = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert response.status_code == 501  # says what to install, instead of a bare 404
        assert (
            response.json()["detail"] == "/mcp needs the mcp version podium's mcp extra pins: pip install 'podium[mcp]'"
        )
    assert any("/mcp is not served" in record.getMessage() for record in caplog.records)


def test_without_the_mcp_extra_mcp_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import sys

    import httpx

    real = importlib.util.find_spec
    monkeypatch.setitem(sys.modules, "mcp.server.fastmcp", None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    monkeypatch.chdir(Path(__file__).parents[2])
    with live_server(example_apps("trip"), MemoryStore(), close_store=True) as url:
        for method in ("GET", "POST"):
            response = httpx.request(method, f"{url}/mcp")
            assert response.status_code == 501
            assert response.json()["detail"] == "/mcp needs the mcp extra: pip install 'podium[mcp]'"


def _helper_app() -> Any:
    from podium import AIMessage, ReactAgent
    from podium.app import App
    from podium.testing import FunctionModel

    def reply(messages: list[Any], request: Any) -> AIMessage:
        if "crash" in str(messages[-1].content):
            raise RuntimeError("the model broke")
        return AIMessage(content="four")

    def build(model: Any) -> ReactAgent:
        return ReactAgent("calc", model, [], description="Adds numbers for you.")

    return App(name="calc", build=build, offline_fallback=FunctionModel(reply), welcome="Hello from calc")


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({}, "input is missing"),
        ({"input": None}, "input is missing"),
        ({"thread_id": "x"}, "input is missing"),
        ({"input": 5}, "input must be the user's message as a string, not int 5"),
        ({"input": ["two", "plus"]}, "not list"),
        ({"input": {"text": "hi"}}, "not dict"),
        ({"input": "hi", "thread_id": 7}, "thread_id must be a string"),
        ({"input": "hi", "thread_id": "never-seen"}, "no conversation 'never-seen'"),
        ({"input": "hi", "thread_id": "../../etc"}, "no conversation '../../etc'"),
        ({"input": "crash now"}, "the model broke"),
    ],
)
async def test_a_refused_call_or_a_failed_run_is_an_error_result_in_podium_words(
    arguments: dict[str, Any], said: str
) -> None:
    with live_server({"calc": _helper_app()}, MemoryStore()) as url:
        async with (
            streamable_http_client(f"{url}/mcp") as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("calc", arguments)
            assert result.isError, result
            found = data(result)
            assert found["status"] in ("error", "failed") and said in json.dumps(found), found
            assert "pydantic" not in json.dumps(found)
            ok = await session.call_tool("calc", {"input": "two plus two"})
            assert not ok.isError and data(ok)["output"] == "four"
            again = await session.call_tool("calc", {"input": "and again", "thread_id": data(ok)["thread_id"]})
            assert not again.isError and data(again)["thread_id"] == data(ok)["thread_id"]


async def test_the_tool_says_what_the_agent_is_for() -> None:
    with live_server({"calc": _helper_app()}, MemoryStore()) as url:
        async with (
            streamable_http_client(f"{url}/mcp") as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            (tool,) = (await session.list_tools()).tools
            assert "Adds numbers for you." in (tool.description or "")
            assert tool.inputSchema["required"] == ["input"]
            assert tool.inputSchema["properties"]["input"]["type"] == "string"
