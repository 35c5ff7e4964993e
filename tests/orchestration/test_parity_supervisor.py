"""Parity with langgraph-supervisor and langgraph-swarm (issue 16): stored histories of forward_message and hidden
handoffs, inline agent names, swarm agents with their own handoff tools, a custom swarm state.

The expected transcripts are those the peers' own tests assert (``test_supervisor_message_forwarding``,
``test_worker_hide_handoffs``, ``test_basic_swarm``), written as (kind, name, content, tool names).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from podium import AIMessage, HumanMessage, Message, ModelRequest, ReactAgent, Runtime, ToolMessage
from podium.errors import UsageError
from podium.models.base import Done
from podium.orchestration.supervisor import (
    add_inline_agent_name,
    create_forward_message_tool,
    create_handoff_tool,
    create_supervisor,
    create_swarm,
    history_problems,
    remove_inline_agent_name,
    with_agent_name,
)
from podium.testing import ScriptedModel, tool_call


def rows(messages: list[Message]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for m in messages:
        calls = [c.name for c in m.tool_calls] if isinstance(m, AIMessage) else None
        out.append((m.kind, getattr(m, "name", None), m.content, calls))
    return out


def echo_tool(text: str) -> str:
    """Echo the input text."""
    return text


async def test_forward_message_ends_the_run_with_the_forwarded_answer_and_no_forwarding_call() -> None:
    echo = ReactAgent("echo_agent", ScriptedModel([AIMessage(content="Echo: test forwarding!")]), [echo_tool])
    supervisor_model = ScriptedModel(
        [
            AIMessage(tool_calls=[tool_call("transfer_to_echo_agent", {}, id="call_1")]),
            AIMessage(tool_calls=[tool_call("forward_message", {"from_agent": "echo_agent"}, id="abcd123")]),
        ]
    )
    supervisor = create_supervisor([echo], model=supervisor_model, context="shared", forward_message=True)
    runtime = Runtime()

    result = await runtime.run(supervisor, "Scooby-dooby-doo", thread_id="t")

    assert result.output == "Echo: test forwarding!"
    supervisor_model.assert_complete()  # no model call after forwarding
    stored = await runtime.messages("t")
    assert rows(stored) == [
        ("human", None, "Scooby-dooby-doo", None),
        ("ai", "supervisor", "", ["transfer_to_echo_agent"]),
        ("tool", "transfer_to_echo_agent", "Successfully transferred to echo_agent", None),
        ("ai", "echo_agent", "Echo: test forwarding!", []),
        ("ai", "echo_agent", "Transferring back to supervisor", ["transfer_back_to_supervisor"]),
        ("tool", "transfer_back_to_supervisor", "Successfully transferred back to supervisor", None),
        ("ai", "supervisor", "Echo: test forwarding!", []),
    ]


async def test_a_failed_forward_stays_in_the_history_as_an_error_the_model_acts_on() -> None:
    supervisor_model = ScriptedModel(
        [
            AIMessage(tool_calls=[tool_call("forward_message", {"from_agent": "nobody"}, id="f1")]),
            AIMessage(content="I answer myself."),
        ]
    )
    echo = ReactAgent("echo_agent", ScriptedModel([]), [echo_tool])
    supervisor = create_supervisor([echo], model=supervisor_model, context="shared", forward_message=True)
    runtime = Runtime()

    result = await runtime.run(supervisor, "hi", thread_id="t")

    assert result.output == "I answer myself."
    stored = await runtime.messages("t")
    assert [m.kind for m in stored] == ["human", "ai", "tool", "ai"]
    assert isinstance(stored[2], ToolMessage) and stored[2].is_error
    assert "Could not find a message from agent 'nobody'" in stored[2].content
    assert history_problems(stored) == []


async def test_hidden_handoffs_leave_a_valid_stored_history_matching_the_peer() -> None:
    echo_model = ScriptedModel([AIMessage(content="Echo 1!"), AIMessage(content="Echo 2!")])
    echo = ReactAgent("echo_agent", echo_model, [echo_tool])
    supervisor_model = ScriptedModel(
        [
            AIMessage(tool_calls=[tool_call("transfer_to_echo_agent", {}, id="call_1")]),
            AIMessage(content="boo"),
            AIMessage(tool_calls=[tool_call("transfer_to_echo_agent", {}, id="call_2")]),
            AIMessage(content="END"),
        ]
    )
    supervisor = create_supervisor([echo], model=supervisor_model, context="shared", add_handoff_messages=False)
    runtime = Runtime()

    await runtime.run(supervisor, "Scooby-dooby-doo", thread_id="t")
    assert rows(await runtime.messages("t")) == [
        ("human", None, "Scooby-dooby-doo", None),
        ("ai", "echo_agent", "Echo 1!", []),
        ("ai", "supervisor", "boo", []),
    ]
    await runtime.run(supervisor, "Huh take two?", thread_id="t")

    # What the worker was shown, turn by turn (the peer's expectations).
    assert [rows(r.messages) for r in echo_model.requests] == [
        [("human", None, "Scooby-dooby-doo", None)],
        [
            ("human", None, "Scooby-dooby-doo", None),
            ("ai", "echo_agent", "Echo 1!", []),
            ("ai", "supervisor", "boo", []),
            ("human", None, "Huh take two?", None),
        ],
    ]
    stored = await runtime.messages("t")
    assert history_problems(stored) == []
    assert [m.content for m in stored if isinstance(m, AIMessage)] == ["Echo 1!", "boo", "Echo 2!", "END"]
    assert not any(isinstance(m, HumanMessage) and m.name for m in stored)


# -- include_agent_name / with_agent_name -----------------------------------------------------------------------------
def test_inline_agent_names_are_added_and_removed() -> None:
    named = AIMessage(content="Hello", name="assistant")
    assert add_inline_agent_name(named).content == "<name>assistant</name><content>Hello</content>"
    assert add_inline_agent_name(AIMessage(content="Hello")).content == "Hello"
    assert add_inline_agent_name(HumanMessage(content="Hi")).content == "Hi"
    assert remove_inline_agent_name(add_inline_agent_name(named)) == named
    assert remove_inline_agent_name(AIMessage(content="<name>x</name> no content tag")).content.endswith("tag")
    with pytest.raises(UsageError, match="inline"):
        with_agent_name(ScriptedModel([]), "prefix")  # type: ignore[arg-type]


async def test_include_agent_name_shows_the_supervisor_named_messages_and_stores_them_plain() -> None:
    research = ReactAgent("research_expert", ScriptedModel([AIMessage(content="FAANG has 1,977,586 people.")]))
    supervisor_model = ScriptedModel(
        [
            AIMessage(tool_calls=[tool_call("transfer_to_research_expert", {}, id="c1")]),
            AIMessage(content="<name>supervisor</name><content>1,977,586 in all.</content>"),
        ]
    )
    supervisor = create_supervisor([research], model=supervisor_model, context="shared", include_agent_name="inline")
    runtime = Runtime()

    result = await runtime.run(supervisor, "How many people work at FAANG?", thread_id="t")

    assert result.output == "1,977,586 in all."  # the reply comes back without the tags
    shown = [m.content for m in supervisor_model.requests[1].messages if isinstance(m, AIMessage)]
    assert shown == [
        "<name>supervisor</name><content></content>",
        "<name>research_expert</name><content>FAANG has 1,977,586 people.</content>",
        "<name>research_expert</name><content>Transferring back to supervisor</content>",
    ]
    stored = [m.content for m in await runtime.messages("t") if isinstance(m, AIMessage)]
    assert stored == ["", "FAANG has 1,977,586 people.", "Transferring back to supervisor", "1,977,586 in all."]

    streamed = with_agent_name(ScriptedModel([AIMessage(content="<name>a</name><content>hi</content>")]), "inline")
    events = [e async for e in streamed.stream(ModelRequest(messages=[HumanMessage(content="x")]))]
    assert isinstance(events[-1], Done) and events[-1].response.message.content == "hi"


# -- the swarm --------------------------------------------------------------------------------------------------------
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


SWARM_REPLIES = [
    AIMessage(tool_calls=[tool_call("transfer_to_bob", {}, id="call_1")]),
    AIMessage(content="Ahoy, matey! Bob the pirate be at yer service."),
    AIMessage(tool_calls=[tool_call("transfer_to_alice", {}, id="call_2")]),
    AIMessage(tool_calls=[tool_call("add", {"a": 5, "b": 7}, id="call_3")]),
    AIMessage(content="The sum of 5 and 7 is 12."),
]


def pirates(state_schema: Any = None) -> tuple[Any, ScriptedModel]:
    """langgraph-swarm's basic swarm: each agent is given its own handoff tool (one with its own description)."""
    model = ScriptedModel(SWARM_REPLIES)
    alice = ReactAgent("Alice", model, [add, create_handoff_tool("Bob")], prompt="You are Alice, an addition expert.")
    bob = ReactAgent(
        "Bob",
        model,
        [create_handoff_tool("Alice", description="Transfer to Alice, she can help with math")],
        prompt="You are Bob, you speak like a pirate.",
    )
    return create_swarm([alice, bob], default_active_agent="Alice", state_schema=state_schema), model


async def test_swarm_agents_use_their_own_handoff_tools() -> None:
    swarm, model = pirates()
    runtime = Runtime()

    await runtime.run(swarm, "i'd like to speak to Bob", thread_id="1")
    turn_1 = await runtime.messages("1")
    assert len(turn_1) == 4
    assert (turn_1[-2].content, turn_1[-1].content) == ("Successfully transferred to Bob", SWARM_REPLIES[1].content)

    await runtime.run(swarm, "what's 5 + 7?", thread_id="1")
    turn_2 = await runtime.messages("1")
    assert len(turn_2) == 10
    assert (turn_2[-4].content, turn_2[-2].content, turn_2[-1].content) == (
        "Successfully transferred to Alice",
        "12",
        "The sum of 5 and 7 is 12.",
    )
    model.assert_complete()
    alice_tools = [(t.name, t.description) for t in model.requests[0].tools]
    bob_tools = [(t.name, t.description) for t in model.requests[1].tools]
    assert alice_tools == [("add", "Add two numbers."), ("transfer_to_bob", "Ask agent 'Bob' for help")]
    assert bob_tools == [("transfer_to_alice", "Transfer to Alice, she can help with math")]
    assert history_problems(turn_2) == []


class PirateState(BaseModel):
    active_agent: str | None = None
    mood: str = "calm"


async def test_a_swarm_keeps_a_custom_state_schema() -> None:
    swarm, _ = pirates(PirateState)
    runtime = Runtime()
    first = await runtime.run(swarm, "i'd like to speak to Bob", thread_id="1")
    assert first.status == "completed"
    assert await swarm.state(runtime, "1") == PirateState(active_agent="Bob")

    await runtime.store.put_state("1", swarm.state_key, {"active_agent": "Bob", "mood": "stormy"})  # a tool's change
    await runtime.run(swarm, "what's 5 + 7?", thread_id="1")
    assert await swarm.state(runtime, "1") == PirateState(active_agent="Alice", mood="stormy")


def test_a_state_schema_needs_an_active_agent() -> None:
    class NoActive(BaseModel):
        mood: str = "calm"

    with pytest.raises(UsageError, match="active_agent"):
        pirates(NoActive)
    with pytest.raises(UsageError, match="pydantic model, a dataclass or a TypedDict"):
        pirates(dict)
    with pytest.raises(UsageError, match="no state_schema"):
        asyncio.run(pirates()[0].state(Runtime(), "t"))


async def test_a_typed_dict_state_and_the_peer_call_shapes() -> None:
    class DictState(TypedDict, total=False):
        active_agent: str | None
        mood: str

    swarm, _ = pirates(DictState)
    runtime = Runtime()
    result = await runtime.run(swarm, "i'd like to speak to Bob", thread_id="1")
    assert result.status == "completed"
    assert await swarm.state(runtime, "1") == {"active_agent": "Bob"}

    assert create_handoff_tool(agent_name="Bob").name == "transfer_to_bob"
    with pytest.raises(UsageError, match="agent's name"):
        create_handoff_tool()
    with pytest.raises(UsageError, match="agent's name"):
        create_handoff_tool("Alice", agent_name="Bob")

    echo = ReactAgent("echo_agent", ScriptedModel([AIMessage(content="Echo: hi!")]))
    supervisor_model = ScriptedModel(
        [
            AIMessage(tool_calls=[tool_call("transfer_to_echo_agent", {}, id="c1")]),
            AIMessage(tool_calls=[tool_call("forward_message", {"from_agent": "echo_agent"}, id="c2")]),
        ]
    )
    tools = [create_forward_message_tool("supervisor")]
    supervisor = create_supervisor([echo], model=supervisor_model, context="shared", tools=tools)
    assert (await Runtime().run(supervisor, "hi")).output == "Echo: hi!"
