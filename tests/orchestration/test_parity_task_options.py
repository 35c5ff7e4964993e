"""Langroid's task options in Podium (issue 16): PASS and the pass tools, DO-NOT-KNOW and ``allow_null_result``,
``recognize_recipient_in_content``, content patterns in done sequences, ``respond_tools_only``, tools as results,
and a tool that runs a sub-task.

Each scenario follows Langroid's documented behaviour (``langroid/agent/task.py``, ``tools/orchestration.py`` and
``tests/main/test_task.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.orchestration.tasks_support import requests_of, routed

from podium import AIMessage, HumanMessage, Message, ToolMessage
from podium.errors import UsageError
from podium.orchestration.tasks import (
    NO_ANSWER,
    PASS,
    ResponderAgent,
    ResultTool,
    Task,
    TaskLimits,
    TaskMessage,
    TaskPass,
    done_pass_tool,
    forward_tool,
    pass_tool,
    task_tool,
    tool_request,
)
from podium.testing import tool_call
from podium.tools import Tool


def last_is_from(messages: list[Message], name: str) -> bool:
    return isinstance(messages[-1], HumanMessage) and messages[-1].name == name


def helper_done(messages: list[Message]) -> str:
    return f"DONE helper got {messages[-1].content}"


# -- PASS -------------------------------------------------------------------------------------------------------------
async def test_a_pass_text_hands_the_input_to_the_next_responder_that_can_answer() -> None:
    model = routed(boss=lambda m: PASS, helper=helper_done)
    helper = Task(ResponderAgent("helper", model, prompt="helper"))
    boss = Task(ResponderAgent("boss", model, prompt="boss"), sub_tasks=[helper], done_if_response=["helper"])

    result = await boss.run("4")

    assert (result.outcome, result.content) == ("done", "helper got 4")
    assert requests_of(model, "helper") == [[("human", "4")]]  # the boss's input, not its "__PASS__"
    assert len(requests_of(model, "boss")) == 1  # the boss is not asked again about the message it passed


def successor(number: int) -> str:
    """The successor of a number."""
    return str(number + 1)


async def test_done_pass_ends_the_task_with_the_message_the_model_received() -> None:
    def agent(messages: list[Message]) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return f"DONE {PASS}"
        return AIMessage(tool_calls=[tool_call("successor", {"number": 100})])

    model = routed(w=agent)
    result = await Task(ResponderAgent("w", model, prompt="w", tools=[successor])).run("100")
    assert (result.outcome, result.content) == ("done", "101")


@pytest.mark.parametrize("via", ["text", "tool"])
async def test_pass_to_a_named_recipient(via: str) -> None:
    def boss(messages: list[Message]) -> Any:
        if last_is_from(messages, "b"):
            return f"DONE {messages[-1].content}"
        if via == "text":
            return f"{PASS}:b"
        return AIMessage(tool_calls=[tool_call("forward_tool", {"agent": "b"})])

    model = routed(boss=boss, a=lambda m: "A here", b=lambda m: f"B got {m[-1].content}")
    subs = [Task(ResponderAgent(n, model, prompt=n)) for n in ("a", "b")]
    root = Task(ResponderAgent("boss", model, prompt="boss", tools=[forward_tool()]), sub_tasks=subs)

    result = await root.run("hello")

    assert result.content == "B got hello"
    assert requests_of(model, "a") == []


async def test_the_pass_tools_pass_the_models_input_not_their_own_call() -> None:
    model = routed(
        boss=lambda m: AIMessage(tool_calls=[tool_call("pass_tool", {})]) if len(m) == 2 else "unused",
        helper=helper_done,
    )
    helper = Task(ResponderAgent("helper", model, prompt="helper"))
    boss = Task(
        ResponderAgent("boss", model, prompt="boss", tools=[pass_tool()]),
        sub_tasks=[helper],
        done_if_response=["helper"],
    )
    assert (await boss.run("4")).content == "helper got 4"

    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("done_pass_tool", {})]))
    result = await Task(ResponderAgent("w", model, prompt="w", tools=[done_pass_tool()])).run("the input")
    assert (result.outcome, result.reason, result.content) == (
        "done",
        "agent passed its input on as the result",
        "the input",
    )


def polinsky(number: int, value: int) -> TaskPass:
    """Ask whether the Polinsky transform of a number equals a value."""
    return TaskPass()  # valid: pass the call on to whoever else handles it


def polinsky_checker(number: int, value: int) -> str:
    """Check a guess of the Polinsky transform."""
    return "DONE correct" if value == 2 * number else "DONE wrong"


async def test_a_handler_passing_hands_the_models_tool_call_to_another_handler() -> None:
    def asker(messages: list[Message]) -> Any:
        if last_is_from(messages, "checker"):
            return f"DONE the checker says {messages[-1].content}"
        return AIMessage(tool_calls=[tool_call("polinsky", {"number": 5, "value": 10})])

    model = routed(asker=asker)
    checker = Task(ResponderAgent("checker", handle_only=[Tool(polinsky_checker, name="polinsky")]))
    asker_task = Task(ResponderAgent("asker", model, prompt="asker", tools=[polinsky]), sub_tasks=[checker])

    result = await asker_task.run("go")

    assert (result.outcome, result.content) == ("done", "the checker says correct")


# -- DO-NOT-KNOW ------------------------------------------------------------------------------------------------------
async def test_a_do_not_know_counts_only_when_nobody_else_answers() -> None:
    model = routed(boss=lambda m: "unused", a=lambda m: f"{NO_ANSWER}.", b=lambda m: "B knows")
    subs = [Task(ResponderAgent(n, model, prompt=n)) for n in ("a", "b")]
    boss = Task(ResponderAgent("boss"), sub_tasks=subs, done_if_response=["a", "b"])
    assert (await boss.run("q?")).content == "B knows"

    lonely = Task(ResponderAgent("boss"), sub_tasks=[Task(ResponderAgent("a", model, prompt="a"))])
    result = await lonely.run("q?", limits=None)
    assert result.message.content == f"{NO_ANSWER}." and result.message.sender == "a"


async def test_allow_null_result_answers_silence_with_do_not_know_and_continues() -> None:
    def agent(messages: list[Message]) -> str:
        return f"DONE after {messages[-1].content}" if messages[-1].content == NO_ANSWER else "Let me think."

    model = routed(w=agent)
    ended = await Task(ResponderAgent("w", model, prompt="w")).run("hi")
    assert (ended.content, ended.turns) == ("Let me think.", 2)  # default: nobody answers the LLM, the task ends

    model = routed(w=agent)
    result = await Task(ResponderAgent("w", model, prompt="w"), allow_null_result=True).run("hi")
    assert (result.outcome, result.content) == ("done", f"after {NO_ANSWER}")
    assert requests_of(model, "w")[-1] == [("human", "hi"), ("ai", "Let me think."), ("human", NO_ANSWER)]


# -- addresses in content ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("recognize", [True, False])
async def test_recognize_recipient_in_content(recognize: bool) -> None:
    model = routed(Test=lambda m: "TO[SubAgent]: Please handle this request")
    agent = ResponderAgent("Test", model, prompt="Test", recognize_recipient_in_content=recognize)
    result = await Task(agent, limits=TaskLimits(turns=1)).run("Hello")
    if recognize:
        assert (result.message.recipient, result.content) == ("SubAgent", "Please handle this request")
    else:
        assert (result.message.recipient, result.content) == (None, "TO[SubAgent]: Please handle this request")


# -- done sequences ---------------------------------------------------------------------------------------------------
async def test_done_sequences_with_content_patterns_and_langroid_letters() -> None:
    replies = iter(["hello", "time to quit now"])
    model = routed(w=lambda m: next(replies))
    task = Task(ResponderAgent("w", model, prompt="w"), interactive=True, done_sequences=["C[quit|exit]"])
    result = await task.run("start", user_default="go on")
    assert (result.content, result.reason) == ("time to quit now", "sequence content:quit|exit happened")

    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("successor", {"number": 1})]))
    task = Task(ResponderAgent("w", model, prompt="w", tools=[successor]), done_sequences=["T[successor], A"])
    result = await task.run("start")
    assert (result.content, result.reason) == ("2", "sequence tool:successor, agent happened")

    with pytest.raises(UsageError, match="bad pattern"):
        Task(ResponderAgent("w"), done_sequences=["C[(]"])


# -- respond_tools_only -----------------------------------------------------------------------------------------------
async def test_a_sub_task_that_responds_to_tools_only_is_skipped_for_plain_text() -> None:
    def boss(messages: list[Message]) -> Any:
        if last_is_from(messages, "chat"):
            return AIMessage(tool_calls=[tool_call("successor", {"number": 41})])
        if isinstance(messages[-1], ToolMessage):  # calc's result answers the boss's own call
            return f"DONE {messages[-1].content}"
        return "Tell me something."

    model = routed(boss=boss, chat=lambda m: "something")
    calc = Task(ResponderAgent("calc", handle_only=[successor], respond_tools_only=True), done_if_response=["agent"])
    chat = Task(ResponderAgent("chat", model, prompt="chat"))
    boss_task = Task(ResponderAgent("boss", model, prompt="boss", use_only=[successor]), sub_tasks=[calc, chat])
    result = await boss_task.run("go")
    assert result.content == "42"
    assert requests_of(model, "chat") == [[("human", "Tell me something.")]]


# -- tools as results -------------------------------------------------------------------------------------------------
class Extracted(ResultTool):
    name: str
    age: int


def extract(text: str) -> Extracted:
    """Extract a person's name and age."""
    name, age = text.split(",")
    return Extracted(name=name.strip(), age=int(age))


async def test_a_handler_returning_a_result_tool_ends_the_task_with_it() -> None:
    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("extract", {"text": "Ada, 36"})]))
    task = Task(ResponderAgent("w", model, prompt="w", tools=[extract]))

    result = await task.run("Ada is 36")
    assert (result.outcome, result.value) == ("done", Extracted(name="Ada", age=36))

    typed = await task[Extracted].run("Ada is 36")
    assert typed == Extracted(name="Ada", age=36)

    def loose() -> ResultTool:
        """Give any fields."""
        return ResultTool(answer=42, steps=["a", "b"])

    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("loose", {})]))
    result = await Task(ResponderAgent("w", model, prompt="w", tools=[loose])).run("go")
    assert result.value.model_dump() == {"answer": 42, "steps": ["a", "b"]}


def square(number: int) -> str:
    """Square a number."""
    return f"DONE {number * number}"


async def test_a_handler_returning_a_tool_has_a_sub_task_handle_it() -> None:
    def plan(number: int) -> Any:
        """Plan the computation of a number's square."""
        return tool_request("square", number=number)

    def boss(messages: list[Message]) -> Any:
        if last_is_from(messages, "squarer"):
            return f"DONE squared: {messages[-1].content}"
        return AIMessage(tool_calls=[tool_call("plan", {"number": 5})])

    model = routed(boss=boss)
    squarer = Task(ResponderAgent("squarer", handle_only=[square]))
    boss_task = Task(ResponderAgent("boss", model, prompt="boss", tools=[plan]), sub_tasks=[squarer])

    result = await boss_task.run("go")

    assert (result.outcome, result.content) == ("done", "squared: 25")
    assert [kind for kind, _ in requests_of(model, "boss")[-1]] == ["human", "ai", "tool", "human"]  # valid history


# -- a tool that runs a sub-task --------------------------------------------------------------------------------------
async def test_a_tool_runs_a_sub_task_and_returns_its_result() -> None:
    def lead(messages: list[Message]) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return f"DONE The helper said: {messages[-1].content}"
        return AIMessage(tool_calls=[tool_call("run_helper", {"prompt": "what is 2+2?"})])

    model = routed(lead=lead, helper=lambda m: "DONE 4")
    helper = Task(ResponderAgent("helper", model, prompt="helper"), description="Answers arithmetic.")
    tool = task_tool(helper)
    assert (tool.name, tool.description) == ("run_helper", "Answers arithmetic.")
    result = await Task(ResponderAgent("lead", model, prompt="lead", tools=[tool])).run("go")

    assert result.content == "The helper said: 4"
    assert requests_of(model, "helper") == [[("human", "what is 2+2?")]]


async def test_a_handler_may_address_the_tool_it_returns_and_a_stopped_sub_task_tool_says_why() -> None:
    def plan(number: int) -> TaskMessage:
        """Plan the computation of a number's square."""
        return TaskMessage(
            content="please square", recipient="squarer", tool_calls=[tool_request("square", number=number)]
        )

    def boss(messages: list[Message]) -> Any:
        if last_is_from(messages, "squarer"):
            return f"DONE squared: {messages[-1].content}"
        return AIMessage(tool_calls=[tool_call("plan", {"number": 3})])

    model = routed(boss=boss)
    squarer = Task(ResponderAgent("squarer", handle_only=[square]))
    result = await Task(ResponderAgent("boss", model, prompt="boss", tools=[plan]), sub_tasks=[squarer]).run("go")
    assert result.content == "squared: 9"

    def lead(messages: list[Message]) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return f"DONE {messages[-1].content}"
        return AIMessage(tool_calls=[tool_call("run_stuck", {"prompt": "anything"})])

    stuck = Task(ResponderAgent("stuck"), limits=TaskLimits(max_stalled_steps=1))
    model = routed(lead=lead)
    result = await Task(ResponderAgent("lead", model, prompt="lead", tools=[task_tool(stuck)])).run("go")
    assert result.content == "[stuck stopped: stalled: 1 steps in a row without a valid response]"


async def test_passing_around_without_progress_stalls() -> None:
    model = routed(boss=lambda m: PASS)
    boss = Task(ResponderAgent("boss", model, prompt="boss"), interactive=True, limits=TaskLimits(max_stalled_steps=2))
    result = await boss.run("4", user_default=PASS)
    assert (result.outcome, result.content) == ("stalled", "4")
