"""A token limit holds against a server that reports no usage: the call is counted at an estimate (four characters a
token), with a warning once per model."""

from __future__ import annotations

import logging

import pytest
from tests.models.openai_standin import StandIn, stream

from podium import Event, Limits, MemoryStore, ReactAgent, Runtime
from podium.models.openai import OpenAIModel


def listen(event: Event) -> None:
    """A listener: the runtime then streams the replies."""


def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return f"{city}: sunny, 24 C, light wind from the north-west, no rain expected before the evening"


async def test_a_token_limit_holds_when_the_stream_reports_no_usage(
    standin: StandIn, caplog: pytest.LogCaptureFixture
) -> None:
    call = ("call_1", "get_weather", '{"city": "Lisbon"}')
    standin.script(*[stream([], [call], usage=None)] * 4)
    model = OpenAIModel("unmetered-1", base_url=standin.base_url)
    agent = ReactAgent("a", model, [get_weather])
    runtime = Runtime(MemoryStore())
    with caplog.at_level(logging.WARNING, logger="podium.runtime"):
        first = await runtime.send(agent, "Weather?", thread_id="t1", limits=Limits(max_tokens=60), on_event=listen)
        second = await runtime.send(agent, "Weather?", thread_id="t2", limits=Limits(max_tokens=60), on_event=listen)
    await model.aclose()
    assert first.status == second.status == "limit_exceeded" and first.limit == "tokens"
    assert 60 <= first.usage.total_tokens < 200 and first.usage.requests == 2
    warnings = [r.getMessage() for r in caplog.records if "reports no token usage" in r.getMessage()]
    assert warnings == [
        "model 'unmetered-1' reports no token usage; token limits count it at an estimate of four characters a token"
    ]


async def test_without_a_token_limit_no_estimate_is_made(standin: StandIn) -> None:
    standin.script(stream(["Sunny."], usage=None))
    model = OpenAIModel("unmetered-2", base_url=standin.base_url)
    result = await Runtime(MemoryStore()).send(ReactAgent("a", model), "Weather?", thread_id="t", on_event=listen)
    await model.aclose()
    assert result.status == "completed" and result.usage.total_tokens == 0 and result.usage.requests == 1
