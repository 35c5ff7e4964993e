"""A deleted thread is gone with everything it stored, on SQLite and PostgreSQL: its id makes a new, empty thread
(through ``POST /threads``, ``if_exists``, a run's ``if_not_exists`` and an OpenAI conversation), and nothing of the
old one comes back."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from openai import OpenAI
from tests.server.conftest import example_apps, live_server

from podium.store.sqlite import SQLiteStore

TRIP = "What's the weather in Lisbon?"


def _run(text: str, **extra: Any) -> dict[str, Any]:
    return {"assistant_id": "trip", "input": {"messages": [{"role": "user", "content": text}]}, **extra}


def test_a_deleted_threads_id_makes_a_new_empty_thread(gated_server: str) -> None:
    with httpx.Client(base_url=gated_server, timeout=30) as client:
        assert client.post("/threads", json={"thread_id": "reuse-me", "metadata": {"v": 1}}).status_code == 200
        said = client.post("/threads/reuse-me/runs/wait", json=_run(TRIP)).json()
        assert said["messages"][-1]["content"] == "Today in Lisbon: 24 °C, sunny."
        assert client.delete("/threads/reuse-me").status_code == 204
        assert client.get("/threads/reuse-me").status_code == 404

        made = client.post("/threads", json={"thread_id": "reuse-me", "metadata": {"v": 2}})
        assert made.status_code == 200, made.text
        assert (made.json()["metadata"], made.json()["values"], made.json()["status"]) == (
            {"v": 2},
            {"messages": []},
            "idle",
        )
        fetched = client.get("/threads/reuse-me").json()
        assert (fetched["metadata"], fetched["values"]) == ({"v": 2}, {"messages": []})
        assert client.get("/threads/reuse-me/runs").json() == []
        assert client.get("/threads/reuse-me/events").json() == []
        assert client.post("/threads/reuse-me/history", json={}).json() == []
        assert client.post("/threads", json={"thread_id": "reuse-me"}).status_code == 409  # the new one exists

        assert client.delete("/threads/reuse-me").status_code == 204
        same = client.post("/threads", json={"thread_id": "reuse-me", "if_exists": "do_nothing"})
        assert same.status_code == 200 and same.json()["values"] == {"messages": []}, same.text

        assert client.delete("/threads/reuse-me").status_code == 204
        ran = client.post("/threads/reuse-me/runs/wait", json=_run("And in Fahrenheit?", if_not_exists="create"))
        assert ran.status_code == 200, ran.text
        human = [m["content"] for m in ran.json()["messages"] if m["type"] == "human"]
        assert human == ["And in Fahrenheit?"]  # the first message of a new conversation, not the old one's
        runs = client.get("/threads/reuse-me/runs").json()
        assert len(runs) == 1 and runs[0]["status"] == "success"


def test_an_openai_conversation_whose_thread_was_deleted_starts_again(gated_server: str) -> None:
    with OpenAI(base_url=f"{gated_server}/v1", api_key="dev", max_retries=0) as client:
        conversation = {"X-Conversation-Id": "deleted-conv"}
        said = [{"role": "user", "content": TRIP}]
        first = client.chat.completions.with_raw_response.create(
            model="trip", messages=said, extra_headers=conversation
        )  # type: ignore[arg-type]
        thread_id = first.headers["x-podium-thread-id"]
        assert httpx.delete(f"{gated_server}/threads/{thread_id}").status_code == 204
        again = client.chat.completions.with_raw_response.create(
            model="trip", messages=said, extra_headers=conversation
        )  # type: ignore[arg-type]
        assert again.headers["x-podium-thread-id"] == thread_id
        assert again.parse().choices[0].message.content == "Today in Lisbon: 24 °C, sunny."
    values = httpx.get(f"{gated_server}/threads/{thread_id}/state").json()["values"]
    assert [m["content"] for m in values["messages"] if m["type"] == "human"] == [TRIP]  # one turn: the new one


def test_a_thread_an_earlier_version_deleted_frees_its_id_when_it_is_given_again(tmp_path: Path) -> None:
    async def leave_tombstones() -> None:  # what deleting a thread left before deletes dropped everything
        store = SQLiteStore(tmp_path / "old.db")
        for thread_id in ("kept-1", "kept-2"):
            await store.create_thread(thread_id, {"owner": "local"})
            await store.put_state(thread_id, "server.thread", {"metadata": {"v": 1}, "updated": 0, "deleted": True})
        await store.close()

    asyncio.run(leave_tombstones())
    with (
        live_server(example_apps("trip"), SQLiteStore(tmp_path / "old.db")) as url,
        httpx.Client(base_url=url) as client,
    ):
        assert client.get("/threads/kept-1").status_code == 404
        made = client.post("/threads", json={"thread_id": "kept-1", "metadata": {"v": 2}})
        assert made.status_code == 200, made.text
        assert made.json()["metadata"] == {"v": 2}
        same = client.post("/threads", json={"thread_id": "kept-2", "if_exists": "do_nothing"})
        assert same.status_code == 200 and same.json()["metadata"] == {}, same.text
        ran = client.post("/threads/kept-1/runs/wait", json=_run(TRIP))
        assert ran.status_code == 200, ran.text
        assert [m["content"] for m in ran.json()["messages"] if m["type"] == "human"] == [TRIP]
