"""How the SQL stores (SQLite, PostgreSQL) lay events and runs out in rows: one encoding, so both read each other's
dumps and stay equally compact."""

from __future__ import annotations

import json
from typing import Any

from podium.errors import InvalidData, StoreCorrupt
from podium.events import Event, MessageAdded, event_from_dict, event_to_dict
from podium.messages import Message, message_from_dict, well_formed
from podium.store.base import ApiKey, RunRecord

__all__ = [
    "api_key_from_row",
    "api_key_row",
    "dumps",
    "event_from_row",
    "event_row",
    "message_from_row",
    "run_from_row",
    "run_row",
]


def dumps(value: Any) -> str:
    """Compact JSON text (no spaces, UTF-8 kept; a value JSON cannot hold is written as its text).

    pydantic's encoder writes a row several times faster than the standard library's, which set the cost of every
    stored event; both read back the same values. Text UTF-8 cannot hold (a lone surrogate: a file name decoded
    with ``os.fsdecode``, half an emoji) is written with U+FFFD in its place rather than refused: a row that can
    never be written would stop its run on every attempt.
    """
    from pydantic_core import to_json

    try:
        return to_json(value, fallback=str).decode()
    except ValueError:
        return to_json(_well_formed(value), fallback=str).decode()


def _well_formed(value: Any) -> Any:
    """``value`` (JSON-ready data) with every text made well formed (:func:`podium.messages.well_formed`)."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        return {well_formed(k) if isinstance(k, str) else k: _well_formed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_well_formed(v) for v in value]
    return value


def _path_of_key(key: str | None) -> tuple[str, ...] | None:
    """The path a journal key names (``agent/call#3`` -> ``("agent", "call")``), or ``None`` for other keys."""
    if key is None or key.startswith("@") or "#" not in key:
        return None
    prefix = key.rsplit("#", 1)[0]
    return tuple(prefix.split("/")) if prefix else ()


def event_row(thread_id: str, event: Event) -> tuple[Any, ...]:
    """``(thread_id, seq, run_id, kind, key, ns, body)``: the columns, and the rest of the event as JSON.

    The body is :func:`podium.event_to_dict`'s compact form less the columns. Storage only appends, so every byte of
    a row is paid on every step: the path is left out when the journal key already names it, and token usage is a
    three-number list.
    """
    ns = None
    if isinstance(event, MessageAdded):
        ns = event.namespace
        body = event_to_dict(event, compact=True, exclude=_MESSAGE_COLUMNS)
        if event.usage is not None:
            body["u"] = [event.usage.input_tokens, event.usage.output_tokens, event.usage.requests]
    else:
        body = event_to_dict(event, compact=True, exclude=_COLUMNS)
    if _path_of_key(event.key) != event.path:
        body["p"] = list(event.path)
    body["t"] = round(event.ts, 3)
    return (thread_id, event.seq, event.run_id, event.kind, event.key, ns, dumps(body))


_COLUMNS = {"kind", "run_id", "seq", "key", "path", "ts"}
"""Fields of an event kept in columns of their own (or, for the path and time, shortened)."""
_MESSAGE_COLUMNS = _COLUMNS | {"namespace", "usage"}
"""A message's also: its namespace has a column, its usage is shortened."""


def event_from_row(seq: int, run_id: str, kind: str, key: str | None, ns: str | None, body: str) -> Event:
    """The event of a row (the columns after ``thread_id``).

    Raises:
        StoreCorrupt: the row does not hold a valid event.
    """
    try:
        return _event_from_row(seq, run_id, kind, key, ns, body)
    except (InvalidData, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise StoreCorrupt(f"stored event #{seq} ({kind}) of run {run_id} cannot be read: {exc}") from None


def message_from_row(body: str) -> Message:
    """The message of a ``message_added`` row's body.

    Raises:
        StoreCorrupt: the body does not hold a valid message.
    """
    try:
        return message_from_dict(json.loads(body)["message"])
    except (InvalidData, ValueError, TypeError, KeyError) as exc:
        raise StoreCorrupt(f"a stored message cannot be read: {exc}") from None


def _event_from_row(seq: int, run_id: str, kind: str, key: str | None, ns: str | None, body: str) -> Event:
    data = json.loads(body)
    path = data.pop("p", None)
    if path is None:
        path = _path_of_key(key) or ()
    data.update(kind=kind, seq=seq, run_id=run_id, key=key, path=path, ts=data.pop("t", 0.0))
    usage = data.pop("u", None)
    if usage is not None:
        data["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1], "requests": usage[2]}
    if ns is not None:
        data["namespace"] = ns
    return event_from_dict(data)


def run_row(run: RunRecord) -> tuple[Any, ...]:
    """``(id, thread_id, status, input, agent, created, updated, result)``."""
    return (
        run.id,
        run.thread_id,
        run.status,
        dumps(run.input) if run.input is not None else None,
        run.agent,
        run.created,
        run.updated,
        dumps(run.result) if run.result is not None else None,
    )


def run_from_row(row: tuple[Any, ...]) -> RunRecord:
    """The run of a :func:`run_row` row."""
    return RunRecord(
        id=row[0],
        thread_id=row[1],
        status=row[2],
        input=json.loads(row[3]) if row[3] else None,
        agent=row[4],
        created=row[5],
        updated=row[6],
        result=json.loads(row[7]) if row[7] else None,
    )


def api_key_row(key: ApiKey) -> tuple[Any, ...]:
    """``(id, name, user, scopes, digest, created, revoked)``."""
    return (key.id, key.name, key.user, dumps(key.scopes), key.digest, key.created, key.revoked)


def api_key_from_row(row: tuple[Any, ...] | Any) -> ApiKey:
    """An API key from its row (the columns of :func:`api_key_row`)."""
    return ApiKey(
        id=row[0], name=row[1], user=row[2], scopes=json.loads(row[3]), digest=row[4], created=row[5], revoked=row[6]
    )
