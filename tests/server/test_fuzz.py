"""Property-based fuzzing of every route from the server's own OpenAPI schema (schemathesis), over real HTTP, with
valid credentials: whatever the request, the answer is never a 5xx, never a hang, and a 4xx carries a JSON
``detail``. Plus the bodies no schema describes: oversized (413) and not JSON (415)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from tests.server.conftest import example_apps, live_server

from podium.server.auth import AuthConfig, new_api_key
from podium.store.sqlite import SQLiteStore

pytestmark = pytest.mark.slow

_server: dict[str, Any] = {}


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The schema of a live server (the trip example) requiring keys, with an admin key's headers."""
    path = tmp_path_factory.mktemp("fuzz") / "s.db"

    async def key() -> str:
        store = SQLiteStore(path)
        secret, record = new_api_key("fuzzer", scopes=["admin"])
        await store.add_api_key(record)
        await store.close()
        return secret

    secret = asyncio.run(key())
    with live_server(example_apps("trip"), SQLiteStore(path), auth=AuthConfig()) as url:
        _server.update(url=url, headers={"Authorization": f"Bearer {secret}"})
        yield schemathesis.openapi.from_url(f"{url}/openapi.json", headers=_server["headers"])


def test_no_route_answers_5xx_or_hangs(api_schema: Any) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 20  # every route of the server, from its own schema

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=10, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
        )
        def check(case: Any) -> None:
            response = case.call(base_url=_server["url"], headers=_server["headers"], timeout=20)
            where = (case.method, case.formatted_path, response.status_code, response.text[:300])
            assert response.status_code < 500, where
            if response.status_code >= 400:
                assert "detail" in response.json(), where

        check()


def test_oversized_and_non_json_bodies(api_schema: Any) -> None:
    url, headers = _server["url"], _server["headers"]
    big = httpx.post(
        f"{url}/threads",
        content=b"{" + b" " * 2_000_000 + b"}",
        headers={**headers, "Content-Type": "application/json"},
    )
    assert big.status_code == 413 and "larger than" in big.json()["detail"]
    chat = httpx.post(
        f"{url}/v1/chat/completions", content=b"x" * 2_000_000, headers={**headers, "Content-Type": "application/json"}
    )
    assert chat.status_code == 413
    text = httpx.post(f"{url}/v1/chat/completions", content=b"hello", headers={**headers, "Content-Type": "text/plain"})
    assert text.status_code == 415 and "application/json" in text.json()["detail"]
    broken = httpx.post(
        f"{url}/v1/chat/completions", content=b"{not json", headers={**headers, "Content-Type": "application/json"}
    )
    assert broken.status_code == 422 and broken.json()["detail"]
