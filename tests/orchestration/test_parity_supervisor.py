"""Parity with langgraph-supervisor: stored histories of forward_message and hidden handoffs (issue 16).

The expected transcripts are those langgraph-supervisor's own tests assert (its ``test_supervisor_message_forwarding``
and ``test_worker_hide_handoffs``), written as (kind, name, content, tool names).
"""

from __future__ import annotations

from typing import Any

from podium import AIMessage, HumanMessage, Message, ReactAgent, Runtime, ToolMessage
from podium.orchestration.supervisor import create_supervisor, history_problems
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
