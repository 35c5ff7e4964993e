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


async def test_a_threads_values_are_kept_and_only_newer_events_are_read() -> None:
    """A turn of a long conversation costs what the turn added: the values are kept with the log head they reach."""
    from types import SimpleNamespace
    from typing import Any, cast

    from tests.runtime.test_rounds import _CountingStore

    from podium import ReactAgent, Runtime
    from podium.server.threads import thread_values
    from podium.testing import FunctionModel

    store = _CountingStore()  # counts the events each read returns
    runtime = Runtime(store)
    agent = ReactAgent("echo", FunctionModel(lambda messages, request: f"echo {messages[-1].content}"))
    state = cast(Any, SimpleNamespace(store=store, values={}))

    def shown(values: Values) -> list[str]:
        return [m["content"] for m in values.to_dict()["messages"]]

    await runtime.run(agent, "one", thread_id="t")
    assert shown(await thread_values(state, "t")) == ["one", "echo one"]
    store.read.clear()
    assert shown(await thread_values(state, "t")) == ["one", "echo one"]
    assert store.read == []  # the head is the one kept: nothing read
    await Runtime(store).run(agent, "two", thread_id="t")  # another runtime (another process) adds a turn
    store.read.clear()
    assert shown(await thread_values(state, "t")) == ["one", "echo one", "two", "echo two"]
    assert store.read == [5]  # the kept last event and the turn's four
    dropped = await runtime.run(agent, "three", thread_id="t")
    assert shown(await thread_values(state, "t"))[-1] == "echo three"
    await store.delete_run(dropped.run_id)  # rolled back: the kept values are read again in full
    store.read.clear()
    assert shown(await thread_values(state, "t")) == ["one", "echo one", "two", "echo two"]
    assert store.read[-1] == 8
