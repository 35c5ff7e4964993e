"""Parity with Langroid's task semantics (issue 16): done from any responder, fixed-turn sub-tasks, addressing the
caller, case-insensitive names, the user's quit strings, ``done_if_no_response`` from the first step.

Each scenario follows Langroid's documented behaviour (its ``Task`` docstrings and ``tests/main/test_task.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.orchestration.tasks_support import requests_of, routed

from podium import AIMessage, HumanMessage, Message, ToolMessage
from podium.orchestration.tasks import ResponderAgent, Task, TaskLimits, send_tool
from podium.testing import tool_call


def successor(number: int) -> str:
    """The number after ``number``, signalling done."""
    return f"DONE {number + 1}"


async def test_a_handler_saying_done_ends_the_task_with_the_rest_of_its_text() -> None:
    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("successor", {"number": 100})]))
    result = await Task(ResponderAgent("w", model, prompt="w", tools=[successor])).run("100")
    assert (result.outcome, result.reason, result.content) == ("done", "agent signalled done", "101")
    assert len(model.requests) == 1  # the model is not asked again


def halve(messages: list[Message]) -> str:
    return str(float(messages[-1].content) / 2)


async def test_a_sub_task_limited_to_one_turn_hands_its_answer_up_as_a_normal_result() -> None:
    def master(messages: list[Message]) -> str:
        last = messages[-1]
        return f"DONE {last.content}" if isinstance(last, HumanMessage) and last.name == "halver" else "12"

    model = routed(master=master, halver=halve)
    halver = Task(ResponderAgent("halver", model, prompt="halver"), limits=TaskLimits(turns=1))
    root = Task(ResponderAgent("master", model, prompt="master"), sub_tasks=[halver])

    result = await root.run("go")

    assert (result.outcome, result.content) == ("done", "6.0")
    assert requests_of(model, "master")[-1][-1] == ("human", "6.0")


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(AIMessage(content="TO[Master]: 6.0"), id="TO[name]"),
        pytest.param(AIMessage(content="TO[master]: 6.0"), id="lower-case"),
        pytest.param(AIMessage(tool_calls=[tool_call("send", {"recipient": "Master", "content": "6.0"})]), id="send"),
    ],
)
async def test_a_sub_task_addressing_its_caller_ends_and_hands_the_content_up(reply: AIMessage) -> None:
    def master(messages: list[Message]) -> str:
        last = messages[-1]
        return (
            f"DONE got {last.content}" if isinstance(last, HumanMessage) and last.name == "worker" else "TO[worker]: 12"
        )

    def worker(messages: list[Message]) -> AIMessage:
        return reply

    model = routed(Master=master, worker=worker)
    sub = Task(ResponderAgent("worker", model, prompt="worker", tools=[send_tool()]), interactive=True)
    root = Task(ResponderAgent("Master", model, prompt="Master"), sub_tasks=[sub])

    result = await root.run("go")

    assert (result.outcome, result.content) == ("done", "got 6.0")
    assert len(requests_of(model, "worker")) == 1


@pytest.mark.parametrize("address", ["TO[User]", "TO[USER]", "@user"])
async def test_entity_names_match_whatever_their_case(address: str) -> None:
    model = routed(w=lambda m: f"{address}: which city?" if len(m) == 2 else f"DONE {m[-1].content}")
    result = await Task(ResponderAgent("w", model, prompt="w")).run("plan", user_default="Oslo")
    assert (result.outcome, result.content) == ("done", "Oslo")


@pytest.mark.parametrize("answer", ["q", "x", "quit", "exit", "bye"])
async def test_the_users_quit_strings_end_the_task(answer: str) -> None:
    model = routed(w=lambda m: "Anything else?")
    task = Task(ResponderAgent("w", model, prompt="w"), interactive=True)
    result = await task.run("hello", user_default=answer)
    assert (result.outcome, result.reason, result.content, result.turns) == ("done", "user signalled done", answer, 2)


async def test_a_quit_string_inside_a_longer_answer_does_not_end_the_task() -> None:
    answers = iter(["exit the highway, then?", "bye"])
    model = routed(w=lambda m: "Anything else?")

    class Agent(ResponderAgent):
        async def user_response(self, session: Any, message: Any) -> Any:
            session.user_default = next(answers)
            return await super().user_response(session, message)

    result = await Task(Agent("w", model, prompt="w"), interactive=True).run("hello")
    assert (result.content, result.turns) == ("bye", 4)
    assert isinstance(model.requests[-1].messages[-1], HumanMessage)
    assert not isinstance(model.requests[-1].messages[-1], ToolMessage)
