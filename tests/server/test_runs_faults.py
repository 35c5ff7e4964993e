"""What can go wrong around a run: an app that cannot start, a lagging stream, a client that leaves, a Podium
error raised by a route."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import live_server
from tests.server.gated_app import app as gated

from podium import ReactAgent
from podium.app import App
from podium.errors import PodiumError, RunNotFound, StoreError, ThreadBusy, ThreadWaiting, UsageError
from podium.runtime.bus import InProcessBus
from podium.store.sqlite import SQLiteStore


def _body(app: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"assistant_id": app, "input": {"messages": [{"role": "user", "content": text}]}, **extra}


def _events(text: str) -> list[tuple[str, Any]]:
    out, event = [], ""
    for line in text.splitlines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            out.append((event, json.loads(line[6:])))
    return out


def test_an_app_that_cannot_start_fails_its_run_clearly(tmp_path: Path) -> None:
    # no cassette and no PODIUM_MODEL: no model for an agent that calls one (an app that calls none would run)
    broken = App(name="broken", build=lambda model: ReactAgent("broken", model, []), cassette=None)
    with live_server({"broken": broken}, SQLiteStore(tmp_path / "s.db")) as url:
        thread_id = httpx.post(f"{url}/threads", json={}).json()["thread_id"]
        response = httpx.post(f"{url}/threads/{thread_id}/runs/stream", json=_body("broken", "hi"), timeout=30)
        frames = _events(response.text)
        # (the human's message is stored before the model is asked: a values frame with it comes first)
        assert [e for e, _ in frames] == ["metadata", "values", "values", "error"]
        assert "no cassette for offline use" in frames[-1][1]["message"]
        run_id = response.headers["content-location"].rsplit("/", 1)[1]
        run = httpx.get(f"{url}/threads/{thread_id}/runs/{run_id}").json()
        assert (run["status"], run["podium_status"]) == ("error", "failed")
        assert "no cassette" in run["reason"]


def test_a_lagging_stream_reads_what_it_missed_from_the_store(tmp_path: Path, gate: tuple[Path, Path]) -> None:
    gate[0].touch()
    with live_server({"gated": gated}, SQLiteStore(tmp_path / "s.db"), bus=InProcessBus(max_queue=1)) as url:
        thread_id = httpx.post(f"{url}/threads", json={}).json()["thread_id"]
        text = httpx.post(
            f"{url}/threads/{thread_id}/runs/stream", json=_body("gated", "slowly", stream_mode="events"), timeout=30
        ).text
        seqs = [d["seq"] for e, d in _events(text) if e == "events" and d["seq"]]
        stored = httpx.get(f"{url}/threads/{thread_id}/state").json()["checkpoint"]["checkpoint_id"]
        assert seqs == list(range(1, int(stored) + 1))


def test_on_disconnect_cancel_stops_the_run_when_its_client_leaves(tmp_path: Path, gate: tuple[Path, Path]) -> None:
    with live_server({"gated": gated}, SQLiteStore(tmp_path / "s.db")) as url:
        thread_id = httpx.post(f"{url}/threads", json={}).json()["thread_id"]
        body = _body("gated", "bye", stream_mode="events", on_disconnect="cancel")
        with httpx.stream("POST", f"{url}/threads/{thread_id}/runs/stream", json=body) as response:
            where = response.headers["content-location"]
            for _ in response.iter_lines():
                if gate[1].exists():  # step 1 ran: the run now waits at its gate
                    break
        for _ in range(500):
            if httpx.get(f"{url}{where}").json()["podium_status"] == "cancelled":
                break
            time.sleep(0.02)
        assert httpx.get(f"{url}{where}").json()["podium_status"] == "cancelled"


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (ThreadBusy("t", "someone"), 409),
        (ThreadWaiting("t", ["q"]), 409),
        (RunNotFound("r"), 404),
        (StoreError("the disk is gone"), 503),
        (UsageError("wrong"), 400),
    ],
)
def test_podium_errors_of_any_route_answer_json_with_their_status(
    tmp_path: Path, error: PodiumError, status: int
) -> None:
    def extend(app: Any) -> None:
        async def boom() -> None:
            raise error

        app.get("/boom")(boom)

    with live_server({}, SQLiteStore(tmp_path / "s.db"), extend=extend) as url:
        response = httpx.get(f"{url}/boom")
        assert response.status_code == status
        assert response.json() == {"detail": str(error)}
