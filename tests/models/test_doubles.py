"""The public test doubles: function model, scripted queue, cassette replay and recording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podium import (
    AIMessage,
    CassetteError,
    HumanMessage,
    Message,
    ModelRequest,
    ModelResponse,
    PodiumError,
    ReactAgent,
    Runtime,
    SystemMessage,
    Tool,
    UsageError,
)
from podium.models.base import Done, TextDelta, ToolCallDelta
from podium.testing import FunctionModel, RecordingModel, ReplayModel, ScriptedModel, ScriptMismatch, tool_call


def search(query: str) -> str:
    """Search the web."""
    return query


def request(*texts: str) -> ModelRequest:
    return ModelRequest(
        messages=[SystemMessage(content="sys"), *(HumanMessage(content=t) for t in texts)], tools=[Tool(search).spec]
    )


async def test_function_model_sees_messages_and_tools_and_reports_usage() -> None:
    seen: list[tuple[list[Message], list[str]]] = []

    def answer(messages: list[Message], req: ModelRequest) -> str:
        seen.append((messages, [t.name for t in req.tools]))
        return "x" * 40

    model = FunctionModel(answer)
    response = await model.reply(request("hello"))
    assert response.message == AIMessage(content="x" * 40)
    assert seen[0][1] == ["search"] and seen[0][0][-1] == HumanMessage(content="hello")
    assert response.usage.output_tokens == 10 and response.usage.input_tokens > 10 and response.usage.requests == 1
    assert model.requests == [request("hello")]


async def test_function_model_streams_text_and_tool_calls() -> None:
    call = tool_call("search", {"query": "q"}, id="c1")
    model = FunctionModel(lambda m, r: AIMessage(content="abcdefghij", tool_calls=[call]), stream_chunk=4)
    events = [e async for e in model.stream(request("hi"))]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["abcd", "efgh", "ij"]
    assert [e for e in events if isinstance(e, ToolCallDelta)] == [
        ToolCallDelta(index=0, id="c1", name="search", arguments='{"query": "q"}')
    ]
    assert isinstance(events[-1], Done) and events[-1].response.message.tool_calls == [call]


async def test_scripted_model_answers_in_order_and_checks_completion() -> None:
    model = ScriptedModel(
        ["one", AIMessage(content="two"), lambda r: f"three after {len(r.messages)}", ValueError("boom")]
    )
    assert (await model.reply(request("a"))).message.content == "one"
    assert (await model.reply(request("a"))).message.content == "two"
    with pytest.raises(AssertionError, match="2 of 4 replies were never requested"):
        model.assert_complete()
    assert (await model.reply(request("a", "b"))).message.content == "three after 3"
    with pytest.raises(ValueError, match="boom"):
        await model.reply(request("a"))
    model.assert_complete()
    with pytest.raises(AssertionError, match="no reply left for request #5"):
        await model.reply(request("a"))


async def test_recorded_cassette_replays_exactly_and_by_turn(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorder = RecordingModel(FunctionModel(lambda m, r: f"answer to {m[-1].content}"), path)
    await recorder.reply(request("first"))
    await recorder.reply(request("first", "second"))
    assert json.loads(path.read_text())["format"] == "podium-cassette"

    replay = ReplayModel(path)
    assert (await replay.reply(request("first", "second"))).message.content == "answer to second"
    # a different earlier history: the current turn still matches
    assert (await replay.reply(request("other", "second"))).message.content == "answer to second"
    assert replay.recorded_questions == ["first", "second"]
    with pytest.raises(CassetteError, match=r"no recorded reply .*'unknown'.*Recorded questions: 'first'"):
        await replay.reply(request("unknown"))


async def test_a_short_answer_replays_the_recording_where_it_answered_the_same_question(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorder = RecordingModel(FunctionModel(lambda m, r: f"{m[-2].content} {m[-1].content}"), path)
    for city in ("Oslo", "Paris"):
        asked = [
            SystemMessage(content="sys"),
            HumanMessage(content=f"plan {city}"),
            AIMessage(content=f"{city}: indoor?"),
        ]
        await recorder.reply(ModelRequest(messages=[*asked, HumanMessage(content="museums")]))
    replay = ReplayModel(path)
    later = [
        SystemMessage(content="sys"),
        HumanMessage(content="hi"),
        AIMessage(content="hello"),
        HumanMessage(content="x"),
    ]
    paris = ModelRequest(messages=[*later, AIMessage(content="Paris: indoor?"), HumanMessage(content="museums")])
    assert (await replay.reply(paris)).message.content == "Paris: indoor? museums"
    elsewhere = ModelRequest(messages=[SystemMessage(content="sys"), HumanMessage(content="museums")])
    assert (await replay.reply(elsewhere)).message.content == "Oslo: indoor? museums"  # the turn alone, first recording


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"format": "other"}', "not a Podium cassette"),
        ('{"format": "podium-cassette", "version": 7, "interactions": []}', "version 7"),
        ('{"format": "podium-cassette", "version": 1, "interactions": {}}', "must be a list"),
        (
            '{"format": "podium-cassette", "version": 1, "interactions": [{"request": {}}]}',
            "interaction 0 is malformed",
        ),
        (
            '{"format": "podium-cassette", "version": 1, "interactions": '
            '[{"request": {"messages": [{"role": "robot"}]}, "response": {"message": {"role": "assistant"}}}]}',
            "unknown message role",
        ),
    ],
)
def test_malformed_cassettes_are_refused_clearly(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CassetteError, match=message):
        ReplayModel(path)


def test_missing_cassette_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="does not exist"):
        ReplayModel(tmp_path / "nope.json")


async def test_exact_matching_and_a_fallback_for_what_was_not_recorded(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    await RecordingModel(FunctionModel(lambda m, r: "recorded"), path).reply(request("first", "second"))
    exact = ReplayModel(path, match="exact")
    assert (await exact.reply(request("first", "second"))).message.content == "recorded"
    with pytest.raises(CassetteError):
        await exact.reply(request("other", "second"))  # the turn matches, but exact matching wants it all
    helped = ReplayModel(path, match="exact", fallback=FunctionModel(lambda m, r: "improvised"))
    assert (await helped.reply(request("other", "second"))).message.content == "improvised"
    assert (await helped.reply(request("first", "second"))).message.content == "recorded"
    assert helped.fallback_replies == 1
    with pytest.raises(UsageError, match="match must be"):
        ReplayModel(path, match="fuzzy")  # type: ignore[arg-type]


async def test_with_a_fallback_only_replies_no_earlier_history_can_change_are_replayed(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorder = RecordingModel(FunctionModel(lambda m, r: f"{len(m)} messages, last {m[-1].content}"), path)
    lisbon = [SystemMessage(content="sys"), HumanMessage(content="Lisbon?"), AIMessage(content="Lisbon: 24 °C")]
    await recorder.reply(ModelRequest(messages=lisbon[:2]))  # an opening turn
    await recorder.reply(ModelRequest(messages=[*lisbon, HumanMessage(content="In Fahrenheit?")]))
    paris = [SystemMessage(content="sys"), HumanMessage(content="Paris?"), AIMessage(content="Paris: 18 °C")]
    asked = ModelRequest(messages=[*paris, HumanMessage(content="In Fahrenheit?")])
    lenient = ReplayModel(path)
    assert (await lenient.reply(asked)).message.content == "4 messages, last In Fahrenheit?"  # Lisbon's, a guess

    helped = ReplayModel(path, fallback=FunctionModel(lambda m, r: f"stand-in after {m[-2].content}"))
    assert (await helped.reply(asked)).message.content == "stand-in after Paris: 18 °C"
    # the opening turn replays after any history: its reply saw nothing before it
    later = ModelRequest(messages=[*paris, HumanMessage(content="Lisbon?")])
    assert (await helped.reply(later)).message.content == "2 messages, last Lisbon?"
    # ... but not under another system prompt, and a recorded request replays as it is
    other = ModelRequest(messages=[SystemMessage(content="other"), HumanMessage(content="Lisbon?")])
    assert (await helped.reply(other)).message.content == "stand-in after other"
    recorded = ModelRequest(messages=[*lisbon, HumanMessage(content="In Fahrenheit?")])
    assert (await helped.reply(recorded)).message.content == "4 messages, last In Fahrenheit?"
    assert helped.fallback_replies == 2


def _returns(value: Any) -> Any:
    def answer(messages: list[Message], req: ModelRequest) -> Any:
        return value

    return answer


def _returns_later(value: Any) -> Any:
    async def answer(messages: list[Message], req: ModelRequest) -> Any:
        return value

    return answer


NOT_REPLIES = [42, None, {"content": "hi"}, ["hi"], b"hi", 1.5, HumanMessage(content="hi")]
BAD_MESSAGES: list[tuple[Any, str]] = [
    (AIMessage(content=None), "an AIMessage that has content NoneType None: the text of a reply is a str"),  # type: ignore[arg-type]
    (AIMessage(content=5), "an AIMessage that has content int 5"),  # type: ignore[arg-type]
    (AIMessage(tool_calls=[{"id": "c1", "name": "f"}]), "an AIMessage that has tool_calls .*: give a list of ToolCall"),  # type: ignore[list-item]
    (ModelResponse(message="hi"), "a ModelResponse whose message is str 'hi', not an AIMessage"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("make", [_returns, _returns_later])
@pytest.mark.parametrize("value", NOT_REPLIES)
async def test_a_function_model_returning_something_else_fails_saying_what_it_may_return(make: Any, value: Any) -> None:
    model = FunctionModel(make(value), name="f")
    may = r"it may return a str \(the reply's text\), an AIMessage or a ModelResponse"
    with pytest.raises(
        UsageError, match=rf"^the function of FunctionModel 'f' returned {type(value).__name__} .*{may}"
    ):
        await model.reply(request("hi"))
    with pytest.raises(UsageError, match=may):
        [e async for e in model.stream(request("hi"))]


@pytest.mark.parametrize(("value", "says"), BAD_MESSAGES)
async def test_a_reply_message_a_model_could_not_give_fails_saying_what_is_wrong(value: Any, says: str) -> None:
    with pytest.raises(UsageError, match=f"^the function of FunctionModel 'function' returned {says}"):
        await FunctionModel(_returns(value)).reply(request("hi"))
    with pytest.raises(UsageError, match=f"^the function of reply #1 of ScriptedModel 'scripted' returned {says}"):
        await ScriptedModel([lambda r: value]).reply(request("hi"))
    if isinstance(value, AIMessage | ModelResponse):
        with pytest.raises(UsageError, match=f"^reply #1 of ScriptedModel 'scripted' is {says}"):
            await ScriptedModel([value]).reply(request("hi"))


@pytest.mark.parametrize("value", [*NOT_REPLIES[:2], BAD_MESSAGES[0][0]])
async def test_a_run_whose_model_double_misbehaves_fails_with_a_podium_error(value: Any) -> None:
    result = await Runtime().run(ReactAgent("a", FunctionModel(_returns(value))), "hi")
    assert result.status == "failed" and isinstance(result.error, UsageError)
    assert "FunctionModel 'function' returned" in str(result.error)


async def test_an_exhausted_script_is_a_podium_error_and_an_assertion() -> None:
    model = ScriptedModel(["one"])
    runtime = Runtime()
    assert (await runtime.run(ReactAgent("a", model), "hi")).output == "one"
    result = await runtime.run(ReactAgent("a", model), "again")
    assert result.status == "failed" and isinstance(result.error, ScriptMismatch)
    assert isinstance(result.error, PodiumError) and isinstance(result.error, AssertionError)
    assert str(result.error) == "ScriptedModel 'scripted' has no reply left for request #2 (it was given 1)"
    unfinished = ScriptedModel(["a", "b"])
    await unfinished.reply(request("hi"))
    with pytest.raises(ScriptMismatch, match="1 of 2 replies were never requested"):
        unfinished.assert_complete()


@pytest.mark.parametrize(
    ("replies", "says"),
    [
        ("hello", r"takes a list of replies, not str 'hello': write \[reply\]"),
        (AIMessage(content="hi"), "takes a list of replies, not AIMessage"),
        (5, "takes a list of replies, not int 5"),
        (["ok", 42], r"reply #2 is int 42; a reply is a str .*, an exception to raise, or a function"),
        ([None], r"reply #1 is NoneType None"),
        ([{"content": "hi"}], r"reply #1 is dict"),
    ],
)
def test_a_script_that_is_not_a_list_of_replies_is_refused_when_made(replies: Any, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        ScriptedModel(replies)


@pytest.mark.parametrize("function", [42, None, "answer"])
def test_a_function_model_needs_a_function(function: Any) -> None:
    with pytest.raises(UsageError, match=r"FunctionModel takes a function of \(messages, request\) returning a str"):
        FunctionModel(function)
