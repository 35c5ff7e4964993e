"""RunContext steps that are journaled: state, custom steps and side-channel notes are not repeated on resume."""

from __future__ import annotations

from typing import Any

from podium import (
    AIMessage,
    Artifact,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    SideChannel,
    Store,
    ToolMessage,
)
from podium.testing import FunctionModel, tool_call


def _asking_agent(effects: list[str]) -> ReactAgent:
    async def count_visit(ctx: RunContext[Any]) -> str:
        """Count a visit and confirm."""
        visits = await ctx.load_state("visits", 0)
        token = await ctx.step(lambda: _record(effects, "external call"))
        await ctx.save_state("visits", visits + 1)
        await ctx.progress(f"visit {visits + 1}")
        await ctx.artifact({"visits": visits + 1}, title="counter")
        answer = await ctx.ask("confirm?")
        return f"{answer}: visit {visits + 1} ({token}, key {ctx.idempotency_key.split(':')[1]})"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=messages[-1].content)
        return AIMessage(tool_calls=[tool_call("count_visit", id=f"v{len(messages)}")])

    return ReactAgent("counter", FunctionModel(model), [count_visit])


async def _record(effects: list[str], what: str) -> str:
    effects.append(what)
    return f"token-{len(effects)}"


async def test_state_steps_and_notes_happen_once_per_run_across_resume(store: Store) -> None:
    effects: list[str] = []
    runtime = Runtime(store)
    agent = _asking_agent(effects)
    assert (await runtime.run(agent, "visit", thread_id="t")).status == "interrupted"
    done = await runtime.resume(agent, "t", "ok")
    assert done.output == "ok: visit 1 (token-1, key counter/v1@3#7)"  # keys of a tool name its call by position
    assert effects == ["external call"]  # the step was not repeated when the run re-executed
    assert await store.get_state("t", "visits") == 1
    notes = [e for e in await runtime.events("t") if isinstance(e, SideChannel | Artifact)]
    assert [(e.kind, e.path) for e in notes] == [("side", ("counter", "v1")), ("artifact", ("counter", "v1"))]

    assert (await runtime.run(agent, "again", thread_id="t")).status == "interrupted"
    second = await runtime.resume(agent, "t", "sure")
    assert second.output == "sure: visit 2 (token-2, key counter/v5@3#7)"
    assert await store.get_state("t", "visits") == 2


async def test_a_step_takes_a_plain_function_and_runs_it_off_the_event_loop(store: Store) -> None:
    import threading

    seen: list[str] = []

    def draw() -> int:
        seen.append(threading.current_thread().name)
        return 4

    async def roll(ctx: RunContext[Any]) -> str:
        """Roll a die and ask to keep it."""
        value = await ctx.step(draw)  # a plain function: journaled like a coroutine's result
        await ctx.ask("keep it?")
        return f"rolled {value}"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=messages[-1].content)
        return AIMessage(tool_calls=[tool_call("roll", id="r1")])

    runtime = Runtime(store)
    agent = ReactAgent("dice", FunctionModel(model), [roll])
    assert (await runtime.run(agent, "roll", thread_id="t")).status == "interrupted"
    done = await runtime.resume(agent, "t", "yes")
    assert done.output == "rolled 4"
    assert len(seen) == 1 and seen[0].startswith("podium-tool")  # once, on a tool thread, not on the loop


async def test_a_tool_subclass_gets_its_context_and_a_plain_tool_runs_without_one(store: Store) -> None:
    """A plain tool taking no context is run without one (none is made for it); a ``Tool`` subclass whose ``run``
    reads the context, and a function declaring one, get the context of their call."""
    from podium import Tool

    seen: list[tuple[str, ...]] = []

    class PathTool(Tool):
        async def run(self, ctx: Any, kwargs: dict[str, Any]) -> Any:
            seen.append(ctx.path)
            return await super().run(ctx, kwargs)

    def plain(word: str) -> str:
        """Echo a word."""
        return word

    async def with_context(ctx: RunContext[Any], word: str) -> str:
        """Echo a word, noting the path."""
        seen.append(ctx.path)
        return word.upper()

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=" ".join(m.content for m in messages if isinstance(m, ToolMessage)))
        return AIMessage(
            tool_calls=[
                tool_call("plain", {"word": "a"}, id="c1"),
                tool_call("echo", {"word": "b"}, id="c2"),
                tool_call("with_context", {"word": "c"}, id="c3"),
            ]
        )

    agent = ReactAgent("agent", FunctionModel(model), [plain, PathTool(plain, name="echo"), with_context])
    result = await Runtime(store).run(agent, "go")
    assert result.output == "a b C"
    assert sorted(seen) == [("agent", "c2"), ("agent", "c3")]
