"""Shared fixtures. Real model requests are blocked for the whole suite (and its child processes)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

from podium.testing import block_model_requests

if TYPE_CHECKING:
    from podium.store.base import Store

_LIVE_MODEL_ENV: dict[str, str] = (
    {k: v for k, v in os.environ.items() if k.startswith(("PODIUM_", "OPENAI_", "AZURE_OPENAI_"))}
    if os.environ.get("PODIUM_MODEL")
    else {}
)
"""The model settings the suite started with (empty without ``PODIUM_MODEL``): only the opt-in smoke suite
(``tests/smoke``, marker ``smoke``) uses them, through the ``live_model_env`` fixture; every other test runs offline."""

os.environ["PODIUM_BLOCK_MODEL_REQUESTS"] = "1"
for variable in ("PODIUM_MODEL", "OPENAI_API_KEY", "PODIUM_STORE", "PODIUM_SETTINGS"):
    os.environ.pop(variable, None)
block_model_requests()

# Property tests judge behaviour, not speed: on a loaded machine (CI, parallel workers) input generation and
# examples can be slow, which must not fail a run.
settings.register_profile(
    "podium", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile("podium")


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test gets its own data folder, so no test touches ~/.podium."""
    monkeypatch.setenv("PODIUM_DATA_DIR", str(tmp_path / "data"))
    yield


@pytest.fixture(params=["memory", "sqlite", "sqlite-process", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[object]:
    """Each store backend in turn (tests using it run once per backend); postgres in a fresh schema.

    SQLite runs at both durabilities: at ``process`` its writes run on the event loop's connection.
    """
    from podium import MemoryStore, SQLiteStore

    if request.param == "postgres":
        from podium.store.postgres import PostgresStore

        url, schema = request.getfixturevalue("postgres_schema")
        backend: Store = await PostgresStore.connect(url, schema=schema)
    else:
        durability = "process" if request.param == "sqlite-process" else "full"
        backend = (
            MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "store.db", durability=durability)
        )
    yield backend
    await backend.close()


@pytest.fixture
def postgres_schema() -> Iterator[tuple[str, str]]:
    """``(url, schema)``: a new schema name on the test server (``PODIUM_TEST_POSTGRES_URL``), dropped afterwards.

    Skips when the variable is unset; ``.ci/postgres.sh`` starts a server and prints its URL.
    """
    url = os.environ.get("PODIUM_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("PODIUM_TEST_POSTGRES_URL is not set: no PostgreSQL server to test on (see .ci/postgres.sh)")
    schema = f"podium_test_{uuid.uuid4().hex[:12]}"
    yield url, schema
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture
def live_model_env() -> dict[str, str]:
    """The real model's settings the suite started with; skips the test when ``PODIUM_MODEL`` was not set."""
    if not _LIVE_MODEL_ENV:
        pytest.skip("set PODIUM_MODEL (and PODIUM_BASE_URL) to run the smoke suite")
    return dict(_LIVE_MODEL_ENV)


def loop_wakes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the running event loop's wake-ups from other threads (``call_soon_threadsafe``): the count is
    ``wakes[0]`` of the list returned (set it to 0 to count again)."""
    import asyncio

    loop = asyncio.get_running_loop()
    wakes = [0]
    threadsafe = loop.call_soon_threadsafe

    def counting(*args: Any, **kwargs: Any) -> Any:
        wakes[0] += 1
        return threadsafe(*args, **kwargs)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counting)
    return wakes
