"""Plan apps and helpers for the server tests: the small plan service of the orchestration tests, a planner that
fails, the store fixture (SQLite and PostgreSQL), and waiting on the plan endpoints.

``app`` is the small service, for ``podium serve tests/server/plan_apps.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.orchestration import plan_support

from podium.app import App
from podium.orchestration.plan import LLMPlanner
from podium.server.auth import new_api_key
from podium.store.base import Store
from podium.testing import ScriptedModel

CASSETTE = Path(__file__).parent / "cassettes" / "empty.json"

small = App(name="plans", build=lambda model: plan_support.agent(), cassette=CASSETTE)
"""Three steps (Hr, Procurement, Generic) for "Onboard <name>"; the Procurement tool obeys the marker file."""

app = small

failing = App(
    name="plans",
    build=lambda model: plan_support.agent(LLMPlanner(plan_support.catalogue(), ScriptedModel(["{}"] * 3))),
    cassette=CASSETTE,
)
"""A planner whose model never answers with a valid plan."""


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Store]:
    """A function opening the test's store (the same data each time)."""
    if request.param == "postgres":
        from podium.store.postgres import PostgresStore

        url, schema = request.getfixturevalue("postgres_schema")
        # opened lazily, on the server's own event loop: a connection pool belongs to the loop that opened it
        return lambda: PostgresStore(url, schema=schema)
    from podium.store.sqlite import SQLiteStore

    return lambda: SQLiteStore(tmp_path / "plans.db")


def add_keys(store: Store, *users: str) -> dict[str, str]:
    """Store an API key (scopes read and run) for each user; returns each user's secret."""

    async def add() -> dict[str, str]:
        secrets = {}
        for user in users:
            secret, key = new_api_key(f"{user}-key", user=user)
            await store.add_api_key(key)
            secrets[user] = secret
        await store.close()
        return secrets

    return asyncio.run(add())


def until(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Poll ``check`` until it returns something true, and return that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError("timed out")


def steps_of(client: httpx.Client, plan_id: str) -> list[dict[str, Any]]:
    """``GET /steps/{plan_id}``, which must answer 200."""
    response = client.get(f"/steps/{plan_id}")
    assert response.status_code == 200, response.text
    steps: list[dict[str, Any]] = response.json()
    return steps


def waiting(client: httpx.Client, plan_id: str, order: int = 1) -> dict[str, Any] | None:
    """The step waiting for a verdict once it is step ``order``."""
    found = next((s for s in steps_of(client, plan_id) if s["status"] == "awaiting_feedback"), None)
    return found if found is not None and found["order"] == order else None


def last_plan(client: httpx.Client, session_id: str) -> dict[str, Any]:
    """The session's newest plan."""
    plans: list[dict[str, Any]] = client.get("/plans", params={"session_id": session_id}).json()
    return plans[-1]
