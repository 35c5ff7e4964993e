"""Streamed tool calls are assembled whole however a server splits them: pieces without ``index`` continue the
current call (a new id starts the next one), and a name repeated in every piece is not written twice."""

from __future__ import annotations

import pytest
from tests.models.openai_standin import StandIn, stream

from podium import HumanMessage, MemoryStore, ReactAgent, Runtime, ToolCall, ToolSpec
from podium.models import Done, ModelRequest, ToolCallDelta
from podium.models.openai import OpenAIModel

WEATHER = ToolSpec(name="get_weather", description="The weather of a city.", parameters={"type": "object"})
CLOCK = ToolSpec(name="get_time", description="The time in a zone.", parameters={"type": "object"})
CALLS = [("call_w", "get_weather", '{"city": "Lisbon"}'), ("call_t", "get_time", '{"tz": "Europe/Lisbon"}')]


@pytest.mark.parametrize("calls_as", ["indexed", "no_index", "name_every_piece"])
async def test_split_calls_are_assembled_whole(standin: StandIn, calls_as: str) -> None:
    standin.script(stream([], CALLS, argument_piece=3, calls_as=calls_as))
    model = OpenAIModel("m", base_url=standin.base_url)
    request = ModelRequest(messages=[HumanMessage(content="Lisbon?")], tools=[WEATHER, CLOCK])
    events = [e async for e in model.stream(request)]
    await model.aclose()
    done = events[-1]
    assert isinstance(done, Done)
    assert done.response.message.tool_calls == [ToolCall(id=i, name=n, arguments=a) for i, n, a in CALLS]
    # the deltas add up to the same calls: each id and name once, the arguments piece by piece
    assembled: dict[int, list[str]] = {}
    for piece in (e for e in events if isinstance(e, ToolCallDelta)):
        entry = assembled.setdefault(piece.index, ["", "", ""])
        entry[0] += piece.id or ""
        entry[1] += piece.name or ""
        entry[2] += piece.arguments
    assert [tuple(c) for _, c in sorted(assembled.items())] == CALLS


async def test_a_call_streamed_without_index_runs_once(standin: StandIn) -> None:
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """The weather of a city.

        Args:
            city: the city.
        """
        ran.append(city)
        return "sunny"

    standin.script(
        stream([], [("call_1", "get_weather", '{"city": "Lisbon"}')], argument_piece=2, calls_as="no_index"),
        stream(["Sunny."]),
    )
    model = OpenAIModel("m", base_url=standin.base_url)
    agent = ReactAgent("a", model, [get_weather])
    result = await Runtime(MemoryStore()).send(agent, "Lisbon?", thread_id="t", on_event=lambda e: None)
    await model.aclose()
    assert result.status == "completed" and result.output == "Sunny."
    assert ran == ["Lisbon"]
