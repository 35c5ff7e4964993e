"""The SQLite store's file: one removed or replaced while in use takes no more runs; one process serves it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from podium import AIMessage, ReactAgent, Runtime, SQLiteStore, StoreError
from podium.store.base import RunRecord
from podium.testing import FunctionModel

ROOT = Path(__file__).parents[2]


def _remove(path: Path) -> None:
    path.unlink()


def _replace(path: Path) -> None:
    other = path.with_name("other.db")
    sqlite3.connect(other).close()
    os.replace(other, path)


@pytest.mark.parametrize("change", [_remove, _replace], ids=["removed", "replaced"])
@pytest.mark.parametrize("durability", ["full", "process"])
async def test_a_file_removed_or_replaced_while_in_use_takes_no_more_runs(
    tmp_path: Path, change: object, durability: str
) -> None:
    """What a run would write there goes where no later open finds it: a run's start is refused, saying so (the
    health check too), before anything is written; reads still answer."""
    path = tmp_path / "x.db"
    store = SQLiteStore(path, durability=durability)  # type: ignore[arg-type]
    await store.create_thread("before")
    change(path)  # type: ignore[operator]
    gone = "the database file .*x.db was removed or replaced while in use"
    with pytest.raises(StoreError, match=gone):
        await store.ping()
    for start in (
        store.claim_thread("t", "me", 30),
        store.acquire_thread("t", "me", 30),
        store.create_thread("new"),
        store.ensure_thread("new"),
        store.create_run(RunRecord(id="r", thread_id="before")),
        store.open_run(RunRecord(id="r", thread_id="before")),
    ):
        with pytest.raises(StoreError, match=gone):
            await start
    agent = ReactAgent(name="a", model=FunctionModel(lambda m, r: AIMessage(content="hi")))
    with pytest.raises(StoreError, match=gone):
        await Runtime(store).run(agent, "hello", thread_id="before")
    assert (await store.create_thread("before")).id == "before"  # a thread it has: read, nothing written
    assert await store.list_runs("before") == []
    await store.close()


async def test_one_process_serves_a_sqlite_file(tmp_path: Path) -> None:
    """The serving lock refuses a second holder (another process, or another store of this one) naming the holder,
    and is free again once the holder closes; a store that does not serve uses the file meanwhile as before."""
    path = tmp_path / "s.db"
    serving = SQLiteStore(path)
    serving.lock_for_serving()
    serving.lock_for_serving()  # (held already: nothing to do)
    second = SQLiteStore(path)
    with pytest.raises(
        StoreError, match=rf"process {os.getpid()} serves .*s.db already \(it holds .*s.db-serve.lock\)"
    ):
        second.lock_for_serving()
    await second.create_thread("t")  # not a server: reads and writes as before
    assert await serving.get_thread("t") is not None
    code = "import sys\nfrom podium import SQLiteStore\nSQLiteStore(sys.argv[1]).lock_for_serving()"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    other = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, timeout=60)
    assert other.returncode == 1 and f"StoreError: process {os.getpid()} serves" in other.stderr
    await serving.close()
    second.lock_for_serving()  # free once the first closed
    await second.close()


def test_a_second_podium_serve_on_one_sqlite_file_is_refused(tmp_path: Path) -> None:
    """``podium serve`` takes the lock before it resumes or serves anything; ``podium threads`` (read-only) still
    reads the file meanwhile."""
    import asyncio

    path = tmp_path / "served.db"
    holder = SQLiteStore(path)
    holder.lock_for_serving()  # this process stands for the first server
    env = {**os.environ, "PODIUM_DATA_DIR": str(tmp_path), "PODIUM_BLOCK_MODEL_REQUESTS": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])

    def podium(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "podium", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
        )

    try:
        served = podium("serve", "trip", "--port", "0", "--store", str(path))
        assert served.returncode == 2
        assert f"error: process {os.getpid()} serves {path} already" in served.stderr
        assert "one process serves a database" in served.stderr
        listed = podium("threads", "--store", str(path))
        assert listed.returncode == 0, listed.stderr
    finally:
        asyncio.run(holder.close())
