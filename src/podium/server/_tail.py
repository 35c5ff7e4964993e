"""The event bus of servers sharing a PostgreSQL database: live streams of runs executing in another process.

Events of runs executing here reach this process's subscribers at once, as on the in-process bus. Other processes
learn that a thread has new events from one ``NOTIFY`` per batch (sent by a background task a few milliseconds
after the first stored event of the batch, never awaited by the run), and read the events themselves from the
store by sequence number. Streamed-only events (model tokens) are not stored, so they reach only subscribers of the
process executing the run; a stream elsewhere sees each reply whole once it is stored.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import TYPE_CHECKING

from podium.errors import PodiumError
from podium.events import Event
from podium.runtime.bus import InProcessBus

if TYPE_CHECKING:
    from podium.store._pgqueue import PostgresRunQueue
    from podium.store.base import Store

__all__ = ["SharedBus"]

_log = logging.getLogger("podium.server")
_MAX_PAYLOAD = 7000  # PostgreSQL refuses notification payloads of 8000 bytes or more


class SharedBus(InProcessBus):
    """An in-process bus that also follows, through the store, events stored by other processes."""

    def __init__(self, store: Store, queue: PostgresRunQueue, *, batch: float = 0.005, max_queue: int = 1000):
        """Notify through ``queue``'s channel, read events from ``store``; gather ``batch`` seconds per notification."""
        super().__init__(max_queue=max_queue)
        self.store, self.queue, self.batch = store, queue, batch
        self.origin = uuid.uuid4().hex[:12]
        self.notifications = 0
        """Notifications sent so far (a figure of bench/scale.py)."""
        self._dirty: dict[str, int] = {}
        self._flusher: asyncio.Task[None] | None = None
        self._delivered: dict[str, int] = {}
        self._tails: dict[str, asyncio.Task[None]] = {}
        self._wanted: dict[str, int] = {}

    def quiet(self, thread_id: str) -> bool:
        """Never: a stored event is announced to the other processes, whoever follows it here."""
        return False

    def publish_nowait(self, thread_id: str, event: Event) -> None:
        """Hand ``event`` to this process's subscribers; a stored one is announced to the others in the next batch."""
        if event.seq:
            self._dirty[thread_id] = max(event.seq, self._dirty.get(thread_id, 0))
            if self._flusher is None:
                self._flusher = asyncio.get_running_loop().create_task(self._flush(), name="podium-notify")
            if thread_id in self._by_thread:
                self._delivered[thread_id] = max(event.seq, self._delivered.get(thread_id, 0))
        super().publish_nowait(thread_id, event)

    async def _flush(self) -> None:
        try:
            await asyncio.sleep(self.batch)
            dirty, self._dirty = self._dirty, {}
            self._flusher = None
            batch: dict[str, int] = {}
            for thread_id, seq in dirty.items():
                batch[thread_id] = seq
                if len(thread_id) * len(batch) > _MAX_PAYLOAD // 2 or len(json.dumps(batch)) > _MAX_PAYLOAD - 100:
                    await self._send(batch)
                    batch = {}
            if batch:
                await self._send(batch)
        except PodiumError as exc:  # the streams elsewhere catch up on their next notification or poll
            _log.warning("could not announce stored events: %s", exc)
        finally:
            self._flusher = None

    async def _send(self, batch: dict[str, int]) -> None:
        self.notifications += 1
        await self.queue.notify("events", json.dumps([self.origin, batch], ensure_ascii=True))

    def on_notify(self, payload: str) -> None:
        """A batch announced by some process: read the new events of the threads followed here."""
        try:
            origin, batch = json.loads(payload)
        except (ValueError, TypeError):
            return
        if origin == self.origin:
            return
        for thread_id, seq in batch.items():
            if thread_id not in self._by_thread:
                continue
            self._wanted[thread_id] = max(int(seq), self._wanted.get(thread_id, 0))
            if thread_id not in self._tails:
                self._tails[thread_id] = asyncio.get_running_loop().create_task(self._tail(thread_id))

    async def _tail(self, thread_id: str) -> None:
        """Read the thread's events up to the newest announced, for as long as more are announced meanwhile.

        The task leaves ``_tails`` in the same step as it decides it is done (no await in between), so an
        announcement arriving after that decision always starts a new tail: none is left unread until the next one.
        """
        try:
            while thread_id in self._by_thread:
                newest = self._wanted.pop(thread_id, 0)
                after = self._delivered.get(thread_id, newest - 1)  # a new follower: its stream reads the rest itself
                if newest <= after:
                    return
                try:
                    events = await self.store.read_events(thread_id, after=after)
                except PodiumError as exc:
                    _log.warning("could not read the events of thread %s: %s", thread_id, exc)
                    return
                for event in events:
                    if event.seq > self._delivered.get(thread_id, 0) and thread_id in self._by_thread:
                        self._delivered[thread_id] = event.seq
                        InProcessBus.publish_nowait(self, thread_id, event)
        finally:
            if self._tails.get(thread_id) is asyncio.current_task():
                del self._tails[thread_id]

    async def aclose(self) -> None:
        """Send the announcements due and stop reading (before the store closes)."""
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)
        tails = list(self._tails.values())
        for task in tails:
            task.cancel()
        await asyncio.gather(*tails, return_exceptions=True)

    def _remove(self, subscription: object) -> None:
        super()._remove(subscription)  # type: ignore[arg-type]
        for thread_id in [t for t in self._delivered if t not in self._by_thread]:
            del self._delivered[thread_id]
