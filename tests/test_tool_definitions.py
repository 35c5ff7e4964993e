"""What can be a tool, and what an agent is built of: positional-only parameters are called as Python requires, and
definitions that cannot work are refused where they are written, with a message saying what to change (never a
message about something else, a raw pydantic error, or a failure at the first call)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any, Literal, Optional, TypedDict, Union

import pytest

from podium import (
    AIMessage,
    ReactAgent,
    RunContext,
    Runtime,
    Tool,
    ToolArgumentsError,
    ToolDefinitionError,
    ToolMessage,
    UsageError,
)
from podium.testing import ScriptedModel, tool_call


def add(a: int, /, b: int) -> int:
    """Add two numbers."""
    return a + b


async def scaled(a: int, b: int = 10, /, *, scale: int = 1) -> int:
    """Add, then scale."""
    return (a + b) * scale


def greet(ctx: RunContext[Any], name: str, /, punctuation: str = "!") -> str:
    """Greet someone."""
    return f"hello {name}{punctuation}" if ctx is not None else "no context"


@pytest.mark.parametrize(
    ("function", "arguments", "expected"),
    [
        (add, {"a": 1, "b": 2}, "3"),
        (scaled, {"a": 1}, "11"),
        (scaled, {"a": 1, "b": 2, "scale": 3}, "9"),
        (greet, {"name": "Ana"}, "hello Ana!"),
    ],
)
async def test_positional_only_parameters_are_named_by_the_model_and_passed_by_position(
    function: Any, arguments: dict[str, Any], expected: str
) -> None:
    made = Tool(function)
    assert set(arguments) <= set(made.parameters["properties"])  # advertised by name
    runtime = Runtime()
    model = ScriptedModel([AIMessage(tool_calls=[tool_call(made.name, arguments)]), AIMessage(content="done")])
    result = await runtime.run(ReactAgent("a", model, [made]), "go")
    results = [m for m in await runtime.messages(result.thread_id) if isinstance(m, ToolMessage)]
    assert result.status == "completed"
    assert [(m.content, m.is_error) for m in results] == [(expected, False)]


class Counter:
    def __call__(self, n: int) -> int:
        """Count."""
        return n


@pytest.mark.parametrize(
    ("thing", "says"),
    [
        (42, r"42 \(int\) is not callable"),
        ("add", r"'add' \(str\) is not callable"),
        (None, r"None \(NoneType\) is not callable"),
        (functools.partial(add, 1), "has no __name__ to name its tool by .*: pass name="),
        (Counter(), "has no __name__ to name its tool by .*: pass name="),
    ],
)
def test_what_cannot_be_a_tool_is_refused_saying_why(thing: Any, says: str) -> None:
    with pytest.raises(ToolDefinitionError, match=says):
        Tool(thing)
    with pytest.raises(ToolDefinitionError, match=says):
        ReactAgent("a", ScriptedModel([]), [thing])


async def test_a_callable_without_a_name_is_a_tool_once_named() -> None:
    add_one = Tool(functools.partial(add, 1), name="add_one")
    assert add_one.parameters["required"] == ["b"] and add_one.description == "Add two numbers."
    assert await add_one.run(None, add_one.validate({"b": 2})) == 3
    count = Tool(Counter(), name="count")
    assert count.description == "Count." and await count.run(None, count.validate({"n": 2})) == 2


class Point(TypedDict):
    x: int
    y: int


def takes_point(point: Point) -> str:
    """Take a point."""
    return str(point)


def takes_object(value: object, other: int) -> str:
    """Take anything."""
    return str(value)


class Opaque:
    """Not a type pydantic can describe."""

    MARK: Any = None  # set below: an instance, a literal value with no JSON form

    def __repr__(self) -> str:
        return "<Opaque>"


Opaque.MARK = Opaque()


def takes_opaque(thing: Opaque) -> str:
    """Take a thing."""
    return "ok"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="typing.TypedDict works in pydantic from Python 3.12")
def test_a_typing_typeddict_parameter_is_refused_naming_the_parameter() -> None:
    with pytest.raises(
        ToolDefinitionError, match=r"tool 'takes_point': parameter 'point' is annotated Point: .*typing_extensions"
    ):
        Tool(takes_point)


def test_a_parameter_type_without_a_json_schema_is_a_tool_definition_error() -> None:
    with pytest.raises(ToolDefinitionError, match=r"tool 'takes_opaque': parameter 'thing' is annotated Opaque, "):
        Tool(takes_opaque)
    assert Tool(takes_object).parameters["required"] == ["value", "other"]  # object is any JSON: fine


def opaque_list(x: list[Opaque]) -> str:
    """Take things."""
    return "ok"


def opaque_or_none(x: Opaque | None = None) -> str:
    """Take a thing, maybe."""
    return "ok"


def a_callback(x: Callable[[int], int]) -> str:
    """Take a function."""
    return "ok"


def an_iterator(x: Iterator[int]) -> str:
    """Take an iterator."""
    return "ok"


def a_class(x: type) -> str:
    """Take a class."""
    return "ok"


def an_odd_literal(x: Literal[Opaque.MARK]) -> str:  # type: ignore[valid-type]
    """Take an odd literal."""
    return "ok"


@pytest.mark.parametrize(
    ("function", "shown"),
    [
        (takes_opaque, "Opaque"),
        (opaque_list, "list[Opaque]"),
        (opaque_or_none, "Opaque | None"),
        (a_callback, "Callable[[int], int]"),
        (an_iterator, "Iterator[int]"),
        (a_class, "type"),
        (an_odd_literal, "Literal[<Opaque>]"),
    ],
)
def test_a_type_without_a_json_schema_is_refused_in_plain_words(function: Any, shown: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        Tool(function)
    said = str(info.value)
    name = "thing" if function is takes_opaque else "x"
    assert said.startswith(f"tool {function.__name__!r}: parameter {name!r} is annotated {shown}, which has no JSON")
    assert "Annotate it with a JSON type" in said and "RunContext" in said
    assert not any(internal in said for internal in ("core_schema", "JsonSchema", "IsInstance", "errors.pydantic"))


def plain_optional(k: str, ctx: RunContext[None] | None = None) -> str:
    """Optional context, X | None."""
    return f"{k}:{type(ctx).__name__}"


def typing_optional(k: str, ctx: Optional[RunContext] = None) -> str:  # noqa: UP045 - the typing spelling is tested
    """Optional context, typing.Optional."""
    return f"{k}:{type(ctx).__name__}"


def optional_without_default(ctx: "RunContext[Any] | None", k: str) -> str:  # noqa: UP037 - a string annotation
    """Optional context without a default, as a string annotation."""
    return f"{k}:{type(ctx).__name__}"


def optional_first(k: str, ctx: Union[None, RunContext[Any]] = None) -> str:  # noqa: UP007, RUF036
    """None first in the union."""
    return f"{k}:{type(ctx).__name__}"


@pytest.mark.parametrize("function", [plain_optional, typing_optional, optional_without_default, optional_first])
async def test_an_optional_run_context_is_injected_like_a_plain_one(function: Any) -> None:
    made = Tool(function)
    assert made.takes(RunContext) and made.parameters["properties"] == {"k": {"type": "string"}}
    runtime = Runtime()
    model = ScriptedModel([AIMessage(tool_calls=[tool_call(made.name, {"k": "z"})]), AIMessage(content="done")])
    result = await runtime.run(ReactAgent("a", model, [made]), "go")
    results = [m.content for m in await runtime.messages(result.thread_id) if isinstance(m, ToolMessage)]
    assert result.status == "completed" and results == ["z:RunContext"]
    assert await made.run(None, made.validate({"k": "y"})) == "y:NoneType"  # no run: None, as the annotation allows


def context_or_number(k: str, ctx: RunContext[Any] | int) -> str:
    """Either."""
    return k


def context_or_state(k: str, ctx: RunContext[Any] | Opaque | None = None) -> str:
    """Either."""
    return k


@pytest.mark.parametrize("function", [context_or_number, context_or_state])
def test_a_union_of_an_injected_type_and_another_is_refused(function: Any) -> None:
    with pytest.raises(
        ToolDefinitionError, match=r"parameter 'ctx' is annotated RunContext\[Any\] \| .*either injected or"
    ):
        Tool(function)


def taken_names(
    schema: int,
    copy: int,
    json: str = "j",
    _private: int = 0,
    model_config: int = 1,
    model_dump: int = 2,
    arg0: int = 3,
) -> str:
    """Names pydantic keeps for itself."""
    return f"{schema} {copy} {json} {_private} {model_config} {model_dump} {arg0}"


async def test_parameters_named_like_pydantic_s_own_attributes_are_arguments_like_any_other() -> None:
    made = Tool(taken_names)
    names = ["schema", "copy", "json", "_private", "model_config", "model_dump", "arg0"]
    assert list(made.parameters["properties"]) == names and made.parameters["required"] == ["schema", "copy"]
    arguments = {"schema": 1, "copy": 2, "_private": 4, "model_config": 5, "model_dump": 6}
    assert await made.run(None, made.validate(arguments)) == "1 2 j 4 5 6 3"
    with pytest.raises(ToolArgumentsError, match="model_config: Input should be a valid integer"):
        made.validate({**arguments, "model_config": "x"})
    with pytest.raises(ToolArgumentsError, match="arg1: Extra inputs"):  # the field's own name is not a way in
        Tool(taken_names, strict=True).validate({**arguments, "arg1": 7})


def noargs() -> str:
    """Nothing to take."""
    return "ok"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"parameters": "nope"}, "parameters must be a JSON schema as a dict"),
        ({"parameters": ["a"]}, "parameters must be a JSON schema as a dict"),
        ({"description": 5}, "description must be a string, not 5"),
        ({"description": ["x"]}, "description must be a string"),
        ({"approval": "no"}, "approval must be True or False, not 'no'"),
        ({"approval": 1}, "approval must be True or False"),
        ({"strict": "yes"}, "strict must be True or False"),
        ({"metadata": {"expose_to_user": True}}, "metadata must be a ToolMetadata"),
        ({"name": ""}, "tool name '' is not valid"),
    ],
)
def test_options_of_the_wrong_type_are_refused_when_the_tool_is_made(options: dict[str, Any], says: str) -> None:
    with pytest.raises(ToolDefinitionError, match=says):
        Tool(noargs, **options)


def test_parameters_set_later_are_checked_too() -> None:
    made = Tool(noargs)
    with pytest.raises(ToolDefinitionError, match="parameters must be a JSON schema as a dict"):
        made.parameters = "nope"  # type: ignore[assignment]
    made.parameters = {"type": "object", "properties": {}}
    assert made.spec.parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize("name", ["", "my agent", "a/b", "x" * 65, "café", 7])
def test_an_agent_name_follows_the_tool_name_rule(name: Any) -> None:
    with pytest.raises(UsageError, match=r"agent name .* is not valid: use 1-64 letters, digits"):
        ReactAgent(name, ScriptedModel([]), [])


@pytest.mark.parametrize("name", ["a", "helper-2", "Weather_Bot", "x" * 64])
def test_valid_agent_names_are_taken(name: str) -> None:
    assert ReactAgent(name, ScriptedModel([]), []).name == name


@pytest.mark.parametrize("model", [None, "gpt-4o", object(), lambda messages, request: "hi"])
def test_an_agent_needs_a_model(model: Any) -> None:
    with pytest.raises(UsageError, match="agent 'a' needs a model"):
        ReactAgent("a", model, [])


@pytest.mark.parametrize("tools", [noargs, Tool(noargs), "noargs", 5])
def test_tools_given_bare_instead_of_in_a_list_are_refused(tools: Any) -> None:
    with pytest.raises(UsageError, match="tools must be a list of tools and functions"):
        ReactAgent("a", ScriptedModel([]), tools)


def test_tools_in_any_sequence_are_taken() -> None:
    assert list(ReactAgent("a", ScriptedModel([]), (noargs,)).tools) == ["noargs"]
    assert list(ReactAgent("a", ScriptedModel([]), [Tool(add)]).tools) == ["add"]
