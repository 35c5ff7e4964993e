"""A real server for the tests: uvicorn on a free loopback port, in a thread of the test process.

``live_server(apps, store)`` starts one and yields its base URL; the ``server`` fixture serves every example app
on a fresh SQLite store.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from fastapi import FastAPI

    from podium.app import App
    from podium.runtime.bus import EventBus
    from podium.server.auth import AuthConfig
    from podium.store.base import Store


def example_apps(*names: str) -> dict[str, App]:
    """The example apps (all, or the named ones) by name."""
    from podium.app import example_names, load_app

    return {app.name: app for app in (load_app(name) for name in names or example_names())}


@contextmanager
def live_server(
    apps: Mapping[str, App],
    store: Store,
    *,
    auth: AuthConfig | None = None,
    close_store: bool = True,
    grace: float = 5.0,
    bus: EventBus | None = None,
    extend: Callable[[FastAPI], None] | None = None,
    port: int = 0,
) -> Iterator[str]:
    """Serve ``apps`` over real HTTP on 127.0.0.1 (a free port, or ``port``) until the block ends; yields the base URL."""
    import uvicorn

    from podium.server import create_app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    app = create_app(apps, store=store, auth=auth, close_store=close_store, grace=grace, bus=bus)
    if extend is not None:
        extend(app)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    failure: list[BaseException] = []

    def serve() -> None:
        try:
            asyncio.run(server.serve(sockets=[sock]))
        except BaseException as exc:  # pragma: no cover - reported below
            failure.append(exc)

    thread = threading.Thread(target=serve, name="podium-test-server", daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started or failure or not thread.is_alive():
                break
            threading.Event().wait(0.01)
        assert server.started, f"the test server did not start: {failure}"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
        assert not failure, failure


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """Every example app served on a fresh SQLite store; the base URL."""
    from podium.store.sqlite import SQLiteStore

    with live_server(example_apps(), SQLiteStore(tmp_path / "server.db")) as url:
        yield url


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """``(gate, log)`` for :mod:`tests.server.gated_app`: its step 2 waits until ``gate`` exists; steps go to ``log``."""
    gate_file, log = tmp_path / "gate", tmp_path / "steps.log"
    monkeypatch.setenv("PODIUM_TEST_GATE", str(gate_file))
    monkeypatch.setenv("PODIUM_TEST_LOG", str(log))
    yield gate_file, log
    gate_file.touch()  # let a run still waiting finish, so the server stops at once


@pytest.fixture(params=["sqlite", "postgres"])
def gated_server(request: pytest.FixtureRequest, tmp_path: Path, gate: tuple[Path, Path]) -> Iterator[str]:
    """The gated test app and the trip example on a fresh SQLite store, then on PostgreSQL; the base URL.

    On PostgreSQL the server executes runs through the shared run queue (several processes could serve it).
    """
    from tests.server.gated_app import app

    store: Store
    if request.param == "postgres":
        from podium.store.postgres import PostgresStore

        url, schema = request.getfixturevalue("postgres_schema")
        store = PostgresStore(url, schema=schema)
    else:
        from podium.store.sqlite import SQLiteStore

        store = SQLiteStore(tmp_path / "server.db")
    with live_server({"gated": app, **example_apps("trip")}, store) as url:
        yield url
