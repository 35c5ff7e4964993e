"""An in-process store: fast, for tests and throwaway conversations; nothing survives the process."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field, replace
from typing import Any

from podium.errors import LeaseLost, StoreError
from podium.events import Event, MessageAdded
from podium.messages import Message
from podium.store.base import ApiKey, RunRecord, RunStatus, Store, ThreadInfo, listing_limit, owner_is_alive

__all__ = ["MemoryStore"]


@dataclass(slots=True)
class _Thread:
    info: ThreadInfo
    events: list[Event] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    state: dict[str, list[Any]] = field(default_factory=dict)
    lease: tuple[str, float] | None = None


class MemoryStore(Store):
    """Keeps everything in dictionaries of this process."""

    def __init__(self) -> None:
        """An empty store."""
        self._threads: dict[str, _Thread] = {}
        self._runs: dict[str, RunRecord] = {}
        self._journals: dict[str, dict[str, Event]] = {}
        self._keys: dict[str, ApiKey] = {}

    def _thread(self, thread_id: str) -> _Thread:
        try:
            return self._threads[thread_id]
        except KeyError:
            raise StoreError(f"no thread {thread_id!r}") from None

    async def create_thread(self, thread_id: str, metadata: dict[str, Any] | None = None) -> ThreadInfo:
        existing = self._threads.get(thread_id)
        if existing is not None:
            return existing.info
        info = ThreadInfo(id=thread_id, metadata=dict(metadata or {}))
        self._threads[thread_id] = _Thread(info)
        return info

    async def get_thread(self, thread_id: str) -> ThreadInfo | None:
        thread = self._threads.get(thread_id)
        return thread.info if thread else None

    async def list_threads(self, limit: int = 100) -> list[ThreadInfo]:
        infos = sorted((t.info for t in self._threads.values()), key=lambda i: i.created, reverse=True)
        return infos[: listing_limit(limit)]

    async def append_events(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        thread = self._thread(thread_id)
        if owner is not None and (thread.lease is None or thread.lease[0] != owner):
            raise LeaseLost(thread_id, owner, thread.lease[0] if thread.lease else None)
        last = thread.events[-1].seq if thread.events else 0
        journals = self._journals
        for offset, event in enumerate(events, 1):
            if event.seq != last + offset:
                raise StoreError(f"thread {thread_id!r}: event seq {event.seq} is not the next ({last + offset})")
            if event.key is not None and event.key in journals.get(event.run_id, ()):
                raise StoreError(f"run {event.run_id!r}: journal key {event.key!r} is already recorded")
        thread.events += events
        for event in events:
            if event.key is not None:
                journals.setdefault(event.run_id, {})[event.key] = event

    append_events_soon = append_events  # its commits are done when they return

    async def read_events(self, thread_id: str, *, after: int = 0, run_id: str | None = None) -> list[Event]:
        events = self._thread(thread_id).events[after:]
        return [e for e in events if run_id is None or e.run_id == run_id]

    async def last_seq(self, thread_id: str) -> int:
        events = self._thread(thread_id).events
        return events[-1].seq if events else 0

    async def log_head(self, thread_id: str) -> tuple[int, str]:
        events = self._thread(thread_id).events
        return (events[-1].seq, events[-1].run_id) if events else (0, "")

    async def load_messages(
        self, thread_id: str, namespace: str = "", *, exclude_run: str | None = None
    ) -> list[Message]:
        return [
            e.message
            for e in self._thread(thread_id).events
            if isinstance(e, MessageAdded) and e.namespace == namespace and e.run_id != exclude_run
        ]

    async def journal(self, run_id: str) -> dict[str, Event]:
        return dict(self._journals.get(run_id, {}))

    async def create_run(self, run: RunRecord) -> None:
        thread = self._thread(run.thread_id)
        if run.id in self._runs:
            raise StoreError(f"run {run.id!r} already exists")
        self._runs[run.id] = replace(run)
        thread.runs.append(run.id)

    async def update_run(self, run_id: str, status: RunStatus, result: dict[str, Any] | None = None) -> None:
        run = self._runs.get(run_id)
        if run is None:
            raise StoreError(f"no run {run_id!r}")
        run.status = status
        run.updated = time.time()
        if result is not None:
            run.result = _copied(result)

    async def end_run(
        self,
        thread_id: str,
        events: list[Event],
        run_id: str,
        status: RunStatus,
        result: dict[str, Any],
        *,
        owner: str | None = None,
        release: bool = False,
    ) -> bool:
        if run_id not in self._runs:  # checked first, like everything append_events checks: all or nothing
            raise StoreError(f"no run {run_id!r}")
        await self.append_events(thread_id, events, owner=owner)
        await self.update_run(run_id, status, result)
        return release and await self._release_after_end(thread_id, owner)

    async def get_run(self, run_id: str) -> RunRecord | None:
        run = self._runs.get(run_id)
        return replace(run) if run else None

    async def list_runs(self, thread_id: str) -> list[RunRecord]:
        return [replace(self._runs[r]) for r in self._thread(thread_id).runs]

    async def last_run(self, thread_id: str) -> RunRecord | None:
        runs = self._thread(thread_id).runs
        return replace(self._runs[runs[-1]]) if runs else None

    async def delete_run(self, run_id: str) -> None:
        run = self._runs.get(run_id)
        if run is None:
            raise StoreError(f"no run {run_id!r}")
        thread = self._thread(run.thread_id)
        first = next((i for i, e in enumerate(thread.events) if e.run_id == run_id), len(thread.events))
        if any(e.run_id != run_id for e in thread.events[first:]):
            raise StoreError(f"run {run_id!r} is not the newest of thread {run.thread_id!r}: other events follow")
        del thread.events[first:]
        thread.runs.remove(run_id)
        del self._runs[run_id]
        self._journals.pop(run_id, None)

    async def delete_thread(self, thread_id: str) -> None:
        thread = self._threads.pop(thread_id, None)
        for run_id in thread.runs if thread is not None else ():
            self._runs.pop(run_id, None)
            self._journals.pop(run_id, None)
        for event in thread.events if thread is not None else ():
            self._journals.pop(event.run_id, None)  # a run the store has no record of stored events too

    async def acquire_thread(self, thread_id: str, owner: str, ttl: float) -> str | None:
        thread = self._thread(thread_id)
        now = time.time()
        if thread.lease is not None:
            holder, expires = thread.lease
            if holder != owner and expires > now and owner_is_alive(holder):
                return holder
        thread.lease = (owner, now + ttl)
        return None

    async def renew_thread(self, thread_id: str, owner: str, ttl: float) -> str | None:
        thread = self._threads.get(thread_id)
        lease = thread.lease if thread is not None else None
        if thread is None or lease is None or lease[0] != owner:
            return lease[0] if lease is not None else ""
        thread.lease = (owner, time.time() + ttl)
        return None

    async def release_thread(self, thread_id: str, owner: str) -> None:
        thread = self._threads.get(thread_id)
        if thread is not None and thread.lease is not None and thread.lease[0] == owner:
            thread.lease = None

    async def put_state(self, thread_id: str, key: str, value: Any, *, owner: str | None = None) -> None:
        thread = self._thread(thread_id)
        if owner is not None and (thread.lease is None or thread.lease[0] != owner):
            raise LeaseLost(thread_id, owner, thread.lease[0] if thread.lease else None)
        thread.state.setdefault(key, []).append(_copied(value))

    async def get_state(self, thread_id: str, key: str) -> Any:
        versions = self._thread(thread_id).state.get(key)
        return _copied(versions[-1]) if versions else None

    async def add_api_key(self, key: ApiKey) -> None:
        if key.id in self._keys or any(k.digest == key.digest for k in self._keys.values()):
            raise StoreError(f"API key {key.id!r} is already recorded")
        self._keys[key.id] = replace(key, scopes=list(key.scopes))

    async def find_api_key(self, digest: str) -> ApiKey | None:
        found = next((k for k in self._keys.values() if k.digest == digest), None)
        return replace(found, scopes=list(found.scopes)) if found else None

    async def list_api_keys(self) -> list[ApiKey]:
        return [replace(k, scopes=list(k.scopes)) for k in sorted(self._keys.values(), key=lambda k: k.created)]

    async def revoke_api_key(self, key_id: str) -> bool:
        key = self._keys.get(key_id)
        if key is None or key.revoked is not None:
            return False
        key.revoked = time.time()
        return True


_ATOMS = frozenset((str, int, float, bool, type(None)))


class _NotPlain(Exception):
    """A value that is not plain JSON data (or nested deeper than a plain walk goes)."""


def _copied(value: Any) -> Any:
    """A copy of ``value`` that shares nothing mutable with it, as a store writing JSON hands back a new value.

    JSON data (what runs store: results, state) is copied by a plain walk of its dicts and lists, several times
    faster than :func:`copy.deepcopy`; anything else, and data nested deeper than 64 levels, by ``deepcopy``.
    """
    try:
        return _plain(value, 64)
    except _NotPlain:
        return copy.deepcopy(value)


def _plain(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _ATOMS:
        return value
    if not depth:
        raise _NotPlain
    if kind is dict:
        return {k if type(k) is str else _plain(k, 0): _plain(v, depth - 1) for k, v in value.items()}
    if kind is list:
        return [_plain(v, depth - 1) for v in value]
    raise _NotPlain
