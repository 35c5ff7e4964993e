"""Scoped context: older tool rounds are folded into one line each, and nothing is lost from the record."""

from __future__ import annotations

import pytest

from examples import faang
from podium import AIMessage, HumanMessage, ReactAgent, Runtime, SystemMessage, ToolCall, ToolMessage, UsageError
from podium.orchestration import create_supervisor
from podium.orchestration.supervisor._loop import compact_rounds
from podium.testing import FunctionModel


def round_(n: int) -> list[AIMessage | ToolMessage]:
    call = ToolCall(id=f"c{n}", name="add", arguments=f'{{"a": {n}, "b": 1}}')
    return [AIMessage(tool_calls=[call]), ToolMessage(content=f"{n + 1}.0", tool_call_id=f"c{n}", name="add")]


def test_older_rounds_fold_into_the_task_and_the_latest_stay_whole() -> None:
    messages = [SystemMessage(content="s"), HumanMessage(content="Add things."), *round_(1), *round_(2), *round_(3)]
    shown = compact_rounds(messages, 2, keep=1)
    assert shown[:2] == [
        SystemMessage(content="s"),
        HumanMessage(content="Add things.\n\nDone so far:\nadd(a=1, b=1) -> 2.0\nadd(a=2, b=1) -> 3.0"),
    ]
    assert shown[2:] == round_(3)
    assert compact_rounds(messages, 2, keep=3) == messages  # nothing to fold
    answered = [*messages, AIMessage(content="6")]  # a final answer counts as the last round
    assert compact_rounds(answered, 2, keep=1)[-1] == AIMessage(content="6")
    assert len(messages) == 8  # the input is not changed


def test_without_a_task_message_the_note_stands_alone_and_bad_json_is_kept_verbatim() -> None:
    odd = AIMessage(tool_calls=[ToolCall(id="x", name="f", arguments="{oops")])
    messages = [odd, ToolMessage(content="err", tool_call_id="x", name="f"), *round_(1)]
    shown = compact_rounds(messages, 0, keep=1)
    assert shown[0] == HumanMessage(content="Done so far:\nf({oops) -> err")


async def test_scoped_workers_see_only_their_task_and_what_they_did_and_nothing_is_lost() -> None:
    model = FunctionModel(faang.seed_reply)
    runtime = Runtime()
    result = await runtime.run(faang.build(model, "scoped"), faang.QUESTION, thread_id="t")
    assert result.output is not None and "1,977,586" in result.output
    math_calls = [r for r in model.requests if any(t.name == "add" for t in r.tools)]
    adds = len(faang.SEED_ADDS)
    assert adds >= 3 and len(math_calls) == adds + 1
    for done, request in enumerate(math_calls):  # its prompt and its task, with every call and result so far
        system, task = request.messages
        assert isinstance(system, SystemMessage) and isinstance(task, HumanMessage)
        assert task.content.startswith(faang.SCOPED_MATH_TASK) and task.content.count(") -> ") == done
    assert "add(a=67317, b=164000) -> 231317.0" in math_calls[-1].messages[1].content
    last = [r for r in model.requests if any(t.name == "transfer_to_math_expert" for t in r.tools)][-1]
    assert isinstance(last.messages[-1], ToolMessage)  # the supervisor keeps its latest round whole
    events = await runtime.events("t")
    recorded = [
        e
        for e in events
        if getattr(e, "message", None) is not None and isinstance(e.message, ToolMessage) and e.message.name == "add"
    ]  # type: ignore[attr-defined]
    assert len(recorded) == adds  # the full history is in the store


async def test_worker_rounds_keeps_the_latest_rounds_whole() -> None:
    model = FunctionModel(faang.seed_reply)
    math_expert = ReactAgent("math_expert", model, [faang.add, faang.multiply], prompt=faang.MATH_PROMPT)
    research_expert = ReactAgent("research_expert", model, [faang.web_search], prompt=faang.RESEARCH_PROMPT)
    await Runtime().run(create_supervisor([research_expert, math_expert], model=model, worker_rounds=1), faang.QUESTION)
    last = [r for r in model.requests if any(t.name == "add" for t in r.tools)][-1].messages
    assert sum(isinstance(m, ToolMessage) for m in last) == 1  # the latest round only
    assert last[1].content.count(") -> ") == len(faang.SEED_ADDS) - 1  # the older rounds, one line each


def test_worker_rounds_must_not_be_negative() -> None:
    with pytest.raises(UsageError, match="worker_rounds"):
        create_supervisor([], model=FunctionModel(faang.seed_reply), worker_rounds=-1)
