"""The one JSON codec of Podium's data: messages, events and the values they carry.

Every type is read and written by a pydantic ``TypeAdapter`` built on first use (pydantic is not imported until then,
so ``import podium`` stays cheap). Message and event variants are dataclasses with a literal ``kind`` tag, read
through one discriminated union each. The compact form (for storage) leaves defaults out, except the tag, which
every tagged value keeps (see :class:`Tagged`).
"""

from __future__ import annotations

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
    to know the variant, so it is put back first.
    """

    __slots__ = ()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        schema: dict[str, Any] = dict(handler(source))
        schema["serialization"] = core_schema.wrap_serializer_function_ser_schema(_with_kind)
        return cast("CoreSchema", schema)


def _with_kind(value: Any, handler: Any) -> Any:
    return {"kind": value.kind, **handler(value)}


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


def dump(value: Any, codec: TypeAdapter[Any], *, compact: bool = False) -> dict[str, Any]:
    """The JSON-ready form of ``value``, values JSON cannot hold written as text.

    Args:
        value: what to write.
        codec: its adapter.
        compact: leave fields at their default out (for storage; a reader fills them in again).
    """
    data: dict[str, Any] = codec.dump_python(value, mode="json", exclude_defaults=compact, fallback=str)
    return data


def load(data: Any, codec: TypeAdapter[T], what: str) -> T:
    """Read a value from its JSON form (``what`` names it in the error).

    Raises:
        InvalidData: ``data`` is not a valid ``tp``.
    """
    from pydantic import ValidationError

    try:
        value: T = codec.validate_python(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        if error["type"] == "union_tag_invalid":
            raise InvalidData(f"unknown {what} kind {error['ctx']['tag']!r}") from None
        where = ".".join(str(p) for p in error["loc"])
        article = "an" if what[0] in "aeiou" else "a"
        raise InvalidData(
            f"not {article} {what}: {where + ': ' if where else ''}{error['msg']} in {data!r:.200}"
        ) from None
    return value
