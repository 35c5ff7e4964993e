"""The ReAct agent through the runtime: tool loop, parallel calls, errors back to the model, limits, events."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from podium import (
    AIMessage,
    ErrorEvent,
    Limits,
    Message,
    MessageAdded,
    ModelRequest,
    ModelRetry,
    ReactAgent,
    RunContext,
    RunEnded,
    RunStarted,
    Runtime,
    SideChannel,
    Store,
    TokenDelta,
    ToolMessage,
    ToolReturn,
    ToolStarted,
    UsageError,
)
from podium.models.openai_format import request_to_openai
from podium.testing import FunctionModel, ScriptedModel, tool_call


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def test_tool_loop_answers_and_stores_a_valid_history(store: Store) -> None:
    model = ScriptedModel([AIMessage(tool_calls=[tool_call("add", {"a": 2, "b": 3}, id="c1")]), "The sum is 5."])
    runtime = Runtime(store)
    result = await runtime.run(ReactAgent("calc", model, [add], prompt="Be exact."), "2+3?", thread_id="t")
    model.assert_complete()
    assert result.status == "completed" and result.output == "The sum is 5."
    assert result.usage.requests == 2
    second = request_to_openai(model.requests[1])["messages"]
    assert second == [
        {"role": "system", "content": "Be exact."},
        {"role": "user", "content": "2+3?"},
        {
            "role": "assistant",
            "content": None,
            "name": "calc",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
            ],
        },
        {"role": "tool", "content": "5.0", "tool_call_id": "c1"},
    ]
    history = await runtime.messages("t")
    assert [m.kind for m in history] == ["human", "ai", "tool", "ai"]


async def test_memory_across_turns_of_a_thread(store: Store) -> None:
    model = FunctionModel(lambda messages, r: f"I have seen {len(messages)} messages")
    runtime = Runtime(store)
    agent = ReactAgent("chat", model)
    await runtime.run(agent, "one", thread_id="t")
    second = await runtime.run(agent, "two", thread_id="t")
    assert second.output == "I have seen 3 messages"


async def test_parallel_tool_calls_run_concurrently_and_answer_in_call_order(store: Store) -> None:
    running = 0
    peak = 0

    async def slow(label: str, delay: float) -> str:
        """Wait, then return the label."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(delay)
        running -= 1
        return label

    calls = [
        tool_call("slow", {"label": "A", "delay": 0.05}, id="a"),
        tool_call("slow", {"label": "B", "delay": 0.0}, id="b"),
    ]
    model = ScriptedModel([AIMessage(tool_calls=calls), "done"])
    runtime = Runtime(store)
    await runtime.run(ReactAgent("p", model, [slow]), "go", thread_id="t")
    assert peak == 2
    tools = [m for m in await runtime.messages("t") if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content) for m in tools] == [("a", "A"), ("b", "B")]


async def test_model_mistakes_go_back_to_the_model_which_corrects_itself(store: Store) -> None:
    def broken(x: int) -> int:
        """Fail."""
        raise RuntimeError("disk full")

    def picky(x: int) -> int:
        """Refuse odd numbers."""
        if x % 2:
            raise ModelRetry("x must be even; try x+1")
        return x

    model = ScriptedModel(
        [
            AIMessage(tool_calls=[tool_call("nope", {}, id="1")]),
            AIMessage(tool_calls=[tool_call("add", '{"a": 1,', id="2")]),
            AIMessage(tool_calls=[tool_call("add", {"a": "x", "b": 1}, id="3")]),
            AIMessage(tool_calls=[tool_call("broken", {"x": 1}, id="4"), tool_call("picky", {"x": 1}, id="5")]),
            AIMessage(tool_calls=[tool_call("add", {"a": 1, "b": 1}, id="6")]),
            "fixed",
        ]
    )
    runtime = Runtime(store)
    result = await runtime.run(ReactAgent("calc", model, [add, broken, picky], max_tool_retries=5), "go", thread_id="t")
    assert result.status == "completed" and result.output == "fixed"
    errors = {
        m.tool_call_id: m.content for m in await runtime.messages("t") if isinstance(m, ToolMessage) and m.is_error
    }
    assert errors["1"].startswith("Unknown tool 'nope'. Available tools: add, broken, picky")
    assert "not valid JSON" in errors["2"]
    assert "a: Input should be a valid number" in errors["3"]
    assert errors["4"] == "Error: tool 'broken' failed with RuntimeError: disk full"
    assert errors["5"] == "x must be even; try x+1"
    assert "6" not in errors
    # what the model was shown next contains the error, so it could correct itself
    assert any("Unknown tool 'nope'" in str(m.get("content")) for m in request_to_openai(model.requests[1])["messages"])


async def test_retry_bound_stops_a_model_that_keeps_failing(store: Store) -> None:
    model = FunctionModel(lambda m, r: AIMessage(tool_calls=[tool_call("missing")]))
    result = await Runtime(store).run(ReactAgent("x", model, [add], max_tool_retries=2), "go")
    assert result.status == "failed" and "gave up after 2 consecutive failing tool calls" in result.reason
    assert len(model.requests) == 3


async def test_tool_exceptions_can_end_the_run_instead(store: Store) -> None:
    def broken() -> str:
        """Fail."""
        raise KeyError("missing row")

    model = ScriptedModel([AIMessage(tool_calls=[tool_call("broken")])])
    runtime = Runtime(store)
    result = await runtime.run(ReactAgent("x", model, [broken], handle_tool_errors=False), "go", thread_id="t")
    assert result.status == "failed" and result.reason == "KeyError: 'missing row'"
    assert isinstance(result.error, KeyError)
    errors = [e for e in await runtime.events("t") if isinstance(e, ErrorEvent)]
    assert [(e.error, e.message) for e in errors] == [("KeyError", "'missing row'")]


async def test_step_limit_and_budgets_end_with_typed_outcomes(store: Store) -> None:
    looping = FunctionModel(lambda m, r: AIMessage(tool_calls=[tool_call("add", {"a": 1, "b": 1})]))
    runtime = Runtime(store)
    steps = await runtime.run(ReactAgent("loop", looping, [add], max_steps=3), "go")
    assert (steps.status, steps.limit) == ("limit_exceeded", "steps")
    assert "step limit of 3" in steps.reason

    calls = await runtime.run(ReactAgent("loop", looping, [add]), "go", limits=Limits(max_model_calls=4))
    assert (calls.status, calls.limit, calls.usage.requests) == ("limit_exceeded", "model_calls", 4)

    tokens = await runtime.run(ReactAgent("loop", looping, [add]), "go", limits=Limits(max_tokens=300))
    assert tokens.status == "limit_exceeded" and tokens.limit == "tokens" and "budget of 300" in tokens.reason

    async def sleepy(messages: list[Message], request: ModelRequest) -> str:
        await asyncio.sleep(5)
        return "late"

    timed = await runtime.run(ReactAgent("slow", FunctionModel(sleepy)), "go", limits=Limits(timeout=0.05))
    assert (timed.status, timed.limit) == ("limit_exceeded", "time")


async def test_events_are_typed_tagged_with_paths_and_streamed(store: Store) -> None:
    async def report(ctx: RunContext[Any], text: str) -> ToolReturn:
        """Write a report."""
        await ctx.progress("writing the report...")
        return ToolReturn(content="report ready", artifact={"report": text})

    model = ScriptedModel([AIMessage(tool_calls=[tool_call("report", {"text": "Q3"}, id="r1")]), "Here it is."])
    runtime = Runtime(store)
    streamed = [e async for e in runtime.stream(ReactAgent("writer", model, [report]), "report please", thread_id="t")]
    kinds = [e.kind for e in streamed]
    assert kinds[0] == "run_started" and kinds[-1] == "run_ended"
    assert any(isinstance(e, TokenDelta) for e in streamed)
    assert "".join(e.text for e in streamed if isinstance(e, TokenDelta)) == "Here it is."
    started = [e for e in streamed if isinstance(e, ToolStarted)]
    assert [(e.name, e.path) for e in started] == [("report", ("writer",))]
    [side] = [e for e in streamed if isinstance(e, SideChannel)]
    assert side.text == "writing the report..." and side.path == ("writer", "r1")
    [result] = [e for e in streamed if isinstance(e, MessageAdded) and isinstance(e.message, ToolMessage)]
    assert isinstance(result.message, ToolMessage) and result.message.artifact == {"report": "Q3"}
    stored = await runtime.events("t")
    assert [e.kind for e in stored] == [k for k in kinds if k not in ("token", "tool_started")]
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert isinstance(stored[0], RunStarted) and isinstance(stored[-1], RunEnded)
    # side-channel notes never reach the model
    assert all("writing the report" not in str(m) for m in request_to_openai(model.requests[1])["messages"])


def test_agent_configuration_errors_are_clear() -> None:
    model = ScriptedModel([])
    with pytest.raises(UsageError, match="two tools named 'add'"):
        ReactAgent("x", model, [add, add])
    with pytest.raises(UsageError, match="max_steps"):
        ReactAgent("x", model, max_steps=0)


async def test_bad_busy_option_is_refused(store: Store) -> None:
    with pytest.raises(UsageError, match="if_busy"):
        await Runtime(store).run(ReactAgent("x", ScriptedModel([])), "hi", if_busy="later")


async def test_empty_or_non_text_input_is_refused_and_stores_nothing(store: Store) -> None:
    runtime = Runtime(store)
    agent = ReactAgent("x", ScriptedModel([]))
    with pytest.raises(UsageError, match="the input is empty"):
        await runtime.run(agent, "  \n", thread_id="t")
    with pytest.raises(UsageError, match="must be text"):
        await runtime.run(agent, 42, thread_id="t")  # type: ignore[arg-type]
    assert await store.get_thread("t") is None


async def test_resume_with_another_agent_is_refused(store: Store) -> None:
    async def ask(ctx: RunContext[Any]) -> str:
        """Ask."""
        return await ctx.ask("ok?")

    model = FunctionModel(lambda m, r: AIMessage(tool_calls=[tool_call("ask")]))
    runtime = Runtime(store)
    assert (await runtime.run(ReactAgent("first", model, [ask]), "go", thread_id="t")).status == "interrupted"
    with pytest.raises(UsageError, match="started by agent 'first'"):
        await runtime.resume(ReactAgent("second", model, [ask]), "t", "yes")


async def test_a_thread_stays_usable_after_a_run_failed_in_the_middle_of_a_tool_round(store: Store) -> None:
    def broken() -> str:
        """Fail."""
        raise KeyError("missing row")

    replies = ScriptedModel([AIMessage(tool_calls=[tool_call("broken", id="b1")]), "fresh start"])
    runtime = Runtime(store)
    agent = ReactAgent("x", replies, [broken], handle_tool_errors=False)
    assert (await runtime.run(agent, "first", thread_id="t")).status == "failed"
    stored = await runtime.messages("t")
    assert [m.kind for m in stored] == ["human", "ai"]  # the record keeps the unanswered call
    assert (await runtime.run(agent, "second", thread_id="t")).output == "fresh start"
    shown = request_to_openai(replies.requests[1])["messages"]
    assert shown == [{"role": "user", "content": "first"}, {"role": "user", "content": "second"}]
