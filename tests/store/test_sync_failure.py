"""A SQLite store whose disk fails for a while: no write acknowledged without its sync, and no restart needed after."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import podium
from podium import (
    AIMessage,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    SQLiteStore,
    StoreError,
    ToolMessage,
)
from podium.events import SideChannel
from podium.messages import valid_history
from podium.store import _calls, _syncer
from podium.testing import FunctionModel, tool_call

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int fails(int fd, const char *op) {
    const char *flag = getenv("IOFAIL_FLAG"), *prefix = getenv("IOFAIL_PREFIX");
    char o[16] = {0}, link[64], path[1024]; int e = 0;
    FILE *f = flag ? fopen(flag, "r") : NULL;
    if (!f) return 0;
    int n = fscanf(f, "%15s %d", o, &e); fclose(f);
    if (n != 2 || strcmp(o, op)) return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, path, sizeof path - 1);
    if (k <= 0) return 0;
    path[k] = 0;
    if (strncmp(path, prefix, strlen(prefix))) return 0;
    errno = e; return 1;
}
#define REAL(name, ret, ...) static ret (*real)(__VA_ARGS__); if (!real) real = dlsym(RTLD_NEXT, #name);
int fsync(int fd) { REAL(fsync, int, int); return fails(fd, "fsync") ? -1 : real(fd); }
int fdatasync(int fd) { REAL(fdatasync, int, int); return fails(fd, "fsync") ? -1 : real(fd); }
ssize_t pwrite64(int fd, const void *b, size_t n, off_t o) {
    REAL(pwrite64, ssize_t, int, const void *, size_t, off_t); return fails(fd, "write") ? -1 : real(fd, b, n, o); }
ssize_t pwrite(int fd, const void *b, size_t n, off_t o) {
    REAL(pwrite, ssize_t, int, const void *, size_t, off_t); return fails(fd, "write") ? -1 : real(fd, b, n, o); }
ssize_t write(int fd, const void *b, size_t n) {
    REAL(write, ssize_t, int, const void *, size_t); return fd > 2 && fails(fd, "write") ? -1 : real(fd, b, n); }
"""
"""An ``LD_PRELOAD`` shim: while the file ``$IOFAIL_FLAG`` holds ``OP ERRNO`` (``fsync 5``, ``write 30``), that call
fails with that errno on the files under ``$IOFAIL_PREFIX`` (a disk reporting an I/O error, a file system turned
read-only): SQLite's own syncs and writes fail too, not only the store's sync thread."""


def _note(seq: int, text: str) -> SideChannel:
    event = SideChannel(text=text, channel="progress")
    event.seq, event.run_id = seq, "r"
    return event


class _Disk:
    """The store's syncs fail while ``failing`` (the sync thread's, and the repair's checkpoint, which SQLite
    syncs itself: replaced here by one that fails the same way)."""

    def __init__(self, store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.failing = False
        self.repairs = 0
        real_sync, real_checkpoint = _syncer._data_sync, getattr(store, "_checkpoint_all", None)

        def sync(fd: int) -> None:
            if self.failing:
                raise OSError(5, "Input/output error")
            real_sync(fd)

        def checkpoint(conn: Any) -> None:
            self.repairs += 1
            if self.failing:
                raise StoreError("disk I/O error")
            real_checkpoint(conn)

        monkeypatch.setattr(_syncer, "_data_sync", sync)
        monkeypatch.setattr(store, "_checkpoint_all", checkpoint, raising=False)


async def test_after_a_failed_sync_writes_wait_for_a_repair_and_a_retried_append_counts_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit whose sync failed is not acknowledged, and nothing is written until the store has made its file
    durable again (a checkpoint of the whole log, synced); the health check says why meanwhile. Once the disk works
    the store repairs itself, and the caller's retry of the same events counts them as written (not a UNIQUE
    error, not twice)."""
    monkeypatch.setattr(_calls, "REPAIR_EVERY", 0.0)
    store = SQLiteStore(tmp_path / "s.db")
    await store.create_thread("t")
    assert await store.acquire_thread("t", "me", 30) is None
    disk = _Disk(store, monkeypatch)
    disk.failing = True
    first = [_note(1, "a"), _note(2, "b")]
    with pytest.raises(StoreError, match="syncing the write-ahead log failed: Input/output error"):
        await store.append_events("t", first, owner="me")
    refused = (
        "takes no writes: a write or sync of its write-ahead log failed .*Input/output error.*last try: disk I/O error"
    )
    with pytest.raises(StoreError, match=refused):
        await store.ping()
    with pytest.raises(StoreError, match=refused):
        await store.append_events("t", [_note(3, "c")], owner="me")
    with pytest.raises(StoreError, match=refused):
        await store.acquire_thread("u", "me", 30)
    assert await store.last_seq("t") == 2  # committed, never acknowledged; nothing more written

    disk.failing = False
    await store.ping()  # repaired: healthy again without a restart
    syncs = store.syncs
    third = _note(3, "c")
    await store.append_events("t", [*first, third], owner="me")  # the retry, with what came after
    assert store.syncs == syncs + 1  # acknowledged after a sync of its own
    assert [(e.seq, e.text) for e in await store.read_events("t")] == [(1, "a"), (2, "b"), (3, "c")]  # type: ignore[attr-defined]
    await store.append_events("t", [third], owner="me")  # all stored, identical: written
    for clash in ([_note(3, "other")], [_note(4, "d"), third], [first[1], _note(3, "changed")]):
        with pytest.raises(StoreError, match="UNIQUE"):  # another event in a stored place: refused as before
            await store.append_events("t", clash, owner="me")
    assert await store.last_seq("t") == 3
    await store.close()
    reopened = SQLiteStore(tmp_path / "s.db", read_only=True)
    assert [e.seq for e in await reopened.read_events("t")] == [1, 2, 3]
    await reopened.close()


async def test_a_repair_that_failed_is_tried_again_only_after_a_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each try copies the whole log: while the disk fails, calls within ``REPAIR_EVERY`` of a try fail at once."""
    monkeypatch.setattr(_calls, "REPAIR_EVERY", 30.0)
    store = SQLiteStore(tmp_path / "p.db")
    await store.create_thread("t")
    disk = _Disk(store, monkeypatch)
    disk.failing = True
    with pytest.raises(StoreError, match="syncing the write-ahead log failed"):
        await store.append_events("t", [_note(1, "a")])
    for _ in range(3):
        with pytest.raises(StoreError, match="takes no writes"):
            await store.append_events("t", [_note(2, "b")])
        with pytest.raises(StoreError, match="takes no writes"):
            await store.ping()
    assert disk.repairs == 1
    await store.close()


async def test_a_run_whose_sync_fails_for_a_moment_finishes_with_every_tool_run_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's retry of the events whose sync failed goes through once the disk works (the store repaired
    itself): the run ends ``completed``, each tool ran once, and the thread's history holds each message once."""
    monkeypatch.setattr(_calls, "REPAIR_EVERY", 0.0)
    store = SQLiteStore(tmp_path / "r.db")
    disk = _Disk(store, monkeypatch)
    ran: list[int] = []

    async def work(ctx: RunContext[Any], n: int) -> str:
        """Do step n."""
        ran.append(n)
        if n == 0:  # the disk fails as this tool's result is stored, and works again a moment later
            disk.failing = True
            asyncio.get_running_loop().call_later(0.1, setattr, disk, "failing", False)
        return f"done {n}"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        done = sum(isinstance(m, ToolMessage) for m in messages)
        return AIMessage(content="all done") if done == 2 else AIMessage(tool_calls=[tool_call("work", {"n": done})])

    agent = ReactAgent(name="worker", model=FunctionModel(model), tools=[work])
    result = await Runtime(store).run(agent, "go", thread_id="t")
    assert result.error is None, result.error
    assert (result.status, result.output) == ("completed", "all done")
    assert ran == [0, 1]
    messages = await Runtime(store).messages("t")
    assert [m.kind for m in messages] == ["human", "ai", "tool", "ai", "tool", "ai"]
    valid_history(messages)
    assert disk.repairs >= 1
    await store.close()


_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from podium import SQLiteStore, StoreError
    from podium.events import SideChannel
    from podium.store import _calls

    _calls.REPAIR_EVERY = 0.0
    db, flag, fault = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

    def note(seq, text):
        event = SideChannel(text=text, channel="progress")
        event.seq, event.run_id = seq, "r"
        return event

    async def attempt(call):
        try:
            await call
        except StoreError as exc:
            return str(exc)
        return "ok"

    async def main():
        store = SQLiteStore(db)
        await store.create_thread("t")
        await store.append_events("t", [note(1, "before")])
        flag.write_text(fault)
        during = [note(2, "during")]  # the same events each try, as a run's retries have them
        seen = {"write": await attempt(store.append_events("t", during))}
        seen["ping"] = await attempt(store.ping())
        seen["again"] = await attempt(store.append_events("t", during))
        flag.unlink()
        seen["ping after"] = await attempt(store.ping())
        seen["retry after"] = await attempt(store.append_events("t", [*during, note(3, "after")]))
        seen["events"] = [(e.seq, e.text) for e in await store.read_events("t")]
        await store.close()
        print(json.dumps(seen))

    asyncio.run(main())
    """
)


@pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs gcc and Linux")
@pytest.mark.parametrize("fault", ["fsync 5", "write 30"])
def test_a_disk_that_fails_then_works_again_needs_no_restart(tmp_path: Path, fault: str) -> None:
    """With the real calls failing (SQLite's own syncs and writes too, through an ``LD_PRELOAD`` shim): writes fail
    while the disk does, the health check fails after a failed sync, and once the disk works the store takes the
    retried write and new ones, with every event stored once."""
    shim = tmp_path / "iofail.so"
    (tmp_path / "iofail.c").write_text(SHIM)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(shim), str(tmp_path / "iofail.c"), "-ldl"], check=True)
    data = tmp_path / "data"
    data.mkdir()
    flag = tmp_path / "flag"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(podium.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]),
        "LD_PRELOAD": str(shim),
        "IOFAIL_FLAG": str(flag),
        "IOFAIL_PREFIX": str(data),
    }
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(data / "f.db"), str(flag), fault],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["write"] != "ok" and seen["again"] != "ok"
    if fault.startswith("fsync"):
        assert "syncing the write-ahead log failed: Input/output error" in seen["write"]
        assert "takes no writes: a write or sync of its write-ahead log failed" in seen["ping"]
    assert (seen["ping after"], seen["retry after"]) == ("ok", "ok")
    assert seen["events"] == [[1, "before"], [2, "during"], [3, "after"]]
