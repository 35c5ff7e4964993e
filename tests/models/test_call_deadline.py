"""The model's timeout (``PODIUM_TIMEOUT``) is one deadline for the whole call: every attempt, every wait before a
retry (a server's ``Retry-After`` too), and a streamed reply from opening it to its end."""

from __future__ import annotations

import asyncio
import time

import pytest
from tests.models.openai_standin import StandIn, completion, error, stream

from podium import HumanMessage, ModelError, ModelHTTPError
from podium.models import ModelRequest
from podium.models.openai import OpenAIModel


def ask() -> ModelRequest:
    return ModelRequest(messages=[HumanMessage(content="Hello?")])


async def test_retries_of_a_hung_server_share_one_deadline(standin: StandIn) -> None:
    standin.script(*[completion("too late", delay=30)] * 4)
    model = OpenAIModel("m", base_url=standin.base_url, timeout=1, max_retries=3)
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"did not answer within its timeout of 1 s \(PODIUM_TIMEOUT"):
        await asyncio.wait_for(model.reply(ask()), 10)
    elapsed = time.monotonic() - started
    await model.aclose()
    assert elapsed < 2  # not one timeout per attempt (4 s and more, with the back-off)
    assert len(standin.requests) == 1  # the first attempt took the whole deadline


async def test_opening_a_stream_is_within_the_deadline(standin: StandIn) -> None:
    standin.script(*[stream(["late"], delay=30)] * 3)
    model = OpenAIModel("m", base_url=standin.base_url, timeout=1, max_retries=2)
    started = time.monotonic()
    with pytest.raises(ModelError, match="PODIUM_TIMEOUT"):
        await asyncio.wait_for(_drain(model), 10)
    elapsed = time.monotonic() - started
    await model.aclose()
    assert elapsed < 2


async def test_a_retry_after_past_the_deadline_fails_at_once_naming_the_timeout(standin: StandIn) -> None:
    standin.script(error(429, "slow down", retry_after="100"), completion("never asked for"))
    model = OpenAIModel("m", base_url=standin.base_url, timeout=5, max_retries=2)
    started = time.monotonic()
    with pytest.raises(ModelHTTPError) as caught:
        await asyncio.wait_for(model.reply(ask()), 10)
    elapsed = time.monotonic() - started
    await model.aclose()
    assert elapsed < 1.5
    assert caught.value.status_code == 429
    assert str(caught.value) == (
        "model endpoint answered 429: slow down; it asked to wait 100 s before trying again (Retry-After), past the "
        "call's timeout of 5 s (PODIUM_TIMEOUT), so model 'm' gave up at once"
    )
    assert len(standin.requests) == 1 and standin.pending == 1


async def test_a_retry_within_the_deadline_waits_and_succeeds(standin: StandIn) -> None:
    standin.script(error(503, "busy", retry_after="0.3"), stream(["fine"]))
    model = OpenAIModel("m", base_url=standin.base_url, timeout=5, max_retries=1)
    started = time.monotonic()
    text = await _drain(model)
    elapsed = time.monotonic() - started
    await model.aclose()
    assert text == "fine"
    assert 0.3 <= elapsed < 3
    assert [r.headers["x-stainless-retry-count"] for r in standin.requests] == ["0", "1"]


async def _drain(model: OpenAIModel) -> str:
    text = ""
    async for event in model.stream(ask()):
        if event.kind == "text":
            text += event.text
    return text
