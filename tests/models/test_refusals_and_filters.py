"""A refusal is shown as the reply, and a reply the provider's content filter stopped is an error: neither ends as a
silent empty answer, nor costs a second model call."""

from __future__ import annotations

import pytest
from tests.models.openai_standin import StandIn, completion, stream

from podium import AIMessage, HumanMessage, MemoryStore, ReactAgent, Runtime
from podium.events import Event, TokenDelta
from podium.models import ModelRequest
from podium.models.openai import OpenAIModel

REFUSAL = "I'm sorry, I can't help with that request."


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_refusal_is_the_answer(standin: StandIn, streamed: bool) -> None:
    standin.script(stream(refusal=REFUSAL) if streamed else completion(refusal=REFUSAL))
    model = OpenAIModel("m", base_url=standin.base_url)
    events: list[Event] = []
    on_event = events.append if streamed else None
    result = await Runtime(MemoryStore()).send(ReactAgent("a", model), "Do it", thread_id="t", on_event=on_event)
    await model.aclose()
    assert result.status == "completed" and result.output == REFUSAL
    assert len(standin.requests) == 1  # no nudge after an "empty" reply
    if streamed:
        assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == REFUSAL


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_content_filter_stop_is_an_error_not_an_empty_answer(standin: StandIn, streamed: bool) -> None:
    behaviour = stream if streamed else completion
    standin.script(behaviour(finish_reason="content_filter"), behaviour("never asked for"))
    model = OpenAIModel("m", base_url=standin.base_url)
    events: list[Event] = []
    on_event = events.append if streamed else None
    result = await Runtime(MemoryStore()).send(ReactAgent("a", model), "Do it", thread_id="t", on_event=on_event)
    assert result.status == "failed"
    assert result.reason == (
        "ModelError: the provider's content filter stopped the reply of model 'm' (finish_reason 'content_filter'); "
        "rephrase the request, or review the filter settings of the deployment"
    )
    assert len(standin.requests) == 1 and standin.pending == 1  # no second, paid, call
    await model.aclose()


async def test_text_beside_a_refusal_is_kept(standin: StandIn) -> None:
    standin.script(completion("Here is what I can say.", refusal=REFUSAL))
    model = OpenAIModel("m", base_url=standin.base_url)
    response = await model.reply(ModelRequest(messages=[HumanMessage(content="q")]))
    await model.aclose()
    assert response.message == AIMessage(content="Here is what I can say.")
