"""Messages round-trip to JSON and to and from the chat-completions wire format."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podium import (
    AIMessage,
    HumanMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSignal,
    from_openai,
    message_from_dict,
    message_to_dict,
    to_openai,
)
from podium.messages import order_tool_results, valid_history

text = st.text(max_size=40)
names = st.one_of(st.none(), st.from_regex(r"[a-z_]{1,12}", fullmatch=True))
calls = st.builds(ToolCall, id=st.from_regex(r"call_[a-z0-9]{4}", fullmatch=True), name=st.just("f"), arguments=text)
signals = st.builds(
    ToolSignal,
    end=st.sampled_from([None, "task", "all"]),
    passed=st.booleans(),
    pass_input=st.booleans(),
    recipient=names,
    tool_calls=st.lists(calls, max_size=2),
)
messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(SystemMessage, content=text),
    st.builds(HumanMessage, content=text, name=names),
    st.builds(AIMessage, content=text, tool_calls=st.lists(calls, max_size=3), name=names),
    st.builds(
        ToolMessage,
        content=text,
        tool_call_id=st.just("call_1"),
        name=st.just("f"),
        is_error=st.booleans(),
        artifact=st.one_of(st.none(), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2)),
        value=st.one_of(st.none(), st.integers(), st.lists(st.text(max_size=5), max_size=2)),
        signal=st.one_of(st.none(), signals),
        metadata=st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
    ),
)


@given(messages)
def test_any_message_round_trips_through_json(message: Message) -> None:
    assert message_from_dict(json.loads(json.dumps(message_to_dict(message)))) == message
    assert message_from_dict(json.loads(json.dumps(message_to_dict(message, compact=True)))) == message


@given(messages)
def test_wire_format_round_trips_what_the_wire_carries(message: Message) -> None:
    back = from_openai(json.loads(json.dumps(to_openai(message))))
    assert back.kind == message.kind and back.content == message.content
    if isinstance(message, AIMessage):
        assert isinstance(back, AIMessage) and back.tool_calls == message.tool_calls and back.name == message.name
    if isinstance(message, ToolMessage):
        assert isinstance(back, ToolMessage) and back.tool_call_id == message.tool_call_id


def test_wire_form_matches_the_chat_completions_shape() -> None:
    reply = AIMessage(tool_calls=[ToolCall(id="call_1", name="web_search", arguments='{"q": "x"}')], name="agent")
    assert to_openai(reply) == {
        "role": "assistant",
        "content": None,
        "name": "agent",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "web_search", "arguments": '{"q": "x"}'}}
        ],
    }
    assert to_openai(ToolMessage(content="ok", tool_call_id="call_1", name="web_search", artifact={"big": 1})) == {
        "role": "tool",
        "content": "ok",
        "tool_call_id": "call_1",
    }
    assert to_openai(HumanMessage(content="hi")) == {"role": "user", "content": "hi"}
    assert to_openai(SystemMessage(content="be brief")) == {"role": "system", "content": "be brief"}
    assert to_openai(AIMessage(content="")) == {"role": "assistant", "content": ""}


def test_wire_input_variants_are_read() -> None:
    assert from_openai({"role": "developer", "content": "rules"}) == SystemMessage(content="rules")
    parts = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert from_openai(parts) == HumanMessage(content="ab")
    with pytest.raises(ValueError, match="unknown message role"):
        from_openai({"role": "robot", "content": "x"})
    with pytest.raises(ValueError, match="tool_call_id"):
        from_openai({"role": "tool", "content": "x"})
    with pytest.raises(ValueError, match="unknown message kind"):
        message_from_dict({"kind": "alien"})
    with pytest.raises(ValueError, match="not a message"):
        message_from_dict({"kind": "tool", "content": "no id"})


def test_tool_call_arguments_parse_or_fail_clearly() -> None:
    assert ToolCall(id="1", name="f", arguments=' {"a": 1} ').parsed_arguments() == {"a": 1}
    assert ToolCall(id="1", name="f", arguments="").parsed_arguments() == {}
    with pytest.raises(ValueError, match="JSON object"):
        ToolCall(id="1", name="f", arguments="[1]").parsed_arguments()


def test_tool_results_are_put_back_in_call_order() -> None:
    ask = AIMessage(tool_calls=[ToolCall(id=i, name="f") for i in ("a", "b", "c")])
    results = [ToolMessage(content=i, tool_call_id=i) for i in ("c", "a", "b")]
    ordered = order_tool_results([HumanMessage(content="q"), ask, *results, AIMessage(content="done")])
    assert [m.content for m in ordered] == ["q", "", "a", "b", "c", "done"]


def test_valid_history_drops_unanswered_calls_and_orphan_results() -> None:
    both = AIMessage(content="checking", tool_calls=[ToolCall(id="a", name="f"), ToolCall(id="b", name="f")])
    lonely = AIMessage(tool_calls=[ToolCall(id="c", name="f")])
    history = [
        HumanMessage(content="q"),
        both,
        ToolMessage(content="B", tool_call_id="b"),
        ToolMessage(content="orphan", tool_call_id="zzz"),
        lonely,
        HumanMessage(content="again"),
        ToolMessage(content="late", tool_call_id="c"),
    ]
    fixed = valid_history(history)
    assert [(m.kind, m.content) for m in fixed] == [
        ("human", "q"),
        ("ai", "checking"),
        ("tool", "B"),
        ("human", "again"),
    ]
    first_ai = fixed[1]
    assert isinstance(first_ai, AIMessage) and [c.id for c in first_ai.tool_calls] == ["b"]
    complete = [HumanMessage(content="q"), lonely, ToolMessage(content="C", tool_call_id="c")]
    assert valid_history(complete) == complete
