"""The one codec: every message and event variant round-trips through its JSON form and a stored row."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

import podium.events
from podium import (
    AIMessage,
    Artifact,
    ErrorEvent,
    Event,
    Expectation,
    HumanMessage,
    Interrupt,
    InterruptAnswered,
    InterruptRaised,
    InvalidData,
    MessageAdded,
    RunEnded,
    RunStarted,
    SideChannel,
    StepRecorded,
    SystemMessage,
    TaskStackChanged,
    TokenDelta,
    ToolCall,
    ToolMessage,
    ToolStarted,
    Usage,
    event_from_dict,
    event_to_dict,
    message_from_dict,
    message_to_dict,
)
from podium.events import EVENT_TYPES
from podium.store._rows import event_from_row, event_row, message_from_row

COMMON: dict[str, Any] = {"run_id": "r1", "path": ("app", "lookup"), "seq": 7, "key": "app/lookup#2", "ts": 12.5}

EVENTS: list[Event] = [
    RunStarted(input=HumanMessage(content="hi", name="ann"), attempt=2, **COMMON),
    RunEnded(status="failed", reason="boom", output=None, **COMMON),
    MessageAdded(
        message=AIMessage(content="", tool_calls=[ToolCall(id="c1", name="f", arguments='{"a":1}')], name="app"),
        namespace="app",
        usage=Usage(10, 3, 1),
        **COMMON,
    ),
    MessageAdded(message=ToolMessage(content="x", tool_call_id="c1", name="f", is_error=True, artifact=[1]), **COMMON),
    MessageAdded(message=SystemMessage(content="rules", metadata={"note": 1}), **COMMON),
    StepRecorded(value={"a": [1, 2]}, **COMMON),
    TokenDelta(text="to", **COMMON),
    ToolStarted(tool_call_id="c1", name="f", **COMMON),
    SideChannel(text="why", channel="rationale", **COMMON),
    Artifact(content={"t": 1}, title="table", **COMMON),
    InterruptRaised(
        interrupt=Interrupt(
            id="q1", path=("app",), prompt="Which?", expectation=Expectation(type="choice", options=["a", "b"])
        ),
        **COMMON,
    ),
    InterruptAnswered(answer="a", **COMMON),
    TaskStackChanged(stack=[{"tool": "x"}], **COMMON),
    ErrorEvent(error="ValueError", message="bad", **COMMON),
]


def test_every_event_type_is_a_variant_of_the_codec() -> None:
    defined = {
        cls
        for _, cls in inspect.getmembers(podium.events, inspect.isclass)
        if issubclass(cls, Event) and cls is not Event
    }
    assert defined == set(EVENT_TYPES)
    assert {type(e) for e in EVENTS} == set(EVENT_TYPES)


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_an_event_round_trips_through_json_and_a_row(event: Event) -> None:
    data = json.loads(json.dumps(event_to_dict(event)))
    assert data["kind"] == event.kind
    assert event_from_dict(data) == event
    row = event_row("t1", event)
    assert row[:5] == ("t1", 7, "r1", event.kind, "app/lookup#2")
    assert event_from_row(*row[1:]) == event


def test_defaults_are_left_out_but_tags_kept() -> None:
    event = MessageAdded(message=HumanMessage(content="hi"), run_id="r", path=("app",), key="app#1", ts=1.0)
    assert event_to_dict(event, compact=True) == {
        "kind": "message",
        "run_id": "r",
        "path": ["app"],
        "key": "app#1",
        "ts": 1.0,
        "message": {"kind": "human", "content": "hi"},
    }
    assert event_to_dict(event)["message"] == {"kind": "human", "content": "hi", "name": None, "metadata": {}}
    assert event_to_dict(event)["seq"] == 0 and event_to_dict(event)["usage"] is None
    assert event_row("t", event)[-1] == '{"message":{"kind":"human","content":"hi"},"t":1.0}'
    assert message_from_row(event_row("t", event)[-1]) == HumanMessage(content="hi")
    assert message_to_dict(AIMessage(), compact=True) == {"kind": "ai"}


def test_values_json_cannot_hold_are_written_as_text() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque"

    message = ToolMessage(content="x", tool_call_id="c", artifact=Opaque())
    assert message_to_dict(message)["artifact"] == "opaque"


def test_bad_data_is_invalid_data_naming_what_is_wrong() -> None:
    with pytest.raises(InvalidData, match="unknown event kind 'nope'"):
        event_from_dict({"kind": "nope"})
    with pytest.raises(InvalidData, match=r"not an event: token\.text: Field required"):
        event_from_dict({"kind": "token"})
    with pytest.raises(InvalidData, match=r"not a message: .*discriminator 'kind'"):
        message_from_dict({"content": "no kind"})
    with pytest.raises(InvalidData, match=r"not a Usage: requests: Input should be a valid integer"):
        Usage.from_dict({"requests": "many"})
    assert Usage.from_dict({"input_tokens": 2}) == Usage(2, 0, 0)


def test_a_tagged_type_without_a_kind_field_is_refused_when_its_codec_is_built() -> None:
    from dataclasses import dataclass

    from podium._codec import Tagged, adapter

    @dataclass
    class Untagged(Tagged):
        text: str = ""

    with pytest.raises(TypeError, match="Untagged: a tagged value must be a dataclass with a 'kind' field"):
        adapter(Untagged)
