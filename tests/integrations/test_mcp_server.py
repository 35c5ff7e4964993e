"""``podium mcp trip`` used the way Claude Desktop uses an MCP server: the ``mcp`` package's client over stdio."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).parents[2]


@asynccontextmanager
async def podium_mcp(*args: str, elicit: Any = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "podium", "mcp", *args], env=dict(os.environ), cwd=str(ROOT)
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=elicit) as session,
    ):
        await session.initialize()
        yield session


def result_data(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.isError, result.content
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    data = json.loads(text.text)
    assert result.structuredContent in (None, data, {"result": data})
    return dict(data)


async def test_a_client_lists_and_calls_the_app_and_answers_a_question_on_the_next_call() -> None:
    async with podium_mcp("trip", "--store", "memory") as session:
        (tool,) = (await session.list_tools()).tools
        assert tool.name == "trip"
        assert "Answers weather questions" in (tool.description or "")
        assert set(tool.inputSchema["properties"]) == {"input", "thread_id"}
        assert tool.inputSchema["required"] == ["input"]

        answered = result_data(await session.call_tool("trip", {"input": "What's the weather in Lisbon?"}))
        assert answered["status"] == "completed" and answered["output"] == "Today in Lisbon: 24 °C, sunny."

        thread = answered["thread_id"]
        asked = result_data(
            await session.call_tool("trip", {"input": "Save a note: pack sunglasses for Lisbon", "thread_id": thread})
        )
        assert asked == {
            "status": "waiting",
            "thread_id": thread,
            "question": "Save this note to your trip notebook: 'pack sunglasses for Lisbon'?",
            "options": ["yes", "no"],
            "next": "Ask the user, then call this tool again with this thread_id and the answer as input.",
        }
        odd = await session.call_tool("trip", {"input": "hi", "thread_id": "../../etc"})
        assert odd.isError and "no conversation '../../etc'" in odd.content[0].text  # type: ignore[union-attr]
        done = result_data(await session.call_tool("trip", {"input": "yes", "thread_id": thread}))
        assert done == {
            "status": "completed",
            "thread_id": thread,
            "output": "Done: Saved to the trip notebook: pack sunglasses for Lisbon",
        }


async def test_a_question_is_an_elicitation_when_the_client_supports_it() -> None:
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"answer": "yes"})

    async with podium_mcp("trip", "--store", "memory", elicit=elicit) as session:
        done = result_data(await session.call_tool("trip", {"input": "Save a note: pack sunglasses for Lisbon"}))
        assert done["status"] == "completed"
        assert done["output"] == "Done: Saved to the trip notebook: pack sunglasses for Lisbon"
        (params,) = asked
        assert params.message == "Save this note to your trip notebook: 'pack sunglasses for Lisbon'? (yes / no)"


async def test_a_declined_elicitation_hands_the_question_back() -> None:
    async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with podium_mcp("trip", "--store", "memory", elicit=decline) as session:
        asked = result_data(await session.call_tool("trip", {"input": "Save a note: umbrella for Paris"}))
        assert asked["status"] == "waiting" and asked["question"].startswith("Save this note")
        done = result_data(await session.call_tool("trip", {"input": "no", "thread_id": asked["thread_id"]}))
        assert done["output"] == "Fine, I did not save it."


@pytest.mark.parametrize("args", [["no-such-app"], []])
def test_bad_apps_are_reported_on_stderr(args: list[str]) -> None:
    import subprocess

    run = subprocess.run(
        [sys.executable, "-m", "podium", "mcp", *args], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert run.returncode == 2 and run.stdout == ""
    assert "no app" in run.stderr or "Missing argument" in run.stderr
