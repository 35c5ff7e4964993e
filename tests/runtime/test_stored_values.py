"""Values a run stores come back the same from every store: what JSON cannot hold exactly is refused, and lone
surrogates in text are stored as U+FFFD by every store alike."""

from __future__ import annotations

import datetime
import enum
import logging
from typing import Any

import pytest

from podium import (
    AIMessage,
    Artifact,
    InterruptRaised,
    Message,
    MessageAdded,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    SideChannel,
    StepRecorded,
    Store,
    ToolMessage,
    ToolReturn,
    UsageError,
)
from podium.testing import FunctionModel, tool_call


def _agent(tool: Any) -> ReactAgent:
    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=messages[-1].content)
        return AIMessage(tool_calls=[tool_call(tool.__name__, id="c")])

    return ReactAgent("a", FunctionModel(model), [tool])


class _Size(enum.IntEnum):
    SMALL = 1


UNSTORABLE = [object(), {1, 2}, (1, 2), {"at": datetime.date(2024, 1, 1)}, {1: "x"}, float("nan"), b"pdf"]


@pytest.mark.parametrize("value", UNSTORABLE, ids=lambda v: type(v).__name__)
async def test_an_artifact_that_json_cannot_hold_is_refused_by_every_store(store: Store, value: Any) -> None:
    async def show(ctx: RunContext[Any]) -> str:
        """Show the result."""
        try:
            await ctx.artifact(value, title="result")
        except UsageError as exc:
            return f"refused: {exc}"
        return "shown"

    result = await Runtime(store).run(_agent(show), "go", thread_id="t")
    assert result.output is not None and result.output.startswith("refused: an artifact's content must be JSON data")
    assert not [e for e in await store.read_events("t") if isinstance(e, Artifact)]


@pytest.mark.parametrize("part", ["value", "metadata", "artifact"])
@pytest.mark.parametrize("value", UNSTORABLE, ids=lambda v: type(v).__name__)
async def test_a_tool_result_that_json_cannot_hold_goes_back_to_the_model(store: Store, part: str, value: Any) -> None:
    def report() -> ToolReturn:
        """Report."""
        return ToolReturn(content="made", **{part: {"x": value} if part == "metadata" else value})

    result = await Runtime(store).run(_agent(report), "go", thread_id="t")
    assert result.status == "completed"
    assert f"tool 'report' returned a result that cannot be serialised (its {part} must be JSON data" in (
        result.output or ""
    )


async def test_lone_surrogates_and_json_lookalikes_come_back_alike_from_every_store(store: Store) -> None:
    odd = "bad \udcff byte"
    seen: dict[str, Any] = {}

    async def keep(ctx: RunContext[Any]) -> ToolReturn:
        """Keep odd values."""
        seen["step"] = await ctx.step(lambda: {odd: [odd]})
        seen["enum"] = await ctx.step(lambda: _Size.SMALL)
        await ctx.save_state("k", {"v": odd})
        seen["state"] = await ctx.load_state("k")
        await ctx.artifact([odd], title=odd)
        await ctx.progress(odd)
        return ToolReturn(content=odd, value={odd: odd}, metadata={"m": odd}, artifact=odd)

    result = await Runtime(store).run(_agent(keep), "go", thread_id="t")
    assert result.status == "completed"
    mended = "bad \ufffd byte"
    assert seen["step"] == {mended: [mended]}
    assert seen["enum"] == 1 and type(seen["enum"]) is int
    assert seen["state"] == {"v": mended}
    events = await store.read_events("t")
    assert [e.value for e in events if isinstance(e, StepRecorded)][:2] == [{mended: [mended]}, 1]
    [artifact] = [e for e in events if isinstance(e, Artifact)]
    assert (artifact.content, artifact.title) == ([mended], mended)
    assert [e.text for e in events if isinstance(e, SideChannel)] == [mended]
    [tool] = [e.message for e in events if isinstance(e, MessageAdded) and isinstance(e.message, ToolMessage)]
    assert (tool.content, tool.value, tool.metadata, tool.artifact) == (mended, {mended: mended}, {"m": mended}, mended)


@pytest.mark.parametrize("prompt", [None, 5, ["a"], b"yes?"])
async def test_a_question_or_a_note_that_is_not_text_is_refused(store: Store, prompt: Any) -> None:
    async def ask(ctx: RunContext[Any]) -> str:
        """Ask."""
        refused = []
        for call in (lambda: ctx.ask(prompt), lambda: ctx.progress(prompt), lambda: ctx.rationale(prompt)):
            try:
                await call()
            except UsageError as exc:
                refused.append(str(exc).split(" must")[0])
        try:
            await ctx.ask("ok?", data={"when": datetime.date(2024, 1, 1)})
        except UsageError as exc:
            refused.append(str(exc).split(" must")[0])
        return "; ".join(refused)

    result = await Runtime(store).run(_agent(ask), "go", thread_id="t")
    assert result.output == "the question asked; a progress note; a rationale; the data of a question"
    assert not [e for e in await store.read_events("t") if isinstance(e, InterruptRaised | SideChannel)]


@pytest.mark.parametrize("misuse", ["step", "artifact", "save_state", "result"])
async def test_a_tools_misuse_of_podium_is_logged_as_a_warning_naming_the_tool(
    store: Store, misuse: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def careless(ctx: RunContext[Any]) -> Any:
        """Store something JSON cannot hold."""
        if misuse == "step":
            await ctx.step(lambda: {1, 2})
        elif misuse == "artifact":
            await ctx.artifact({1, 2}, title="x")
        elif misuse == "save_state":
            await ctx.save_state("k", {"at": datetime.date(2024, 1, 1)})
        return ToolReturn(content="made", value={1, 2})

    with caplog.at_level(logging.WARNING, logger="podium.runtime"):
        result = await Runtime(store).run(_agent(careless), "go", thread_id="t")
    assert result.status == "completed" and "Error: tool 'careless'" in (result.output or "")  # the model is told
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "tool 'careless'" in warning.getMessage() and "needs a fix" in warning.getMessage()
