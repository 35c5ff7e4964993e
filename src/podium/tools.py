"""Tools: plain typed Python functions, sync or async, made callable by a model.

The JSON schema of the arguments comes from the signature, the description from the docstring (its first
paragraph; Google-style ``Args:`` lines describe the parameters). A parameter annotated with
a subclass of :class:`Injectable` receives a value of the run instead of a model argument: the run context for
:class:`podium.RunContext`, or what the context provides for another type (a task agent's state). Annotated
``X | None`` (``Optional[X]``), it is injected the same way, and receives ``None`` where the run provides no ``X``.
Injection is by annotation only, never by parameter name, context variable or rewritten signature. Every other
parameter needs an annotation with a JSON schema (what the model is told to pass); one without is refused with
:class:`ToolDefinitionError` when the tool is made.

Arguments from a model are validated before the function runs; what is wrong is reported with
:class:`ToolArgumentsError`, whose text is written for the model to act on. An argument the signature does not
name is ignored, unless the tool is ``strict``: then it is refused, and the model is told so.

A sync function runs in a thread of its own, off the event loop, so it neither stalls the other runs of the process
nor escapes a run's timeout. Every call is bounded by the tool's ``timeout`` (:data:`DEFAULT_TOOL_TIMEOUT` unless
set; ``None`` for no bound): a call that outlives it raises :class:`ToolTimeout`, which a ReAct agent hands to the
model as the call's error. Python cannot stop a thread: a sync call that timed out is abandoned, not killed, and its
thread runs on (as a daemon: it does not keep the process alive). A quick function that never waits may be declared
``inline`` instead: it runs on the event loop's thread, without the hand-over to a tool thread, and unbounded.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import json
import logging
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from types import FunctionType, UnionType
from typing import (
    TYPE_CHECKING,
    Any,
    Protocol,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

from podium._eager import first_step
from podium._tool_schema import arguments_model, parse_docstring, type_name, unsupported
from podium._tool_thread import in_thread
from podium.errors import ToolArgumentsError, ToolDefinitionError, ToolTimeout, UsageError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from podium.messages import ToolSignal

_InjectableT = TypeVar("_InjectableT", bound="Injectable")

_log = logging.getLogger("podium.tools")

__all__ = [
    "DEFAULT_TOOL_TIMEOUT",
    "INLINE_WARNING",
    "TOOL_OUTPUT_LIMIT",
    "Injectable",
    "Tool",
    "ToolArgumentsError",
    "ToolMetadata",
    "ToolReturn",
    "ToolSpec",
    "is_injected",
    "tool",
]

DEFAULT_TOOL_TIMEOUT = 300.0
"""Seconds a tool call may take unless its tool sets ``timeout``: a tool that hangs cannot hang its run forever."""

INLINE_WARNING = 0.05
"""Seconds an :attr:`~Tool.inline` call may take before it is logged as holding up the event loop."""

TOOL_OUTPUT_LIMIT = 100_000
"""Characters of a tool's text result the model is shown (and the history keeps): a longer one is cut there, with a
line saying so, so that one tool returning a whole file cannot fill the model's context or the store. A
:class:`ToolReturn`'s ``value`` and ``artifact`` are kept whole."""


def bounded(text: str, limit: int = TOOL_OUTPUT_LIMIT) -> str:
    """``text``, or its first ``limit`` characters with a line saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[cut: the tool returned {len(text):,} characters; the first {limit:,} are shown]"


class Injectable:
    """Base of what a tool receives by annotation instead of from the model (the run context derives from it).

    It lives here, below the runtime, so that tools know what to inject without importing the runtime.
    """

    __slots__ = ()

    def injected(self, kind: type[_InjectableT]) -> _InjectableT | None:
        """What a parameter annotated ``kind`` receives when this is the run context (``None``: nothing here)."""
        return self if isinstance(self, kind) else None

    @classmethod
    def when_missing(cls) -> Injectable:
        """The value a parameter of this type gets when the run provides none.

        Raises:
            ToolDefinitionError: the type has no such value (the default): the tool cannot run here.
        """
        raise ToolDefinitionError(f"no {cls.__name__} to hand to the tool: it runs only where one is provided")


class Injector(Protocol):
    """What hands a tool its injected parameters: the run context, or anything that answers like it."""

    def injected(self, kind: type[_InjectableT]) -> _InjectableT | None:
        """What a parameter annotated ``kind`` receives (``None``: nothing here)."""
        ...


@dataclass(slots=True, kw_only=True)
class ToolMetadata:
    """How a tool presents itself to users and orchestrators, beyond what the model sees."""

    expose_to_user: bool = False
    """List the tool in welcome and repeat prompts."""
    introduction: str | None = None
    """Text shown to users; the model sees the description instead."""
    can_generate_task: bool | None = None
    """The tool may leave a task pending (push onto an orchestrator's task stack): ask the human, and wait for the
    answer. ``None`` (left unset): the default of the orchestration's wrapper; the master agent's function and agent
    tools may (a function tool asks for a required argument it was not given), any other tool may not."""
    takes_corrections: bool = False
    """While its task waits for an answer, a message that corrects what the tool was told ("no wait, I meant
    4411BA": :func:`podium.human.corrects`) is handed to it even when it does not answer the question, marked
    as a correction (the master agent's ``ToolInput.correction``); the tool reads what changed and goes on.
    Without it, such a message is refused as an answer that does not fit, and the question is asked again."""
    examples: list[str] = field(default_factory=list)
    """Example user requests this tool serves (used by routers)."""
    result_type: Any = None
    """The type of the tool's structured result (a pydantic model or dataclass), rebuilt from its JSON when an
    orchestration reads the result back (a task agent's handler value after a resume); ``None``: kept as JSON."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Anything else an application wants to attach."""


@dataclass(slots=True, frozen=True)
class ToolSpec:
    """What a model is told about a tool."""

    name: str
    """The tool's name."""
    description: str
    """What it does, for the model."""
    parameters: dict[str, Any]
    """JSON schema of the arguments object."""


@dataclass(slots=True)
class ToolReturn:
    """A tool result with extras besides the content the model sees: an artifact for the UI, the result as data,
    a signal to the calling agent, and metadata (each copied onto the result's :class:`podium.ToolMessage`)."""

    content: Any
    """What the model sees (text, or data serialised to JSON)."""
    artifact: Any = None
    """A result for the user interface, kept out of the model's view."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Data recorded with the result message."""
    value: Any = None
    """The result as JSON data, for code acting on it (``ToolMessage.value``)."""
    signal: ToolSignal | None = None
    """What the result asks of the calling agent (``ToolMessage.signal``)."""


def is_injected(annotation: Any) -> bool:
    """True when a parameter annotated ``annotation`` is injected (an :class:`Injectable`, generic or not)."""
    origin = get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, Injectable)


@dataclass(frozen=True, slots=True)
class _Derived:
    """What a function's signature and docstring say, derived once per (function, name, strict)."""

    description: str
    is_async: bool
    injected: dict[str, type[Injectable]]
    """Parameters that receive an injected value, and the type of that value (read, never changed)."""
    args_model: type[BaseModel]
    schema: dict[str, Any]
    positional: tuple[str, ...] = ()
    """Positional-only parameters, in order: the model names them, the call passes them by position."""
    optional: frozenset[str] = frozenset()
    """Injected parameters annotated ``X | None``: they receive ``None`` where the run provides no ``X``."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Parameters the argument model knows by another name (a name pydantic keeps for itself), by that name."""


_DERIVED: weakref.WeakKeyDictionary[Any, dict[tuple[str, bool], _Derived]] = weakref.WeakKeyDictionary()
"""Tools derived from each function, kept while the function lives: an agent built again and again from the same
functions (one per request, per run) reads its tools' signatures and docstrings once."""


def _derive(function: Callable[..., Any], name: str, strict: bool) -> _Derived:
    try:
        per_function = _DERIVED.get(function)
    except TypeError:  # not weakly referable or not hashable: derive it every time
        return _derive_now(function, name, strict)
    if per_function is not None and (found := per_function.get((name, strict))) is not None:
        return found
    derived = _derive_now(function, name, strict)
    if per_function is None:
        try:
            _DERIVED[function] = per_function = {}
        except TypeError:
            return derived
    per_function[(name, strict)] = derived
    return derived


def valid_name(name: Any) -> bool:
    """True when ``name`` is a name a model API takes for a tool (and so for an agent): 1-64 letters, digits, '_'
    or '-'."""
    return isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) is not None


def _derive_now(function: Callable[..., Any], name: str, strict: bool) -> _Derived:
    if not valid_name(name):
        raise ToolDefinitionError(f"tool name {name!r} is not valid: use 1-64 letters, digits, '_' or '-'")
    inner = function
    while isinstance(inner, functools.partial):  # its docstring and annotations are those of what it wraps
        inner = inner.func
    doc = inspect.getdoc(inner)
    is_async = inspect.iscoroutinefunction(inner) or inspect.iscoroutinefunction(
        getattr(inner, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )
    if not (inspect.isroutine(inner) or isinstance(inner, type)):  # a callable object: its __call__ is annotated
        inner = getattr(inner, "__call__")  # noqa: B004, B009 - mypy reads .__call__ of a Callable as a call
        doc = doc or inspect.getdoc(inner)  # and documented, when its class is not
    description, doc_params = parse_docstring(doc)
    try:
        hints = get_type_hints(inner)
    except Exception as exc:
        raise ToolDefinitionError(f"cannot read the annotations of {name!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    injected: dict[str, type[Injectable]] = {}
    positional: list[str] = []
    optional: list[str] = []
    for pname, param in inspect.signature(function).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"tool {name!r}: *args and **kwargs are not supported ({pname})")
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(pname)
        annotation = hints.get(pname, inspect.Parameter.empty)
        kind = _injected_kind(name, pname, annotation)
        if kind is not None:
            injected[pname] = kind
            if kind is not annotation and get_origin(annotation) in _UNIONS:
                optional.append(pname)
            continue
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                f"tool {name!r}: parameter {pname!r} needs a type annotation so its schema can be derived"
            )
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (annotation, default, doc_params.get(pname))
    try:
        args_model, schema, renamed = arguments_model(name, fields, strict)
    except Exception as exc:  # a type pydantic cannot validate or describe as JSON schema
        raise ToolDefinitionError(f"tool {name!r}: {unsupported(fields, exc)}") from exc
    return _Derived(
        description, is_async, injected, args_model, schema, tuple(positional), frozenset(optional), renamed
    )


_UNIONS: tuple[Any, ...] = (Union, UnionType)


def _injected_kind(tool: str, pname: str, annotation: Any) -> type[Injectable] | None:
    """The :class:`Injectable` type a parameter annotated ``annotation`` receives, or ``None`` when the model gives
    it. ``X`` and ``X | None`` (``Optional[X]``) are both injected as ``X``, generic or not.

    Raises:
        ToolDefinitionError: the annotation joins an injected type with another (``RunContext | int``): a parameter
            is either injected or given by the model.
    """
    if is_injected(annotation):
        return cast("type[Injectable]", get_origin(annotation) or annotation)
    if get_origin(annotation) not in _UNIONS:
        return None
    members = get_args(annotation)
    kinds = [member for member in members if is_injected(member)]
    if not kinds:
        return None
    others = [member for member in members if member is not type(None) and not is_injected(member)]
    if len(kinds) > 1 or others:
        raise ToolDefinitionError(
            f"tool {tool!r}: parameter {pname!r} is annotated {type_name(annotation)}, which joins a value the run "
            f"injects ({type_name(kinds[0])}) with {type_name((kinds[1:] + others)[0])}: a parameter is either "
            f"injected or given by the model; annotate it {type_name(kinds[0])} (or {type_name(kinds[0])} | None), "
            "and give the model's value a parameter of its own"
        )
    return cast("type[Injectable]", get_origin(kinds[0]) or kinds[0])


class Tool:
    """A function the model can call.

    Build one with :func:`tool` (decorator) or ``Tool(function, ...)``. What the function's signature and docstring
    say is derived once per function (and name): making a tool of the same function again costs a few
    microseconds. An agent given a plain function uses that function's one shared, read-only tool instead.
    """

    __slots__ = (
        "_args_model",
        "_injected",
        "_is_async",
        "_optional",
        "_parameters",
        "_positional",
        "_renamed",
        "_schema",
        "approval",
        "description",
        "function",
        "inline",
        "metadata",
        "name",
        "read_only",
        "strict",
        "timeout",
    )

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: ToolMetadata | None = None,
        parameters: dict[str, Any] | None = None,
        strict: bool = False,
        timeout: float | None = DEFAULT_TOOL_TIMEOUT,
        approval: bool = False,
        read_only: bool = False,
        inline: bool = False,
    ) -> None:
        """Make a tool from ``function``.

        Args:
            function: a sync or async callable with annotated parameters.
            name: the tool's name (default: the function's name).
            description: for the model (default: the docstring's first part).
            metadata: how the tool presents itself to users and orchestrators.
            parameters: a JSON schema to advertise instead of the one derived from the signature.
            strict: refuse arguments the signature does not name, telling the model (default: drop them silently;
                a model that adds one gets its call run without it).
            timeout: seconds one call may take before it fails with :class:`ToolTimeout` (``None``: no bound).
            approval: ask the human before each call (an interrupt whose expectation is
                :meth:`~podium.events.Expectation.approval`): approve it, edit its arguments, or reject it, the
                model then being told why (the README's *In Python* section shows the answers it takes).
            read_only: the function changes nothing outside the run (a lookup, a calculation), so running it again
                is harmless. Its calls are then not written ahead: at durability ``full`` a round of read-only
                calls starts without waiting for the disk (the model's reply asking for them is committed first and
                synced meanwhile), and after a power cut it may run again. Leave it false for anything that sends,
                books, pays, writes or deletes: those calls are on disk before they start, so a crash never hides
                that one ran.
            inline: the sync function is quick and never waits (a calculation, a lookup in memory), so it runs on
                the event loop's thread, sparing each call the hand-over to a tool thread and back (tens of
                microseconds). Nothing can stop it there: its timeout does not apply, and while it runs no other
                run of the process moves. A call that takes longer than :data:`INLINE_WARNING` seconds is logged
                as a warning (once per tool). Leave it false for anything that reads a file, the network or a
                database, or sleeps.

        Raises:
            ToolDefinitionError: ``function`` is not callable, or has no name of its own (a ``functools.partial``,
                a callable object) and none is given; a parameter has no annotation, a type without a JSON
                schema, or one that joins an injected type with another (``RunContext | int``); the name is not
                valid for a model API; or an option has the wrong type (the timeout not a positive number,
                ``parameters`` not a dict, ``description`` not a string, ``approval``, ``strict``, ``read_only``
                or ``inline`` not a bool, ``metadata`` not a :class:`ToolMetadata`); or ``inline`` is asked of a
                coroutine function (it runs on the event loop already).
        """
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
        ):
            raise ToolDefinitionError(f"a tool's timeout must be a positive number of seconds or None, not {timeout!r}")
        if not callable(function):
            raise ToolDefinitionError(
                f"a tool is made of a function (or other callable), and {function!r} ({type(function).__name__}) is "
                "not callable"
            )
        if name is None:
            name = getattr(function, "__name__", None)
            if not isinstance(name, str):
                raise ToolDefinitionError(
                    f"{function!r} has no __name__ to name its tool by (a functools.partial or a callable object): "
                    "pass name=..."
                )
        _check_options(name, description=description, parameters=parameters, metadata=metadata)
        for option, value in (("approval", approval), ("strict", strict), ("read_only", read_only), ("inline", inline)):
            if not isinstance(value, bool):
                raise ToolDefinitionError(f"tool {name!r}: {option} must be True or False, not {value!r}")
        self.function = function
        self.name: str = name
        derived = _derive(function, self.name, strict)
        self.description: str = description if description is not None else derived.description
        self.metadata = metadata or ToolMetadata()
        self.strict = strict
        self.timeout = timeout
        self.approval = approval
        """Whether each call waits for the human's approval before it runs."""
        self.read_only = read_only
        """Whether the function changes nothing outside the run (its calls are not written ahead of it)."""
        self._is_async = derived.is_async
        if inline and self._is_async:
            raise ToolDefinitionError(
                f"tool {name!r}: inline is for sync functions (a coroutine function runs on the event loop already)"
            )
        self.inline = inline
        """Whether the sync function runs on the event loop's thread (no tool thread, no timeout)."""
        self._injected = derived.injected
        self._args_model = derived.args_model
        self._schema = derived.schema  # shared by every tool of this function: copied before anyone sees it
        self._positional = derived.positional
        self._optional = derived.optional
        self._renamed = derived.renamed
        self._parameters = parameters

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments advertised to the model (this tool's own copy: edits stay here)."""
        if self._parameters is None:
            self._parameters = copy.deepcopy(self._schema)
        return self._parameters

    @parameters.setter
    def parameters(self, value: dict[str, Any]) -> None:
        _check_options(self.name, parameters=value)
        self._parameters = value

    @property
    def spec(self) -> ToolSpec:
        """What a model is told about this tool."""
        return ToolSpec(self.name, self.description, self.parameters)

    @property
    def takes_context(self) -> bool:
        """True when the function declares a parameter that is injected (an :class:`Injectable`)."""
        return bool(self._injected)

    def takes(self, kind: type[Injectable]) -> bool:
        """True when the function declares a parameter annotated ``kind`` (injected, never from the model)."""
        return kind in self._injected.values()

    def validate(self, arguments: str | dict[str, Any]) -> dict[str, Any]:
        """Check model arguments against the signature and return the keyword arguments to call with.

        Raises:
            ToolArgumentsError: unparseable JSON or arguments that do not fit; the text is meant for the model.
        """
        from pydantic import ValidationError

        if isinstance(arguments, str):
            text = arguments.strip() or "{}"
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ToolArgumentsError(
                    f"The arguments for tool '{self.name}' are not valid JSON ({exc.msg} at position {exc.pos}). "
                    "Call the tool again with a JSON object."
                ) from None
        else:
            raw = arguments
        if not isinstance(raw, dict):
            raise ToolArgumentsError(
                f"The arguments for tool '{self.name}' must be a JSON object, not {type(raw).__name__}."
            )
        try:
            model = self._args_model.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}" for err in exc.errors()
            )
            problem = f"Invalid arguments for tool '{self.name}': {problems}."
            raise ToolArgumentsError(
                f"{problem} Expected arguments matching this schema: {json.dumps(self.parameters)}", problem=problem
            ) from None
        if self._renamed:
            return {self._renamed.get(fname, fname): value for fname, value in model.__dict__.items()}
        return dict(model.__dict__)

    async def run(self, ctx: Injector | None, kwargs: dict[str, Any]) -> Any:
        """Call the function with validated ``kwargs`` and its injected parameters; return its result.

        Each injected parameter gets what ``ctx`` holds for its annotation (:meth:`Injectable.injected`), else
        ``None`` when it is annotated ``X | None``, else its type's :meth:`Injectable.when_missing` value.

        A sync function runs in a thread of its own (one declared :attr:`inline` on the event loop's thread); the
        call is bounded by :attr:`timeout` (an inline call is not).

        Raises:
            ToolDefinitionError: an injected parameter has nothing to receive.
            ToolTimeout: the call did not finish within the tool's timeout.
        """
        if self._injected:
            kwargs = dict(kwargs)
            for pname, kind in self._injected.items():
                found = ctx.injected(kind) if ctx is not None else None
                if found is None:
                    found = None if pname in self._optional else kind.when_missing()
                kwargs[pname] = found
        function = self.function
        if self._positional:  # named by the model, passed by position (Python refuses them by keyword)
            kwargs = dict(kwargs)
            args = [kwargs.pop(pname) for pname in self._positional if pname in kwargs]
            function = functools.partial(function, *args)
        call: Awaitable[Any]
        if self.inline:
            return _inline(self.name, function, kwargs)
        if not self._is_async:
            call = in_thread(function, kwargs, self.name)
            if call.done():  # finished while the loop waited for it: no timer needed
                return call.result()
        elif self.timeout is None:
            call = cast("Callable[..., Coroutine[Any, Any, Any]]", function)(**kwargs)
        else:
            finished, call = first_step(cast("Callable[..., Coroutine[Any, Any, Any]]", function)(**kwargs))
            if finished:  # a call that never waits needs no timer
                return call
        if self.timeout is None:
            return await call
        bound = asyncio.timeout(self.timeout)
        try:
            async with bound:
                return await call
        except TimeoutError:
            if bound.expired():
                raise ToolTimeout(self.name, self.timeout) from None
            raise

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


def _check_options(
    name: str,
    *,
    description: Any = None,
    parameters: Any = None,
    metadata: Any = None,
) -> None:
    """Refuse options of the wrong type when the tool is made, not at its first call.

    Raises:
        ToolDefinitionError: ``description`` is not a string, ``parameters`` not a dict (a JSON schema object), or
            ``metadata`` not a :class:`ToolMetadata` (``None`` is fine for each).
    """
    if description is not None and not isinstance(description, str):
        raise ToolDefinitionError(f"tool {name!r}: description must be a string, not {description!r}")
    if parameters is not None and not isinstance(parameters, dict):
        raise ToolDefinitionError(
            f"tool {name!r}: parameters must be a JSON schema as a dict (an object's schema), not {parameters!r}"
        )
    if metadata is not None and not isinstance(metadata, ToolMetadata):
        raise ToolDefinitionError(f"tool {name!r}: metadata must be a ToolMetadata, not {metadata!r}")


def result_to_text(value: Any) -> str:
    """The text a model sees for a tool's return value: strings as they are, numbers with ``str``, data as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return str(value)
    dump = getattr(value, "model_dump_json", None)
    if callable(dump):
        return cast(str, dump())
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return json.dumps(value, default=str, ensure_ascii=False)


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    metadata: ToolMetadata | None = None,
    strict: bool = False,
    timeout: float | None = DEFAULT_TOOL_TIMEOUT,
    approval: bool = False,
    read_only: bool = False,
    inline: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    metadata: ToolMetadata | None = None,
    strict: bool = False,
    timeout: float | None = DEFAULT_TOOL_TIMEOUT,
    approval: bool = False,
    read_only: bool = False,
    inline: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` of a function; usable bare (``@tool``) or with options (``@tool(timeout=30)``,
    ``@tool(approval=True)``, ``@tool(read_only=True)``, ``@tool(inline=True)``: see :class:`Tool`)."""

    def decorate(fn: Callable[..., Any]) -> Tool:
        return Tool(
            fn,
            name=name,
            description=description,
            metadata=metadata,
            strict=strict,
            timeout=timeout,
            approval=approval,
            read_only=read_only,
            inline=inline,
        )

    if function is not None:
        return decorate(function)

    return decorate


_slow_inline: set[str] = set()
"""Inline tools already warned of (the warning is given once per tool name and process)."""


def _inline(name: str, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Call an inline tool's function on this thread; warn (once) when the call held the event loop too long."""
    started = time.perf_counter()
    try:
        return function(**kwargs)
    finally:
        took = time.perf_counter() - started
        if took > INLINE_WARNING and name not in _slow_inline:
            _slow_inline.add(name)
            _log.warning(
                "tool %r is declared inline but a call took %.0f ms, holding up every run of the process meanwhile; "
                "drop inline=True so that it runs in a tool thread",
                name,
                took * 1000,
            )


class _SharedTool(Tool):
    """The tool of a plain function given to an agent: made once per function, shared, and read-only.

    Every agent built from the function holds this one object, so building an agent costs no tool construction;
    being shared, it cannot be changed (its metadata is shared too): change a tool of your own, ``Tool(function)``.
    """

    __slots__ = ("_sealed",)

    def __init__(self, function: Callable[..., Any]) -> None:
        super().__init__(function)
        self._parameters = copy.deepcopy(self._schema)  # the one copy its users see, made before it is sealed
        self._sealed = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_sealed", False):
            raise UsageError(
                f"tool {self.name!r} is shared by every agent made from the function {self.name}, so it cannot be "
                f"changed: give the agent a tool of its own, Tool({self.name}), and change that"
            )
        object.__setattr__(self, name, value)


_SHARED = "_podium_tool"
"""Where a function keeps its shared tool: an attribute of the function itself, so a lookup costs one dictionary
read and the tool lives (and dies) with the function (a weak-keyed cache would keep it alive through the tool)."""


def as_tool(value: Tool | Callable[..., Any]) -> Tool:
    """``value`` itself if it is a tool, else the tool of the function (plain functions: their shared tool)."""
    if type(value) is FunctionType:
        shared = value.__dict__.get(_SHARED)
        # copied onto a wrapper by functools.wraps, or left behind by a renamed function: not this one's
        if shared is not None and shared.function is value and shared.name == value.__name__:
            return cast(Tool, shared)
        made = _SharedTool(value)
        value.__dict__[_SHARED] = made
        return made
    return value if isinstance(value, Tool) else Tool(value)
