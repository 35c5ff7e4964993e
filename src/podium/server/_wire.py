"""Small helpers shared by the routes: timestamps, sequence numbers and JSON a store can write."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator

__all__ = ["MAX_DEPTH", "MAX_SEQ", "StorableDict", "iso", "seq_number", "storable"]

MAX_DEPTH = 32
"""How deeply JSON given to the API (metadata, input, a command) may nest."""
MAX_SEQ = 2**63 - 1
"""The largest sequence number a store can hold."""


def storable(value: Any) -> Any:
    """``value`` itself, checked to be JSON a store can write: text that is valid UTF-8 (no lone surrogate), nested
    at most :data:`MAX_DEPTH` levels.

    Raises:
        ValueError: it is not (a request validator turns it into a 422).
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise ValueError(f"the JSON nests deeper than {MAX_DEPTH} levels")
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("the JSON holds text that is not valid UTF-8 (a lone surrogate)") from None
    return value


StorableDict = Annotated[dict[str, Any], AfterValidator(storable)]
"""A request field holding a JSON object a store can write (see :func:`storable`)."""


def seq_number(text: str | int | None, name: str) -> int | None:
    """A sequence number given as text (``Last-Event-ID``, a ``checkpoint_id``): ASCII digits within a store's range.

    Raises:
        ValueError: anything else, naming ``name``.
    """
    if text is None:
        return None
    digits = str(text).strip()
    if not (digits.isascii() and digits.isdecimal()) or int(digits) > MAX_SEQ:
        raise ValueError(f"{name} must be an event's sequence number, not {str(text)[:40]!r}")
    return int(digits)


def iso(timestamp: float) -> str:
    """Seconds since the epoch as an ISO 8601 UTC timestamp."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat()
