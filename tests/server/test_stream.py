"""SSE over real HTTP: the frames of each mode, rejoining with ``Last-Event-ID``, and clients that leave."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from langgraph_sdk import get_client


def _body(text: str, **extra: Any) -> dict[str, Any]:
    return {"assistant_id": "gated", "input": {"messages": [{"role": "user", "content": text}]}, **extra}


def _frames(lines: list[str]) -> list[tuple[str, Any, int | None]]:
    """``(event, data, id)`` of each SSE frame in ``lines``."""
    frames: list[tuple[str, Any, int | None]] = []
    event, data, ident = "", "", None
    for line in lines:
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line.startswith("id: "):
            ident = int(line[4:])
        elif line == "" and event:
            frames.append((event, json.loads(data), ident))
            event, data, ident = "", "", None
    return frames


def _thread(url: str) -> str:
    return str(httpx.post(f"{url}/threads", json={}).json()["thread_id"])


def test_a_rejoined_stream_delivers_exactly_the_missed_events(gated_server: str, gate: tuple[Path, Path]) -> None:
    thread_id = _thread(gated_server)
    seen: list[str] = []
    with httpx.stream(
        "POST", f"{gated_server}/threads/{thread_id}/runs/stream", json=_body("hello", stream_mode=["events"])
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        where = response.headers["content-location"]
        assert response.headers["location"] == f"{where}/stream"
        for line in response.iter_lines():
            seen.append(line)
            frames = _frames(seen)
            if frames and frames[-1][1].get("kind") == "message" and frames[-1][1]["message"]["kind"] == "tool":
                break  # the client goes away while step 2 waits at its gate
    before = _frames(seen)
    assert before[0][0] == "metadata"
    last_id = before[-1][2]
    assert last_id is not None
    gate[0].touch()
    joined = httpx.get(f"{gated_server}{where}/join", timeout=30).json()
    assert joined["messages"][-1]["content"] == "finished: hello"
    run = httpx.get(f"{gated_server}{where}").json()
    assert run["status"] == "success"  # the run went on without its client
    rest = _frames(
        httpx.get(
            f"{gated_server}{where}/stream", params={"stream_mode": "events"}, headers={"Last-Event-ID": str(last_id)}
        ).text.splitlines()
    )
    everything = _frames(httpx.get(f"{gated_server}{where}/stream", params={"stream_mode": "events"}).text.splitlines())
    stored = [f for f in everything if f[2] is not None]
    assert [f for f in rest if f[2] is not None] == [f for f in stored if f[2] is not None and f[2] > last_id]
    assert [f[2] for f in before if f[2] is not None] + [f[2] for f in rest if f[2] is not None] == [
        f[2] for f in stored
    ]
    assert rest[-1][1]["kind"] == "run_ended" and rest[-1][1]["status"] == "completed"


def test_modes_and_token_chunks_match_the_stored_messages(gated_server: str, gate: tuple[Path, Path]) -> None:
    gate[0].touch()
    thread_id = _thread(gated_server)
    modes = ["values", "updates", "messages-tuple", "custom", "events"]
    text = httpx.post(
        f"{gated_server}/threads/{thread_id}/runs/stream", json=_body("tokens please", stream_mode=modes), timeout=30
    ).text
    frames = _frames(text.splitlines())
    state = httpx.get(f"{gated_server}/threads/{thread_id}/state").json()
    final = state["values"]["messages"][-1]
    chunks = [f[1][0] for f in frames if f[0] == "messages" and f[1][0]["type"] == "AIMessageChunk"]
    assert chunks and {c["id"] for c in chunks} == {final["id"]}
    assert "".join(c["content"] for c in chunks) == final["content"] == "finished: tokens please"
    whole = [f[1][0]["id"] for f in frames if f[0] == "messages" and f[1][0]["type"] != "AIMessageChunk"]
    assert final["id"] not in whole  # streamed as chunks, not sent twice
    updates = [f[1] for f in frames if f[0] == "updates"]
    assert [list(u) for u in updates] == [["gated"]] * len(updates)
    assert [m for u in updates for m in u["gated"]["messages"]] == state["values"]["messages"]
    assert [f[1] for f in frames if f[0] == "values"][-1] == state["values"]


def test_a_failed_run_ends_with_an_error_frame_and_wait_reports_it(gated_server: str) -> None:
    thread_id = _thread(gated_server)
    frames = _frames(
        httpx.post(f"{gated_server}/threads/{thread_id}/runs/stream", json=_body("fail"), timeout=30).text.splitlines()
    )
    assert frames[-1][0] == "error"
    assert frames[-1][1] == {"error": "failed", "message": "RuntimeError: the model broke"}
    waited = httpx.post(f"{gated_server}/threads/{thread_id}/runs/wait", json=_body("fail"), timeout=30).json()
    assert waited["__error__"] == {"error": "failed", "message": "RuntimeError: the model broke"}
    assert httpx.get(f"{gated_server}/threads/{thread_id}").json()["status"] == "error"


async def test_the_sdk_streams_a_resume_and_rejoins(server: str) -> None:
    async with get_client(url=server) as client:
        thread_id = (await client.threads.create())["thread_id"]
        ask = {"messages": [{"role": "user", "content": "Save a note: pack sunglasses for Lisbon"}]}
        first = [p async for p in client.runs.stream(thread_id, "trip", input=ask, stream_mode="updates")]
        interrupts = [p.data["__interrupt__"] for p in first if p.event == "updates" and "__interrupt__" in p.data]
        assert interrupts and interrupts[0][0]["value"]["action_requests"][0]["name"] == "save_trip_note"
        resumed = [
            p
            async for p in client.runs.stream(
                thread_id, "trip", command={"resume": {"decisions": [{"type": "approve"}]}}, stream_mode="values"
            )
        ]
        assert resumed[0].event == "metadata"
        run_id = resumed[0].data["run_id"]
        assert (
            resumed[-1].data["messages"][-1]["content"]
            == "Done: Saved to the trip notebook: pack sunglasses for Lisbon"
        )
        again = [p async for p in client.runs.join_stream(thread_id, run_id, stream_mode="values")]
        assert again[-1].data == resumed[-1].data


def test_token_chunks_are_of_the_reply_not_of_a_task_s_message_to_another(server: str) -> None:
    """tasks-demo's coordinator writes "TO[calculator]: ..." to its calculator task and streams it: not a reply."""
    thread_id = _thread(server)
    body = {
        "assistant_id": "tasks-demo",
        "input": {"messages": [{"role": "user", "content": "What is 12 times 7?"}]},
        "stream_mode": ["messages-tuple", "events"],
    }
    frames = _frames(httpx.post(f"{server}/threads/{thread_id}/runs/stream", json=body, timeout=30).text.splitlines())
    chunks = "".join(f[1][0]["content"] for f in frames if f[0] == "messages" and f[1][0]["type"] == "AIMessageChunk")
    tokens = [f[1] for f in frames if f[0] == "events" and f[1]["kind"] == "token"]
    assert any(t["namespace"] for t in tokens)  # the tasks' own messages did stream, as events
    assert "TO[" not in chunks and "DONE" not in chunks
    replies = [f[1][0]["content"] for f in frames if f[0] == "messages" and f[1][0]["type"] == "ai"]
    assert replies[-1] == "12 × 7 = 84."
