"""How the SQL stores (SQLite, PostgreSQL) lay events and runs out in rows: one encoding, so both read each other's
dumps and stay equally compact."""

from __future__ import annotations

import json
from typing import Any, get_args

from podium.errors import InvalidData, StoreCorrupt
from podium.events import Event, MessageAdded, event_from_dict, event_to_dict
from podium.messages import Message, message_from_dict, well_formed
from podium.store.base import ApiKey, RunRecord, RunStatus, ThreadInfo

__all__ = [
    "api_key_from_row",
    "api_key_row",
    "damaged",
    "dumps",
    "event_from_row",
    "event_row",
    "job_from_row",
    "lease_from_row",
    "log_head_from_row",
    "message_from_row",
    "run_from_row",
    "run_row",
    "state_from_row",
    "thread_from_row",
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


# Reading rows back. Every column a store decodes is checked here, so that a row damaged outside Podium (an edit by
# hand, a bad migration, a page of the file overwritten) is StoreCorrupt naming the table, the row's key and what is
# wrong, never a bare JSONDecodeError or TypeError somewhere later. In PostgreSQL the numeric columns are typed, so
# only the JSON text can be damaged; in SQLite any column can hold any type.

_STATUSES = frozenset(get_args(RunStatus))


def damaged(table: str, key: str, problem: str, *, fix: str = "restore the store from a backup") -> StoreCorrupt:
    """The error of a stored row that cannot be read: its table, its key (``thread 't'``), what is wrong, and what
    to do about it."""
    return StoreCorrupt(f"the {table} row of {key} is damaged: {problem}; {fix}")


def _what(value: Any) -> str:
    """A value found in a column, for a message (its type, and a short view of it)."""
    if value is None:
        return "null"
    shown = repr(value)
    return f"{_TYPE_NAMES.get(type(value), type(value).__name__)} {shown[:60]}{'...' if len(shown) > 60 else ''}"


_TYPE_NAMES: dict[type, str] = {dict: "a JSON object", list: "a JSON list", str: "text", bytes: "bytes"}


def _json(table: str, key: str, column: str, text: Any) -> Any:
    """The value of a column holding JSON text.

    Raises:
        StoreCorrupt: the column holds no text, or text that is not JSON.
    """
    if not isinstance(text, str):
        raise damaged(table, key, f"{column} holds {_what(text)}, not JSON text")
    try:
        return json.loads(text)
    except ValueError as exc:  # (json.JSONDecodeError, and a number too large to read)
        raise damaged(table, key, f"{column} is not JSON ({exc})") from None


def _object(table: str, key: str, column: str, text: Any, *, optional: bool = False) -> Any:
    """The JSON object (a dict) of a column; ``optional``: ``None`` for SQL NULL or JSON ``null``."""
    if optional and text is None:
        return None
    value = _json(table, key, column, text)
    if not isinstance(value, dict) and not (optional and value is None):
        raise damaged(table, key, f"{column} is {_what(value)}, not a JSON object")
    return value


def _number(table: str, key: str, column: str, value: Any, *, optional: bool = False) -> Any:
    """A column holding a time in seconds (an int or a float)."""
    if (optional and value is None) or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value
    raise damaged(table, key, f"{column} holds {_what(value)}, not a number")


def _text(table: str, key: str, column: str, value: Any, *, optional: bool = False) -> Any:
    """A column holding text (an id, a name)."""
    if isinstance(value, str) or (optional and value is None):
        return value
    raise damaged(table, key, f"{column} holds {_what(value)}, not text")


def thread_from_row(thread_id: str, created: Any, metadata: Any) -> ThreadInfo:
    """A thread from its row's columns.

    Raises:
        StoreCorrupt: the creation time is not a number, or the metadata is not a JSON object.
    """
    key = f"thread {thread_id!r}"
    return ThreadInfo(
        id=_text("threads", key, "id", thread_id),
        created=_number("threads", key, "created", created),
        metadata=_object("threads", key, "metadata", metadata),
    )


def run_from_row(row: tuple[Any, ...]) -> RunRecord:
    """The run of a :func:`run_row` row.

    Raises:
        StoreCorrupt: a column does not hold what it should (an unknown status, input or result that is not a JSON
            object, a time that is not a number, an id that is not text).
    """
    key = f"run {row[0]!r}"
    status = row[2]
    if status not in _STATUSES:
        raise damaged("runs", key, f"status is {_what(status)}, not one of {', '.join(sorted(_STATUSES))}")
    return RunRecord(
        id=_text("runs", key, "id", row[0]),
        thread_id=_text("runs", key, "thread_id", row[1]),
        status=status,
        input=_object("runs", key, "input", row[3], optional=True),
        agent=_text("runs", key, "agent", row[4]),
        created=_number("runs", key, "created", row[5]),
        updated=_number("runs", key, "updated", row[6]),
        result=_object("runs", key, "result", row[7], optional=True),
    )


def api_key_row(key: ApiKey) -> tuple[Any, ...]:
    """``(id, name, user, scopes, digest, created, revoked)``."""
    return (key.id, key.name, key.user, dumps(key.scopes), key.digest, key.created, key.revoked)


def api_key_from_row(row: tuple[Any, ...] | Any) -> ApiKey:
    """An API key from its row (the columns of :func:`api_key_row`).

    Raises:
        StoreCorrupt: a column does not hold what it should (scopes that are not a JSON list of text, say).
    """
    key = f"API key {row[0]!r}"
    scopes = _json("api_keys", key, "scopes", row[3])
    if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
        raise damaged("api_keys", key, f"scopes is {_what(scopes)}, not a JSON list of text")
    return ApiKey(
        id=_text("api_keys", key, "id", row[0]),
        name=_text("api_keys", key, "name", row[1]),
        user=_text("api_keys", key, "user", row[2]),
        scopes=scopes,
        digest=_text("api_keys", key, "digest", row[4]),
        created=_number("api_keys", key, "created", row[5]),
        revoked=_number("api_keys", key, "revoked", row[6], optional=True),
    )


def state_from_row(thread_id: str, name: str, version: Any, value: Any) -> Any:
    """A state value from its row (any JSON value).

    Raises:
        StoreCorrupt: the value is not JSON text.
    """
    return _json("state", f"thread {thread_id!r}, key {name!r}, version {version!r}", "value", value)


def lease_from_row(thread_id: str, owner: Any, expires: Any) -> tuple[str, float]:
    """``(owner, expires)`` of a thread's lease row.

    Raises:
        StoreCorrupt: the owner is not text, or the expiry not a number.
    """
    if not isinstance(owner, str):
        problem = f"owner holds {_what(owner)}, not text"
    elif isinstance(expires, bool) or not isinstance(expires, int | float):
        problem = f"expires holds {_what(expires)}, not a number"
    else:
        return owner, expires
    # a lease holds no conversation data: the row can go, where a damaged conversation needs its backup
    fix = "a lease holds no conversation data: delete that row, once no process runs the thread, to free it"
    raise damaged("leases", f"thread {thread_id!r}", problem, fix=fix)


def log_head_from_row(thread_id: str, row: Any) -> tuple[int, str]:
    """``(seq, run_id)`` of a thread's last event row (``row``: those two columns, or ``None`` for no events).

    Raises:
        StoreCorrupt: the sequence number is not a whole number above 0, or the run id not text.
    """
    if row is None or row[0] is None:
        return 0, ""
    seq, run_id = row[0], row[1] if len(row) > 1 else ""
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise damaged("events", f"thread {thread_id!r}", f"the last seq holds {_what(seq)}, not a number above 0")
    return seq, _text("events", f"thread {thread_id!r}, event {seq}", "run_id", run_id)


def job_from_row(run_id: str, text: Any) -> dict[str, Any]:
    """The job (a JSON object) of a run queue's row.

    Raises:
        StoreCorrupt: the job is not a JSON object.
    """
    job: dict[str, Any] = _object("run_queue", f"run {run_id!r}", "job", text)
    return job
