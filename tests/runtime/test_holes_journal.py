"""Journal guarantees found missing by fault injection: keys by position, exact steps, unserialisable results."""

from __future__ import annotations

from typing import Any

import pytest

from podium import (
    AIMessage,
    HumanMessage,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    StepRecorded,
    Store,
    ToolMessage,
    ToolReturn,
    UsageError,
)
from podium.messages import ToolCall, valid_history
from podium.testing import FunctionModel, tool_call


async def test_an_answer_goes_to_the_question_it_answers_when_the_model_reuses_call_ids(store: Store) -> None:
    paid: list[int] = []

    async def pay(ctx: RunContext[Any], amount: int) -> str:
        """Pay an amount after the human confirms."""
        if await ctx.ask(f"Pay {amount} EUR?") != "yes":
            return "not paid"
        paid.append(amount)
        return f"paid {amount}"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if len(results) == 2:
            return AIMessage(content=" / ".join(r.content for r in results))
        amount = 10 if not results else 5000
        return AIMessage(tool_calls=[tool_call("pay", {"amount": amount}, id="call_0")])  # the same id every turn

    runtime = Runtime(store)
    agent = ReactAgent("payer", FunctionModel(model), [pay])
    first = await runtime.run(agent, "pay twice", thread_id="t")
    assert [i.prompt for i in first.interrupts] == ["Pay 10 EUR?"]
    second = await runtime.resume(agent, "t", "yes")
    assert second.status == "interrupted", "the second payment took the first one's answer"
    assert [i.prompt for i in second.interrupts] == ["Pay 5000 EUR?"]
    done = await runtime.resume(agent, "t", "no")
    assert done.output == "paid 10 / not paid" and paid == [10]


def test_two_calls_with_one_id_keep_one_result_each() -> None:
    calls = [ToolCall(id="x", name="a", arguments="{}"), ToolCall(id="x", name="b", arguments="{}")]
    history: list[Message] = [
        HumanMessage(content="go"),
        AIMessage(tool_calls=calls),
        ToolMessage(content="from a", tool_call_id="x", name="a"),
        ToolMessage(content="from b", tool_call_id="x", name="b"),
    ]
    shown = valid_history(history)
    assert [m.content for m in shown if isinstance(m, ToolMessage)] == ["from a", "from b"]
    assert shown == history


async def test_a_step_value_that_is_not_json_is_refused_when_recorded(store: Store) -> None:
    import datetime

    seen: list[Any] = []

    async def when(ctx: RunContext[Any]) -> str:
        """Note the time."""
        for value in ({"at": 1}, datetime.date(2026, 1, 2), {1, 2}, (1, 2), {1: "a"}, float("nan")):
            try:
                seen.append(await ctx.step(lambda v=value: _const(v)))
            except UsageError as exc:
                seen.append(str(exc))
        return "noted"

    model = FunctionModel(
        lambda m, r: "done" if isinstance(m[-1], ToolMessage) else AIMessage(tool_calls=[tool_call("when")])
    )
    result = await Runtime(store).run(ReactAgent("a", model, [when]), "go", thread_id="t")
    assert result.status == "completed"
    assert seen[0] == {"at": 1}
    assert all(isinstance(s, str) and "must be JSON data" in s for s in seen[1:]), seen
    steps = [e.value for e in await Runtime(store).events("t") if isinstance(e, StepRecorded)]
    assert steps == [{"at": 1}]  # only the exact value was journaled


async def _const(value: Any) -> Any:
    return value


def test_the_json_check_walks_plain_values_and_writes_the_others_as_before() -> None:
    import enum

    from podium.runtime._values import plain_json as _plain_json
    from podium.runtime._values import storable

    def _check_exact_json(value: Any, what: str) -> None:
        storable(value, what)

    class Size(enum.IntEnum):
        SMALL = 1

    deep: list[Any] = []
    for _ in range(100):
        deep = [deep]
    cycle: list[Any] = []
    cycle.append(cycle)
    plain = {"a": [1, -2.5, True, None, "caf\u00e9"], "b": {"c": 2**62}}
    assert _plain_json(plain)
    assert not _plain_json(["\ud800"]) and not _plain_json({"\ud800": 1})  # stored with U+FFFD in its place
    for value in (plain, 2**70, deep, Size.SMALL, {"size": Size.SMALL}):  # come back equal: taken
        _check_exact_json(value, "the value")
    assert not _plain_json(2**70) and not _plain_json(deep) and not _plain_json(Size.SMALL)
    for value in (10**5000, float("inf"), [float("nan")], cycle, {"k": (1,)}, {2: "x"}):  # refused
        with pytest.raises(UsageError, match="must be JSON data"):
            _check_exact_json(value, "the value")


async def test_an_unserialisable_tool_result_goes_back_to_the_model_naming_the_tool(store: Store) -> None:
    def tuple_keys() -> Any:
        """Return data with tuple keys."""
        return {(1, 2): "x"}

    def cycle() -> Any:
        """Return data that contains itself."""
        data: list[Any] = []
        data.append(data)
        return ToolReturn(content="ok", artifact=data)

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content="; ".join(m.content for m in messages if isinstance(m, ToolMessage)))
        return AIMessage(tool_calls=[tool_call("tuple_keys", id="a"), tool_call("cycle", id="b")])

    result = await Runtime(store).run(ReactAgent("a", FunctionModel(model), [tuple_keys, cycle]), "go")
    assert result.status == "completed", result.reason
    assert "tool 'tuple_keys' returned a result that cannot be serialised" in result.output
    assert "tool 'cycle' returned a result that cannot be serialised" in result.output


async def test_an_empty_reply_gets_one_nudge_then_is_accepted(store: Store) -> None:
    requests: list[ModelRequest] = []

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        requests.append(request)
        return AIMessage(content="" if len(requests) != 2 or len(messages) > 99 else "here you go")

    runtime = Runtime(store)
    agent = ReactAgent("a", FunctionModel(model), [])
    first = await runtime.run(agent, "hello", thread_id="t")
    assert first.status == "completed" and first.output == "here you go"
    assert "was empty" in str(requests[1].messages[-1].content) and len(requests) == 2
    second = await runtime.run(agent, "again", thread_id="t")  # empty, nudged, empty again: accepted
    assert second.status == "completed" and second.output == "" and len(requests) == 4
    shown = requests[3].messages
    assert [m.kind for m in shown] == ["human", "ai", "human", "system"]  # the empty replies are left out
