"""How the adapter reads the ``openai`` client's failures: retry or not, how long to wait, and the error it raises
(built from the client's own exception types over real ``httpx`` responses)."""

from __future__ import annotations

import email.utils
import time

import httpx
import openai
import pytest

from podium.errors import ModelError, ModelHTTPError
from podium.models._openai_failures import describe, exposes, retry_after, retryable, server_message

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def status_error(status: int, headers: dict[str, str] | None = None, body: object = None) -> openai.APIStatusError:
    response = httpx.Response(status, headers=headers or {}, request=REQUEST)
    return openai.APIStatusError(f"Error code: {status}", response=response, body=body)


@pytest.mark.parametrize(
    ("status", "headers", "again"),
    [
        (429, {}, True),
        (503, {}, True),
        (408, {}, True),
        (400, {}, False),
        (401, {}, False),
        (500, {"x-should-retry": "false"}, False),  # the server's word comes first
        (400, {"x-should-retry": "true"}, True),
    ],
)
def test_what_is_tried_again(status: int, headers: dict[str, str], again: bool) -> None:
    assert retryable(status_error(status, headers)) is again


def test_a_connection_failure_is_tried_again_and_other_errors_are_not() -> None:
    assert retryable(openai.APIConnectionError(request=REQUEST))
    assert not retryable(ValueError("no"))


def test_the_wait_the_server_asks_for() -> None:
    assert retry_after(status_error(429, {"retry-after-ms": "1500"})) == 1.5
    assert retry_after(status_error(429, {"retry-after": "2"})) == 2.0
    assert retry_after(status_error(429, {"retry-after": "0"})) is None  # no wait named
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    waited = retry_after(status_error(429, {"retry-after": later}))
    assert waited is not None and 25 < waited <= 30
    assert retry_after(status_error(429, {"retry-after": "soon"})) is None
    assert retry_after(status_error(429)) is None
    assert retry_after(ValueError("not a status error")) is None


def test_the_error_raised_for_each_failure_and_its_text_redacted() -> None:
    keys = ("sk-secret-123",)
    echoed = status_error(401, body={"message": "bad key sk-secret-123"})
    failed = describe(echoed, "m", "http://x/v1", timeout=5, mid_reply=False, keys=keys)
    assert isinstance(failed, ModelHTTPError) and "sk-secret-123" not in str(failed) and failed.status_code == 401
    assert exposes(echoed, keys) and not exposes(status_error(401, body={"message": "bad key"}), keys)
    late = describe(openai.APITimeoutError(request=REQUEST), "m", "http://x/v1", timeout=5, mid_reply=False, keys=())
    assert isinstance(late, ModelError) and "within its timeout of 5 s" in str(late)
    refused = openai.APIConnectionError(request=REQUEST)
    refused.__cause__ = ConnectionRefusedError("refused")
    assert "cannot reach the endpoint of model 'm' (http://x/v1)" in str(
        describe(refused, "m", "http://x/v1", timeout=5, mid_reply=False, keys=())
    )
    broken = describe(refused, "m", "http://x/v1", timeout=5, mid_reply=True, keys=())
    assert "broke off before the reply was complete" in str(broken)
    other = describe(openai.OpenAIError("an error event"), "m", "u", timeout=5, mid_reply=True, keys=())
    assert str(other) == "model 'm' failed: an error event"
    mine = ModelError("already ours")
    assert describe(mine, "m", "u", timeout=5, mid_reply=False, keys=()) is mine
    plain = ValueError("not the client's")
    assert describe(plain, "m", "u", timeout=5, mid_reply=False, keys=()) is plain


def test_a_gateway_page_is_quoted_with_its_kind_and_an_excerpt() -> None:
    page = "<html><body><h1>502 Bad Gateway</h1>" + "x" * 500 + "</body></html>"
    said = server_message(status_error(502, {"content-type": "text/html; charset=utf-8"}, body=page))
    assert said.startswith("not an API error but a page (text/html)") and "502 Bad Gateway" in said
    assert said.endswith("...'")
    assert server_message(status_error(500, body={"message": "overloaded"})) == "overloaded"
    assert server_message(status_error(500)) == "Error code: 500"
