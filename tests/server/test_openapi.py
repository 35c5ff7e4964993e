"""``/openapi.json`` describes what the server sends: its own error bodies, the statuses each route answers, the
shapes of its answers; schemathesis, driven from the schema against a live server, finds nothing it does not say."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import live_server

from podium import AIMessage, ReactAgent
from podium.app import App
from podium.store.memory import MemoryStore
from podium.testing import FunctionModel


def _helper(description: str = "Adds numbers for you.", welcome: str = "Hello from calc") -> App:
    def build(model: Any) -> ReactAgent:
        return ReactAgent("calc", model, [], description=description)

    reply = FunctionModel(lambda messages, request: AIMessage(content="four"))
    return App(name="calc", build=build, offline_fallback=reply, welcome=welcome)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_server({"calc": _helper()}, MemoryStore()) as base:
        yield base


@pytest.fixture(scope="module")
def schema(url: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(f"{url}/openapi.json").json()
    return found


def _body(schema: dict[str, Any], path: str, method: str, status: str) -> str:
    content = schema["paths"][path][method]["responses"][status]["content"]["application/json"]
    return str(content["schema"].get("$ref", content["schema"])).rsplit("/", 1)[-1]


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/threads", "post", {"401", "403", "409", "413", "415", "422"}),
        ("/threads/{thread_id}", "get", {"401", "403", "404"}),
        ("/threads/{thread_id}", "delete", {"401", "403", "404"}),
        ("/threads/{thread_id}/runs", "post", {"401", "403", "404", "409", "413", "415", "422"}),
        ("/threads/{thread_id}/runs/{run_id}/cancel", "post", {"202", "404"}),
        ("/assistants/{assistant_id}", "get", {"404"}),
        ("/assistants/search", "post", {"413", "415", "422"}),
        ("/v1/chat/completions", "post", {"401", "404", "409", "413", "415", "422"}),
    ],
)
def test_each_route_declares_the_errors_it_gives_with_their_bodies(
    schema: dict[str, Any], path: str, method: str, statuses: set[str]
) -> None:
    declared = schema["paths"][path][method]["responses"]
    assert statuses <= set(declared), (path, method, sorted(declared))
    for status in statuses - {"202"}:
        body = _body(schema, path, method, status)
        if path.startswith("/v1"):
            assert body == "OpenAIErrorBody"
        else:
            assert body == ("ValidationErrorBody" if status == "422" else "ErrorBody")
    error = schema["components"]["schemas"]["ErrorBody"]
    assert error["properties"]["detail"]["type"] == "string" and error["required"] == ["detail"]


@pytest.mark.parametrize(
    ("path", "method", "model"),
    [
        ("/threads", "post", "Thread"),
        ("/threads/{thread_id}", "get", "Thread"),
        ("/threads/{thread_id}/state", "get", "ThreadState"),
        ("/threads/{thread_id}/runs/{run_id}", "get", "ThreadRun"),
        ("/threads/{thread_id}/runs", "post", "ThreadRun"),
        ("/assistants/{assistant_id}", "get", "Assistant"),
        ("/v1/models", "get", "ModelList"),
    ],
)
def test_answers_are_typed(schema: dict[str, Any], path: str, method: str, model: str) -> None:
    assert _body(schema, path, method, "200") == model


def test_typed_answers_still_send_what_they_sent(url: str) -> None:
    made = httpx.post(f"{url}/threads", json={"metadata": {"k": 1}}).json()
    assert list(made) == ["thread_id", "created_at", "updated_at", "metadata", "status", "values", "interrupts"]
    thread = made["thread_id"]
    done = httpx.post(f"{url}/threads/{thread}/runs/wait", json={"assistant_id": "calc", "input": {"messages": []}})
    assert done.status_code in (200, 422)
    events = httpx.get(f"{url}/threads/{thread}/events").json()
    for event in events:
        assert list(event)[:6] == ["kind", "run_id", "path", "seq", "key", "ts"]


@pytest.mark.parametrize("value", [False, True, "1", 1.5, None, [1]])
@pytest.mark.parametrize("path", ["/assistants/search", "/assistants/count", "/threads/search", "/threads/count"])
@pytest.mark.parametrize("field", ["offset", "limit"])
def test_paging_numbers_must_be_integers(url: str, path: str, field: str, value: Any) -> None:
    refused = httpx.post(f"{url}{path}", json={field: value})
    assert refused.status_code == 422, refused.text
    assert refused.json()["detail"][0]["loc"] == ["body", field]


def test_a_whole_float_is_an_integer(url: str) -> None:
    assert httpx.post(f"{url}/assistants/search", json={"limit": 2.0, "offset": 0.0}).status_code == 200


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/threads/count", "POST"),
        ("/threads/search", "POST"),
        ("/threads/abc", "DELETE, GET, PATCH"),
        ("/threads/abc/history", "GET, POST"),
        ("/threads/abc/runs", "GET, POST"),
    ],
)
def test_a_method_not_allowed_names_every_method_of_the_path(url: str, path: str, allowed: str) -> None:
    answer = httpx.request("OPTIONS", f"{url}{path}")
    assert answer.status_code == 405 and answer.headers["allow"] == allowed


def test_plan_routes_are_served_only_with_a_plan_app(url: str, schema: dict[str, Any]) -> None:
    listed = [p for p in schema["paths"] if p.startswith(("/input_task", "/plans", "/api/", "/agent-tools"))]
    assert listed == []
    for path in ("/plans", "/api/plans", "/agent-tools"):
        missing = httpx.get(f"{url}{path}")
        assert missing.status_code == 404 and "no plan service app" in missing.json()["detail"]
    from tests.server import plan_apps

    with live_server({"plans": plan_apps.small}, MemoryStore()) as planned:
        paths = httpx.get(f"{planned}/openapi.json").json()["paths"]
        assert {"/input_task", "/plans", "/api/plans"} <= set(paths)
        assert httpx.get(f"{planned}/plans").json() == []


def test_the_schema_says_what_it_leaves_out(schema: dict[str, Any]) -> None:
    assert "/mcp" in schema["info"]["description"] and "A2A" in schema["info"]["description"]


@pytest.mark.slow
def test_schemathesis_finds_nothing_the_schema_does_not_say(url: str, tmp_path: Path) -> None:
    """Every check but one: a request the schema allows may still be refused (422) for a rule no JSON Schema says,
    such as a run taking either ``input`` or ``command``."""
    command = [
        *(sys.executable, "-m", "schemathesis.cli", "run", f"{url}/openapi.json"),
        *("--include-path-regex", "^/(threads|assistants|v1|runs)"),
        *("--exclude-path-regex", "stream|join|wait"),
        *("--checks", "all", "--exclude-checks", "positive_data_acceptance"),
        *("--phases", "coverage,fuzzing", "--max-examples", "3", "--workers", "1"),
        *("--seed", "156889797051765986961042864618474905526", "--no-color"),
    ]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=240, check=False, cwd=tmp_path)  # (its cache)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]


@pytest.mark.parametrize(
    ("description", "welcome", "shown"),
    [
        ("Adds numbers for you.", "Hello from calc", "Adds numbers for you."),
        ("Adds numbers for you.", "", "Adds numbers for you."),
        ("", "Hello from calc", "Hello from calc"),
        ("   ", "Hello from calc", "Hello from calc"),
        ("", "", None),
    ],
)
def test_an_assistant_is_described_by_its_agent_else_its_welcome(
    description: str, welcome: str, shown: str | None
) -> None:
    with live_server({"calc": _helper(description, welcome)}, MemoryStore()) as base:
        assert httpx.get(f"{base}/assistants/calc").json()["description"] == shown
        card = httpx.get(f"{base}/a2a/calc/.well-known/agent-card.json").json()
        assert card["description"] == (shown or "The Podium app calc.")
