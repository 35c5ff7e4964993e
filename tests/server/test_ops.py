"""Operations over real HTTP: health, info, Prometheus metrics, OpenAPI, JSON logs."""

from __future__ import annotations

import json
import logging
import logging.config
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from podium.errors import PodiumError
from podium.events import RunEnded, RunStarted
from podium.server.ops import Metrics, configure_logging, uvicorn_log_config
from podium.store.sqlite import SQLiteStore


def test_health_and_info_need_no_credentials(server: str) -> None:
    assert httpx.get(f"{server}/health").json() == {"status": "ok"}
    info = httpx.get(f"{server}/info").json()
    from podium import __version__

    assert info["version"] == __version__ and info["auth"] == "dev" and info["uptime_s"] >= 0


def test_health_says_when_the_store_does_not_answer(tmp_path: Path) -> None:
    from tests.server.conftest import example_apps, live_server

    from podium.errors import StoreError

    class Unreachable(SQLiteStore):  # the database goes away under the running server
        async def get_thread(self, thread_id: str) -> None:
            raise StoreError("database is gone")

    with live_server(example_apps("trip"), Unreachable(tmp_path / "s.db")) as url:
        response = httpx.get(f"{url}/health")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "detail": "the store does not answer: database is gone"}


def test_health_answers_within_its_bound_and_sees_a_database_file_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from tests.server.conftest import example_apps, live_server

    monkeypatch.setattr("podium.server.ops.HEALTH_SECONDS", 0.2)

    class Hanging(SQLiteStore):  # a database that is down: each call waits on a pool that never gives a connection
        async def get_thread(self, thread_id: str) -> None:
            await asyncio.sleep(30)

    with live_server(example_apps("trip"), Hanging(tmp_path / "h.db")) as url:
        slow = httpx.get(f"{url}/health", timeout=10)
    assert slow.status_code == 503 and slow.json()["detail"] == "the store did not answer within 0.2 s"

    (tmp_path / "data").mkdir()
    with live_server(example_apps("trip"), SQLiteStore(tmp_path / "data" / "s.db")) as url:
        assert httpx.get(f"{url}/health").status_code == 200
        for name in ("s.db", "s.db-wal", "s.db-shm"):
            (tmp_path / "data" / name).unlink(missing_ok=True)
        gone = httpx.get(f"{url}/health")
    assert gone.status_code == 503 and "was removed or replaced while in use" in gone.json()["detail"]


def test_metrics_count_requests_by_route_template(server: str) -> None:
    httpx.get(f"{server}/assistants/trip")
    httpx.get(f"{server}/assistants/nope")
    response = httpx.get(f"{server}/metrics")
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    assert 'podium_http_requests_total{method="GET",route="/assistants/{assistant_id}",status="200"} 1' in text
    assert 'podium_http_requests_total{method="GET",route="/assistants/{assistant_id}",status="404"} 1' in text
    assert re.search(r'podium_http_request_seconds_count\{method="GET",route="/assistants/\{assistant_id\}"\} 2', text)
    assert "podium_runs_executing 0" in text and "podium_runs_queued 0" in text


def test_run_metrics_follow_run_events() -> None:
    metrics = Metrics()
    metrics.observe_event(RunStarted(run_id="r1", ts=100.0))
    metrics.observe_event(RunEnded(run_id="r1", status="completed", ts=100.2))
    metrics.observe_event(RunEnded(run_id="r2", status="failed", ts=5.0))  # started before this process
    text = metrics.render(executing=2, queued=3)
    assert 'podium_runs_total{status="completed"} 1' in text and 'podium_runs_total{status="failed"} 1' in text
    assert 'podium_run_seconds_bucket{status="completed",le="0.1"} 0' in text
    assert 'podium_run_seconds_bucket{status="completed",le="0.25"} 1' in text
    assert (
        'podium_run_seconds_count{status="completed"} 1' in text
        and "failed" not in text.split("podium_run_seconds")[-1]
    )
    assert "podium_runs_executing 2" in text and "podium_runs_queued 3" in text


def test_openapi_lists_the_routes(server: str) -> None:
    paths = httpx.get(f"{server}/openapi.json").json()["paths"]
    assert {"/health", "/info", "/metrics", "/assistants/search"} <= set(paths)


@pytest.fixture
def root_logging() -> Iterator[None]:
    """The logging set-up as the test found it afterwards (``configure_logging`` takes the root logger over)."""
    root, podium = logging.getLogger(), logging.getLogger("podium")
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    podium.handlers.clear()
    podium.propagate = True
    podium.setLevel(logging.NOTSET)


def test_logs_are_json_lines(capsys: pytest.CaptureFixture[str], root_logging: None) -> None:
    log = configure_logging("debug")
    log.info("serving %s", "trip", extra={"port": 8000})
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("failed")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert lines[0]["message"] == "serving trip" and lines[0]["port"] == 8000 and lines[0]["level"] == "info"
    assert lines[0]["logger"] == "podium.server" and "ValueError: boom" in lines[1]["exception"]
    with pytest.raises(PodiumError, match="unknown log level"):
        configure_logging("loud")
    logging.config.dictConfig(uvicorn_log_config("warning"))
    assert logging.getLogger("uvicorn.access").level == logging.WARNING


@pytest.mark.parametrize("installed", ["before", "after"])
def test_other_libraries_log_json_lines_too_whatever_installed_a_handler(
    capsys: pytest.CaptureFixture[str], root_logging: None, installed: str
) -> None:
    """A rich-text handler another library puts on the root logger (mcp's FastMCP does, with ``basicConfig``), before
    the server configures its logs or after, never writes among the JSON lines; other libraries' warnings are JSON."""
    from rich.logging import RichHandler

    logging.getLogger().handlers.clear()  # (as in a fresh process: no handler of pytest's)

    def install() -> None:
        logging.basicConfig(level="INFO", format="%(message)s", handlers=[RichHandler()])

    if installed == "before":
        install()
    configure_logging("info")
    if installed == "after":
        install()
    logging.config.dictConfig(uvicorn_log_config("info"))  # what uvicorn applies, in every worker too
    logging.getLogger("psycopg.pool").warning("discarding broken connection: %s", "<psycopg.AsyncConnection [BAD]>")
    logging.getLogger("some.library").info("chatter")  # below warning: not logged
    logging.getLogger("podium.server").info("serving")
    lines = capsys.readouterr().err.splitlines()
    records = [json.loads(line) for line in lines]  # every line is JSON
    assert [(r["logger"], r["level"], r["message"]) for r in records] == [
        ("psycopg.pool", "warning", "discarding broken connection: <psycopg.AsyncConnection [BAD]>"),
        ("podium.server", "info", "serving"),
    ]


async def test_a_serving_process_puts_its_start_up_out_of_the_collectors_reach(tmp_path: Path) -> None:
    """Full collections then scan only what requests created: short pauses of the event loop under load."""
    import gc

    from tests.server.conftest import example_apps

    from podium.server.app import create_app

    gc.unfreeze()
    store = SQLiteStore(tmp_path / "g.db")
    try:
        library = create_app(example_apps(), store=store)  # embedded in someone's process: its memory is theirs
        async with library.router.lifespan_context(library):
            assert gc.get_freeze_count() == 0
        served = create_app(example_apps(), store=store, freeze_start_up=True)
        async with served.router.lifespan_context(served):
            assert gc.get_freeze_count() > 1000  # modules, schemas, the apps
    finally:
        gc.unfreeze()
        await store.close()


def test_the_codec_is_built_at_start_up_not_by_the_first_request(tmp_path: Path) -> None:
    """Building the readers and writers of events and messages takes a few hundred milliseconds; the server does it
    before it serves, so the first request does not wait for it (checked in a fresh interpreter, where nothing has
    built them yet)."""
    code = """
import asyncio
from podium import MemoryStore
from podium._codec import union_adapter
from podium.app import load_app
from podium.server.app import create_app

async def main():
    app = create_app({"trip": load_app("trip")}, store=MemoryStore())
    before = union_adapter.cache_info().currsize
    async with app.router.lifespan_context(app):
        print(before, union_adapter.cache_info().currsize)

asyncio.run(main())
"""
    root = Path(__file__).resolve().parents[2]  # the examples are found from the checkout
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.split() == ["0", "2"]
