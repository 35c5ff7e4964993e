"""Small helpers shared by the routes: timestamps, sequence numbers, request bodies and JSON a store can write."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

__all__ = [
    "WholeNumber",
    "MAX_DEPTH",
    "MAX_SEQ",
    "StorableDict",
    "body_problem",
    "iso",
    "parse_body",
    "seq_number",
    "storable",
    "unreadable_body",
]

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
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:  # Python's reader takes them, a store would write null
        raise ValueError("the JSON holds NaN or Infinity, which are not JSON numbers (send null or a string)") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("the JSON holds text that is not valid UTF-8 (a lone surrogate)") from None
    return value


def body_problem(error: BaseException | None) -> str | None:
    """What is wrong with a request body that Python's JSON reader failed on with ``error``, or ``None`` when
    ``error`` is not such a failure (or is a plain syntax error, which says so itself)."""
    if isinstance(error, UnicodeDecodeError):
        return f"the body is not valid UTF-8 (byte {error.start})"
    if isinstance(error, RecursionError):
        return f"the JSON nests deeper than {MAX_DEPTH} levels"
    if isinstance(error, ValueError) and "integer string conversion" in str(error):
        return f"the JSON holds a number longer than {sys.get_int_max_str_digits()} digits"
    return None


def parse_body(body: bytes) -> Any:
    """A request body read as JSON.

    Raises:
        ValueError: it is not JSON, saying why in a short sentence.
    """
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the body is not JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise ValueError(body_problem(exc) or f"the body is not JSON: {exc}") from None


def unreadable_body(exc: Exception) -> list[dict[str, Any]] | None:
    """The 422 detail (the shape of the server's validation errors) for the error a route raised because FastAPI
    could not read its JSON body (its ``400 There was an error parsing the body`` says no more), else ``None``."""
    problem = body_problem(exc.__cause__) if getattr(exc, "status_code", None) == 400 else None
    return None if problem is None else [{"loc": ["body"], "msg": problem, "type": "json_invalid"}]


StorableDict = Annotated[dict[str, Any], AfterValidator(storable)]


def _number(value: Any) -> Any:
    """``value`` when it is a JSON number; ``true``, ``false`` and ``"5"`` are refused (pydantic's lax mode would
    read them as 1, 0 and 5), ``5.0`` is taken (JSON Schema counts it as an integer)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"must be an integer, not {json.dumps(value)[:40]}")
    return value


WholeNumber = Annotated[int, BeforeValidator(_number)]
"""An integer of a JSON body (a limit, an offset): a number without a fraction, never a boolean or a string."""
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
