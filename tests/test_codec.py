"""The one codec: every message and event variant round-trips through its JSON form and a stored row."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import inspect
import json
import uuid
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
    Message,
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


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int


CONVERTED: list[tuple[Any, Any]] = [
    ({1: "x"}, {"1": "x"}),
    ({"a": {2: [3]}}, {"a": {"2": [3]}}),
    ((1, 2), [1, 2]),
    ({3}, [3]),
    (frozenset({"a"}), ["a"]),
    (datetime.datetime(2024, 1, 2, 3, 4), "2024-01-02T03:04:00"),
    (datetime.date(2024, 1, 2), "2024-01-02"),
    (float("nan"), None),
    (float("-inf"), None),
    (b"ab", "ab"),
    (decimal.Decimal("1.5"), "1.5"),
    (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
    (Color.RED, "red"),
    (Point(1), {"x": 1}),
]


def _carrying(value: Any) -> list[tuple[Message | Event, Any]]:
    """``value`` in each free-form field of a message or an event, and how to read it back."""
    return [
        (HumanMessage(content="m", metadata={"k": value}), lambda d: d["metadata"]["k"]),
        (AIMessage(content="m", metadata={"k": value}), lambda d: d["metadata"]["k"]),
        (ToolMessage(content="m", tool_call_id="c", value=value), lambda d: d["value"]),
        (ToolMessage(content="m", tool_call_id="c", artifact=value), lambda d: d["artifact"]),
        (StepRecorded(value=value, **COMMON), lambda d: d["value"]),
        (Artifact(content=value, **COMMON), lambda d: d["content"]),
        (
            MessageAdded(message=SystemMessage(content="s", metadata={"k": value}), **COMMON),
            lambda d: d["message"]["metadata"]["k"],
        ),
    ]


@pytest.mark.parametrize(("value", "written"), CONVERTED)
def test_free_form_values_json_cannot_hold_are_converted_by_one_rule_without_a_warning(
    value: Any, written: Any
) -> None:
    for item, read in _carrying(value):  # warnings are errors in the tests: none may be given
        for compact in (False, True):
            data = (
                message_to_dict(item, compact=compact)
                if not isinstance(item, Event)
                else event_to_dict(item, compact=compact)
            )
            assert read(data) == written
            back = message_from_dict(data) if not isinstance(item, Event) else event_from_dict(data)
            assert read(message_to_dict(back) if not isinstance(item, Event) else event_to_dict(back)) == written
        if isinstance(item, Event):
            assert read(json.loads(event_row("t", item)[-1])) == written  # a stored row: the same rule


def test_metadata_keys_that_are_not_text_are_written_as_text_at_the_top_too() -> None:
    assert message_to_dict(HumanMessage(content="m", metadata={1: "x", 2.5: "y"}))["metadata"] == {"1": "x", "2.5": "y"}  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("item", "says"),
    [
        (HumanMessage(content=5), r"HumanMessage cannot be written as JSON: its human\.content holds int 5"),  # type: ignore[arg-type]
        (SystemMessage(content=["a"]), r"its system\.content holds list \['a'\]"),  # type: ignore[arg-type]
        (ToolMessage(content="x", tool_call_id=7), r"its tool\.tool_call_id holds int 7"),  # type: ignore[arg-type]
        (AIMessage(content="x", tool_calls=["c1"]), r"its ai\.tool_calls\.0 holds str 'c1'"),  # type: ignore[list-item]
        (
            MessageAdded(message=HumanMessage(content=1.5), **COMMON),
            r"MessageAdded cannot be written as JSON: its message\.message\.HumanMessage\.content holds float 1\.5",
        ),  # type: ignore[arg-type]
        (SideChannel(text=3, **COMMON), r"its side\.text holds int 3"),  # type: ignore[arg-type]
    ],
)
def test_a_fixed_field_holding_another_type_is_refused_naming_the_field(item: Any, says: str) -> None:
    with pytest.raises(InvalidData, match=says):
        message_to_dict(item) if not isinstance(item, Event) else event_to_dict(item)
    if isinstance(item, Event):
        with pytest.raises(InvalidData, match=says):  # never a stored row that cannot be read back
            event_row("t", item)


@pytest.mark.parametrize("field", ["metadata", "value", "artifact"])
def test_bytes_that_are_not_utf8_are_refused_naming_where_they_are(field: str) -> None:
    value = {"inner": [b"\xff\xfe"]}
    message = ToolMessage(content="x", tool_call_id="c", **{field: value})
    with pytest.raises(InvalidData, match=rf"at ToolMessage\.{field}\.inner\[0\] \(b'\\xff\\xfe'\); decode them"):
        message_to_dict(message)
    with pytest.raises(InvalidData, match=r"bytes that are not UTF-8 text at StepRecorded\.value"):
        event_row("t", StepRecorded(value=b"\xff", **COMMON))


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


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"kind": "message", "message": {"kind": "ai", "content": "", "tool_calls": 5}}, "AIMessage.tool_calls"),
        ({"kind": "message", "message": {"kind": "human", "content": 5}}, "HumanMessage.content"),
        (
            {"kind": "message", "message": {"kind": "tool", "content": "x", "tool_call_id": 7}},
            "ToolMessage.tool_call_id",
        ),
    ],
)
def test_a_damaged_message_is_reported_at_its_own_field_not_another_variants_tag(data: dict, says: str) -> None:
    from podium import InvalidData, event_from_dict

    with pytest.raises(InvalidData) as caught:
        event_from_dict(data)
    text = str(caught.value)
    assert says in text and ".kind" not in text and len(text) < 200  # the field itself, briefly
