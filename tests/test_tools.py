"""Tools from typed functions: schema, description, context injection and validation errors for the model."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from podium import RunContext, Tool, ToolArgumentsError, ToolDefinitionError, ToolMetadata, tool
from podium.models.openai_format import tool_to_openai
from podium.orchestration.tasks import AgentState
from podium.tools import Injectable, result_to_text


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def test_schema_and_description_come_from_the_signature_and_docstring() -> None:
    made = Tool(add)
    assert tool_to_openai(made.spec) == {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers.",
            "parameters": {
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
                "type": "object",
            },
        },
    }


def test_google_args_describe_parameters_and_defaults_are_optional() -> None:
    @tool(metadata=ToolMetadata(expose_to_user=True, introduction="Finds flights", can_generate_task=True))
    async def search(city: str, cabin: Literal["economy", "business"] = "economy", limit: int = 3) -> list[str]:
        """Search flights to a city.

        More detail that is still description.

        Args:
            city: where to fly.
            cabin: the cabin class,
                economy unless asked.

        Returns:
            flight numbers.
        """
        return [city] * limit

    assert search.description == "Search flights to a city.\n\nMore detail that is still description."
    props = search.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "where to fly."}
    assert props["cabin"]["enum"] == ["economy", "business"]
    assert props["cabin"]["description"] == "the cabin class, economy unless asked."
    assert props["limit"] == {"type": "integer", "default": 3}
    assert search.parameters["required"] == ["city"]
    assert search.metadata.expose_to_user and search.metadata.introduction == "Finds flights"


async def test_context_is_injected_by_type_and_hidden_from_the_schema() -> None:
    seen: list[Any] = []

    def lookup(ctx: RunContext[dict[str, str]], key: str) -> str:
        """Look a key up."""
        seen.append(ctx)
        return key

    made = Tool(lookup)
    assert made.takes_context and list(made.parameters["properties"]) == ["key"]

    class Holder(Injectable):
        def injected(self, kind: type[Injectable]) -> Injectable | None:
            return self if kind is RunContext else None

    marker: Any = Holder()
    assert await made.run(marker, made.validate({"key": "k"})) == "k"
    assert seen == [marker]
    with pytest.raises(ToolDefinitionError, match="no RunContext to hand to the tool"):
        await made.run(None, made.validate({"key": "k"}))


class Ledger(Injectable):
    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: list[str] = []


async def test_any_injectable_type_is_handed_what_the_context_provides() -> None:
    def note(ledger: Ledger, text: str) -> str:
        """Note a line."""
        ledger.entries.append(text)
        return "noted"

    made = Tool(note)
    assert list(made.parameters["properties"]) == ["text"]  # the injected parameter is not the model's to give
    ledger = Ledger()

    class Provider(Injectable):
        def injected(self, kind: type[Injectable]) -> Injectable | None:
            return ledger if kind is Ledger else None

    assert await made.run(Provider(), made.validate({"text": "one"})) == "noted"
    assert ledger.entries == ["one"]


async def test_an_optional_injectable_is_handed_what_the_context_provides_and_none_without_it() -> None:
    def note(text: str, ledger: Ledger | None = None) -> str:
        """Note a line, if there is a ledger."""
        if ledger is None:
            return "nowhere to note"
        ledger.entries.append(text)
        return "noted"

    made = Tool(note)
    assert list(made.parameters["properties"]) == ["text"] and made.takes(Ledger)
    ledger = Ledger()

    class Provider(Injectable):
        def injected(self, kind: type[Injectable]) -> Injectable | None:
            return ledger if kind is Ledger else None

    assert await made.run(Provider(), made.validate({"text": "one"})) == "noted"
    assert ledger.entries == ["one"]
    assert await made.run(None, made.validate({"text": "two"})) == "nowhere to note"  # not Ledger.when_missing()


async def test_sync_and_async_functions_both_run() -> None:
    async def slow(x: int) -> int:
        """Double."""
        return 2 * x

    assert await Tool(slow).run(None, {"x": 4}) == 8
    assert await Tool(add).run(None, Tool(add).validate('{"a": 1, "b": 2.5}')) == 3.5


def test_bad_arguments_are_explained_for_the_model() -> None:
    made = Tool(add)
    with pytest.raises(ToolArgumentsError, match=r"not valid JSON .*Call the tool again"):
        made.validate('{"a": 1,')
    with pytest.raises(ToolArgumentsError, match="must be a JSON object, not list"):
        made.validate("[1, 2]")
    with pytest.raises(ToolArgumentsError, match=r"b: Field required.*schema") as info:
        made.validate({"a": 1})
    assert '"required": ["a", "b"]' in str(info.value)
    with pytest.raises(ToolArgumentsError, match="a: Input should be a valid number"):
        made.validate({"a": "many", "b": 1})
    assert made.validate({"a": 1, "b": 2, "extra": 3}) == {"a": 1, "b": 2}
    with pytest.raises(ToolArgumentsError, match="extra"):
        Tool(add, strict=True).validate({"a": 1, "b": 2, "extra": 3})


def test_functions_that_cannot_be_tools_are_refused() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    def star(*values: int) -> int:
        return 0

    with pytest.raises(ToolDefinitionError, match="needs a type annotation"):
        Tool(untyped)
    with pytest.raises(ToolDefinitionError, match=r"\*args"):
        Tool(star)
    with pytest.raises(ToolDefinitionError, match="not valid"):
        Tool(add, name="has space")


def test_results_become_text_the_model_can_read() -> None:
    class Point(BaseModel):
        x: int

    @dataclasses.dataclass
    class Pair:
        a: int
        b: str

    assert result_to_text("plain") == "plain"
    assert result_to_text(3.0) == "3.0"
    assert result_to_text(None) == ""
    assert result_to_text(Point(x=1)) == '{"x":1}'
    assert result_to_text(Pair(1, "é")) == '{"a": 1, "b": "é"}'
    assert result_to_text({"k": [1, 2]}) == '{"k": [1, 2]}'


def test_tools_of_the_same_signature_share_validation_but_not_their_schema() -> None:
    first, second = Tool(add), Tool(add)
    assert first._args_model is second._args_model  # built once
    first.parameters["properties"]["a"]["description"] = "edited"
    assert "description" not in second.parameters["properties"]["a"]
    assert Tool(add, strict=True)._args_model is not first._args_model


async def test_a_task_state_parameter_outside_a_task_agent_gets_a_fresh_state() -> None:
    def count(state: AgentState) -> int:
        """Count calls."""
        state.data["n"] = state.data.get("n", 0) + 1
        return int(state.data["n"])

    made = Tool(count)
    assert made.parameters["properties"] == {}
    assert await made.run(None, {}) == 1 and await made.run(None, {}) == 1  # nothing provided: nothing kept


def test_a_function_is_derived_once_and_forgotten_with_it() -> None:
    import gc
    import weakref

    from podium.tools import _DERIVED

    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: what to find.
        """
        return key

    first, second = Tool(lookup), Tool(lookup)
    assert first._schema is second._schema and list(_DERIVED[lookup]) == [("lookup", False)]
    renamed = Tool(lookup, name="find")
    assert renamed.name == "find" and renamed.description == "Look a key up."
    assert set(_DERIVED[lookup]) == {("lookup", False), ("find", False)}
    second.parameters = {"type": "object", "properties": {}}  # a tool's own schema, set after it was made
    assert second.spec.parameters == {"type": "object", "properties": {}}
    assert first.parameters["properties"]["key"]["description"] == "what to find."
    with pytest.raises(ToolDefinitionError, match="not valid"):
        Tool(lookup, name="no spaces")
    alive = weakref.ref(lookup)
    del lookup, first, second, renamed
    gc.collect()
    assert alive() is None  # the cache does not keep a function alive


def test_callables_that_cannot_be_cached_are_derived_every_time() -> None:
    class Unhashable:
        """Echo a number."""

        x: int  # the annotations get_type_hints reads on a callable object
        __hash__ = None  # type: ignore[assignment]

        def __call__(self, x: int) -> int:
            """Echo a number."""
            return x

    class NoWeakref:
        """Echo a number."""

        __slots__ = ()
        x: int

        def __call__(self, x: int) -> int:
            """Echo a number."""
            return x

    for made in (Tool(Unhashable(), name="echo"), Tool(NoWeakref(), name="echo")):
        assert made.description == "Echo a number." and made.validate({"x": 3}) == {"x": 3}


def test_agents_built_from_a_function_share_its_read_only_tool() -> None:
    import functools
    import gc
    import weakref

    from podium import ReactAgent, UsageError
    from podium.models.base import ModelSettings
    from podium.testing import FunctionModel

    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    model = FunctionModel(lambda messages, request: "ok")
    first, second = ReactAgent("a", model, [lookup]), ReactAgent("b", model, [lookup, add])
    shared = first.tools["lookup"]
    assert second.tools["lookup"] is shared and shared.function is lookup  # made once, for every agent
    assert shared.spec == Tool(lookup).spec and shared.validate({"key": "k"}) == {"key": "k"}
    for change in ("description", "name", "metadata", "parameters"):
        with pytest.raises(UsageError, match=r"shared by every agent .* Tool\(lookup\)"):
            setattr(shared, change, None)
    assert shared.description == "Look a key up." and shared.parameters["required"] == ["key"]
    own = Tool(lookup)  # a tool of one's own stays changeable, and the shared one is untouched
    own.description = "Mine."
    assert own.description == "Mine." and ReactAgent("c", model, [lookup]).tools["lookup"].description != "Mine."

    @functools.wraps(lookup)  # copies the function's attributes, the shared tool among them: not the wrapper's
    def wrapper(key: str) -> str:
        return key.upper()

    wrapped = ReactAgent("d", model, [wrapper]).tools["lookup"]
    assert wrapped is not shared and wrapped.function is wrapper
    lookup.__name__ = "find"  # a renamed function gets a tool of its new name
    assert ReactAgent("e", model, [lookup]).tools["find"].name == "find"

    settings = ModelSettings(temperature=0.1)
    assert first.settings == ModelSettings() and first.settings is not second.settings  # its own default
    first.settings = settings
    assert first.settings is settings and ReactAgent("f", model, settings=settings).settings is settings

    alive = weakref.ref(lookup)
    del lookup, wrapper, first, second, shared, own, wrapped
    gc.collect()
    assert alive() is None  # the tool lives and dies with its function


async def test_a_tool_s_long_text_result_is_cut_for_the_model_with_a_line_saying_so() -> None:
    from podium import AIMessage, MemoryStore, ReactAgent, Runtime, ToolMessage
    from podium.testing import FunctionModel, tool_call
    from podium.tools import TOOL_OUTPUT_LIMIT

    shown: list[str] = []

    def reply(messages: list[Any], request: Any) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            shown.append(messages[-1].content)
            return AIMessage(content="read it")
        return AIMessage(tool_calls=[tool_call("read_file", {})])

    def read_file() -> str:
        """Read a big file."""
        return "x" * (TOOL_OUTPUT_LIMIT * 3)

    result = await Runtime(MemoryStore()).run(ReactAgent("reader", FunctionModel(reply), [read_file]), "read it")
    assert result.output == "read it"
    (content,) = shown
    assert content.startswith("x" * TOOL_OUTPUT_LIMIT)
    assert content.endswith(
        f"[cut: the tool returned {TOOL_OUTPUT_LIMIT * 3:,} characters; the first 100,000 are shown]"
    )
    assert len(content) < TOOL_OUTPUT_LIMIT + 200
