"""The supervisor's behaviour: context policies, valid histories, guards, interrupts, streaming and options."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from examples.faang import QUESTION, build, seed_reply
from podium import (
    AIMessage,
    Expectation,
    HumanMessage,
    Limits,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    SideChannel,
    SQLiteStore,
    TokenDelta,
    ToolMessage,
    UsageError,
)
from podium.models.openai_format import request_to_openai
from podium.orchestration.supervisor import Supervisor, SupervisorOptions, SwarmOptions
from podium.orchestration.supervisor.handoff import create_handoff_tool, history_problems, repair_history
from podium.orchestration.supervisor.supervisor import create_supervisor
from podium.testing import FunctionModel, tool_call

FIGURES = ["67,317", "164,000", "1,551,000", "14,000", "181,269"]


def results(messages: list[Message]) -> list[str]:
    """The tool results a model is shown: tool messages, and the lines of a scoped worker's "Done so far" note."""
    notes = [m.content.split("Done so far:\n", 1)[-1] for m in messages if "Done so far:" in m.content]
    folded = [line.split(" -> ", 1)[1] for note in notes for line in note.splitlines() if " -> " in line]
    return folded + [m.content for m in messages if isinstance(m, ToolMessage)]


def chars(request: ModelRequest) -> int:
    return len(json.dumps(request_to_openai(request)["messages"], ensure_ascii=False))


def caller(request: ModelRequest) -> str:
    names = {t.name for t in request.tools}
    if "web_search" in names:
        return "research"
    if "add" in names:
        return "math"
    return "supervisor"


# --- context policies ---------------------------------------------------------------------------------------------


async def test_scoped_answers_with_far_fewer_characters_and_workers_keep_what_they_need() -> None:
    shared_model, scoped_model = FunctionModel(seed_reply), FunctionModel(seed_reply)
    shared = await Runtime().run(build(shared_model, "shared"), QUESTION)
    scoped = await Runtime().run(build(scoped_model, "scoped"), QUESTION)
    assert shared.output == scoped.output == "The combined headcount of the FAANG companies in 2024 is 1,977,586."
    assert len(scoped_model.requests) == len(shared_model.requests) == 9
    shared_chars = sum(chars(r) for r in shared_model.requests)
    scoped_chars = sum(chars(r) for r in scoped_model.requests)
    assert scoped_chars < 0.55 * shared_chars, (scoped_chars, shared_chars)

    for request in scoped_model.requests:
        text = json.dumps(request_to_openai(request)["messages"], ensure_ascii=False)
        who = caller(request)
        if who != "supervisor":
            assert QUESTION in text, f"the {who} expert does not see the question"
            assert len(request.messages) <= 2 + 2 * 3  # system, task, its own tool rounds: nothing else
        if who == "math":
            assert all(figure in text for figure in FIGURES), "the math expert lacks a figure"
        if who == "supervisor":  # results, not internals
            assert not any(isinstance(m, ToolMessage) and m.name in ("web_search", "add") for m in request.messages)
            assert "web_search" not in text and '"add"' not in text


async def test_supervisor_sees_results_as_tool_answers_in_scoped_mode() -> None:
    model = FunctionModel(seed_reply)
    runtime = Runtime()
    result = await runtime.run(build(model, "scoped"), QUESTION, thread_id="t")
    history = await runtime.messages("t")
    assert [(m.kind, getattr(m, "name", None)) for m in history] == [
        ("human", None),
        ("ai", "supervisor"),
        ("tool", "transfer_to_research_expert"),
        ("ai", "supervisor"),
        ("tool", "transfer_to_math_expert"),
        ("ai", "supervisor"),
    ]
    assert history[4].content == history[5].content == result.output
    task = json.loads(history[3].tool_calls[0].arguments)["task"]  # type: ignore[union-attr]
    assert all(figure in task for figure in FIGURES)


# --- valid histories ----------------------------------------------------------------------------------------------


def team_reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    """Supervisor: hands off to alice and bob at once, with a lookup between them; then answers. Workers answer."""
    names = [t.name for t in request.tools]
    last_human = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    messages = messages[last_human:]  # this turn
    if "transfer_to_alice" not in names:
        who = "alice" if "alice_tool" in names else "bob"
        if who == "alice" and "alice's result" not in results(messages):
            return AIMessage(tool_calls=[tool_call("alice_tool", {}, id="a1")])
        return AIMessage(content=f"{who} says hi")
    if not any(isinstance(m, AIMessage) and m.name == "supervisor" and m.tool_calls for m in messages):
        task = {"task": "say hi"} if request.tools[1].parameters.get("required") else {}
        return AIMessage(
            tool_calls=[
                tool_call("transfer_to_alice", task, id="h1"),
                tool_call("lookup", {"topic": "x"}, id="l1"),
                tool_call("transfer_to_bob", task, id="h2"),
            ]
        )
    return AIMessage(content="both said hi")


def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: found"


def alice_tool() -> str:
    """Alice's tool."""
    return "alice's result"


OPTIONS = [
    {"context": "scoped"},
    {"context": "scoped", "add_handoff_messages": False},
    *[
        {"context": "shared", "output_mode": mode, "add_handoff_messages": h, "add_handoff_back_messages": b}
        for mode, h, b in itertools.product(("last_message", "full_history"), (True, False), (True, False, None))
    ],
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
async def test_parallel_handoffs_mixed_with_tools_keep_every_history_valid(options: dict[str, Any]) -> None:
    model = FunctionModel(team_reply)
    alice = ReactAgent("alice", model, [alice_tool], prompt="You are Alice.")
    bob = ReactAgent("bob", model, prompt="You are Bob.")
    supervisor = create_supervisor(
        [alice, bob], model=model, tools=[lookup], prompt="Lead.", parallel_tool_calls=True, **options
    )
    runtime = Runtime()
    first = await runtime.run(supervisor, "greet", thread_id="t")
    assert first.output == "both said hi"
    second = await runtime.run(supervisor, "again", thread_id="t")  # the stored history feeds the next turn
    assert second.output == "both said hi"
    assert model.requests[0].settings.parallel_tool_calls is True
    for request in model.requests:
        assert history_problems(request.messages) == [], request_to_openai(request)["messages"]
    systems = [r.messages[0].content for r in model.requests]
    assert systems.count("You are Bob.") == 2 and systems.count("You are Alice.") == 4  # both ran, each turn
    turn_two = model.requests[systems.index("Lead.", 3)]
    assert [m.content for m in turn_two.messages if isinstance(m, HumanMessage)][:1] == ["greet"]  # memory
    stored = await runtime.messages("t")
    assert history_problems(repair_history(stored)) == []
    calls = [c.id for m in repair_history(stored) if isinstance(m, AIMessage) for c in m.tool_calls]
    answers = [m.tool_call_id for m in repair_history(stored) if isinstance(m, ToolMessage)]
    assert sorted(calls) == sorted(answers)  # every call answered once (the scripted ids repeat each turn)


def test_history_checks_and_repair() -> None:
    call = AIMessage(tool_calls=[tool_call("a", {}, id="1"), tool_call("b", " {\n}", id="2")], name="s")
    ok = [
        HumanMessage(content="q"),
        call,
        ToolMessage(content="x", tool_call_id="1"),
        ToolMessage(content="y", tool_call_id="2"),
    ]
    assert history_problems(ok) == []
    missing = [HumanMessage(content="q"), call, ToolMessage(content="x", tool_call_id="1"), AIMessage(content="done")]
    assert history_problems(missing) == ["message 1: calls ['1', '2'] answered by ['1']"]
    assert history_problems([ToolMessage(content="x", tool_call_id="9")]) == [
        "message 0: tool result '9' answers no pending call"
    ]
    repaired = repair_history(missing)
    assert history_problems(repaired) == []
    assert [c.id for c in repaired[1].tool_calls] == ["1"]  # type: ignore[union-attr]
    out_of_order = [call, ToolMessage(content="y", tool_call_id="2"), ToolMessage(content="x", tool_call_id="1")]
    fixed = repair_history(out_of_order)
    assert [m.tool_call_id for m in fixed[1:]] == ["1", "2"]  # type: ignore[union-attr]
    assert fixed[0].tool_calls[1].arguments == "{}"  # type: ignore[union-attr]


# --- guards -------------------------------------------------------------------------------------------------------


async def test_a_supervisor_that_keeps_handing_off_stops_at_the_guard() -> None:
    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        if caller(request) == "supervisor" and "transfer_to_helper" in {t.name for t in request.tools}:
            return AIMessage(tool_calls=[tool_call("transfer_to_helper", {"task": "try again"})])
        return AIMessage(content="not sure")

    model = FunctionModel(reply)
    helper = ReactAgent("helper", model, prompt="Help.")
    supervisor = create_supervisor([helper], model=model, max_handoffs=3, max_steps=100)
    result = await Runtime().run(supervisor, "loop forever")
    assert result.status == "limit_exceeded" and result.limit == "handoffs"
    assert "limit of 3 handoffs" in result.reason
    assert sum(1 for r in model.requests if r.messages[0].content == "Help.") == 3


async def test_a_supervisor_calling_a_tool_it_lacks_hears_what_it_has_and_gives_up_after_its_retries() -> None:
    """An unknown tool is answered with the tools the supervisor was offered (its handoffs too), and rounds of
    nothing but failed calls end the run after ``max_tool_retries``, as for a ``ReactAgent``."""

    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        return AIMessage(tool_calls=[tool_call("does_not_exist", {})])

    model = FunctionModel(reply)
    helper = ReactAgent("helper", model, prompt="Help.")
    supervisor = create_supervisor([helper], model=model, max_tool_retries=2)
    result = await Runtime().run(supervisor, "anything")
    assert result.status == "failed" and "gave up after 2 consecutive failing tool calls" in result.reason
    assert len(model.requests) == 3  # the first round, then two more
    told = [m for m in model.requests[-1].messages if isinstance(m, ToolMessage)][-1]
    assert told.is_error
    assert told.content == (
        "Unknown tool 'does_not_exist'. Available tools: transfer_to_helper. Call one of these instead."
    )
    with pytest.raises(UsageError, match="max_tool_retries"):
        SupervisorOptions(max_tool_retries=-1)


async def test_token_budget_ends_the_run_with_a_typed_outcome() -> None:
    model = FunctionModel(seed_reply)
    supervisor = build(model, "scoped")
    result = await Runtime().run(supervisor, QUESTION, limits=Limits(max_tokens=600))
    assert result.status == "limit_exceeded" and result.limit == "tokens"
    assert 1 < len(model.requests) < 9


def test_bad_options_are_refused() -> None:
    model = FunctionModel(seed_reply)
    worker = ReactAgent("w", model)
    with pytest.raises(UsageError, match="full_history"):
        create_supervisor([worker], model=model, output_mode="full_history")
    with pytest.raises(UsageError, match="unique"):
        create_supervisor([worker, ReactAgent("w", model)], model=model)
    with pytest.raises(UsageError, match="unknown agent"):
        create_supervisor([worker], model=model, tools=[create_handoff_tool("nobody")])
    with pytest.raises(UsageError, match="context"):
        create_supervisor([worker], model=model, context="everything")  # type: ignore[arg-type]


# --- interrupts and streaming through the hierarchy ---------------------------------------------------------------


async def approve_search(ctx: RunContext[Any], query: str) -> str:
    """Search the web, after the user approves.

    Args:
        query: what to search.
    """
    await ctx.progress(f"about to search for {query}")
    answer = await ctx.ask(
        f"Search the web for {query!r}?", expectation=Expectation(type="choice", options=["yes", "no"])
    )
    return "FAANG: 1,977,586 people" if answer == "yes" else "not searched"


def approval_reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    names = {t.name for t in request.tools}
    if "approve_search" in names:
        if not results(messages):
            return AIMessage(tool_calls=[tool_call("approve_search", {"query": "FAANG"}, id="s1")])
        return AIMessage(content="Found: " + results(messages)[0])
    if not any(isinstance(m, ToolMessage) for m in messages):
        return AIMessage(tool_calls=[tool_call("transfer_to_researcher", {"task": "count FAANG staff"}, id="h1")])
    return AIMessage(content="Answer: " + next(m.content for m in messages if isinstance(m, ToolMessage)))


def approval_team(model: FunctionModel) -> Any:
    researcher = ReactAgent("researcher", model, [approve_search], prompt="Research.")
    return create_supervisor([researcher], model=model, prompt="Lead.")


async def test_an_interrupt_in_a_worker_survives_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    first_model = FunctionModel(approval_reply)
    store = SQLiteStore(db)
    events: list[Any] = []
    first = await Runtime(store).run(approval_team(first_model), "how many?", thread_id="t", on_event=events.append)
    await store.close()
    assert first.status == "interrupted"
    [interrupt] = first.interrupts
    assert interrupt.path == ("supervisor", "h1", "researcher", "s1")
    assert interrupt.prompt == "Search the web for 'FAANG'?"
    assert len(first_model.requests) == 2
    [progress] = [e for e in events if isinstance(e, SideChannel)]  # a worker's tool's note reaches the client
    assert progress.path == ("supervisor", "h1", "researcher", "s1") and progress.text == "about to search for FAANG"

    second_model = FunctionModel(approval_reply)  # a new process: new store object, runtime and agent
    store = SQLiteStore(db)
    events: list[Any] = []
    resumed = await Runtime(store).resume(approval_team(second_model), "t", "yes", on_event=events.append)
    assert resumed.status == "completed"
    tokens = [e for e in events if isinstance(e, TokenDelta)]  # the worker's tokens reach the client
    assert {e.path for e in tokens} == {("supervisor",), ("supervisor", "h1", "researcher")}
    assert "".join(e.text for e in tokens if len(e.path) == 3) == "Found: FAANG: 1,977,586 people"
    assert resumed.output == "Answer: Found: FAANG: 1,977,586 people"
    # Nothing completed is asked again: only the researcher's next call and the supervisor's answer are new.
    assert [r.messages[0].content for r in second_model.requests] == ["Research.", "Lead."]
    # the researcher is shown its task with the search folded in; the supervisor, its handoff answered
    assert [r.messages[-1].kind for r in second_model.requests] == ["human", "tool"]
    assert (
        second_model.requests[0]
        .messages[-1]
        .content.endswith('approve_search(query="FAANG") -> FAANG: 1,977,586 people')
    )
    stored = await Runtime(store).messages("t")
    assert history_problems(stored) == []
    await store.close()


async def test_parallel_workers_asking_at_once_suspend_together_and_resume() -> None:
    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        names = {t.name for t in request.tools}
        done = results(messages)
        if "approve_search" in names:
            if not done:
                return AIMessage(
                    tool_calls=[tool_call("approve_search", {"query": request.messages[0].content}, id="q")]
                )
            return AIMessage(content=done[0])
        if not done:
            return AIMessage(
                tool_calls=[
                    tool_call("transfer_to_left", {"task": "l"}, id="L"),
                    tool_call("transfer_to_right", {"task": "r"}, id="R"),
                ]
            )
        return AIMessage(content=" & ".join(done))

    def team(model: FunctionModel) -> Any:
        left = ReactAgent("left", model, [approve_search], prompt="left")
        right = ReactAgent("right", model, [approve_search], prompt="right")
        return create_supervisor([left, right], model=model, parallel_tool_calls=True)

    runtime = Runtime()
    first = await runtime.run(team(FunctionModel(reply)), "both", thread_id="t")
    assert first.status == "interrupted"
    assert sorted(i.path for i in first.interrupts) == [
        ("supervisor", "L", "left", "q"),
        ("supervisor", "R", "right", "q"),
    ]
    answers = {i.id: ("yes" if i.path[2] == "left" else "no") for i in first.interrupts}
    done = await runtime.resume(team(FunctionModel(reply)), "t", answers)
    assert done.status == "completed"
    assert done.output == "FAANG: 1,977,586 people & not searched"
    assert history_problems(await runtime.messages("t")) == []


def test_options_are_one_validated_object_shared_by_the_factory_and_the_class() -> None:
    model = FunctionModel(seed_reply)
    worker = ReactAgent("w", model)
    made = create_supervisor([worker], model=model, max_handoffs=3, context="shared", output_mode="full_history")
    assert made.options == SupervisorOptions(max_handoffs=3, context="shared", output_mode="full_history")
    direct = Supervisor([worker], model, options=made.options)
    assert direct.options is made.options and direct.worker_rounds is None  # rounds fold in the scoped policy only
    with pytest.raises(UsageError, match="worker_rounds"):
        SupervisorOptions(worker_rounds=-1)
    with pytest.raises(UsageError, match="max_steps"):
        SwarmOptions(max_steps=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.options.max_steps = 3  # type: ignore[misc]
