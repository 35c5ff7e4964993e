"""A shutdown while PostgreSQL is down keeps its timing: the runs get their grace and are left for the next start,
a client waiting for a run gets the documented 503 with ``Location`` about a second after the grace, and the server
stops within seconds (a lease left behind expires), not after the store's 30 s connection waits."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from tests.server.conftest import live_server
from tests.server.gated_app import app
from tests.server.scale_support import Proxy

pytest.importorskip("psycopg")


def _through(url: str, port: int) -> str:
    parts = urlsplit(url)
    auth = parts.netloc.rpartition("@")[0]
    return urlunsplit(parts._replace(netloc=f"{auth}@127.0.0.1:{port}" if auth else f"127.0.0.1:{port}"))


def test_a_shutdown_while_postgresql_is_down_answers_waits_503_and_stops_in_time(
    postgres_schema: tuple[str, str], gate: tuple[Path, Path]
) -> None:
    from fastapi import FastAPI

    from podium.store.postgres import PostgresStore

    url, schema = postgres_schema
    parts = urlsplit(url)
    proxy = Proxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    states: list[Any] = []

    def extend(fastapi: FastAPI) -> None:
        states.append(fastapi.state.podium)

        @fastapi.post("/test/stop")
        async def stop() -> dict[str, str]:  # what SIGTERM begins in `podium serve`
            import asyncio

            states.append(asyncio.ensure_future(states[0].executor.halt(1.0)))
            return {}

    seen: dict[str, Any] = {}
    store = PostgresStore(_through(url, proxy.port), schema=schema)
    try:
        with live_server({"gated": app}, store, grace=1.0, extend=extend) as base:
            client = httpx.Client(base_url=base, timeout=60)
            thread_id = client.post("/threads", json={}).json()["thread_id"]
            body = {"assistant_id": "gated", "input": {"messages": [{"role": "user", "content": "hi"}]}}

            def wait() -> None:
                seen["wait"] = client.post(f"/threads/{thread_id}/runs/wait", json=body)
                seen["answered"] = time.monotonic()

            waiter = threading.Thread(target=wait)
            waiter.start()
            for _ in range(1500):  # until the run waits at its step 2
                if gate[1].exists() and "2" in gate[1].read_text().split():
                    break
                time.sleep(0.02)
            proxy.cut()  # the database is gone: every store call waits for a connection
            stopping = time.monotonic()
            assert client.post("/test/stop").status_code == 200
            waiter.join(30)
            client.close()
            leaving = time.monotonic()
        left = time.monotonic()
    finally:
        proxy.cut()
    waited = seen["wait"]
    assert waited.status_code == 503, waited.text
    assert waited.json()["detail"].startswith("the server is stopping: run ")
    assert waited.headers["Location"].endswith("/join")
    assert seen["answered"] - stopping < 3.5, "the wait was answered long after the grace (1 s)"
    # (the runtime gives a lease it could not release back in the background until the lease expires: 10 s)
    assert left - leaving < 15, f"the server took {left - leaving:.1f} s to stop with the database down"
