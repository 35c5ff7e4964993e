"""Shared fixtures. Real model requests are blocked for the whole suite (and its child processes)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from podium.testing import block_model_requests

os.environ["PODIUM_BLOCK_MODEL_REQUESTS"] = "1"
for variable in ("PODIUM_MODEL", "OPENAI_API_KEY", "PODIUM_STORE", "PODIUM_SETTINGS"):
    os.environ.pop(variable, None)
block_model_requests()


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test gets its own data folder, so no test touches ~/.podium."""
    monkeypatch.setenv("PODIUM_DATA_DIR", str(tmp_path / "data"))
    yield


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[object]:
    """Each store backend in turn (tests using it run once per backend)."""
    from podium import MemoryStore, SQLiteStore

    backend = MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "store.db")
    yield backend
    await backend.close()
