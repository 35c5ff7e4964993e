"""Tasks and sub-tasks: delegation, the responder order, recipient routing, tool routing, trees and DAGs, history."""

from __future__ import annotations

from typing import Any

import pytest
from tests.orchestration.tasks_support import requests_of, routed

from podium import AIMessage, Event, HumanMessage, Message, ReactAgent, Runtime, SideChannel, StepRecorded, ToolMessage
from podium.errors import UsageError
from podium.orchestration.tasks.task import ResponderAgent, Task, TaskMessage, send_tool
from podium.testing import ScriptedModel, tool_call


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def steps(events: list[Event]) -> list[tuple[tuple[str, ...], str]]:
    return [(e.path, e.value["responder"]) for e in events if isinstance(e, StepRecorded) and isinstance(e.value, dict)]


def boss_script(messages: list[Message]) -> str:
    last = messages[-1]
    if isinstance(last, HumanMessage) and last.name is not None:
        return f"DONE {last.name} says: {last.content}"
    return "Please multiply 6 by 7."


def worker_script(messages: list[Message]) -> Any:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return f"6 x 7 = {last.content}"
    return AIMessage(tool_calls=[tool_call("multiply", {"a": 6, "b": 7}, id="c1")])


async def test_a_parent_delegates_to_a_worker_that_uses_a_tool_and_gets_the_result() -> None:
    model = routed(boss=boss_script, worker=worker_script)
    worker = Task(ResponderAgent("worker", model, prompt="worker", tools=[multiply]))
    boss = Task(ResponderAgent("boss", model, prompt="boss"), sub_tasks=[worker])
    events: list[Event] = []

    result = await boss.run("What is 6 times 7?", on_event=events.append)

    assert (result.outcome, result.reason, result.content) == ("done", "llm signalled done", "worker says: 6 x 7 = 42")
    assert requests_of(model, "boss") == [
        [("human", "What is 6 times 7?")],
        [("human", "What is 6 times 7?"), ("ai", "Please multiply 6 by 7."), ("human", "6 x 7 = 42")],
    ]
    # The worker sees the parent's message as coming from its user; the tool result goes back to its model.
    assert requests_of(model, "worker") == [
        [("human", "Please multiply 6 by 7.")],
        [("human", "Please multiply 6 by 7."), ("ai", ""), ("tool", "42")],
    ]
    assert steps(events) == [
        (("boss",), "llm"),
        (("boss", "worker.1"), "llm"),
        (("boss", "worker.1"), "agent"),
        (("boss", "worker.1"), "llm"),
        (("boss",), "worker"),
        (("boss",), "llm"),
    ]
    assert [e.text for e in events if isinstance(e, SideChannel)] == [
        "boss → worker",
        "worker → boss (done: nobody answered the message from llm)",
    ]


async def test_a_task_is_a_podium_agent_driven_by_the_runtime() -> None:
    model = routed(boss=boss_script, worker=worker_script)
    boss = Task(
        ResponderAgent("boss", model, prompt="boss"),
        sub_tasks=[Task(ResponderAgent("worker", model, prompt="worker", tools=[multiply]))],
    )
    runtime = Runtime()
    ran = await runtime.run(boss, "What is 6 times 7?")
    assert (ran.status, ran.output) == ("completed", "worker says: 6 x 7 = 42")
    thread = await runtime.messages(ran.thread_id)
    assert [(m.kind, m.content) for m in thread] == [("human", "What is 6 times 7?"), ("ai", "worker says: 6 x 7 = 42")]
    # ... and, like any agent, a tool of another agent.
    outer = ReactAgent(
        "front",
        ScriptedModel([AIMessage(tool_calls=[tool_call("boss", {"text": "6*7?"})]), "It is 42."]),
        [boss.as_tool()],
    )
    assert (await runtime.run(outer, "compute")).output == "It is 42."


async def test_the_responder_order_is_agent_llm_user_then_sub_tasks_in_order_added() -> None:
    model = routed()
    first = Task(ResponderAgent("first", model, prompt="first"))
    second = Task(ResponderAgent("second", model, prompt="second"))
    boss = Task(ResponderAgent("boss", model, prompt="boss"), sub_tasks=[first]).add_sub_tasks(second)
    assert boss.responders == ("agent", "llm", "user", "first", "second")
    assert boss.sub_tasks == [first, second]


async def test_without_a_native_answer_the_first_sub_task_takes_the_message() -> None:
    model = routed(first=lambda m: "first here", second=lambda m: "second here")
    boss = Task(
        ResponderAgent("boss"),  # no model: nothing native answers the user's message
        sub_tasks=[
            Task(ResponderAgent("first", model, prompt="first")),
            Task(ResponderAgent("second", model, prompt="second")),
        ],
        done_if_response=["first", "second"],
    )
    result = await boss.run("hello")
    assert (result.content, result.reason) == ("first here", "first answered")
    assert requests_of(model, "second") == []


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(AIMessage(content="TO[b]: hello"), id="TO[name]"),
        pytest.param(AIMessage(content="@b hello"), id="@name"),
        pytest.param(AIMessage(content="hello", metadata={"recipient": "b"}), id="structured-field"),
        pytest.param(AIMessage(tool_calls=[tool_call("send", {"recipient": "b", "content": "hello"})]), id="send-tool"),
    ],
)
async def test_a_message_addressed_to_the_second_of_two_sub_tasks_goes_only_to_it(reply: AIMessage) -> None:
    def boss(messages: list[Message]) -> Any:
        last = messages[-1]
        return f"DONE {last.content}" if isinstance(last, HumanMessage) and last.name == "b" else reply

    model = routed(boss=boss, a=lambda m: "A here", b=lambda m: f"B got {m[-1].content!r}")
    subs = [Task(ResponderAgent(n, model, prompt=n)) for n in ("a", "b")]
    root = Task(ResponderAgent("boss", model, prompt="boss", tools=[send_tool()]), sub_tasks=subs)

    result = await root.run("start")

    assert result.content == "B got 'hello'"
    assert requests_of(model, "a") == []


async def test_an_unknown_recipient_is_answered_with_an_error_the_model_corrects() -> None:
    def boss(messages: list[Message]) -> str:
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.name == "b":
            return f"DONE {last.content}"
        if last.content.startswith("Unknown recipient"):
            return "TO[b]: hello"
        return "TO[zed]: hello"

    model = routed(boss=boss, b=lambda m: "B here")
    root = Task(ResponderAgent("boss", model, prompt="boss"), sub_tasks=[Task(ResponderAgent("b", model, prompt="b"))])
    result = await root.run("start")
    assert result.content == "B here"
    assert requests_of(model, "boss")[1][-1] == (
        "human",
        "Unknown recipient 'zed'. You can address: llm, agent, user, b.",
    )


async def test_a_tool_only_a_sub_task_handles_is_routed_to_it_and_answers_the_call() -> None:
    def lookup(term: str) -> str:
        """Look a term up in the glossary."""
        return {"cpm": "current pending message"}[term]

    def boss(messages: list[Message]) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return f"DONE CPM means {messages[-1].content}"
        return AIMessage(tool_calls=[tool_call("lookup", {"term": "cpm"}, id="c1")])

    model = routed(boss=boss, chatty=lambda m: "I should not be asked")
    chatty = Task(ResponderAgent("chatty", model, prompt="chatty"))  # first sub-task, but it handles no tool
    librarian = Task(ResponderAgent("librarian", handle_only=[lookup]), done_if_response=["agent"])
    root = Task(ResponderAgent("boss", model, prompt="boss", use_only=[lookup]), sub_tasks=[chatty, librarian])

    result = await root.run("What is a CPM?")

    assert result.content == "CPM means current pending message"
    assert [t.name for t in model.requests[0].tools] == ["lookup"]
    # The librarian's result answers the boss's call in the boss's own history: no extra user message.
    assert requests_of(model, "boss")[1] == [
        ("human", "What is a CPM?"),
        ("ai", ""),
        ("tool", "current pending message"),
    ]
    assert requests_of(model, "chatty") == []


async def test_a_tool_nobody_handles_is_answered_with_an_error_the_model_sees() -> None:
    def boss(messages: list[Message]) -> Any:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return f"DONE no luck: {last.content}"
        return AIMessage(tool_calls=[tool_call("teleport", {"to": "Mars"}, id="c1")])

    model = routed(boss=boss)
    root = Task(ResponderAgent("boss", model, prompt="boss", tools=[multiply]))
    result = await root.run("Go to Mars")
    last = model.requests[-1].messages[-1]
    assert isinstance(last, ToolMessage) and last.is_error and last.tool_call_id == "c1"
    assert last.content == (
        "Unknown tool 'teleport': nobody here handles it. Tools handled here: multiply. Call one of these instead."
    )
    assert result.outcome == "done" and result.content.startswith("no luck: Unknown tool 'teleport'")


@pytest.mark.parametrize(("history", "second_call"), [("keep", 3), ("restart", 1)])
async def test_sub_task_history_is_kept_or_restarted_by_configuration(history: str, second_call: int) -> None:
    def boss(messages: list[Message]) -> str:
        answers = [m for m in messages if isinstance(m, HumanMessage) and m.name == "worker"]
        return "DONE" if len(answers) == 2 else f"TO[worker]: job {len(answers) + 1}"

    model = routed(boss=boss, worker=lambda m: f"did {m[-1].content}")
    worker = Task(ResponderAgent("worker", model, prompt="worker"), history=history)  # type: ignore[arg-type]
    root = Task(ResponderAgent("boss", model, prompt="boss"), sub_tasks=[worker])
    await root.run("go")
    first, second = requests_of(model, "worker")
    assert first == [("human", "job 1")]
    assert len(second) == second_call and second[-1] == ("human", "job 2")


async def test_the_root_keeps_its_history_across_runs_of_a_thread() -> None:
    model = routed(boss=lambda m: f"seen {len(m) - 1} message(s)")
    runtime = Runtime()
    root = Task(ResponderAgent("boss", model, prompt="boss"))
    first = await root.run("one", runtime=runtime)
    second = await root.run("two", runtime=runtime, thread_id=first.thread_id)
    assert (first.content, second.content) == ("seen 1 message(s)", "seen 3 message(s)")


async def test_a_sub_task_may_be_shared_by_two_parents_in_a_dag() -> None:
    model = routed(
        root=lambda m: "DONE " + m[-1].content if isinstance(m[-1], HumanMessage) and m[-1].name else "TO[left]: go",
        left=lambda m: "DONE " + m[-1].content if isinstance(m[-1], HumanMessage) and m[-1].name else "TO[right]: go",
        right=lambda m: "DONE " + m[-1].content if isinstance(m[-1], HumanMessage) and m[-1].name else "TO[shared]: go",
        shared=lambda m: "shared work",
    )
    shared = Task(ResponderAgent("shared", model, prompt="shared"))
    right = Task(ResponderAgent("right", model, prompt="right"), sub_tasks=[shared])
    left = Task(ResponderAgent("left", model, prompt="left"), sub_tasks=[shared, right])
    root = Task(ResponderAgent("root", model, prompt="root"), sub_tasks=[left])
    result = await root.run("start")
    assert result.content == "shared work"
    assert root.handled_tools() == frozenset()


def test_cycles_reserved_and_duplicate_names_are_refused() -> None:
    a = Task(ResponderAgent("a"))
    b = Task(ResponderAgent("b"), sub_tasks=[a])
    with pytest.raises(UsageError, match="cycle"):
        a.add_sub_tasks(b)
    with pytest.raises(UsageError, match="reserved"):
        a.add_sub_tasks(Task(ResponderAgent("user")))
    with pytest.raises(UsageError, match="two different tasks"):
        b.add_sub_tasks(Task(ResponderAgent("x"), sub_tasks=[Task(ResponderAgent("a"))]))
    with pytest.raises(UsageError, match="not valid"):
        ResponderAgent("no spaces")


def test_a_pending_message_has_a_json_summary() -> None:
    message = TaskMessage(content="hi", sender="llm", recipient="b", tool_calls=[tool_call("f", {}, id="1")], done=True)
    assert message.to_dict() == {
        "kind": "task_message",
        "content": "hi",
        "sender": "llm",
        "recipient": "b",
        "tool_calls": [{"id": "1", "name": "f", "arguments": "{}"}],
        "done": True,
    }
