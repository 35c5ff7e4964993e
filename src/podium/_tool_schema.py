"""How a tool's schema is read from a function: its docstring's description and ``Args:``, and the pydantic model
that validates its arguments (shared by every function of the same signature)."""

from __future__ import annotations

import inspect
import re
from types import UnionType
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ARGUMENT_MODELS", "arguments_model", "parse_docstring", "type_name", "unsupported"]


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title" or isinstance(v, dict)}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The description (text before any section) and the ``Args:`` descriptions of a Google-style docstring."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    lines = text.splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section = "args"
            continue
        if re.match(r"^(Returns|Raises|Yields|Examples?|Notes?):$", stripped):
            section = "other"
            continue
        if section is None:
            description.append(line)
        elif section == "args":
            match = _ARG_LINE.match(line)
            if match and not line.startswith("        "):
                current = match.group(1).lstrip("*")
                params[current] = match.group(2).strip()
            elif current and stripped:
                params[current] += " " + stripped
    return "\n".join(description).strip(), params


ARGUMENT_MODELS: dict[Any, tuple[type[BaseModel], dict[str, Any], dict[str, str]]] = {}
"""Argument models by signature: building one with pydantic costs about a millisecond, and tools made again and
again from functions of the same signature (closures made per agent, per run) can share it."""


def arguments_model(
    name: str, fields: dict[str, tuple[Any, Any, str | None]], strict: bool
) -> tuple[type[BaseModel], dict[str, Any], dict[str, str]]:
    """The pydantic model validating a tool's arguments, its JSON schema (without titles), and the parameters it
    knows under another name (by that name).

    A parameter whose name pydantic keeps for itself (``model_config``, ``json``, ``copy``, a leading ``_``) is a
    field of another name whose alias is the parameter's: the model sees, passes and is told about the parameter's
    own name.
    """
    key: Any = (name, strict, tuple(fields.items()))
    try:
        cached = ARGUMENT_MODELS.get(key)
    except TypeError:  # an unhashable default or annotation: build it every time
        key, cached = None, None
    if cached is not None:
        return cached
    from pydantic import BaseModel, ConfigDict, Field, create_model

    config = ConfigDict(extra="forbid" if strict else "ignore", arbitrary_types_allowed=True)
    definitions: dict[str, Any] = {}
    renamed: dict[str, str] = {}
    for pname, (annotation, default, description) in fields.items():
        field_name = pname
        if pname.startswith(("_", "model_")) or hasattr(BaseModel, pname):
            field_name = f"arg{len(renamed)}"
            while field_name in fields:
                field_name += "_"
            renamed[field_name] = pname
        alias = pname if field_name != pname else None
        definitions[field_name] = (annotation, Field(default, description=description, alias=alias))
    model: type[BaseModel] = create_model(f"{name}_arguments", __config__=config, **definitions)
    schema = _strip_titles(model.model_json_schema())
    if not strict:
        schema.pop("additionalProperties", None)
    made = (model, schema, renamed)
    if key is not None:
        if len(ARGUMENT_MODELS) >= 1024:  # bounded: endless distinct signatures do not grow it forever
            ARGUMENT_MODELS.clear()
        ARGUMENT_MODELS[key] = made
    return made


def type_name(annotation: Any) -> str:
    """An annotation as a person writes it: ``Thing``, ``list[Thing]``, ``Callable[[int], int]`` (no modules)."""
    if annotation is type(None) or annotation is None:
        return "None"
    if isinstance(annotation, type) and not get_args(annotation):
        return annotation.__qualname__
    if get_origin(annotation) in (Union, UnionType):
        return " | ".join(type_name(member) for member in get_args(annotation))
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])", "", repr(annotation)).replace("NoneType", "None")


def unsupported(fields: dict[str, tuple[Any, Any, str | None]], error: Exception) -> str:
    """Why no argument model could be made of ``fields`` (``error`` is what pydantic raised), in plain words: the
    parameter whose type has no JSON schema (found by trying each alone) and what to annotate it with instead."""
    from pydantic import PydanticInvalidForJsonSchema, PydanticSchemaGenerationError, PydanticUserError, TypeAdapter

    for pname, (annotation, _default, _doc) in fields.items():
        try:
            TypeAdapter(annotation).json_schema()
        except PydanticUserError as exc:
            if not isinstance(exc, PydanticInvalidForJsonSchema | PydanticSchemaGenerationError):
                # advice on how to write the type (typing_extensions.TypedDict on Python 3.11): passed on as it is
                return f"parameter {pname!r} is annotated {type_name(annotation)}: {_first_line(exc)}"
            return _no_schema(pname, annotation)
        except Exception:
            return _no_schema(pname, annotation)
    names = ", ".join(repr(pname) for pname in fields)
    return f"its parameters ({names}) cannot be made into arguments for a model: {_first_line(error)}"


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _no_schema(pname: str, annotation: Any) -> str:
    return (
        f"parameter {pname!r} is annotated {type_name(annotation)}, which has no JSON schema, so the model "
        "cannot be told what to pass. Annotate it with a JSON type (str, int, float, bool, None, a list or "
        "dict of them, a Literal, an Enum, a pydantic model, a dataclass or a TypedDict of them); a value "
        "of the run rather than of the model is annotated RunContext (or another podium.tools.Injectable)"
    )
