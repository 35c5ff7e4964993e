"""Supervisor options: forward_message, structured response, hooks, nesting, memory, custom handoff tools."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from podium import (
    Agent,
    AgentResult,
    AIMessage,
    Artifact,
    HumanMessage,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    SystemMessage,
    ToolMessage,
)
from podium.orchestration.supervisor.handoff import create_handoff_tool, history_problems
from podium.orchestration.supervisor.supervisor import create_supervisor
from podium.testing import FunctionModel, tool_call


def this_turn(messages: list[Message]) -> list[Message]:
    last = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    return messages[last:]


def tool_names(request: ModelRequest) -> set[str]:
    return {t.name for t in request.tools}


def answered_by(messages: list[Message], agent: str) -> str | None:
    """The answer of ``agent`` this turn, as a scoped tool result or a shared AI message."""
    for m in this_turn(messages):
        if isinstance(m, ToolMessage) and m.name == f"transfer_to_{agent}" and not m.content.startswith("Succ"):
            return m.content
        if isinstance(m, AIMessage) and m.name == agent and not m.tool_calls:
            return m.content
    return None


def writer_reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    """Writer answers; the supervisor hands off once, then follows its script in ``request``'s system prompt."""
    if request.settings.response_format is not None:
        return AIMessage(content='{"title": "Poem", "lines": 1}')
    if "transfer_to_writer" not in tool_names(request):
        return AIMessage(content="A poem, verbatim.")
    system = request.messages[0].content if isinstance(request.messages[0], SystemMessage) else ""
    answer = answered_by(messages, "writer")
    if answer is None:
        task = {"task": "write a poem"} if request.tools[0].parameters.get("required") else {}
        return AIMessage(tool_calls=[tool_call("transfer_to_writer", task, id="w1")])
    if "forward" in system:
        return AIMessage(tool_calls=[tool_call("forward_message", {"from_agent": "writer"}, id="f1")])
    return AIMessage(content=f"The writer says: {answer}")


def writer_team(model: FunctionModel, prompt: str, **options: Any) -> Any:
    writer = ReactAgent("writer", model, prompt="You write.")
    return create_supervisor([writer], model=model, prompt=prompt, **options)


async def test_forward_message_passes_the_answer_verbatim_without_another_call() -> None:
    for context in ("scoped", "shared"):
        model = FunctionModel(writer_reply)
        runtime = Runtime()
        result = await runtime.run(
            writer_team(model, "forward", forward_message=True, context=context), "poem", thread_id="t"
        )
        assert result.output == "A poem, verbatim."
        assert len(model.requests) == 3  # supervisor, writer, supervisor (forwards): no call after forwarding
        assert "forward_message" in tool_names(model.requests[0])
        history = await runtime.messages("t")
        assert history[-1] == AIMessage(content="A poem, verbatim.", name="supervisor")
        assert history_problems(history) == []


async def test_structured_final_response() -> None:
    class Poem(BaseModel):
        title: str
        lines: int

    model = FunctionModel(writer_reply)
    supervisor = writer_team(model, "plain", response_format=("Answer in json.", Poem))
    events: list[Any] = []
    runtime = Runtime()
    result = await runtime.run(supervisor, "poem", thread_id="t", on_event=events.append)
    assert result.output == "The writer says: A poem, verbatim."
    last = model.requests[-1]
    assert last.tools == [] and last.settings.response_format == Poem.model_json_schema()
    assert last.messages[0] == SystemMessage(content="Answer in json.")
    [artifact] = [e for e in events if isinstance(e, Artifact)]
    assert artifact.title == "structured_response" and artifact.content == {"title": "Poem", "lines": 1}
    history = await runtime.messages("t")
    assert '{"title"' not in json.dumps([m.content for m in history])  # kept out of the conversation

    ctx_result = await writer_team(FunctionModel(writer_reply), "plain", response_format=Poem).invoke(
        *await _fresh_context()
    )
    assert ctx_result.data == Poem(title="Poem", lines=1)


async def _fresh_context() -> tuple[RunContext[Any], HumanMessage]:
    """A run context outside a runtime run, for calling an agent's invoke directly."""
    from podium.runtime.context import Limits, RunState
    from podium.store.memory import MemoryStore

    store = MemoryStore()
    await store.create_thread("t")
    await store.acquire_thread("t", "me", 60)  # the run's events are written under its lease
    state = RunState(
        store=store, thread_id="t", run_id="r", journal={}, seq=0, limits=Limits(), owner="me", lease_ttl=60
    )
    return RunContext(state, path=("supervisor",), namespace="", deps=None), HumanMessage(content="poem")


async def test_hooks_change_requests_and_replies() -> None:
    seen: list[int] = []

    def trim(request: ModelRequest) -> ModelRequest:
        seen.append(len(request.messages))
        return ModelRequest(messages=[request.messages[0], *this_turn(request.messages)], tools=request.tools)

    async def guard(reply: AIMessage) -> AIMessage:
        if reply.content:
            return AIMessage(content=reply.content.replace("poem", "[redacted]"), name=reply.name)
        return reply

    model = FunctionModel(writer_reply)
    runtime = Runtime()
    supervisor = writer_team(model, "plain", before_model=trim, after_model=guard)
    first = await runtime.run(supervisor, "poem", thread_id="t")
    assert first.output == "The writer says: A [redacted], verbatim."
    second = await runtime.run(supervisor, "another", thread_id="t")
    assert seen[:2] == [2, 4] and seen[2] > 4  # the hook saw the whole history ...
    assert len(model.requests[3].messages) == 2  # ... and the model only this turn
    history = await runtime.messages("t")
    assert "The writer says: A [redacted], verbatim." in [m.content for m in history]  # the guarded reply is kept
    assert "The writer says: A poem, verbatim." not in [m.content for m in history]
    assert history_problems(history) == [] and second.status == "completed"


class Echo(Agent):
    """Any agent can be managed: this one echoes its request."""

    name = "echo"

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        await ctx.progress("echoing")
        return AgentResult(output=f"echo: {input.content.splitlines()[0]}")


async def test_nested_supervisors_and_plain_agents() -> None:
    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        names = tool_names(request)
        if "transfer_to_team" in names:
            answer = answered_by(messages, "team")
            if answer is None:
                return AIMessage(tool_calls=[tool_call("transfer_to_team", {"task": "ask the echo"}, id="t1")])
            return AIMessage(content=f"top: {answer}")
        answer = answered_by(messages, "echo")
        if answer is None:
            return AIMessage(tool_calls=[tool_call("transfer_to_echo", {"task": "hello"}, id="e1")])
        return AIMessage(content=f"team: {answer}")

    model = FunctionModel(reply)
    team = create_supervisor([Echo()], model=model, supervisor_name="team", prompt="Team lead.")
    top = create_supervisor([team], model=model, supervisor_name="top", prompt="Boss.")
    events: list[Any] = []
    result = await Runtime().run(top, "go", on_event=events.append)
    assert result.output == "top: team: echo: hello"
    progress = [e for e in events if e.kind == "side"]
    assert [e.path for e in progress] == [("top", "t1", "team", "e1", "echo")]
    team_request = model.requests[1]
    assert team_request.messages[1].content == "ask the echo\n\nThe user's request: go"


async def test_memory_across_turns_in_scoped_mode() -> None:
    model = FunctionModel(writer_reply)
    runtime = Runtime()
    supervisor = writer_team(model, "plain")
    await runtime.run(supervisor, "poem", thread_id="t")
    await runtime.run(supervisor, "and another", thread_id="t")
    turn_two = model.requests[3]
    assert [type(m).__name__ for m in turn_two.messages] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
        "HumanMessage",
    ]
    assert turn_two.messages[4].content == "The writer says: A poem, verbatim."
    writer_two = model.requests[4]
    assert len(writer_two.messages) == 2  # the writer starts fresh on its task


async def test_custom_handoff_tool_with_a_task_in_shared_mode_and_prefix() -> None:
    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        names = tool_names(request)
        if "delegate" in names:
            if answered_by(messages, "writer") is None:
                return AIMessage(tool_calls=[tool_call("delegate", {"task": "a haiku about tea"}, id="d1")])
            return AIMessage(content="done")
        if "ask_critic" in names:
            return AIMessage(content="unused")
        return AIMessage(content="Steam rises, leaves unfurl")

    model = FunctionModel(reply)
    writer = ReactAgent("writer", model, prompt="You write.")
    critic = ReactAgent("critic", model, prompt="You judge.")
    handoff = create_handoff_tool("writer", name="delegate", description="Give the writer a job.", task=True)
    supervisor = create_supervisor(
        [writer, critic], model=model, tools=[handoff], context="shared", handoff_tool_prefix="ask_"
    )
    result = await Runtime().run(supervisor, "write")
    assert result.output == "done"
    specs = {t.name: t for t in model.requests[0].tools}
    assert set(specs) == {"delegate", "ask_critic"}
    assert specs["delegate"].description == "Give the writer a job."
    assert specs["delegate"].parameters["required"] == ["task"]
    assert specs["ask_critic"].parameters == {"properties": {}, "type": "object"}
    writer_request = model.requests[1]
    assert writer_request.messages[-1] == HumanMessage(content="a haiku about tea", name="supervisor")
    assert history_problems(writer_request.messages) == []


async def test_full_history_shares_the_worker_internals_and_failures_reach_the_supervisor() -> None:
    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        names = tool_names(request)
        if "transfer_to_counter" in names:
            answer = answered_by(messages, "counter")
            if answer is None:
                return AIMessage(tool_calls=[tool_call("transfer_to_counter", {}, id="c1")])
            return AIMessage(content=f"heard: {answer}")
        return AIMessage(tool_calls=[tool_call("count", {})])  # never answers: hits its step limit

    def count() -> int:
        """Count."""
        return 1

    model = FunctionModel(reply)
    counter = ReactAgent("counter", model, [count], max_steps=2)
    supervisor = create_supervisor([counter], model=model, context="shared", output_mode="full_history")
    result = await Runtime().run(supervisor, "count")
    assert result.status == "completed"
    assert (
        result.output
        == "heard: I could not complete this: agent 'counter' reached its step limit of 2 model calls without answering"
    )
    last = model.requests[-1]
    assert sum(1 for m in last.messages if isinstance(m, ToolMessage) and m.name == "count") == 2  # internals shared
    assert history_problems(last.messages) == []


async def test_a_handoff_without_its_task_goes_back_to_the_model() -> None:
    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        if "transfer_to_writer" not in tool_names(request):
            return AIMessage(content="written")
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            return AIMessage(tool_calls=[tool_call("transfer_to_writer", " {}", id="bad")])
        if results[-1].is_error:
            return AIMessage(tool_calls=[tool_call("transfer_to_writer", {"task": "write"}, id="good")])
        return AIMessage(content=results[-1].content)

    model = FunctionModel(reply)
    result = await Runtime().run(writer_team(model, "plain"), "go")
    assert result.output == "written"
    error = model.requests[1].messages[-1]
    assert isinstance(error, ToolMessage) and error.is_error and "needs a non-empty 'task'" in error.content
    assert [r.messages[0].content for r in model.requests] == ["plain", "plain", "You write.", "plain"]
