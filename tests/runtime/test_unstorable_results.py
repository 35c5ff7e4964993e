"""Results a store cannot write (a lone surrogate, bytes) must not wedge a thread: text is made well formed, and a
tool result that still cannot be stored goes back to the model as an error, on every store backend."""

from __future__ import annotations

from typing import Any

from podium import AIMessage, Message, ModelRequest, ReactAgent, RunContext, Runtime, Store, ToolMessage, ToolReturn
from podium.messages import well_formed
from podium.testing import FunctionModel, tool_call


def _agent(tool: Any, reply: str = "done") -> ReactAgent:
    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"{reply}: {messages[-1].content}")
        return AIMessage(tool_calls=[tool_call(tool.__name__, {}, id="c1")])

    return ReactAgent("agent", FunctionModel(model), [tool])


def test_well_formed_replaces_lone_surrogates_only() -> None:
    assert well_formed("plain") == "plain"
    assert well_formed("caf\udce9") == "caf\ufffd"
    assert well_formed("half \ud83d emoji") == "half \ufffd emoji"
    assert well_formed("whole 😀 emoji, café") == "whole 😀 emoji, café"


async def test_a_file_name_decoded_with_surrogates_is_stored_as_well_formed_text(store: Store) -> None:
    ran: list[int] = []

    def list_files() -> str:
        """List the files."""
        ran.append(1)
        return "caf\udce9.txt"  # what os.fsdecode makes of a latin-1 name

    result = await Runtime(store).run(_agent(list_files), "list them", thread_id="t")
    assert result.status == "completed" and result.output == "done: caf\ufffd.txt"
    assert ran == [1]
    assert await Runtime(store).send(_agent(list_files), "again", thread_id="t")  # the thread is not wedged


async def test_bytes_in_a_tool_result_go_back_to_the_model_as_an_error(store: Store) -> None:
    def render() -> ToolReturn:
        """Render the report."""
        return ToolReturn(content="rendered", artifact=b"%PDF-1.7 ...")

    result = await Runtime(store).run(_agent(render, "told"), "render it", thread_id="t")
    assert result.status == "completed"
    assert "cannot be serialised" in (result.output or "") and "bytes cannot be stored" in (result.output or "")


async def test_half_an_emoji_in_a_model_reply_is_stored(store: Store) -> None:
    model = FunctionModel(lambda messages, request: AIMessage(content="nice \ud83d"))
    result = await Runtime(store).run(ReactAgent("agent", model), "hi", thread_id="t")
    assert result.status == "completed" and result.output == "nice \ufffd"
    history = await Runtime(store).messages("t")
    assert history[-1].content == "nice \ufffd"


async def test_a_question_holding_a_lone_surrogate_is_asked_and_answered(store: Store) -> None:
    """Any text a run records is stored: a question naming a file whose name was decoded with surrogates used to
    leave the run running, failing the same way on every resume."""

    async def delete_file(ctx: RunContext[Any]) -> str:
        """Delete the file after the human confirms."""
        return await ctx.ask("delete caf\udce9.txt?")

    result = await Runtime(store).run(_agent(delete_file, "asked"), "tidy up", thread_id="t")
    assert result.status == "interrupted"
    assert result.interrupts[0].prompt in ("delete caf\udce9.txt?", "delete caf\ufffd.txt?")
    answered = await Runtime(store).send(_agent(delete_file, "asked"), "yes", thread_id="t")
    assert answered.status == "completed" and answered.output == "asked: yes"


async def test_a_result_nested_too_deep_goes_back_to_the_model(store: Store) -> None:
    def deep() -> ToolReturn:
        """A deep value."""
        value: Any = 1
        for _ in range(3000):
            value = [value]
        return ToolReturn(content="made", value=value)

    result = await Runtime(store).run(_agent(deep, "told"), "go", thread_id="t")
    assert result.status == "completed" and "cannot be serialised" in (result.output or "")
