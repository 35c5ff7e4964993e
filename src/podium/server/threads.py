"""Threads: create, read, update, delete, search; their state and history (Agent Protocol shapes).

A thread's status is ``busy`` while a run of it executes or waits in the queue, ``interrupted`` while its last run
waits for an answer, ``error`` when its last run failed, and ``idle`` otherwise. Its values are folded from its
stored events: the main history's messages (LangChain form) and the task stack of apps that keep one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from podium.events import RunEnded, event_to_dict
from podium.server._convert import Values
from podium.server._records import create_thread, existing_thread, owned_thread, update_thread
from podium.server._schema import BODY, StoredEvent, Thread, ThreadState, ThreadStatus, errors
from podium.server._state import ServerState
from podium.server._wire import MAX_SEQ, StorableDict, WholeNumber, iso, seq_number
from podium.server.auth import Principal, require
from podium.store.base import THREAD_ID, RunRecord, ThreadInfo

__all__ = ["delete_thread", "router", "thread_values"]

KEPT_VALUES = 1024
"""Threads whose values a server keeps (the least recently read go first)."""

router = APIRouter(tags=["threads"])


class ThreadCreate(BaseModel):
    """``POST /threads``."""

    model_config = ConfigDict(extra="allow")
    thread_id: str | None = Field(None, pattern=rf"^{THREAD_ID.pattern}$")
    metadata: StorableDict = Field(default_factory=dict)
    if_exists: Literal["raise", "do_nothing"] = "raise"


class ThreadPatch(BaseModel):
    """``PATCH /threads/{id}``: metadata keys to set (merged into the thread's metadata)."""

    model_config = ConfigDict(extra="allow")
    metadata: StorableDict = Field(default_factory=dict)


class ThreadSearch(BaseModel):
    """``POST /threads/search``."""

    model_config = ConfigDict(extra="allow")
    metadata: StorableDict = Field(default_factory=dict)
    values: StorableDict | None = None
    """Keys the thread's current values must have equal (``messages`` too, compared as the values show them)."""
    ids: list[str] | None = None
    status: ThreadStatus | None = None
    limit: WholeNumber = Field(10, ge=1, le=1000)
    offset: WholeNumber = Field(0, ge=0)
    sort_by: Literal["thread_id", "created_at", "updated_at", "status"] = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"


class HistoryQuery(BaseModel):
    """``POST /threads/{id}/history``: checkpoints newest first, ``before`` one (its ``checkpoint_id``)."""

    model_config = ConfigDict(extra="allow")
    limit: WholeNumber = Field(10, ge=1, le=1000)
    before: dict[str, Any] | str | None = None
    metadata: StorableDict | None = None


Read = Annotated[Principal, Depends(require("read"))]
Run = Annotated[Principal, Depends(require("run"))]


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.podium
    return state


async def thread_values(state: ServerState, thread_id: str) -> Values:
    """The thread's current values, folded from its stored events.

    The values of recently read threads are kept with the log head they reach (:meth:`Store.log_head`): an
    unchanged head reads nothing more, a newer one reads only the newer events, and a log whose end was rolled back
    (its kept last event gone) is read again in full. A turn of a long conversation costs what the turn added.
    """
    store, kept_values = state.store, state.values
    head = await store.log_head(thread_id)
    kept = kept_values.pop(thread_id, None)
    if kept is not None and kept[1] == head:
        values = kept[0]
    else:
        newer = await store.events_since(thread_id, kept[1]) if kept is not None else None
        if kept is None or newer is None:  # nothing kept, or the end of the log was rolled back: read it all
            values, newer = Values(), await store.read_events(thread_id)
        else:
            values, head = kept[0], kept[1]
        for event in newer:
            values.add(event)
        if newer:
            head = (newer[-1].seq, newer[-1].run_id)
    kept_values[thread_id] = (values, head)
    if len(kept_values) > KEPT_VALUES:
        del kept_values[next(iter(kept_values))]
    return values


async def _status(state: ServerState, thread_id: str, last: RunRecord | None) -> ThreadStatus:
    """The thread's status, from its newest run ``last`` and whether a run is queued or executing."""
    if await state.executor.is_busy(thread_id):
        return "busy"
    if last is None:
        return "idle"
    if last.status == "interrupted":
        return "interrupted"
    if last.status == "running":
        return "busy"
    return "error" if last.status in ("failed", "limit_exceeded") else "idle"


async def _out(state: ServerState, info: ThreadInfo, record: dict[str, Any], *, new: bool = False) -> dict[str, Any]:
    """The thread in the API's shape (a ``new`` one has no events nor runs: nothing to read)."""
    values = Values() if new else await thread_values(state, info.id)
    last = None if new else await state.store.last_run(info.id)
    return {
        "thread_id": info.id,
        "created_at": iso(info.created),
        "updated_at": iso(record.get("updated", info.created)),
        "metadata": record.get("metadata", {}),
        "status": "idle" if new else await _status(state, info.id, last),
        "values": values.to_dict(),
        "interrupts": {last.id: values.pending()} if last is not None and values.interrupts else {},
    }


async def delete_thread(state: ServerState, thread_id: str) -> None:
    """Delete a thread: its runs are cancelled (queued, executing anywhere, waiting for an answer), then everything
    it stored is dropped, so its id is free for a new, empty thread (:meth:`podium.store.base.Store.delete_thread`).
    """
    await state.executor.end_thread(thread_id)
    state.values.pop(thread_id, None)
    await state.store.delete_thread(thread_id)


@router.post("/threads", response_model=Thread, responses=errors(409, *BODY))
async def create(body: ThreadCreate, request: Request, principal: Run) -> dict[str, Any]:
    """Create a thread (``if_exists="do_nothing"`` returns the caller's existing one)."""
    state = _state(request)
    thread_id = body.thread_id or str(uuid.uuid4())
    do_nothing = body.thread_id is not None and body.if_exists == "do_nothing"
    if do_nothing and await existing_thread(state.store, thread_id) is not None:
        info, record = await owned_thread(state.store, thread_id, principal.user)
        return await _out(state, info, record)
    info, record = await create_thread(state.store, thread_id, principal.user, body.metadata)
    return await _out(state, info, record, new=True)


@router.get("/threads/{thread_id}", response_model=Thread, responses=errors(404))
async def get(thread_id: str, request: Request, principal: Read) -> dict[str, Any]:
    """One thread."""
    state = _state(request)
    info, record = await owned_thread(state.store, thread_id, principal.user)
    return await _out(state, info, record)


@router.patch("/threads/{thread_id}", response_model=Thread, responses=errors(404, *BODY))
async def patch(thread_id: str, body: ThreadPatch, request: Request, principal: Run) -> dict[str, Any]:
    """Merge ``metadata`` into the thread's metadata."""
    state = _state(request)
    info, record = await owned_thread(state.store, thread_id, principal.user)
    metadata = {**record.get("metadata", {}), **body.metadata}
    record = await update_thread(state.store, thread_id, record, metadata=metadata)
    return await _out(state, info, record)


@router.delete("/threads/{thread_id}", status_code=204, responses=errors(404))
async def delete(thread_id: str, request: Request, principal: Run) -> Response:
    """Delete a thread: its runs are cancelled and everything it stored is dropped; its id is free again."""
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    await delete_thread(state, thread_id)
    return Response(status_code=204)


@router.post("/threads/count", responses=errors(*BODY))
async def count(body: ThreadSearch, request: Request, principal: Read) -> int:
    """How many of the caller's threads :func:`search` finds with the same filters (paging aside)."""
    found = await search(body.model_copy(update={"offset": 0, "limit": 1_000_000}), request, principal)
    return len(found)


@router.post("/threads/search", response_model=list[Thread], responses=errors(*BODY))
async def search(body: ThreadSearch, request: Request, principal: Read) -> list[dict[str, Any]]:
    """The caller's threads matching ``metadata`` (every key equal), ``values`` (every key equal), ``ids`` and
    ``status``."""
    state = _state(request)
    wanted = set(body.ids) if body.ids is not None else None
    matching: list[tuple[ThreadInfo, dict[str, Any]]] = []
    for info in await state.store.list_threads(1_000_000):
        if info.metadata.get("owner") != principal.user or (wanted is not None and info.id not in wanted):
            continue
        record = await state.store.get_state(info.id, "server.thread") or {}
        metadata = record.get("metadata", {})
        if record.get("deleted") or any(metadata.get(k) != v for k, v in body.metadata.items()):
            continue
        matching.append((info, record))
    descending = body.sort_order == "desc"
    cheap: dict[str, Callable[[tuple[ThreadInfo, dict[str, Any]]], Any]] = {
        "thread_id": lambda m: m[0].id,
        "created_at": lambda m: m[0].created,
        "updated_at": lambda m: m[1].get("updated", m[0].created),
    }
    if body.sort_by in cheap:  # sorted on the records, before any history is read
        matching.sort(key=cheap[body.sort_by], reverse=descending)
        if body.status is None and not body.values:  # the page is known: only its histories are read
            matching = matching[body.offset : body.offset + body.limit]
            return [await _out(state, info, record) for info, record in matching]
    found = [await _out(state, info, record) for info, record in matching]
    found = [out for out in found if body.status is None or out["status"] == body.status]
    if body.values:
        found = [out for out in found if all(out["values"].get(k) == v for k, v in body.values.items())]
    if body.sort_by == "status":
        found.sort(key=lambda t: t["status"], reverse=descending)
    return found[body.offset : body.offset + body.limit]


def _snapshot(thread_id: str, values: Values, status: str | None, seq: int, parent: int | None) -> dict[str, Any]:
    waiting = status == "interrupted" or bool(values.interrupts)
    pending = values.pending()
    checkpoint = {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": str(seq), "checkpoint_map": None}
    return {
        "values": values.to_dict(),
        "next": ["agent"] if waiting or status == "running" else [],
        "tasks": [{"id": str(seq), "name": "agent", "path": [], "error": None, "interrupts": pending}]
        if pending
        else [],
        "interrupts": pending,
        "checkpoint": checkpoint,
        "parent_checkpoint": {**checkpoint, "checkpoint_id": str(parent)} if parent else None,
        "metadata": {"step": seq, "status": status},
        "created_at": None,
        "checkpoint_id": str(seq),
        "parent_checkpoint_id": str(parent) if parent else None,
    }


@router.get("/threads/{thread_id}/state", response_model=ThreadState, responses=errors(404))
async def get_state(thread_id: str, request: Request, principal: Read) -> dict[str, Any]:
    """The thread's current values, what comes next and the interrupts that wait."""
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    values = await thread_values(state, thread_id)
    last = await state.store.last_run(thread_id)
    snapshot = _snapshot(thread_id, values, last.status if last else None, values.last_seq, None)
    snapshot["created_at"] = iso(last.updated) if last else None
    return snapshot


async def _history(state: ServerState, thread_id: str, query: HistoryQuery) -> list[dict[str, Any]]:
    values = Values()
    snapshots: list[dict[str, Any]] = []
    parent: int | None = None
    for event in await state.store.read_events(thread_id):
        values.add(event)
        if isinstance(event, RunEnded):
            snapshot = _snapshot(thread_id, values, event.status, event.seq, parent)
            snapshot["created_at"] = iso(event.ts)
            snapshot["metadata"]["run_id"] = event.run_id
            snapshots.append(snapshot)
            parent = event.seq
    before = query.before
    if isinstance(before, dict):
        configurable = before.get("configurable")
        nested = configurable.get("checkpoint_id") if isinstance(configurable, dict) else None
        named = before.get("checkpoint_id") or nested
        if named is None and before:  # a config that names no checkpoint: not "from the newest"
            raise HTTPException(422, f"before must name a checkpoint_id of this thread, not {before!r}")
        before = named
    if before is not None:
        try:
            newest = seq_number(before if isinstance(before, str | int) else repr(before), "before")
        except ValueError:
            raise HTTPException(422, f"before must name a checkpoint_id of this thread, not {before!r}") from None
        snapshots = [s for s in snapshots if int(s["checkpoint_id"]) < (newest or 0)]
    if query.metadata:
        snapshots = [s for s in snapshots if all(s["metadata"].get(k) == v for k, v in query.metadata.items())]
    return list(reversed(snapshots))[: query.limit]


@router.post("/threads/{thread_id}/history", response_model=list[ThreadState], responses=errors(404, *BODY))
async def history(thread_id: str, body: HistoryQuery, request: Request, principal: Read) -> list[dict[str, Any]]:
    """The thread's state after each run stopped, newest first."""
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    return await _history(state, thread_id, body)


@router.get("/threads/{thread_id}/history", response_model=list[ThreadState], responses=errors(404, 422))
async def history_get(
    thread_id: str,
    request: Request,
    principal: Read,
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
    before: str | None = None,
) -> list[dict[str, Any]]:
    """``POST /threads/{id}/history`` with query parameters."""
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    return await _history(state, thread_id, HistoryQuery(limit=limit, before=before))


@router.get("/threads/{thread_id}/events", response_model=list[StoredEvent], responses=errors(404, 422))
async def events(
    thread_id: str,
    request: Request,
    principal: Read,
    after: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
    limit: Annotated[int, Query(ge=1, le=100_000)] = 10_000,
) -> list[dict[str, Any]]:
    """The thread's stored events after ``after`` (a ``seq``), oldest first: what a page redraws a conversation from.

    The same typed events the ``events`` stream mode carries (messages, side-channel notes, artifacts, questions and
    their answers, task-stack changes, run starts and ends); model tokens are streamed only, never stored.
    """
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    stored = await state.store.read_events(thread_id, after=after)
    return [event_to_dict(event) for event in stored[:limit]]
