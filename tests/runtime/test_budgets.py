"""Budgets scoped to a part of a run: a child context's Limits, counted apart from the run's, replayed exactly."""

from __future__ import annotations

from typing import Any

import pytest

from podium import AIMessage, Limits, Message, ModelRequest, ReactAgent, RunContext, Runtime, UsageError
from podium.orchestration.supervisor import create_supervisor
from podium.testing import FunctionModel, tool_call


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def confirm(ctx: RunContext[Any]) -> str:
    """Ask the human to confirm."""
    return await ctx.ask("Go on?")


def boss_reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    if any(getattr(m, "tool_call_id", None) == "h1" for m in messages):
        return AIMessage(content="All done.")
    return AIMessage(tool_calls=[tool_call("transfer_to_worker", {"task": "add things"}, id="h1")])


def team(worker_model: FunctionModel, limits: Limits) -> Any:
    worker = ReactAgent("worker", worker_model, [add, confirm], prompt="Work.")
    return create_supervisor([worker], model=FunctionModel(boss_reply), agent_limits=limits)


async def test_a_handoff_budget_counts_only_its_agent_and_ends_the_run_naming_it() -> None:
    looping = FunctionModel(lambda m, r: AIMessage(tool_calls=[tool_call("add", {"a": 1, "b": 1})]))
    result = await Runtime().run(team(looping, Limits(max_model_calls=3)), "go", limits=Limits(max_model_calls=50))
    assert (result.status, result.limit) == ("limit_exceeded", "model_calls")
    assert "worker" in result.reason and "limit of 3 model calls" in result.reason
    assert len(looping.requests) == 3  # the supervisor's own call did not count against the worker's budget

    tokens = await Runtime().run(team(looping, Limits(max_model_calls=None, max_tokens=40)), "go")
    assert (tokens.status, tokens.limit) == ("limit_exceeded", "tokens") and "budget of 40" in tokens.reason


async def test_replayed_calls_count_against_the_budget_after_a_resume() -> None:
    replies = iter(
        [AIMessage(tool_calls=[tool_call("confirm", {})])]
        + [AIMessage(tool_calls=[tool_call("add", {"a": 1, "b": 2})])] * 5
    )
    worker_model = FunctionModel(lambda m, r: next(replies))
    runtime = Runtime()
    first = await runtime.run(team(worker_model, Limits(max_model_calls=2)), "go", thread_id="t")
    assert first.status == "interrupted" and len(worker_model.requests) == 1
    done = await runtime.resume(team(worker_model, Limits(max_model_calls=2)), "t", "yes")
    assert (done.status, done.limit) == ("limit_exceeded", "model_calls")
    assert len(worker_model.requests) == 2  # the replayed first call counted: one new call, not two


async def test_a_child_budget_bounds_calls_and_tokens_only() -> None:
    model = FunctionModel(lambda m, r: "hi")

    class Probe(ReactAgent):
        async def invoke(self, ctx: RunContext[Any], input: Any) -> Any:
            with pytest.raises(UsageError, match="timeouts to the run"):
                ctx.child("part", limits=Limits(timeout=1.0))
            part = ctx.child("part", limits=Limits(max_model_calls=1))
            await part.call_model(model, ModelRequest(messages=[]))
            await ctx.call_model(model, ModelRequest(messages=[]))  # the parent is not bound by the part's budget
            return await part.child("deeper").call_model(model, ModelRequest(messages=[]))

    result = await Runtime().run(Probe("probe", model), "go")
    assert (result.status, result.limit) == ("limit_exceeded", "model_calls") and "probe/part" in result.reason
