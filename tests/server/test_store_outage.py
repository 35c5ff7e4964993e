"""A store that refuses writes for a while in the middle of a run (a full disk, a database failing over): the run is
not dropped half done; it goes on from its journal once the store takes writes again, and its client gets the end."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import live_server
from tests.server.gated_app import app

from podium import MessageAdded, ToolMessage
from podium.errors import StoreError
from podium.events import Event
from podium.store.sqlite import SQLiteStore


class Refusing(SQLiteStore):
    """A SQLite store that refuses every write of events for ``outage`` seconds from the moment a run stores the
    result of its first tool call (that write fails too)."""

    outage = 1.0
    refused = 0
    reads = False
    """Whether reads of runs fail during the outage too (a database that is down, not only full)."""
    _until = 0.0
    _done = False

    def _check(self, events: list[Event]) -> None:
        first_result = any(isinstance(e, MessageAdded) and isinstance(e.message, ToolMessage) for e in events)
        if first_result and not self._done:
            self._done, self._until = True, time.monotonic() + self.outage
        if time.monotonic() < self._until:
            self.refused += 1
            raise StoreError("database or disk is full")

    async def append_events(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        self._check(events)
        await super().append_events(thread_id, events, owner=owner)

    async def get_run(self, run_id: str) -> Any:
        if self.reads and time.monotonic() < self._until:
            raise StoreError("the database is not answering")
        return await super().get_run(run_id)

    async def append_events_soon(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        self._check(events)
        await super().append_events_soon(thread_id, events, owner=owner)


@pytest.mark.parametrize("reads", [False, True], ids=["writes refused", "reads refused too"])
def test_a_run_the_store_stops_goes_on_once_it_takes_writes_again(
    tmp_path: Path, gate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, reads: bool
) -> None:
    monkeypatch.setattr("podium.runtime.journal.FLUSH_RETRIES", (0.05, 0.05))
    monkeypatch.setattr("podium.server._executor.STORE_RETRY_FIRST", 0.2)
    gate[0].touch()
    store = Refusing(tmp_path / "s.db")
    store.reads = reads
    with live_server({"gated": app}, store) as url, httpx.Client(base_url=url, timeout=30) as client:
        thread_id = client.post("/threads", json={}).json()["thread_id"]
        body: dict[str, Any] = {"assistant_id": "gated", "input": {"messages": [{"role": "user", "content": "hi"}]}}
        started = time.monotonic()
        answer = client.post(f"/threads/{thread_id}/runs/wait", json=body)
        assert answer.status_code == 200, answer.text
        assert answer.json()["messages"][-1]["content"] == "finished: hi"  # the whole run, not what it had stored
        assert time.monotonic() - started >= Refusing.outage and store.refused >= 3
        (run,) = client.get(f"/threads/{thread_id}/runs").json()
        assert run["status"] == "success"
        assert gate[1].read_text().split() == ["1", "2"]  # the first tool call was not made again
        again = client.post(
            f"/threads/{thread_id}/runs/wait",
            json={**body, "input": {"messages": [{"role": "user", "content": "again"}]}},
        )
        assert again.status_code == 200 and again.json()["messages"][-1]["content"] == "finished: again"
