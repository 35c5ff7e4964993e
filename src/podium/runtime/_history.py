"""Incremental message histories: a turn reads only the events stored since the thread's previous turn.

A run's agents read their thread's history (:meth:`RunContext.history`) at every turn. Reading the whole log again
makes turn N cost O(N); :class:`HistoryCache` keeps, per thread and namespace, the history up to a sequence number
and reads only the newer events. What it keeps is checked on every read: the event at that sequence number must
still be there with the same run (a rolled-back run, :meth:`Store.delete_run`, deletes the end of the log and its
numbers are reused), otherwise the history is read again in full. Events of other processes are simply newer
events.

The history is kept already filtered by :func:`podium.messages.valid_history`, which is applied per group (an AI
message with its tool results): the part before the last message that is not a tool result is final, the rest
(``tail``) is filtered again at each read until a new group starts after it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from podium.events import Event, MessageAdded
from podium.messages import Message, ToolMessage, valid_history

if TYPE_CHECKING:
    from podium.store.base import Store

MAX_THREADS = 1024
"""Threads whose histories are kept at once (the least recently read go first)."""


@dataclass(slots=True)
class _History:
    seq: int = 0
    """Events up to this sequence number are in."""
    run_id: str = ""
    """The run of the event at ``seq`` (checked to see the log's end was not rolled back)."""
    done: list[Message] = field(default_factory=list)
    """The valid history of the messages before ``tail``."""
    tail: list[Message] = field(default_factory=list)
    """The messages after ``done``; from the last that is not a tool result on, once viewed (their group may still
    grow)."""

    def add(self, messages: list[Message]) -> None:
        self.tail += messages  # filtered when next viewed (a thread's history may never be read again)

    def view(self) -> list[Message]:
        tail = self.tail
        cut = len(tail) - 1
        while cut > 0 and isinstance(tail[cut], ToolMessage):
            cut -= 1
        if cut > 0:
            self.done += valid_history(tail[:cut])
            self.tail = tail = tail[cut:]
        return self.done + valid_history(tail)


async def read_messages(
    store: Store, thread_id: str, namespace: str = "", *, exclude_run: str | None = None
) -> list[Message]:
    """The messages of one history of the thread, in order, leaving out those of ``exclude_run``.

    Read from the thread's whole log (:meth:`Store.read_events`), which the stores check (every event readable, no
    gap): a damaged history raises :class:`~podium.errors.StoreCorrupt`, never comes back with a hole in it.
    """
    return [
        event.message
        for event in await store.read_events(thread_id)
        if isinstance(event, MessageAdded) and event.namespace == namespace and event.run_id != exclude_run
    ]


class HistoryCache:
    """Message histories of recently used threads, read incrementally from a store."""

    def __init__(self, max_threads: int = MAX_THREADS) -> None:
        """An empty cache holding the histories of up to ``max_threads`` threads (each by namespace)."""
        self._threads: OrderedDict[str, dict[str, _History]] = OrderedDict()
        self._max = max_threads

    async def history(
        self, store: Store, thread_id: str, namespace: str, run_id: str, head: tuple[int, str]
    ) -> list[Message]:
        """The valid message history of ``namespace`` in the thread, before the events of run ``run_id``.

        ``head`` is the thread's log head (:meth:`Store.log_head`) when the run's execution began: a history kept
        up to that head is current without reading anything. The run's own events are the end of the thread's log
        (one writer per thread), so what is kept never holds them and stays valid for the thread's next run.
        """
        kept_here = self._threads.pop(thread_id, None) or {}
        kept = kept_here.pop(namespace, None)
        if kept is None and head == (0, ""):  # nothing was stored before the run: nothing to read
            kept = _History()
        if kept is not None and (kept.seq, kept.run_id) == head:
            kept_here[namespace] = kept
            self._keep(thread_id, kept_here)
            return kept.view()
        newer = await store.events_since(thread_id, (kept.seq, kept.run_id)) if kept is not None else None
        if kept is None or newer is None:  # nothing kept, or the end of the log was rolled back: read it all
            kept = _History()
            newer = await store.read_events(thread_id)
        added: list[Message] = []
        for event in newer:
            if event.run_id == run_id:
                break
            kept.seq, kept.run_id = event.seq, event.run_id
            if isinstance(event, MessageAdded) and event.namespace == namespace:
                added.append(event.message)
        kept.add(added)
        kept_here[namespace] = kept
        self._keep(thread_id, kept_here)
        return kept.view()

    def _keep(self, thread_id: str, kept_here: dict[str, _History]) -> None:
        self._threads[thread_id] = kept_here  # the most recently read, last
        if len(self._threads) > self._max:
            self._threads.popitem(last=False)

    def advance(self, thread_id: str, events: list[Event]) -> None:
        """Take in the events an ended run stored (in order, none missing): each history of the thread kept up to
        just before them grows by them, so the thread's next run reads none of them back from the store.

        Only a run that can never be resumed may be taken in: a resumed run's history must stop before its events.
        """
        kept_here = self._threads.get(thread_id)
        if not kept_here or not events:
            return
        first, last = events[0], events[-1]
        for namespace, kept in kept_here.items():
            if kept.seq != first.seq - 1:  # older than what came before the run: read the rest from the store
                continue
            kept.add([e.message for e in events if isinstance(e, MessageAdded) and e.namespace == namespace])
            kept.seq, kept.run_id = last.seq, last.run_id
