"""A thread's values show concurrent tool results in the order of the calls, whatever order they finished in."""

from __future__ import annotations

from podium import AIMessage, HumanMessage, ToolMessage
from podium.events import MessageAdded
from podium.messages import ToolCall
from podium.server._convert import Values


def test_results_stored_as_they_finish_are_shown_in_call_order() -> None:
    calls = [ToolCall(id=f"c{n}", name="weather", arguments="{}") for n in range(3)]
    stored = [
        HumanMessage(content="weather in three cities"),
        AIMessage(tool_calls=calls),
        ToolMessage(content="third", tool_call_id="c2", name="weather"),
        ToolMessage(content="first", tool_call_id="c0", name="weather"),
        ToolMessage(content="second", tool_call_id="c1", name="weather"),
        AIMessage(content="done"),
        ToolMessage(content="orphan", tool_call_id="c0", name="weather"),  # not of the latest reply: stays put
    ]
    values = Values()
    for seq, message in enumerate(stored, 1):
        assert values.add(MessageAdded(run_id="r", seq=seq, message=message))
    shown = [m.get("content") for m in values.to_dict()["messages"]]
    assert shown == ["weather in three cities", "", "first", "second", "third", "done", "orphan"]
