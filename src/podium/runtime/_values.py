"""What a run stores: values that every store gives back exactly as they were given.

Step results, saved state, artifacts, the data of questions and the ``value``, ``metadata`` and ``artifact`` of a
tool's :class:`~podium.tools.ToolReturn` are stored as JSON. :func:`storable` checks a value before it is recorded:
one that JSON would give back changed (a datetime, a set, a tuple, a non-string key, NaN) is refused with
:class:`~podium.errors.UsageError`, so the in-memory store (which keeps objects) and the SQL stores (which write
JSON) never disagree, and a re-execution sees the very value the first execution saw. Text holding a lone surrogate
(half an emoji, a file name decoded with ``os.fsdecode``) cannot be written as UTF-8: every store keeps it with
U+FFFD in its place, as tool results and model replies are kept.
"""

from __future__ import annotations

import json
import math
from typing import Any

from podium.errors import UsageError
from podium.messages import well_formed

__all__: list[str] = []

_STRICT_JSON = json.JSONEncoder(allow_nan=False)
"""What ``json.dumps(value, allow_nan=False)`` uses, made once (``dumps`` makes an encoder per call given options)."""

_INT_BOUND = 2**63
"""Ints within this bound are plain JSON for :func:`plain_json` (a longer one may exceed the digits Python writes)."""


def _text(value: str) -> bool:
    """Whether ``value`` can be written as UTF-8 (holds no lone surrogate)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def plain_json(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is made of plain JSON alone: dicts with text keys, lists, text (without lone surrogates),
    booleans, ``None``, ints within :data:`_INT_BOUND` and finite floats (their exact types, nested at most 64
    deep), which every store gives back exactly. The walk costs a fifth of writing the value and reading it back;
    ``False`` leaves that to be done."""
    kind = type(value)
    if kind is dict:
        if depth > 64:
            return False
        for key, item in value.items():
            if type(key) is not str or not _text(key) or not plain_json(item, depth + 1):
                return False
        return True
    if kind is list:
        if depth > 64:
            return False
        for item in value:  # noqa: SIM110 - (as above)
            if not plain_json(item, depth + 1):
                return False
        return True
    if kind is str:
        return _text(value)
    if kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_INT_BOUND < value < _INT_BOUND)
    return kind is float and math.isfinite(value)


def storable(value: Any, what: str) -> Any:
    """``value`` as every store gives it back: itself when it is plain JSON, else its JSON form read back (an
    ``IntEnum`` becomes its int) with lone surrogates replaced by U+FFFD.

    Raises:
        UsageError: JSON would not give ``value`` back equal (a datetime, a set, a tuple, bytes, a non-string key,
            NaN or infinity, a cycle, nesting deeper than Python's recursion limit); the message says what.
    """
    if plain_json(value):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        raise UsageError(f"{what} must be JSON data to be journaled; bytes cannot be stored: give text (or base64)")
    try:
        back = json.loads(_STRICT_JSON.encode(value))
    except (TypeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{what} must be JSON data to be journaled; {exc}") from None
    if back != value:
        raise UsageError(
            f"{what} must be JSON data to be journaled: {value!r:.200} would come back changed "
            "(tuples become lists, dict keys become strings); convert it first"
        )
    return _mend(back)


def _mend(value: Any) -> Any:
    """``value`` (read from JSON) with every lone surrogate in its text replaced by U+FFFD."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list):
        return [_mend(item) for item in value]
    if isinstance(value, dict):
        return {well_formed(key): _mend(item) for key, item in value.items()}
    return value


def text(value: object, what: str) -> str:
    """``value``, which must be text, as every store keeps it (lone surrogates replaced by U+FFFD).

    Raises:
        UsageError: ``value`` is not text.
    """
    if not isinstance(value, str):
        raise UsageError(f"{what} must be text, not {type(value).__name__} {value!r:.80}")
    return well_formed(value)
