"""The OpenAI endpoint when things go wrong: a run that fails answers 500 (a stream ends with an error frame), and a
client that disconnects mid-stream leaves a run that completes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI
from tests.server.conftest import live_server

from podium import AIMessage, ReactAgent, ToolMessage
from podium.app import App
from podium.store.sqlite import SQLiteStore
from podium.testing import FunctionModel, tool_call

CASSETTE = Path(__file__).parents[2] / "examples" / "cassettes" / "trip.json"  # unused by these agents


def _app(name: str, model: FunctionModel) -> App:
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: what to look up.
        """
        return f"{key}=42"

    agent = ReactAgent(name, model, [lookup])
    return App(name=name, build=lambda _: agent, cassette=CASSETTE)


def _broken(messages: list[Any], request: Any) -> Any:
    raise RuntimeError("the model is down")


async def _slow(messages: list[Any], request: Any) -> Any:
    await asyncio.sleep(0.4)
    if isinstance(messages[-1], ToolMessage):
        return f"Found {messages[-1].content}"
    return AIMessage(tool_calls=[tool_call("lookup", {"key": "answer"})])


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    apps = {"broken": _app("broken", FunctionModel(_broken)), "slow": _app("slow", FunctionModel(_slow))}
    with live_server(apps, SQLiteStore(tmp_path / "s.db")) as base:
        yield base


def test_a_failed_run_answers_500_and_a_stream_ends_with_an_error_frame(url: str) -> None:
    ask = [{"role": "user", "content": "hello"}]
    with OpenAI(base_url=f"{url}/v1", api_key="dev", max_retries=0) as client:
        with pytest.raises(openai.InternalServerError, match="the run ended failed"):
            client.chat.completions.create(model="broken", messages=ask)
        with pytest.raises(openai.APIError, match="the run ended failed"):
            list(client.chat.completions.create(model="broken", messages=ask, stream=True))


def test_a_client_with_its_default_retries_runs_a_failing_turn_once(url: str) -> None:
    """The OpenAI clients retry a 500 twice by default: the failed run's answer tells them not to, or the turn (its
    tools, its message in the conversation) would run three times."""
    with (
        OpenAI(base_url=f"{url}/v1", api_key="dev") as client,  # the default: max_retries=2
        pytest.raises(openai.InternalServerError) as failed,
    ):
        ask = [{"role": "user", "content": "hello"}]
        client.chat.completions.create(model="broken", messages=ask, extra_headers={"X-Conversation-Id": "r"})
    assert failed.value.response.headers["x-should-retry"] == "false"
    thread = failed.value.response.headers["x-podium-thread-id"]
    runs = httpx.get(f"{url}/threads/{thread}/runs").json()
    assert [r["status"] for r in runs] == ["error"]


def test_a_client_that_disconnects_mid_stream_leaves_a_run_that_completes(url: str) -> None:
    body = {"model": "slow", "messages": [{"role": "user", "content": "what is the answer?"}], "stream": True}
    with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, headers={"X-Conversation-Id": "cut"}) as r:
        thread = r.headers["x-podium-thread-id"]
        first = next(r.iter_lines())
        assert first.startswith("data: ") and '"role":"assistant"' in first
    deadline = time.monotonic() + 30
    while True:
        runs = httpx.get(f"{url}/threads/{thread}/runs").json()
        if runs and runs[0]["status"] == "success":
            break
        assert time.monotonic() < deadline, runs
        time.sleep(0.1)
    state = httpx.get(f"{url}/threads/{thread}/state").json()
    assert state["values"]["messages"][-1]["content"] == "Found answer=42"
    # the conversation goes on from there
    with OpenAI(base_url=f"{url}/v1", api_key="dev", max_retries=0) as client:
        again = client.chat.completions.create(
            model="slow", messages=[{"role": "user", "content": "again?"}], extra_headers={"X-Conversation-Id": "cut"}
        )
    assert again.choices[0].message.content == "Found answer=42"
