"""Tools with handlers in tasks: errors back to the model with a retry bound, several calls, any result, state."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from tests.orchestration.tasks_support import requests_of, routed

from podium import AIMessage, HumanMessage, Message, ModelRetry, Runtime, ToolMessage
from podium.orchestration.tasks.task import AgentState, ResponderAgent, Task, TaskLimits, TaskMessage, with_guidance
from podium.testing import tool_call


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def tool_then_report(*calls: Any) -> Any:
    """A script: make the given tool calls one reply at a time, then report the last result with DONE."""

    def script(messages: list[Message]) -> Any:
        made = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        if made < len(calls):
            return AIMessage(tool_calls=[calls[made]])
        return f"DONE {messages[-1].content}"

    return script


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        pytest.param(
            {"a": "six", "b": 7},
            "Invalid arguments for tool 'multiply': a: Input should be a valid integer",
            id="invalid",
        ),
        pytest.param('{"a": 6, "b":', "The arguments for tool 'multiply' are not valid JSON", id="unparseable"),
    ],
)
async def test_bad_tool_arguments_go_back_to_the_model_which_corrects_them(bad: Any, error: str) -> None:
    script = tool_then_report(tool_call("multiply", bad, id="c1"), tool_call("multiply", {"a": 6, "b": 7}, id="c2"))
    model = routed(worker=script)
    result = await Task(ResponderAgent("worker", model, prompt="worker", tools=[multiply])).run("6*7?")
    assert result.content == "42"
    retry = model.requests[1].messages[-1]
    assert isinstance(retry, ToolMessage) and retry.is_error and retry.content.startswith(error)


async def test_an_unknown_tool_beside_a_handled_one_gets_an_error_result() -> None:
    calls = [tool_call("multiply", {"a": 2, "b": 3}, id="c1"), tool_call("mystery", {}, id="c2")]
    model = routed(worker=lambda m: AIMessage(tool_calls=calls) if len(m) == 2 else "DONE ok")
    await Task(ResponderAgent("worker", model, prompt="worker", tools=[multiply])).run("go")
    results = model.requests[1].messages[-2:]
    assert [(r.content, r.is_error) for r in results if isinstance(r, ToolMessage)] == [
        ("6", False),
        ("Unknown tool 'mystery'. Available tools: multiply. Call one of these instead.", True),
    ]


@pytest.mark.parametrize("handle_errors", [True, False])
async def test_handler_exceptions_are_fed_back_or_raised_by_configuration(handle_errors: bool) -> None:
    def explode() -> str:
        """Always fails."""
        raise ValueError("boom")

    model = routed(worker=tool_then_report(tool_call("explode", {}, id="c1")))
    task = Task(ResponderAgent("worker", model, prompt="worker", tools=[explode], handle_errors=handle_errors))
    if handle_errors:
        result = await task.run("go")
        assert result.content == "Error: tool 'explode' failed with ValueError: boom"
    else:
        with pytest.raises(ValueError, match="boom"):
            await task.run("go")


async def test_a_model_retry_from_a_handler_is_advice_for_the_model() -> None:
    def pick(n: int) -> str:
        """Pick a number under ten."""
        if n >= 10:
            raise ModelRetry("n must be under 10")
        return f"picked {n}"

    model = routed(worker=tool_then_report(tool_call("pick", {"n": 12}), tool_call("pick", {"n": 3})))
    result = await Task(ResponderAgent("worker", model, prompt="worker", tools=[pick])).run("go")
    assert result.content == "picked 3"
    assert requests_of(model, "worker")[1][-1] == ("tool", "n must be under 10")


async def test_failing_tool_calls_are_bounded_by_the_retry_limit() -> None:
    model = routed(worker=lambda m: AIMessage(tool_calls=[tool_call("multiply", {"a": "x", "b": 1})]))
    task = Task(ResponderAgent("worker", model, prompt="worker", tools=[multiply]), limits=TaskLimits(max_retries=2))
    result = await task.run("go")
    assert result.outcome == "stalled"
    assert result.reason.startswith("3 error answers to the model in a row (retry bound 2); last: Invalid arguments")
    assert len(model.requests) == 3


async def test_several_tools_in_one_message_run_and_answer_in_call_order() -> None:
    calls = [tool_call("multiply", {"a": 6, "b": 7}, id="c1"), tool_call("add", {"a": 6, "b": 7}, id="c2")]
    model = routed(worker=lambda m: AIMessage(tool_calls=calls))
    task = Task(ResponderAgent("worker", model, prompt="worker", tools=[multiply, add]), done_if_response=["agent"])
    result = await task.run("go")
    assert (result.content, result.value) == ("multiply: 42\nadd: 13", [42, 13])
    assert [m.tool_call_id for m in result.message.tool_results] == ["c1", "c2"]


class Weather(BaseModel):
    city: str
    celsius: int


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_handler_results_of_any_type_keep_their_value(store_kind: str, tmp_path: Any) -> None:
    from podium import MemoryStore, SQLiteStore

    def weather(city: str) -> Weather:
        """Today's weather."""
        return Weather(city=city, celsius=24)

    def table(city: str) -> dict[str, Any]:
        """Facts."""
        return {"city": city, "rank": 1}

    calls = [tool_call("weather", {"city": "Lisbon"}, id="c1"), tool_call("table", {"city": "Lisbon"}, id="c2")]
    model = routed(worker=lambda m: AIMessage(tool_calls=calls))
    task = Task(ResponderAgent("worker", model, prompt="worker", tools=[weather, table]), done_if_response=["agent"])
    store = MemoryStore() if store_kind == "memory" else SQLiteStore(tmp_path / "s.db")
    result = await task.run("go", runtime=Runtime(store))
    await store.close()
    assert result.value == [Weather(city="Lisbon", celsius=24), {"city": "Lisbon", "rank": 1}]
    assert result.content == 'weather: {"city":"Lisbon","celsius":24}\ntable: {"city": "Lisbon", "rank": 1}'


async def test_handlers_with_agent_state_count_across_runs_and_never_twice_on_replay() -> None:
    def count(state: AgentState, step: int) -> str:
        """Add to the counter."""
        state["n"] = state.get("n", 0) + step
        return f"n={state['n']}"

    def worker(messages: list[Message]) -> Any:
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.content in ("go", "again"):
            return AIMessage(tool_calls=[tool_call("count", {"step": 1})])
        if isinstance(last, ToolMessage) and last.content == "n=1":
            return "@user carry on?"
        if isinstance(last, HumanMessage) and last.content == "yes":
            return AIMessage(tool_calls=[tool_call("count", {"step": 10})])
        return f"DONE {last.content}"

    model = routed(worker=worker)
    agent = ResponderAgent("worker", model, prompt="worker", tools=[count], state={"n": 0})
    assert model.requests == [] and "state" not in str(agent.usable["count"].parameters)
    task, runtime = Task(agent), Runtime()
    first = await task.run("go", runtime=runtime)
    assert first.outcome == "interrupted"
    resumed = await task.resume("yes", runtime=runtime, thread_id=first.thread_id or "")
    assert resumed.content == "n=11"  # the first call replayed from the journal, not run again
    again = await task.run("again", runtime=runtime, thread_id=first.thread_id)
    assert again.content == "n=12"
    assert agent.initial_state == {"n": 0}


async def test_tool_instructions_and_examples_are_in_the_system_prompt_and_use_handle_only_split_tools() -> None:
    def secret(x: int) -> int:
        """Handled here, never offered to this model."""
        return x

    model = routed(worker=lambda m: "DONE")
    guided = with_guidance(multiply, instructions="use it for every product", examples=[{"a": 2, "b": 3}])
    agent = ResponderAgent("worker", model, prompt="worker here", tools=[guided], use_only=[add], handle_only=[secret])
    await Task(agent).run("go")
    request = model.requests[0]
    assert request.messages[0].content == (
        'worker here\n\nTools you can use:\n- multiply: use it for every product\n  Example: multiply({"a": 2, "b": 3})'
    )
    assert [t.name for t in request.tools] == ["multiply", "add"]
    assert (agent.handles("secret"), agent.handles("add")) == (True, False)


@pytest.mark.parametrize(
    ("reaction", "expected"),
    [
        ("nudge", ("done", "42")),
        ("finish", ("done", "the answer is 42")),
        (lambda m: f"Use a tool, you said {m.content!r}", ("done", "42")),
    ],
)
async def test_reactions_when_the_model_forgot_to_use_a_tool(reaction: Any, expected: tuple[str, str]) -> None:
    def worker(messages: list[Message]) -> Any:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return f"DONE {last.content}"
        if len(messages) == 2:
            return "the answer is 42"
        return AIMessage(tool_calls=[tool_call("multiply", {"a": 6, "b": 7})])

    model = routed(worker=worker)
    task = Task(ResponderAgent("worker", model, prompt="worker", tools=[multiply], on_no_tool=reaction))
    result = await task.run("6*7?")
    assert (result.outcome, result.content) == expected
    if reaction == "nudge":
        assert requests_of(model, "worker")[1][-1] == (
            "human",
            "You did not use a tool. Use one of these tools: multiply. "
            "If you are finished, say so with the done tool or start your reply with DONE.",
        )


async def test_the_user_reaction_hands_the_models_text_to_the_human() -> None:
    model = routed(worker=lambda m: "Should I really multiply?" if len(m) == 2 else "DONE fine")
    task = Task(ResponderAgent("worker", model, prompt="worker", tools=[multiply], on_no_tool="user"))
    result = await task.run("6*7?")
    assert (result.outcome, result.content) == ("interrupted", "Should I really multiply?")


async def test_a_custom_agent_response_can_answer_any_message() -> None:
    class Echo(ResponderAgent):
        async def agent_response(self, session: Any, message: TaskMessage) -> TaskMessage | None:
            if message.sender == "user":
                return TaskMessage(content=f"echo {message.content}", sender="agent", done=True)
            return await super().agent_response(session, message)

    result = await Task(Echo("echo")).run("hi")
    assert (result.content, result.reason) == ("echo hi", "agent signalled done")


def test_agents_built_from_one_function_share_its_derivation_and_each_has_a_tool_of_its_own() -> None:
    def scale(x: int, factor: int = 2) -> int:
        """Scale a number."""
        return x * factor

    first, second = (ResponderAgent(name, tools=[scale]) for name in ("first", "second"))
    one, other = first.handlers["scale"], second.handlers["scale"]
    assert one is not other and one.function is other.function  # one wrapper, derived once
    one.metadata.extra["note"] = "first only"
    one.parameters["properties"]["x"]["description"] = "changed here"
    assert "note" not in other.metadata.extra and "description" not in other.parameters["properties"]["x"]
    scale.__name__ = "resize"  # a renamed function is derived again, under its new name
    assert list(ResponderAgent("third", tools=[scale]).handlers) == ["resize"]


def test_a_tool_s_timeout_and_approval_hold_for_its_handler() -> None:
    from podium import Tool
    from podium.orchestration.tasks import Task as PublicTask
    from podium.orchestration.tasks.task_tool import task_tool

    def pay(amount: int) -> str:
        """Pay an amount."""
        return f"paid {amount}"

    agent = ResponderAgent("payer", tools=[Tool(pay, timeout=5, approval=True)])
    handler = agent.handlers["pay"]
    assert (handler.timeout, handler.approval) == (5, True)
    assert (ResponderAgent("plain", tools=[pay]).handlers["pay"].timeout or 0) > 0  # a plain function: the default
    worker = PublicTask(ResponderAgent("worker"))
    delegate = ResponderAgent("boss", tools=[task_tool(worker)])
    assert next(iter(delegate.handlers.values())).timeout is None  # a task is bounded by the run, not a tool timeout
