"""The shared bus's tail of another process's events: no announcement is left unread."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

from podium import HumanMessage, MemoryStore
from podium.events import MessageAdded
from podium.server._tail import SharedBus


async def test_an_announcement_that_lands_as_a_tail_finishes_starts_another() -> None:
    """The tail task has decided it is done, and its completion callbacks have not run yet: a new announcement in
    that window must still be read (a lost one left a joined stream waiting until the next run on the thread)."""
    store = MemoryStore()
    await store.create_thread("t")
    bus = SharedBus(store, cast(Any, None))  # receiving only: the queue is used to send announcements
    subscription = bus.subscribe("t")

    async def store_and_announce(seq: int) -> None:
        message = HumanMessage(content=f"message {seq}")
        await store.append_events("t", [MessageAdded(run_id="r", seq=seq, message=message)])
        bus.on_notify(json.dumps(["elsewhere", {"t": seq}]))

    await store_and_announce(1)
    first = await subscription.next()  # woken by the tail's delivery, which is also the tail's last step
    assert first.seq == 1
    await store_and_announce(2)  # nothing in between lets the finished tail's completion callbacks run
    second = await asyncio.wait_for(subscription.next(), 5)
    assert second.seq == 2 and isinstance(second, MessageAdded) and second.message.content == "message 2"
    subscription.close()
