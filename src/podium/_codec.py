"""The one JSON codec of Podium's data: messages, events and the values they carry.

Every type is read and written by a pydantic ``TypeAdapter`` built on first use (pydantic is not imported until then,
so ``import podium`` stays cheap). Message and event variants are dataclasses with a literal ``kind`` tag, read
through one discriminated union each. The compact form (for storage) leaves defaults out, except the tag, which
every tagged value keeps (see :class:`Tagged`).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar, cast

from podium.errors import InvalidData

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema

__all__ = ["Tagged", "adapter", "dump", "load", "union_adapter"]

T = TypeVar("T")


class Tagged:
    """Base of the dataclasses with a ``kind`` tag: their written form always starts with the tag.

    The compact form leaves defaults out to keep stored rows small; the tag is a default too, yet a reader needs it
    to know the variant, so its field is written as plain text, which has no default to compare with: it is never
    left out, and no Python function runs per value written (a wrapping serializer cost three times the write).
    """

    __slots__ = ()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        schema: dict[str, Any] = dict(handler(source))
        tag = _tag_field(schema)
        if tag is None:
            raise TypeError(f"{cls.__name__}: a tagged value must be a dataclass with a 'kind' field")
        tag["schema"] = {**tag["schema"], "serialization": core_schema.simple_ser_schema("str")}
        _first(_schema_fields(schema), tag)  # written first: a reader sees the variant at once
        _first(schema["fields"], "kind")  # the dataclass's own list of names orders what is written
        return cast("CoreSchema", schema)


def _schema_fields(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The fields of a dataclass's core schema, in the order they are written (empty for another shape)."""
    while schema.get("type") == "dataclass":
        schema = schema["schema"]
    fields: list[dict[str, Any]] = schema["fields"] if schema.get("type") == "dataclass-args" else []
    return fields


def _first(items: list[Any], item: Any) -> None:
    items.insert(0, items.pop(items.index(item)))


def _tag_field(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``kind`` field of a dataclass's core schema (``None`` if the schema has another shape)."""
    return next((field for field in _schema_fields(schema) if field["name"] == "kind"), None)


@cache
def adapter(tp: Any) -> TypeAdapter[Any]:
    """The adapter reading and writing values of ``tp`` (built once, on first use)."""
    from pydantic import TypeAdapter

    return TypeAdapter(tp)


@cache
def union_adapter(variants: tuple[type[Any], ...]) -> TypeAdapter[Any]:
    """The adapter of the union of ``variants``, told apart by their ``kind`` field (built once, on first use)."""
    from typing import Annotated, Union

    from pydantic import Field, TypeAdapter

    union: Any = Union[variants]  # noqa: UP007 - a union of a tuple, built at run time
    return TypeAdapter(Annotated[union, Field(discriminator="kind")])


def dump(
    value: Any, codec: TypeAdapter[Any], *, compact: bool = False, exclude: set[str] | None = None
) -> dict[str, Any]:
    """The JSON-ready form of ``value``: every field as JSON holds it, by one rule for what JSON has no form for.

    A free-form field (``metadata``, a tool result's ``value`` and ``artifact``, a step's value, an artifact's
    content, an interrupt's data) may hold data JSON cannot hold exactly; it is written as JSON reads it back: a
    tuple or set as a list, a key that is not text as its text (``1`` as ``"1"``), a date or time as ISO 8601 text,
    NaN and infinities as null, bytes as their UTF-8 text, a Decimal, UUID or path as its text, an enum as its
    value, a dataclass or pydantic model as an object, and anything else as ``str(value)``. Nothing is warned of.

    Args:
        value: what to write.
        codec: its adapter.
        compact: leave fields at their default out (for storage; a reader fills them in again).
        exclude: names of top-level fields to leave out.

    Raises:
        InvalidData: a field of a fixed type holds a value of another (a message's ``content`` that is not text),
            which could not be read back; or bytes that are not UTF-8 text, which JSON has no text for.
    """
    try:  # the common case: nothing to convert, nothing wrong (one pass; a mismatch raises instead of warning)
        data: dict[str, Any] = codec.dump_python(
            value, mode="json", exclude_defaults=compact, exclude=exclude, fallback=str, warnings="error"
        )
    except UnicodeDecodeError:
        raise InvalidData(_bad_bytes(value)) from None
    except ValueError:  # pydantic's serialization error: a value of another type than its field's
        return _dump_checked(value, codec, compact, exclude)
    return data


def _dump_checked(value: Any, codec: TypeAdapter[Any], compact: bool, exclude: set[str] | None) -> dict[str, Any]:
    """``value``'s JSON form when a field holds a value of another type: written by the rule of :func:`dump` when
    it reads back as valid (a key that is not text), refused when it does not.

    Raises:
        InvalidData: what was written would not read back as a ``value`` (the field and the value named).
    """
    from pydantic import ValidationError

    try:
        full = codec.dump_python(value, mode="json", fallback=str, warnings="none")
        codec.validate_python(full)
    except UnicodeDecodeError:
        raise InvalidData(_bad_bytes(value)) from None
    except ValidationError as exc:
        error = _telling(exc.errors(include_url=False))
        where = ".".join(str(part) for part in error["loc"])
        raise InvalidData(
            f"{type(value).__name__} cannot be written as JSON: its {where} holds {type(error['input']).__name__} "
            f"{error['input']!r:.80} ({error['msg']})"
        ) from None
    data: dict[str, Any] = codec.dump_python(
        value, mode="json", exclude_defaults=compact, exclude=exclude, fallback=str, warnings="none"
    )
    return data


def _bad_bytes(value: Any) -> str:
    """What to say of ``value`` holding bytes that are not UTF-8 text: where they are, and what to do instead."""
    found = _bytes_path(value, type(value).__name__)
    where = f" at {found[0]} ({found[1]!r:.40})" if found else ""
    return (
        f"{type(value).__name__} cannot be written as JSON: it holds bytes that are not UTF-8 text{where}; "
        "decode them to text, or encode them as base64 text, first"
    )


def _bytes_path(value: Any, path: str) -> tuple[str, bytes] | None:
    """The path to the first bytes in ``value`` that are not UTF-8 text, and those bytes (``None``: none)."""
    if isinstance(value, bytes | bytearray):
        try:
            bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return path, bytes(value)
        return None
    if is_dataclass(value) and not isinstance(value, type):
        items: Any = ((field.name, getattr(value, field.name)) for field in fields(value))
    elif isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple | set | frozenset):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _bytes_path(item, f"{path}.{key}" if isinstance(key, str) else f"{path}[{key!r}]")
        if found:
            return found
    return None


def _telling(errors: list[Any]) -> Any:
    """The error that says what is wrong: in a union of tagged variants every other variant reports its tag as
    wrong (``kind`` is not ``"system"``), and the value's own variant names the field that is."""
    others = [e["loc"][:-1] for e in errors if e["loc"][-1:] == ("kind",) and e["type"] == "literal_error"]
    return next((e for e in errors if not any(e["loc"][: len(o)] == o for o in others)), errors[0])


def load(data: Any, codec: TypeAdapter[T], what: str) -> T:
    """Read a value from its JSON form (``what`` names it in the error).

    Raises:
        InvalidData: ``data`` is not a valid ``tp``.
    """
    from pydantic import ValidationError

    try:
        value: T = codec.validate_python(data)
    except ValidationError as exc:
        error = _telling(exc.errors(include_url=False))
        if error["type"] == "union_tag_invalid":
            raise InvalidData(f"unknown {what} kind {error['ctx']['tag']!r}") from None
        where = ".".join(str(p) for p in error["loc"])
        article = "an" if what[0] in "aeiou" else "a"
        raise InvalidData(
            f"not {article} {what}: {where + ': ' if where else ''}{error['msg']} (found {error['input']!r:.80})"
        ) from None
    return value
