"""Isolation over real HTTP, for every route of the OpenAPI schema: another user's thread and run ids answer 404
(never the data), listings show only the caller's records, and requests without credentials get 401."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import example_apps, live_server

from podium.server.auth import AuthConfig, new_api_key
from podium.store.sqlite import SQLiteStore

PUBLIC = {"/health", "/info", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}
# A2A agent cards are public (discovery); they announce the bearer scheme the A2A endpoints require
PUBLIC |= {"/.well-known/agent-card.json", "/a2a/{name}/.well-known/agent-card.json"}
RUN = {"assistant_id": "trip", "input": {"messages": [{"role": "user", "content": "What's the weather in Lisbon?"}]}}
BODIES: dict[str, Any] = {
    "/threads/{thread_id}": {"metadata": {"stolen": True}},
    "/threads/{thread_id}/history": {},
    "/threads/{thread_id}/runs": RUN,
    "/threads/{thread_id}/runs/stream": RUN,
    "/threads/{thread_id}/runs/wait": RUN,
    "/threads/{thread_id}/runs/{run_id}/cancel": {},
}


@pytest.fixture
def two_users(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], dict[str, str]]]:
    """A server requiring keys; its URL and the headers of alice and bob (both read and run)."""
    path = tmp_path / "s.db"

    async def keys() -> list[str]:
        store = SQLiteStore(path)
        secrets = []
        for user in ("alice", "bob"):
            secret, key = new_api_key(user)
            await store.add_api_key(key)
            secrets.append(secret)
        await store.close()
        return secrets

    alice, bob = asyncio.run(keys())
    with live_server(example_apps("trip"), SQLiteStore(path), auth=AuthConfig()) as url:
        yield url, {"X-Api-Key": alice}, {"Authorization": f"Bearer {bob}"}


def _routes(url: str, headers: dict[str, str]) -> list[tuple[str, str]]:
    spec = httpx.get(f"{url}/openapi.json", headers=headers).json()
    return [(method.upper(), path) for path, ops in spec["paths"].items() for method in ops]


def _call(url: str, method: str, path: str, headers: dict[str, str], **ids: str) -> httpx.Response:
    body = BODIES.get(path)
    if method == "POST" and body is None:
        body = {}
    if path == "/v1/chat/completions":
        body = {"model": "trip", "messages": RUN["input"]["messages"]}
    values = collections.defaultdict(
        lambda: "unknown-id", {"assistant_id": "trip", "model": "trip", "name": "trip", **ids}
    )
    concrete = path.format_map(values)
    return httpx.request(
        method, f"{url}{concrete}", json=body if method in ("POST", "PATCH") else None, headers=headers, timeout=30
    )


def test_another_users_thread_and_run_ids_answer_404_on_every_route(two_users: Any) -> None:
    url, alice, bob = two_users
    thread = httpx.post(f"{url}/threads", json={"metadata": {"secret": "alice's"}}, headers=alice).json()["thread_id"]
    run = httpx.post(f"{url}/threads/{thread}/runs/wait", json=RUN, headers=alice)
    assert run.status_code == 200
    run_id = httpx.get(f"{url}/threads/{thread}/runs", headers=alice).json()[0]["run_id"]
    own = httpx.post(f"{url}/threads", json={}, headers=bob).json()["thread_id"]

    routes = _routes(url, alice)
    checked = 0
    for method, path in routes:
        if "{thread_id}" not in path and "{run_id}" not in path:
            continue
        for ids in ({"thread_id": thread, "run_id": run_id}, {"thread_id": own, "run_id": run_id}):
            if ids["thread_id"] == own and "{run_id}" not in path:
                continue  # bob's own thread: only the run id is alice's
            response = _call(url, method, path, bob, **ids)
            assert response.status_code in (403, 404), (method, path, response.status_code, response.text)
            assert "alice" not in response.text and "Lisbon" not in response.text
            checked += 1
    assert checked >= 14

    # alice's records are untouched by bob's attempts (his PATCH, DELETE and cancel did nothing)
    mine = httpx.get(f"{url}/threads/{thread}", headers=alice)
    assert mine.status_code == 200 and mine.json()["metadata"].get("secret") == "alice's"
    assert "stolen" not in mine.json()["metadata"]


def test_listings_show_only_the_callers_records(two_users: Any) -> None:
    url, alice, bob = two_users
    theirs = httpx.post(f"{url}/threads", json={}, headers=alice).json()["thread_id"]
    httpx.post(f"{url}/threads/{theirs}/runs/wait", json=RUN, headers=alice)
    conversation = {"X-Conversation-Id": "c1"}
    chat = {"model": "trip", "messages": RUN["input"]["messages"]}
    chatted = httpx.post(f"{url}/v1/chat/completions", json=chat, headers={**alice, **conversation})
    alices = {t["thread_id"] for t in httpx.post(f"{url}/threads/search", json={}, headers=alice).json()}
    assert {theirs, chatted.headers["x-podium-thread-id"]} <= alices
    mine = httpx.post(f"{url}/threads", json={}, headers=bob).json()["thread_id"]
    bobs = httpx.post(f"{url}/threads/search", json={"limit": 100}, headers=bob).json()
    assert [t["thread_id"] for t in bobs] == [mine]
    assert httpx.get(f"{url}/threads/{mine}/runs", headers=bob).json() == []


def test_every_route_but_the_public_ones_needs_credentials(two_users: Any) -> None:
    url, alice, _ = two_users
    for method, path in _routes(url, alice):
        response = _call(url, method, path, {}, thread_id="t", run_id="r")
        if path in PUBLIC:
            assert response.status_code == 200, path
        else:
            assert response.status_code == 401, (method, path, response.status_code)
            assert isinstance(response.json()["detail"], str)
