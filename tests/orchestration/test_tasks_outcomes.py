"""How tasks end: done signals and conditions, final and typed results, and a typed outcome for every ending."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from pydantic import BaseModel
from tests.orchestration.tasks_support import requests_of, routed

from podium import AIMessage, HumanMessage, Limits, Message, Runtime, ToolMessage
from podium.orchestration.tasks.task import (
    KillSwitch,
    ResponderAgent,
    Task,
    TaskDone,
    TaskFailed,
    TaskLimits,
    done_tool,
    final_result_tool,
)
from podium.testing import tool_call


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def calls_then(text: str, *calls: Any) -> Any:
    """A script: make ``calls`` one reply at a time, then answer ``text`` (formatted with the last message)."""

    def script(messages: list[Message]) -> Any:
        made = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        return AIMessage(tool_calls=[calls[made]]) if made < len(calls) else text.format(last=messages[-1].content)

    return script


# -- done signals -----------------------------------------------------------------------------------------------------
async def test_the_done_tool_ends_the_task_with_its_content() -> None:
    model = routed(w=calls_then("unused", tool_call("done", {"content": "forty-two"})))
    result = await Task(ResponderAgent("w", model, prompt="w", tools=[done_tool()])).run("go")
    assert (result.outcome, result.reason, result.content) == ("done", "agent signalled done", "forty-two")


@pytest.mark.parametrize("text", ["DONE: 42", "DONE 42", "  DONE - 42"])
async def test_a_done_text_ends_the_task_with_the_rest_of_the_text(text: str) -> None:
    model = routed(w=lambda m: text)
    result = await Task(ResponderAgent("w", model, prompt="w"), interactive=True).run("go")
    assert (result.outcome, result.reason, result.content) == ("done", "llm signalled done", "42")


@pytest.mark.parametrize(
    ("text", "content"), [("DONE -5 + 12 = 7.", "-5 + 12 = 7."), ("DONE: -0.5", "-0.5"), ("DONE .5", ".5")]
)
async def test_a_done_text_keeps_the_sign_of_a_result_that_starts_with_one(text: str, content: str) -> None:
    model = routed(w=lambda m: text)
    result = await Task(ResponderAgent("w", model, prompt="w"), interactive=True).run("go")
    assert (result.outcome, result.content) == ("done", content)


async def test_a_handler_returning_task_done_ends_the_task_with_its_value() -> None:
    def finish(total: int) -> TaskDone:
        """Finish with a total."""
        return TaskDone(f"total {total}", value={"total": total})

    model = routed(w=calls_then("never", tool_call("finish", {"total": 9})))
    result = await Task(ResponderAgent("w", model, prompt="w", tools=[finish])).run("go")
    assert (result.content, result.value) == ("total 9", {"total": 9})


# -- done conditions --------------------------------------------------------------------------------------------------
async def test_done_if_response_ends_when_the_named_responder_answers() -> None:
    model = routed(w=calls_then("never", tool_call("multiply", {"a": 6, "b": 7})))
    task = Task(ResponderAgent("w", model, prompt="w", tools=[multiply]), done_if_response=["agent"])
    result = await task.run("go")
    assert (result.content, result.value, result.reason) == ("42", 42, "agent answered")


async def test_done_if_no_response_ends_when_the_named_responder_has_nothing_to_say() -> None:
    model = routed(w=calls_then("the product is {last}", tool_call("multiply", {"a": 6, "b": 7})))
    task = Task(
        ResponderAgent("w", model, prompt="w", tools=[multiply]),
        interactive=True,  # the user would answer next: only the condition ends the task
        done_if_no_response=["agent"],
    )
    result = await task.run("go", user_default="more")
    # As in Langroid, the condition holds from the first step: the agent has nothing to say to the input.
    assert (result.content, result.reason, result.turns) == ("go", "agent gave no response", 1)


async def test_done_if_no_response_ends_on_an_empty_reply_to_the_input() -> None:
    model = routed(w=lambda m: "")
    task = Task(ResponderAgent("w", model, prompt="w"), interactive=True, done_if_no_response=["llm"])
    result = await task.run("hello", user_default="more")
    assert (result.outcome, result.reason, result.content, result.turns) == ("done", "llm gave no response", "hello", 1)


@pytest.mark.parametrize(("done_on_tool", "turns"), [(True, 1), (["finish_up"], 3)])
async def test_done_on_tool_ends_with_the_message_calling_it(done_on_tool: Any, turns: int) -> None:
    script = calls_then("never", tool_call("multiply", {"a": 1, "b": 2}), tool_call("finish_up", {"x": 1}))
    model = routed(w=script)
    task = Task(ResponderAgent("w", model, prompt="w", tools=[multiply], use_only=[]), done_on_tool=done_on_tool)
    result = await task.run("go")
    assert result.outcome == "done" and result.turns == turns
    assert [c.name for c in result.message.tool_calls] == (["multiply"] if done_on_tool is True else ["finish_up"])


@pytest.mark.parametrize("sequence", ["tool, agent, llm", ["tool:multiply", "agent", "llm"], "llm -> agent -> llm"])
async def test_done_on_a_sequence_of_responses(sequence: Any) -> None:
    model = routed(w=calls_then("@user the product is {last}", tool_call("multiply", {"a": 6, "b": 7})))
    task = Task(ResponderAgent("w", model, prompt="w", tools=[multiply]), done_sequences=[sequence])
    result = await task.run("go", user_default="should not be asked")
    assert (result.outcome, result.content) == ("done", "the product is 42")
    assert result.reason.startswith("sequence ")


async def test_done_on_a_sequence_naming_a_sub_task() -> None:
    model = routed(boss=lambda m: "TO[helper]: hi", helper=lambda m: "hello")
    boss = Task(
        ResponderAgent("boss", model, prompt="boss"),
        sub_tasks=[Task(ResponderAgent("helper", model, prompt="helper"))],
        done_sequences=["llm, helper"],
    )
    result = await boss.run("go")
    assert (result.content, result.reason) == ("hello", "sequence llm, helper happened")


async def test_a_final_result_three_levels_down_ends_every_ancestor() -> None:
    model = routed(
        root=lambda m: "TO[mid]: dig",
        mid=lambda m: "TO[leaf]: dig deeper",
        leaf=calls_then("never", tool_call("final_result", {"result": "treasure"})),
    )
    leaf = Task(ResponderAgent("leaf", model, prompt="leaf", tools=[final_result_tool()]))
    mid = Task(ResponderAgent("mid", model, prompt="mid"), sub_tasks=[leaf])
    root = Task(ResponderAgent("root", model, prompt="root"), sub_tasks=[mid])
    result = await root.run("go")
    assert (result.outcome, result.content, result.value, result.final) == ("done", "treasure", "treasure", True)
    assert result.reason == "final result from mid"
    assert (len(requests_of(model, "root")), len(requests_of(model, "mid"))) == (1, 1)


class Answer(BaseModel):
    city: str
    celsius: int
    note: str = ""


async def test_run_returns_a_validated_object_and_invalid_results_go_back_to_the_model() -> None:
    bad = tool_call("final_result", {"city": "Lisbon", "celsius": "hot"})
    good = tool_call("final_result", {"city": "Lisbon", "celsius": 24})
    model = routed(w=calls_then("never", bad, good))
    answer = await Task(ResponderAgent("w", model, prompt="w")).run("Weather?", output_type=Answer)
    assert answer == Answer(city="Lisbon", celsius=24)
    assert [t.name for t in model.requests[0].tools] == ["final_result"]
    assert model.requests[0].tools[0].parameters["required"] == ["city", "celsius"]
    error = model.requests[1].messages[-1]
    assert isinstance(error, ToolMessage) and error.is_error and "celsius" in error.content


async def test_run_validates_a_done_text_as_json_and_fails_clearly_otherwise() -> None:
    model = routed(w=lambda m: 'DONE {"city": "Oslo", "celsius": 9}')
    assert await Task(ResponderAgent("w", model, prompt="w")).run("go", output_type=Answer) == Answer(
        city="Oslo", celsius=9
    )
    model = routed(w=lambda m: "DONE not json")
    with pytest.raises(TaskFailed, match="without a valid"):
        await Task(ResponderAgent("w", model, prompt="w")).run("go", output_type=Answer)
    stuck = Task(ResponderAgent("w", routed(w=lambda m: "@user hm?"), prompt="w"))
    with pytest.raises(TaskFailed, match="interrupted") as failed:
        await stuck.run("go", output_type=Answer)
    assert failed.value.result.outcome == "interrupted"


# -- typed outcomes -----------------------------------------------------------------------------------------------------
async def test_stalled_after_steps_without_a_valid_response() -> None:
    result = await Task(ResponderAgent("idle")).run("anyone?")  # no model, nothing to handle
    assert (result.outcome, result.reason, result.turns) == ("stalled", "3 steps in a row without a valid response", 3)
    assert result.content == "anyone?"


async def test_max_turns() -> None:
    counter = itertools.count()
    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("multiply", {"a": next(counter), "b": 1})]))
    task = Task(ResponderAgent("w", model, prompt="w", tools=[multiply]), limits=TaskLimits(max_turns=5))
    result = await task.run("go")
    assert (result.outcome, result.reason, result.turns) == ("max_turns", "reached its limit of 5 turns", 5)


async def test_fixed_turns_returns_the_pending_message_after_exactly_n_turns() -> None:
    model = routed(w=calls_then("never", tool_call("multiply", {"a": 6, "b": 7})))
    task = Task(ResponderAgent("w", model, prompt="w", tools=[multiply]), limits=TaskLimits(turns=2))
    result = await task.run("go")
    assert (result.outcome, result.reason, result.content, result.turns) == (
        "fixed_turns",
        "ran its 2 turn(s)",
        "42",
        2,
    )


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        (TaskLimits(max_tokens=20), "reaching its budget of 20"),
        (TaskLimits(max_cost=0.0001, price_per_million=(1000.0, 1000.0)), "reaching its cost budget of 0.0001"),
    ],
)
async def test_budget(limits: TaskLimits, reason: str) -> None:
    counter = itertools.count()
    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("multiply", {"a": next(counter), "b": 1})]))
    result = await Task(ResponderAgent("w", model, prompt="w", tools=[multiply]), limits=limits).run("go")
    assert result.outcome == "budget" and reason in result.reason
    assert result.usage.total_tokens > 0


async def test_a_sub_task_stops_on_its_ancestors_budget() -> None:
    counter = itertools.count()
    model = routed(
        boss=lambda m: "DONE " + m[-1].content if len(m) > 2 else "TO[w]: go",
        w=lambda m: AIMessage(tool_calls=[tool_call("multiply", {"a": next(counter), "b": 1})]),
    )
    worker = Task(ResponderAgent("w", model, prompt="w", tools=[multiply]))
    boss = Task(ResponderAgent("boss", model, prompt="boss"), sub_tasks=[worker], limits=TaskLimits(max_tokens=200))
    result = await boss.run("go")
    assert (
        result.outcome == "budget"
        and result.reason.startswith("used ")
        and "reaching its budget of 200" in result.reason
    )
    assert result.content.startswith("[w stopped: budget: used ")
    assert result.content.endswith("reaching task 'boss''s budget of 200]")
    assert len(requests_of(model, "boss")) == 1


async def test_timeout_counts_running_time_from_the_tasks_clock() -> None:
    ticks = itertools.count(0.0, 10.0)  # every reading of the clock is ten seconds later
    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("multiply", {"a": len(m), "b": 1})]))
    task = Task(
        ResponderAgent("w", model, prompt="w", tools=[multiply]),
        limits=TaskLimits(timeout=25),
        clock=lambda: next(ticks),
    )
    result = await task.run("go")
    assert (result.outcome, result.reason) == ("timeout", "task 'w' ran 30.000 s, reaching its timeout of 25 s")


async def test_killed_by_a_kill_switch_even_from_a_descendant() -> None:
    switch = KillSwitch()

    def stop(why: str) -> str:
        """Pull the plug."""
        switch.kill(why)
        return "pulled"

    model = routed(boss=lambda m: "TO[w]: go", w=calls_then("never", tool_call("stop", {"why": "user pressed stop"})))
    worker = Task(ResponderAgent("w", model, prompt="w", tools=[stop]))
    boss = Task(ResponderAgent("boss", model, prompt="boss"), sub_tasks=[worker], kill_switch=switch)
    result = await boss.run("go")
    assert (result.outcome, result.reason) == ("killed", "task 'boss' was killed: user pressed stop")
    assert switch.killed and switch.reason == "user pressed stop"
    switch.reset()
    assert not switch.killed


async def test_an_infinite_loop_is_detected() -> None:
    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("multiply", {"a": 2, "b": 2})]))
    result = await Task(ResponderAgent("w", model, prompt="w", tools=[multiply])).run("go")
    assert (result.outcome, result.reason) == ("infinite_loop", "the last 2 response(s) repeated 4 times")
    assert result.turns == 8


async def test_a_sub_tasks_outcome_reaches_the_parent_as_a_message() -> None:
    counter = itertools.count()
    model = routed(
        boss=lambda m: f"DONE {m[-1].content}" if isinstance(m[-1], HumanMessage) and m[-1].name else "TO[w]: go",
        w=lambda m: AIMessage(tool_calls=[tool_call("multiply", {"a": next(counter), "b": 1})]),
    )
    worker = Task(ResponderAgent("w", model, prompt="w", tools=[multiply]), limits=TaskLimits(max_turns=2))
    result = await Task(ResponderAgent("boss", model, prompt="boss"), sub_tasks=[worker]).run("go")
    assert result.outcome == "done"
    assert result.content == "[w stopped: max_turns: reached its limit of 2 turns]\n0"


async def test_runtime_limits_become_typed_outcomes() -> None:
    model = routed(w=lambda m: AIMessage(tool_calls=[tool_call("multiply", {"a": len(m), "b": 1})]))
    task = Task(ResponderAgent("w", model, prompt="w", tools=[multiply]))
    result = await task.run("go", limits=Limits(max_model_calls=2))
    assert (result.outcome, result.reason) == ("budget", "the run made its limit of 2 model calls")


async def test_every_outcome_has_a_reason_and_the_runtime_shows_it() -> None:
    runtime = Runtime()
    ran = await runtime.run(Task(ResponderAgent("idle")), "anyone?")
    assert ran.status == "completed"
    assert ran.output == "[stalled] 3 steps in a row without a valid response\nanyone?"
    result = ran and (await runtime.messages(ran.thread_id))[-1]
    assert result.content == ran.output


async def test_run_returns_a_validated_plain_type_through_the_final_result_tool() -> None:
    model = routed(
        w=calls_then("never", tool_call("final_result", {"result": "x"}), tool_call("final_result", {"result": 42}))
    )
    assert await Task(ResponderAgent("w", model, prompt="w")).run("go", output_type=int) == 42
    error = model.requests[1].messages[-1]
    assert isinstance(error, ToolMessage) and error.is_error and "valid integer" in error.content


def test_misuse_is_refused_with_a_message_saying_what_to_change() -> None:
    from podium.errors import UsageError

    for make in (
        lambda: TaskLimits(max_turns=0),
        lambda: TaskLimits(turns=0),
        lambda: TaskLimits(loop_repeats=1),
        lambda: Task(ResponderAgent("w"), history="forget"),  # type: ignore[arg-type]
        lambda: Task(ResponderAgent("w"), done_sequences=["tool,,agent"]),
        lambda: ResponderAgent("w", on_no_tool="shout"),  # type: ignore[arg-type]
        lambda: ResponderAgent("w", tools=[multiply], handle_only=[multiply]),
    ):
        with pytest.raises(UsageError):
            make()
