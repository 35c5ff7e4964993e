"""Scoped context: older tool rounds are folded into one line each, and nothing is lost from the record."""

from __future__ import annotations

import pytest

from examples import faang
from podium import AIMessage, HumanMessage, Runtime, SystemMessage, ToolCall, ToolMessage, UsageError
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


async def test_scoped_supervisor_records_everything_but_shows_folded_rounds() -> None:
    model = FunctionModel(faang.seed_reply)
    runtime = Runtime()
    result = await runtime.run(faang.build(model, "scoped"), faang.QUESTION, thread_id="t")
    assert result.output is not None and "1,977,586" in result.output
    math_calls = [r for r in model.requests if any(t.name == "add" for t in r.tools)]
    adds = len(faang.SEED_ADDS)
    assert adds >= 3 and len(math_calls) == adds + 1
    last = math_calls[-1].messages
    assert sum(isinstance(m, ToolMessage) for m in last) == 1  # the latest round only
    assert last[1].content.count(") -> ") == adds - 1  # the older rounds, one line each
    events = await runtime.events("t")
    recorded = [
        e
        for e in events
        if getattr(e, "message", None) is not None and isinstance(e.message, ToolMessage) and e.message.name == "add"
    ]  # type: ignore[attr-defined]
    assert len(recorded) == adds  # the full history is in the store


def test_worker_rounds_must_be_positive() -> None:
    with pytest.raises(UsageError, match="worker_rounds"):
        create_supervisor([], model=FunctionModel(faang.seed_reply), worker_rounds=0)
