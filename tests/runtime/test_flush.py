"""RunState.flush: one flush at a time, in order; a store that answers later or fails is waited for or tried again,
and a flush cancelled meanwhile keeps what was not stored."""

from __future__ import annotations

import asyncio

import pytest

from podium.errors import LeaseLost, StoreError
from podium.events import Event, SideChannel
from podium.runtime import journal
from podium.runtime.journal import Limits, RunState
from podium.store.memory import MemoryStore


class SlowStore(MemoryStore):
    """A store whose writes wait for ``gate`` and fail with the errors queued in ``failures`` first."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.failures: list[Exception] = []
        self.calls = 0

    async def append_events(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        self.calls += 1
        await self.gate.wait()
        if self.failures:
            raise self.failures.pop(0)
        await super().append_events(thread_id, events, owner=owner)


async def _state(store: MemoryStore) -> RunState:
    await store.create_thread("t")
    await store.acquire_thread("t", "me", 60)
    return RunState(
        store=store, thread_id="t", run_id="r", journal={}, seq=0, limits=Limits(), owner="me", lease_ttl=60
    )


async def _note(state: RunState, text: str) -> None:
    await state.record(SideChannel(channel="progress", text=text))


async def test_a_flush_made_while_another_writes_waits_for_it_and_the_events_keep_their_order() -> None:
    store = SlowStore()
    state = await _state(store)
    store.gate.clear()
    await _note(state, "one")
    first = asyncio.ensure_future(state.flush())
    await asyncio.sleep(0)
    await _note(state, "two")
    second = asyncio.ensure_future(state.flush())
    third = asyncio.ensure_future(state.flush())  # a third waits on the same turn
    await asyncio.sleep(0.01)
    assert not first.done() and not second.done() and not third.done()
    store.gate.set()
    await asyncio.gather(first, second, third)
    assert [e.text for e in await store.read_events("t")] == ["one", "two"]  # type: ignore[attr-defined]
    assert store.calls == 2 and state.pending == []


async def test_a_store_failing_after_it_waited_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "FLUSH_RETRIES", (0.0, 0.0))
    store = SlowStore()
    state = await _state(store)
    store.gate.clear()
    store.failures = [StoreError("locked"), StoreError("still locked")]
    await _note(state, "kept")
    flushing = asyncio.ensure_future(state.flush())
    await asyncio.sleep(0)
    store.gate.set()
    await flushing
    assert store.calls == 3 and [e.text for e in await store.read_events("t")] == ["kept"]  # type: ignore[attr-defined]


async def test_a_store_that_keeps_failing_leaves_the_events_pending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "FLUSH_RETRIES", (0.0,))
    store = SlowStore()
    state = await _state(store)
    store.failures = [StoreError("locked"), StoreError("locked")]
    await _note(state, "kept")
    with pytest.raises(StoreError, match="locked"):
        await state.flush()
    assert [e.text for e in state.pending] == ["kept"]  # type: ignore[attr-defined]
    assert isinstance(state.store_fault, StoreError)  # the run stops here, resumable


async def test_a_lease_lost_while_retrying_fences_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "FLUSH_RETRIES", (0.0,))
    store = SlowStore()
    state = await _state(store)
    store.failures = [StoreError("locked"), LeaseLost("t", "me", "other")]
    await _note(state, "lost")
    with pytest.raises(LeaseLost):
        await state.flush()
    assert state.lost_to == "other"
    with pytest.raises(LeaseLost):  # nothing more is recorded, or written
        await _note(state, "after")


async def test_a_flush_cancelled_while_its_write_waits_ends_after_the_write_and_keeps_a_failed_batch() -> None:
    store = SlowStore()
    state = await _state(store)
    store.gate.clear()
    store.failures = [ValueError("broken")]
    await _note(state, "kept")
    flushing = asyncio.ensure_future(state.flush())
    await asyncio.sleep(0)
    flushing.cancel()
    await asyncio.sleep(0)
    assert not flushing.done()  # the write cannot be cut short: the run waits for it
    store.gate.set()
    with pytest.raises(asyncio.CancelledError):
        await flushing
    assert [e.text for e in state.pending] == ["kept"]  # type: ignore[attr-defined]
