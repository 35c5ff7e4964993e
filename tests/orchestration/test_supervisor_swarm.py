"""The swarm variant: agents hand the conversation to each other; the next turn resumes with the last active one."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium import AIMessage, HumanMessage, Message, ModelRequest, ReactAgent, Runtime, SQLiteStore, UsageError
from podium.orchestration.supervisor.handoff import history_problems
from podium.orchestration.supervisor.swarm import create_swarm
from podium.testing import FunctionModel, tool_call


def swarm_reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    """Alice hands maths to Bob; Bob answers maths and hands anything else back to Alice."""
    system = request.messages[0].content
    question = next(m.content for m in reversed(messages) if isinstance(m, HumanMessage))
    after = messages[max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage)) :]
    transferred = any(m.kind == "tool" and m.content.startswith("Successfully") for m in after)
    if system == "You are Alice.":
        if "+" in question and not transferred:
            return AIMessage(tool_calls=[tool_call("transfer_to_bob", {}, id="to-bob")])
        return AIMessage(content=f"Alice: {question}")
    if "+" in question:
        a, b = question.split("+")
        return AIMessage(content=f"Bob: {int(a) + int(b)}")
    if not transferred:
        return AIMessage(tool_calls=[tool_call("transfer_to_alice", {}, id="to-alice")])
    return AIMessage(content="Bob: back to you")


def swarm(model: FunctionModel, **options: object) -> object:
    alice = ReactAgent("alice", model, prompt="You are Alice.")
    bob = ReactAgent("bob", model, prompt="You are Bob.")
    return create_swarm([alice, bob], default_active_agent="alice", **options)  # type: ignore[arg-type]


async def test_handoffs_and_the_next_turn_starts_with_the_last_active_agent(tmp_path: Path) -> None:
    model = FunctionModel(swarm_reply)
    store = SQLiteStore(tmp_path / "swarm.db")
    runtime = Runtime(store)
    agent = swarm(model)
    first = await runtime.run(agent, "2+3", thread_id="t")  # type: ignore[arg-type]
    assert first.output == "Bob: 5"
    second = await runtime.run(agent, "7+1", thread_id="t")  # type: ignore[arg-type]
    assert second.output == "Bob: 8"
    assert [r.messages[0].content for r in model.requests] == ["You are Alice.", "You are Bob.", "You are Bob."]
    third = await runtime.run(agent, "hello", thread_id="t")  # type: ignore[arg-type]
    assert third.output == "Alice: hello"  # Bob was active, handed back to Alice
    assert await store.get_state("t", "swarm:swarm:active") == "alice"
    history = await runtime.messages("t")
    assert history_problems(history) == []
    assert {m.name for m in history if isinstance(m, AIMessage)} == {"alice", "bob"}
    tools = {t.name for t in model.requests[0].tools}
    assert tools == {"transfer_to_bob"}
    await store.close()


async def test_a_swarm_that_keeps_handing_off_stops_at_the_guard() -> None:
    def ping_pong(messages: list[Message], request: ModelRequest) -> AIMessage:
        other = "bob" if request.messages[0].content == "You are Alice." else "alice"
        return AIMessage(tool_calls=[tool_call(f"transfer_to_{other}", {})])

    result = await Runtime().run(swarm(FunctionModel(ping_pong), max_handoffs=4), "go")  # type: ignore[arg-type]
    assert result.status == "limit_exceeded" and result.limit == "handoffs"


def test_bad_swarms_are_refused() -> None:
    model = FunctionModel(swarm_reply)
    with pytest.raises(UsageError, match="default_active_agent"):
        create_swarm([ReactAgent("a", model)], default_active_agent="b")
    with pytest.raises(UsageError, match="unknown agents"):
        create_swarm([ReactAgent("a", model)], default_active_agent="a", handoffs={"a": ["z"]})


async def test_one_handoff_per_reply_and_tools_alongside() -> None:
    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        if request.messages[0].content == "You are Bob.":
            return AIMessage(content="Bob here")
        if not any(m.kind == "tool" for m in messages):
            return AIMessage(
                tool_calls=[
                    tool_call("note", {"text": "x"}, id="n"),
                    tool_call("transfer_to_bob", {}, id="b1"),
                    tool_call("transfer_to_carol", {}, id="c1"),
                ]
            )
        return AIMessage(content="unreachable")

    def note(text: str) -> str:
        """Take a note."""
        return f"noted {text}"

    model = FunctionModel(reply)
    alice = ReactAgent("alice", model, [note], prompt="You are Alice.")
    bob = ReactAgent("bob", model, prompt="You are Bob.")
    carol = ReactAgent("carol", model, prompt="You are Carol.")
    agent = create_swarm([alice, bob, carol], default_active_agent="alice", handoffs={"alice": ["bob", "carol"]})
    runtime = Runtime()
    result = await runtime.run(agent, "hi", thread_id="t")
    assert result.output == "Bob here"
    history = await runtime.messages("t")
    assert [m.content for m in history if m.kind == "tool"] == [
        "noted x",
        "Successfully transferred to bob",
        "Not transferred: this turn already went to bob.",
    ]
    assert history_problems(history) == []
    assert {t.name for t in model.requests[1].tools} == set()  # bob may hand off to no one here
