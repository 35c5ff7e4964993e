"""Cancelling a run whose store refuses writes (a full disk, a database refusing inserts): the cancel is never
answered ``cancelled`` unless the run ended so; it is kept and applied once the store takes writes again, and the run
executes nothing more after it, on SQLite and on PostgreSQL (through the executing server or another one)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
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


class _Refusing:
    """Refuses every write of events from the moment a run stores the result of its first tool call, until
    :meth:`allow` (the run is stopped by its store meanwhile)."""

    refused = 0
    _state = "before"

    def allow(self) -> None:
        self._state = "allowed"

    def _check(self, events: list[Event]) -> None:
        first_result = any(isinstance(e, MessageAdded) and isinstance(e.message, ToolMessage) for e in events)
        if first_result and self._state == "before":
            self._state = "refusing"
        if self._state == "refusing":
            _Refusing.refused += 1
            raise StoreError("permission denied for table events")

    async def append_events(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        self._check(events)
        await super().append_events(thread_id, events, owner=owner)  # type: ignore[misc]

    async def append_events_soon(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        self._check(events)
        await super().append_events_soon(thread_id, events, owner=owner)  # type: ignore[misc]

    async def end_run(self, thread_id: str, events: list[Event], *args: Any, **kwargs: Any) -> bool:
        self._check(events)
        return await super().end_run(thread_id, events, *args, **kwargs)  # type: ignore[misc, no-any-return]


class _RefusingSQLite(_Refusing, SQLiteStore):
    pass


@contextmanager
def _servers(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[list[str], Callable[[], None]]]:
    """The gated app served on a refusing store: one server, or (``postgres-other``) two sharing one schema; what
    ends the refusal."""
    stores: list[Any] = []
    if kind == "sqlite":
        stores.append(_RefusingSQLite(tmp_path / "s.db"))
    else:
        from podium.store.postgres import PostgresStore

        class _RefusingPostgres(_Refusing, PostgresStore):
            pass

        url, schema = request.getfixturevalue("postgres_schema")
        stores = [_RefusingPostgres(url, schema=schema) for _ in range(2 if kind == "postgres-other" else 1)]
    with ExitStack() as stack:
        urls = [stack.enter_context(live_server({"gated": app}, store)) for store in stores]

        def allow() -> None:
            for store in stores:
                store.allow()

        yield urls, allow


def _until(check: Any, what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"never: {what}")


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "postgres-other"])
@pytest.mark.parametrize("answer", ["pending", "applied"])
def test_a_cancel_while_the_store_refuses_writes_is_kept_and_no_tool_runs_after_it(
    kind: str,
    answer: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    gate: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("podium.runtime.journal.FLUSH_RETRIES", (0.05, 0.05))
    monkeypatch.setattr("podium.server._executor.STORE_RETRY_FIRST", 0.2)
    monkeypatch.setattr("podium.server._executor.CANCEL_WAIT", 1.0 if answer == "pending" else 30.0)
    monkeypatch.setattr(_Refusing, "refused", 0)
    gate[0].touch()  # step 2 would run at once: the log shows whether any tool ran after the cancel
    with _servers(kind, request, tmp_path) as (urls, allow), httpx.Client(timeout=60) as client:
        first, last = urls[0], urls[-1]
        thread_id = client.post(f"{first}/threads", json={}).json()["thread_id"]
        body = {"assistant_id": "gated", "input": {"messages": [{"role": "user", "content": "hi"}]}}
        run_id = client.post(f"{first}/threads/{thread_id}/runs", json=body).json()["run_id"]
        _until(lambda: _Refusing.refused >= 4, "the store refused the run's writes")  # the run waits to go on
        cancel_url = f"{last}/threads/{thread_id}/runs/{run_id}/cancel"
        if answer == "pending":
            cancelled = client.post(cancel_url)
            assert cancelled.status_code == 503, cancelled.text
            assert "not stopped yet" in cancelled.json()["detail"] and "kept" in cancelled.json()["detail"]
            time.sleep(1.0)  # the run stays stopped, executing nothing, while the store refuses
            assert gate[1].read_text().split() == ["1"]
            allow()
        else:
            with ExitStack() as later:
                import threading

                answered: list[httpx.Response] = []
                sender = threading.Thread(target=lambda: answered.append(client.post(cancel_url)))
                sender.start()
                later.callback(sender.join, 60)
                time.sleep(1.0)
                allow()
            assert answered[0].status_code == 202, answered[0].text
            assert answered[0].json() == {"run_id": run_id, "status": "cancelled"}

        def ended() -> dict[str, Any] | None:
            run: dict[str, Any] = client.get(f"{first}/threads/{thread_id}/runs/{run_id}").json()
            return run if run["status"] not in ("pending", "running") else None

        run = _until(ended, "the run ended")
        assert (run["status"], run["podium_status"]) == ("interrupted", "cancelled")
        assert gate[1].read_text().split() == ["1"]  # no tool ran after the cancel
        again = client.post(f"{last}/threads/{thread_id}/runs/{run_id}/cancel")  # asked again: its real end
        assert again.json() == {"run_id": run_id, "status": "already_ended"}
        body["input"] = {"messages": [{"role": "user", "content": "again"}]}
        after = client.post(f"{first}/threads/{thread_id}/runs/wait", json=body)
        assert after.status_code == 200 and after.json()["messages"][-1]["content"] == "finished: again"
