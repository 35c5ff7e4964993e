"""Rejoining a run's stream with a ``Last-Event-ID`` the thread no longer reaches (a client's id from before a
rollback, whose numbers the thread reused): the stream replays the run from its start and ends with it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx


def test_a_last_event_id_past_the_threads_end_replays_the_run_and_ends_with_it(
    gated_server: str, gate: tuple[Path, Path]
) -> None:
    with httpx.Client(base_url=gated_server, timeout=30) as client:
        thread_id = client.post("/threads", json={}).json()["thread_id"]
        body = {"assistant_id": "gated", "input": {"messages": [{"role": "user", "content": "rejoined"}]}}
        run_id = client.post(f"/threads/{thread_id}/runs", json=body).json()["run_id"]
        for _ in range(300):  # until step 2 waits at the gate
            if gate[1].exists() and gate[1].read_text().split() == ["1", "2"]:
                break
            time.sleep(0.02)
        threading.Timer(0.5, gate[0].touch).start()
        data: list[str] = []
        path = f"/threads/{thread_id}/runs/{run_id}/stream"
        with client.stream("GET", path, headers={"Last-Event-ID": "99999"}, params={"stream_mode": "updates"}) as r:
            data.extend(line for line in r.iter_lines() if line.startswith("data: "))  # until the stream ends
        said = "\n".join(data)
        assert "step 1 done" in said and "finished: rejoined" in said  # from the run's start to its end
        assert client.get(f"/threads/{thread_id}/runs/{run_id}").json()["status"] == "success"
