"""Bodies that are not JSON a store could keep get an answer that says what is wrong, on every surface: the thread
API, ``/v1``, the plan routes (a 422 in the shape of the server's other validation errors), ``/mcp`` and A2A (a
JSON-RPC parse error, -32700)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.server.conftest import example_apps, live_server

from podium import MemoryStore

JSON = {"Content-Type": "application/json"}
NOT_UTF8 = b'{"assistant_id":"trip","input":{"messages":[{"role":"user","content":"\xff\xfe"}]}}'
DEEP = b"[" * 100_000 + b"]" * 100_000
LONG_NUMBER = b'{"assistant_id":"trip","metadata":{"n":' + b"9" * 5000 + b"}}"
PROBLEMS = [
    (NOT_UTF8, f"the body is not valid UTF-8 (byte {NOT_UTF8.index(0xFF)})"),
    (DEEP, "the JSON nests deeper than 32 levels"),
    (LONG_NUMBER, "the JSON holds a number longer than 4300 digits"),
]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    from tests.server.plan_apps import small

    with live_server({**example_apps("trip"), small.name: small}, MemoryStore()) as base:  # (plan routes need one)
        yield base


@pytest.fixture(scope="module")
def thread(url: str) -> str:
    return str(httpx.post(f"{url}/threads", json={}).json()["thread_id"])


@pytest.mark.parametrize(("body", "problem"), PROBLEMS)
@pytest.mark.parametrize("route", ["/threads/{thread}/runs/wait", "/threads", "/v1/chat/completions", "/input_task"])
def test_an_unreadable_body_is_a_422_saying_why(url: str, thread: str, route: str, body: bytes, problem: str) -> None:
    response = httpx.post(url + route.format(thread=thread), content=body, headers=JSON)
    assert response.status_code == 422, response.text
    assert response.json()["detail"] == [{"loc": ["body"], "msg": problem, "type": "json_invalid"}]
    if route.startswith("/v1"):  # what OpenAI clients read
        assert response.json()["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize(("body", "problem"), [*PROBLEMS, (b"garbage", "the body is not JSON: Expecting value")])
def test_mcp_and_a2a_answer_an_unreadable_body_with_a_parse_error(url: str, body: bytes, problem: str) -> None:
    mcp = httpx.post(f"{url}/mcp", content=body, headers={**JSON, "Accept": "application/json, text/event-stream"})
    a2a = httpx.post(f"{url}/a2a/trip", content=body, headers=JSON)
    assert mcp.status_code == 400
    for error in (mcp.json()["error"], a2a.json()["error"]):
        assert error["code"] == -32700 and error["message"].startswith(f"Parse error: {problem}")


def test_mcp_still_reads_a_good_body(url: str) -> None:
    hello: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    answer = httpx.post(f"{url}/mcp", json=hello, headers={"Accept": "application/json, text/event-stream"})
    assert answer.status_code == 200 and "serverInfo" in answer.text


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_refused_not_stored_as_null(url: str, thread: str, number: bytes) -> None:
    body = b'{"metadata":{"n":' + number + b"}}"
    patched = httpx.patch(f"{url}/threads/{thread}", content=body, headers=JSON)
    assert patched.status_code == 422
    assert "NaN or Infinity, which are not JSON numbers" in patched.json()["detail"][0]["msg"]
    assert "n" not in httpx.get(f"{url}/threads/{thread}").json()["metadata"]


def test_a_conversation_id_has_one_length_limit_wherever_it_comes_from(url: str) -> None:
    chat = {"model": "trip", "messages": [{"role": "user", "content": "hi"}]}
    in_header = httpx.post(f"{url}/v1/chat/completions", json=chat, headers={"X-Conversation-Id": "c" * 201})
    in_metadata = httpx.post(f"{url}/v1/chat/completions", json={**chat, "metadata": {"conversation_id": "c" * 201}})
    assert in_header.status_code == in_metadata.status_code == 422
    assert "longer than 200 characters" in in_metadata.json()["detail"][0]["msg"]


@pytest.mark.parametrize("route", ["/a2a/trip", "/threads", "/v1/chat/completions", "/mcp"])
def test_a_chunked_body_over_the_limit_is_a_quiet_413_on_every_route(url: str, route: str) -> None:
    """Refused as it arrives (it has no Content-Length): answered 413, and nothing is logged as a server error."""
    import logging

    errors: list[logging.LogRecord] = []
    catch = logging.Handler(logging.ERROR)
    catch.emit = errors.append  # type: ignore[method-assign]
    loggers = [logging.getLogger(name) for name in ("", "uvicorn", "uvicorn.error")]
    for logger in loggers:
        logger.addHandler(catch)

    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b" " * 65_536  # 2.5 MB, over the 1 MB limit

    try:
        for _ in range(3):
            headers = {**JSON, "Accept": "application/json, text/event-stream"}
            answer = httpx.post(f"{url}{route}", content=chunks(), headers=headers)
            assert answer.status_code == 413 and "larger than" in answer.json()["detail"]
    finally:
        for logger in loggers:
            logger.removeHandler(catch)
    assert [r.getMessage() for r in errors] == []
