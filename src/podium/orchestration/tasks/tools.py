"""Tools with handlers for task agents: state injection, results of any type, and the built-in task tools.

A handler is an ordinary :class:`podium.tools.Tool` (or a plain typed function). Two things are added here:

- a parameter annotated :class:`AgentState` receives the agent's state for the conversation (injected by annotation,
  like :class:`podium.RunContext`: the agent provides it to the run context), and is left out of the schema the
  model sees;
- the handler may return anything: text as it is, data (pydantic objects, dataclasses, dicts, numbers) shown to the
  model as JSON and kept as the message's ``value``, :class:`TaskDone` / :class:`FinalResult` to end tasks, or a
  :class:`TaskMessage` to address someone. The value is the tool message's ``value`` (JSON) and the request its typed
  ``signal``, stored with the message, so a resumed run sees the same value and acts the same way.

Built-in tools: :func:`done_tool` (the Done signal), :func:`final_result_tool` (ends every ancestor; typed results),
:func:`send_tool` (recipient routing as a structured field), the pass tools (:func:`pass_tool`,
:func:`done_pass_tool`, :func:`forward_tool`); ``task_tool.py`` has a tool that runs a sub-task.
:func:`with_guidance` attaches instructions and examples that the agent writes into its system prompt.

Tools as results: a handler may return a :class:`ResultTool` (ends the task with it as the value) or
:func:`tool_request` calls (a message calling tools, for whichever responder handles them: often a sub-task).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from types import FunctionType
from typing import TYPE_CHECKING, Any, Optional, get_type_hints

from podium._tool_thread import in_thread
from podium.errors import ModelRetry, ToolDefinitionError
from podium.messages import ToolCall, ToolSignal
from podium.orchestration.tasks.types import AgentState, FinalResult, TaskDone, TaskMessage, TaskPass
from podium.tools import Tool, ToolReturn, result_to_text

if TYPE_CHECKING:
    from podium.orchestration.tasks.result_tool import ResultTool

__all__ = [
    "ResultTool",
    "done_pass_tool",
    "done_tool",
    "final_result_tool",
    "forward_tool",
    "handler_tool",
    "pass_tool",
    "send_tool",
    "tool_guide",
    "tool_request",
    "with_guidance",
]

_JSON_SCALARS = (str, int, float, bool, type(None))
"""Types whose values are their own JSON form (exactly these: subclasses are converted)."""


def _jsonable(value: Any) -> Any:
    if type(value) in _JSON_SCALARS:  # the common result, its own JSON form
        return value
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, fallback=str)


def __getattr__(name: str) -> Any:
    if name == "ResultTool":  # a pydantic model: pydantic is imported when it is first asked for
        from podium.orchestration.tasks.result_tool import ResultTool

        return ResultTool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _is_result_tool(value: Any) -> bool:
    """Whether ``value`` is a :class:`ResultTool` (none exists before its module was imported)."""
    module = sys.modules.get("podium.orchestration.tasks.result_tool")
    return module is not None and isinstance(value, module.ResultTool)


def tool_request(name: str, /, **arguments: Any) -> ToolCall:
    """A call of tool ``name`` that a handler returns for another responder (often a sub-task) to handle."""
    import uuid

    return ToolCall(id=f"call_{uuid.uuid4().hex[:24]}", name=name, arguments=json.dumps(arguments))


def to_tool_return(result: Any) -> Any:
    """What a handler's ``result`` becomes for the tool message: text, or a :class:`ToolReturn` carrying the result
    as data (``value``) and what it asks of the agent (``signal``)."""
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    if isinstance(result, ToolCall) or (
        isinstance(result, list) and result and all(isinstance(c, ToolCall) for c in result)
    ):
        calls = [result] if isinstance(result, ToolCall) else result
        text = ", ".join(f"{c.name}({c.arguments})" for c in calls)
        return ToolReturn(content=f"Requested {text}", signal=ToolSignal(tool_calls=list(calls)))
    if _is_result_tool(result):
        return ToolReturn(content=result.model_dump_json(), value=_jsonable(result), signal=ToolSignal(end="task"))
    if isinstance(result, TaskPass):
        signal = ToolSignal(passed=True, recipient=result.recipient, pass_input=result.of_input)
        signal.end = "task" if result.done else None
        return ToolReturn(content="Passed on." if not result.done else "Done.", signal=signal)
    if isinstance(result, TaskDone):
        return ToolReturn(content=result.content, value=_jsonable(result.value), signal=ToolSignal(end="task"))
    if isinstance(result, FinalResult):
        content = result.content if result.content is not None else result_to_text(result.value)
        return ToolReturn(content=content, value=_jsonable(result.value), signal=ToolSignal(end="all"))
    if isinstance(result, TaskMessage):
        signal = ToolSignal(recipient=result.recipient or None, tool_calls=list(result.tool_calls))
        return ToolReturn(content=result.content, value=_jsonable(result.value), signal=signal)
    if isinstance(result, ToolReturn):
        return result
    return ToolReturn(content=result, value=_jsonable(result))


def _value_type(annotation: Any) -> Any:
    """``annotation`` when values of it should be rebuilt from JSON (pydantic models, dataclasses), else ``None``."""
    from pydantic import BaseModel

    if not isinstance(annotation, type) or issubclass(
        annotation, TaskDone | FinalResult | TaskMessage | ToolReturn | TaskPass
    ):
        return None
    return annotation if issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation) else None


@dataclasses.dataclass(frozen=True, slots=True)
class _Handler:
    """A function made a handler, derived once per function: its wrapper and what its annotations say."""

    function: Callable[..., Any]
    """The function the handler calls."""
    name: str
    """The function's name when the handler was made (a renamed function is derived again)."""
    call: Callable[..., Any]
    """The function wrapped for a task agent: a sync one runs off the event loop, and the result becomes what the
    tool message carries (:func:`to_tool_return`)."""
    takes_state: bool
    """A parameter is annotated :class:`AgentState`."""
    value_type: Any
    """The type that rebuilds the result from JSON (see :func:`_value_type`), or ``None``."""


_HANDLER = "_podium_handler"
"""Where a plain function keeps its handler: an attribute of the function itself, so a lookup costs one dictionary
read and the handler lives (and dies) with the function, as ``podium.tools`` keeps a function's shared tool."""


def _handler(function: Callable[..., Any]) -> _Handler:
    """The handler of ``function``: made once per plain function (agents built again and again share the
    derivation), every time for other callables."""
    if type(function) is not FunctionType:
        return _make_handler(function)
    found = function.__dict__.get(_HANDLER)
    # copied onto a wrapper by functools.wraps, or left behind by a renamed function: not this one's
    if isinstance(found, _Handler) and found.function is function and found.name == function.__name__:
        return found
    made = function.__dict__[_HANDLER] = _make_handler(function)
    return made


def _make_handler(function: Callable[..., Any]) -> _Handler:
    try:
        hints = get_type_hints(function)
    except Exception as exc:
        raise ToolDefinitionError(f"cannot read the annotations of {function!r}: {exc}") from exc
    takes_state = any(hint is AgentState for name, hint in hints.items() if name != "return")
    is_async = inspect.iscoroutinefunction(function)
    name = str(getattr(function, "__name__", "tool"))

    @functools.wraps(function)
    async def call(**kwargs: Any) -> Any:
        if is_async:
            result = function(**kwargs)
        else:  # a sync function runs off the event loop, like a sync tool's
            result = await in_thread(function, kwargs, name)
        if inspect.isawaitable(result):
            result = await result
        return to_tool_return(result)

    call.__annotations__ = dict(hints)  # resolved, so the wrapper reads as the function does from any module
    return _Handler(function, name, call, takes_state, _value_type(hints.get("return")))


def handler_tool(item: Tool | Callable[..., Any]) -> tuple[Tool, bool]:
    """``item`` as a handler tool (its result made a tool message), and whether it takes the agent's state.

    Each call makes a tool of its own (its metadata and schema may be changed without touching another agent's);
    what the function's signature, annotations and docstring say is derived once per plain function.

    Raises:
        ToolDefinitionError: the function cannot be made into a tool.
    """
    base = item if isinstance(item, Tool) else None
    handler = _handler(item.function if isinstance(item, Tool) else item)
    made = Tool(
        handler.call,
        name=base.name if base else None,
        description=base.description if base else None,
        metadata=dataclasses.replace(base.metadata, extra=dict(base.metadata.extra)) if base else None,
        parameters=base.parameters if base else None,
        strict=base.strict if base else False,
    )
    if base is not None:  # the tool's own bound and approval hold for its handler too
        made.timeout, made.approval = base.timeout, base.approval
    made.metadata.result_type = (base.metadata.result_type if base else None) or handler.value_type
    return made, handler.takes_state


def with_guidance(item: Tool | Callable[..., Any], *, instructions: str = "", examples: Sequence[Any] = ()) -> Tool:
    """``item`` as a tool carrying ``instructions`` (when and how to use it) and example arguments for the prompt.

    A tool passed in is changed in place and returned.

    Args:
        item: a tool or a typed function.
        instructions: what the model should know about using the tool.
        examples: example arguments (dicts, shown as JSON) or example texts.
    """
    made = item if isinstance(item, Tool) else Tool(item)
    made.metadata.extra["instructions"] = instructions
    made.metadata.extra["call_examples"] = list(examples)
    return made


def tool_guide(tools: Iterable[Tool]) -> str:
    """The system-prompt section describing ``tools`` that carry instructions or examples ("" if none do)."""
    lines: list[str] = []
    for item in tools:
        instructions = str(item.metadata.extra.get("instructions") or "")
        examples = item.metadata.extra.get("call_examples") or []
        if not instructions and not examples:
            continue
        lines.append(f"- {item.name}: {instructions or item.description}")
        for example in examples:
            text = example if isinstance(example, str) else json.dumps(example, ensure_ascii=False)
            lines.append(f"  Example: {item.name}({text})")
    return "Tools you can use:\n" + "\n".join(lines) if lines else ""


def done_tool(*, name: str = "done") -> Tool:
    """The Done tool: the model calls it to end its task with a result."""

    def done(content: str) -> TaskDone:
        """Finish the current task and hand back its result.

        Args:
            content: the result of the task.
        """
        return TaskDone(content)

    return with_guidance(
        Tool(done, name=name),
        instructions="call it when the task is finished, with the result",
        examples=[{"content": "the answer"}],
    )


def send_tool(*, name: str = "send") -> Tool:
    """The Send tool: the model addresses a message to a named recipient (a sub-task, ``user`` ...)."""

    def send(recipient: str, content: str) -> TaskMessage:
        """Send a message to another agent or to the user.

        Args:
            recipient: who should answer: a helper's name, or "user".
            content: the message.
        """
        return TaskMessage(content=content, recipient=recipient)

    return Tool(send, name=name)


def final_result_tool(output_type: Any = str, *, name: str = "final_result") -> Tool:
    """A tool that ends its task and every ancestor with a result of ``output_type`` (validated).

    A pydantic model's fields become the tool's arguments; any other type is one argument ``result``. Arguments
    that do not validate go back to the model (:class:`podium.ModelRetry`).
    """
    from pydantic import BaseModel, TypeAdapter, ValidationError

    if isinstance(output_type, type) and issubclass(output_type, BaseModel):
        model = output_type
        params = []
        for field_name, info in model.model_fields.items():
            default = inspect.Parameter.empty if info.is_required() else None
            params.append(inspect.Parameter(field_name, inspect.Parameter.KEYWORD_ONLY, default=default))
        annotations: dict[str, Any] = {
            n: (f.annotation if f.is_required() else Optional[f.annotation])  # noqa: UP045 - built at run time
            for n, f in model.model_fields.items()
        }

        def final_model(**kwargs: Any) -> FinalResult:
            try:
                value = model.model_validate({k: v for k, v in kwargs.items() if v is not None})
            except ValidationError as exc:
                raise ModelRetry(
                    f"The result does not validate: {exc}. Call {name} again with a valid result."
                ) from None
            return FinalResult(value)

        final_model.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        final_model.__annotations__ = annotations
        description = f"Give the final result ({model.__name__}); this ends the whole task."
        made = Tool(final_model, name=name, description=description, parameters=model.model_json_schema())
    else:
        adapter: TypeAdapter[Any] = TypeAdapter(output_type)

        def final_value(result: Any) -> FinalResult:
            try:
                return FinalResult(adapter.validate_python(result))
            except ValidationError as exc:
                raise ModelRetry(f"The result does not validate: {exc}. Call {name} again.") from None

        final_value.__annotations__ = {"result": output_type}
        made = Tool(final_value, name=name, description="Give the final result; this ends the whole task.")
    if _value_type(output_type) is not None:
        made.metadata.result_type = output_type
    return made


def pass_tool(*, name: str = "pass_tool") -> Tool:
    """The Pass tool: the model passes the message it was answering on, for another responder to handle."""

    def pass_on() -> TaskPass:
        """Pass the current message on, so that another agent can handle it."""
        return TaskPass(of_input=True)

    return Tool(pass_on, name=name)


def done_pass_tool(*, name: str = "done_pass_tool") -> Tool:
    """The Done-Pass tool: end the task with the message the model was answering as its result."""

    def done_pass() -> TaskPass:
        """Finish the task, with the message you received as its result."""
        return TaskPass(done=True, of_input=True)

    return Tool(done_pass, name=name)


def forward_tool(*, name: str = "forward_tool") -> Tool:
    """The Forward tool: pass the message the model was answering on to a named recipient."""

    def forward(agent: str) -> TaskPass:
        """Forward the current message to another agent, or to "user".

        Args:
            agent: who should answer it.
        """
        return TaskPass(recipient=agent, of_input=True)

    return Tool(forward, name=name)
