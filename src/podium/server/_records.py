"""The server's own bookkeeping beside the runtime's: who owns a thread, its metadata, each run's API fields.

All of it lives in the store as per-thread state values (versioned, so nothing is rewritten in place):

- the thread's owner, in the thread's creation metadata (set once, by the server, before any run);
- ``server.thread``: ``{"metadata": {...}, "updated": ts}`` (``"deleted": true`` in a thread deleted by an earlier
  version, which kept its records: hidden from every route, and dropped when its id is given to a new thread);
- ``server.run:<run id>``: the API fields of a run (assistant, metadata, strategy) and, for a run the runtime
  never started (still queued, refused or cancelled in the queue), its status;
- ``server.queue``: the runs waiting for their turn on the thread, so a restart starts them.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from fastapi import HTTPException

from podium.server._wire import iso

if TYPE_CHECKING:
    from podium.store.base import RunRecord, Store, ThreadInfo

__all__ = [
    "api_status",
    "create_thread",
    "existing_thread",
    "get_queue",
    "owned_thread",
    "put_queue",
    "run_extra",
    "run_out",
    "set_run_extra",
    "update_thread",
]

_THREAD = "server.thread"
_QUEUE = "server.queue"

_STATUS = {
    "running": "running",
    "completed": "success",
    "interrupted": "interrupted",
    "failed": "error",
    "limit_exceeded": "error",
    "cancelled": "interrupted",
}


def api_status(status: str) -> str:
    """A Podium run status as the Agent Protocol says it (``cancelled`` is ``interrupted`` there)."""
    return _STATUS.get(status, status)


async def owned_thread(store: Store, thread_id: str, user: str) -> tuple[ThreadInfo, dict[str, Any]]:
    """The thread and its server record, when ``user`` owns it and it is not deleted.

    Raises:
        HTTPException: 404 otherwise (another user's thread looks exactly like a missing one).
    """
    info = await store.get_thread(thread_id)
    if info is not None and info.metadata.get("owner") == user:
        record = await store.get_state(thread_id, _THREAD) or {"metadata": {}, "updated": info.created}
        if not record.get("deleted"):
            return info, record
    raise HTTPException(404, f"no thread {thread_id!r}")


async def existing_thread(store: Store, thread_id: str) -> ThreadInfo | None:
    """The thread, or ``None`` when there is none, or only the kept records of one an earlier version deleted (they
    are dropped now, so that the id makes a new, empty thread)."""
    info = await store.get_thread(thread_id)
    if info is not None and (await store.get_state(thread_id, _THREAD) or {}).get("deleted"):
        await store.delete_thread(thread_id)
        return None
    return info


async def create_thread(
    store: Store, thread_id: str, user: str, metadata: dict[str, Any], *, checked: bool = False
) -> tuple[ThreadInfo, dict[str, Any]]:
    """Create a thread owned by ``user``: the thread and its server record (as :func:`owned_thread` gives them).

    ``checked``: the caller has just seen that no thread has the id.

    Raises:
        HTTPException: 409 when the id is taken.
    """
    if not checked and await existing_thread(store, thread_id) is not None:
        raise HTTPException(409, f"thread {thread_id!r} already exists")
    made = uuid.uuid4().hex  # which creation the store kept: another client's, made meanwhile, is no 200 of ours
    info = await store.ensure_thread(thread_id, {"owner": user, "made": made})  # the record's write syncs it along
    if info.metadata.get("made", made) != made or info.metadata.get("owner") != user:
        raise HTTPException(409, f"thread {thread_id!r} already exists")
    record = {"metadata": metadata, "updated": info.created}
    await store.put_state(thread_id, _THREAD, record)
    return info, record


async def update_thread(store: Store, thread_id: str, record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """Record a new version of the thread's server record."""
    record = {**record, **changes, "updated": time.time()}
    await store.put_state(thread_id, _THREAD, record)
    return record


async def run_extra(store: Store, thread_id: str, run_id: str) -> dict[str, Any] | None:
    """The API fields of a run, or ``None`` when the server did not create it."""
    found: dict[str, Any] | None = await store.get_state(thread_id, f"server.run:{run_id}")
    return found


async def set_run_extra(store: Store, thread_id: str, run_id: str, extra: dict[str, Any]) -> None:
    """Record (a new version of) a run's API fields."""
    await store.put_state(thread_id, f"server.run:{run_id}", extra)


async def get_queue(store: Store, thread_id: str) -> list[dict[str, Any]]:
    """The thread's waiting runs, oldest first."""
    return list(await store.get_state(thread_id, _QUEUE) or [])


async def put_queue(store: Store, thread_id: str, queue: list[dict[str, Any]]) -> None:
    """Record the thread's waiting runs."""
    await store.put_state(thread_id, _QUEUE, queue)


def run_out(thread_id: str, run_id: str, extra: dict[str, Any], record: RunRecord | None) -> dict[str, Any]:
    """A run in the API's shape, from its API fields and (once started) the runtime's record."""
    created = extra.get("created_at", record.created if record else time.time())
    if record is not None:
        status, podium_status, updated = api_status(record.status), record.status, record.updated
        reason = extra.get("reason") or (record.result or {}).get("reason", "")
    else:  # never started: queued, or refused or cancelled before its turn
        status = extra.get("status", "pending")
        podium_status, updated = extra.get("podium_status", status), extra.get("updated", created)
        reason = extra.get("reason", "")
    return {
        "run_id": run_id,
        "thread_id": thread_id,
        "assistant_id": extra.get("assistant_id", record.agent if record else ""),
        "created_at": iso(created),
        "updated_at": iso(updated),
        "status": status,
        "metadata": extra.get("metadata", {}),
        "multitask_strategy": extra.get("multitask_strategy", "enqueue"),
        "kwargs": {},
        "podium_status": podium_status,
        "reason": reason,
    }
