"""How a tool's schema is read from a function: its docstring's description and ``Args:``, and the pydantic model
that validates its arguments (shared by every function of the same signature)."""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ARGUMENT_MODELS", "arguments_model", "parse_docstring"]


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


ARGUMENT_MODELS: dict[Any, tuple[type[BaseModel], dict[str, Any]]] = {}
"""Argument models by signature: building one with pydantic costs about a millisecond, and tools made again and
again from functions of the same signature (closures made per agent, per run) can share it."""


def arguments_model(
    name: str, fields: dict[str, tuple[Any, Any, str | None]], strict: bool
) -> tuple[type[BaseModel], dict[str, Any]]:
    """The pydantic model validating a tool's arguments, and its JSON schema (without titles)."""
    key: Any = (name, strict, tuple(fields.items()))
    try:
        cached = ARGUMENT_MODELS.get(key)
    except TypeError:  # an unhashable default or annotation: build it every time
        key, cached = None, None
    if cached is not None:
        return cached
    from pydantic import ConfigDict, Field, create_model

    config = ConfigDict(extra="forbid" if strict else "ignore", arbitrary_types_allowed=True)
    definitions: dict[str, Any] = {
        pname: (annotation, Field(default, description=description))
        for pname, (annotation, default, description) in fields.items()
    }
    model: type[BaseModel] = create_model(f"{name}_arguments", __config__=config, **definitions)
    schema = _strip_titles(model.model_json_schema())
    if not strict:
        schema.pop("additionalProperties", None)
    if key is not None:
        if len(ARGUMENT_MODELS) >= 1024:  # bounded: endless distinct signatures do not grow it forever
            ARGUMENT_MODELS.clear()
        ARGUMENT_MODELS[key] = (model, schema)
    return model, schema
