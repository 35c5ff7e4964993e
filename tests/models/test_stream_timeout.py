"""Issue 17, item 3: PODIUM_TIMEOUT bounds a streamed reply's total time, not the gap between two chunks."""

from __future__ import annotations

import time

import pytest
from tests.models.openai_standin import StandIn, stream

from podium import HumanMessage, ModelError
from podium.models import ModelRequest, TextDelta
from podium.models.openai import OpenAIModel
from podium.settings import Settings


async def test_a_steady_trickle_cannot_outlast_the_timeout(standin: StandIn) -> None:
    # twelve chunks 0.25 s apart: every gap is far below the timeout, the whole is three times it
    standin.script(stream([f"word{n} " for n in range(12)], gap=0.25))
    settings = Settings.load(env={"PODIUM_MODEL": "slow", "PODIUM_BASE_URL": standin.base_url, "PODIUM_TIMEOUT": "1"})
    model = settings.model_or_none()
    assert isinstance(model, OpenAIModel)
    received: list[str] = []
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"did not finish its reply within 1 s") as caught:
        async for event in model.stream(ModelRequest(messages=[HumanMessage(content="talk")])):
            if isinstance(event, TextDelta):
                received.append(event.text)
    elapsed = time.monotonic() - started
    await model.aclose()
    assert 0 < len(received) < 12  # it was streaming, and was stopped part way
    assert elapsed < 2.5  # stopped near the timeout, not after the whole three seconds
    assert "PODIUM_TIMEOUT" in str(caught.value)


async def test_a_slow_stream_within_the_timeout_completes(standin: StandIn) -> None:
    standin.script(stream(["a", "b", "c"], gap=0.05))
    model = OpenAIModel("m", base_url=standin.base_url, timeout=5)
    events = [e async for e in model.stream(ModelRequest(messages=[HumanMessage(content="x")]))]
    await model.aclose()
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "abc"
