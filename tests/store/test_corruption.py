"""A damaged SQLite file is reported, never half-read; a read-only one can still be inspected (issue 9, item 11).

A real database with a long history is written through the runtime, then single pages of it are overwritten: random
bytes over a whole page, random bytes after a page's header (the page still looks like a b-tree page), a halved
cell count, another page's bytes. The pages hit are the event log's leaves (first, middle, last), its interior
pages, a leaf of the journal index and of the runs table. After each, every read either returns the whole log as
written or raises :class:`StoreCorrupt` (``podium history``/``threads``: an ``error:`` line, exit status 2).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podium import AIMessage, ReactAgent, Runtime, SQLiteStore, StoreCorrupt, StoreError, event_to_dict
from podium.testing import FunctionModel

ROOT = Path(__file__).parents[2]
TURNS = 120


def podium(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PODIUM_DATA_DIR": "/nonexistent-podium-data"}
    return subprocess.run(
        [sys.executable, "-m", "podium", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )


async def _write(path: Path) -> None:
    """A thread ``long`` of ``TURNS`` turns (4 events each), and twenty short ones."""
    store = SQLiteStore(path)
    runtime = Runtime(store)
    agent = ReactAgent("a", FunctionModel(lambda messages, _: AIMessage(content=f"reply {len(messages)} " + "r" * 150)))
    try:
        for turn in range(TURNS):
            await runtime.run(agent, f"message {turn} " + "m" * 250, thread_id="long")
        for other in range(20):
            await runtime.run(agent, "hi", thread_id=f"other{other}")
    finally:
        await store.close()


def _pages(data: bytes, root: int) -> tuple[list[tuple[int, int]], int]:
    """``[(page, type)]`` of the b-tree at ``root`` (walked from the file's bytes), and the page size."""
    size = struct.unpack(">H", data[16:18])[0]
    found: list[tuple[int, int]] = []

    def walk(page: int) -> None:
        base = (page - 1) * size
        header = base + (100 if page == 1 else 0)
        kind = data[header]
        found.append((page, kind))
        if kind in (2, 5):  # interior: the children, then the right-most one
            cells = struct.unpack(">H", data[header + 3 : header + 5])[0]
            for cell in range(cells):
                offset = struct.unpack(">H", data[header + 12 + 2 * cell : header + 14 + 2 * cell])[0]
                walk(struct.unpack(">I", data[base + offset : base + offset + 4])[0])
            walk(struct.unpack(">I", data[header + 8 : header + 12])[0])

    walk(root)
    return found, size


def _targets(path: Path) -> tuple[dict[str, int], int]:
    """Pages to damage, by name, and the page size."""
    with sqlite3.connect(path) as conn:
        roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0").fetchall())
    data = path.read_bytes()
    events, size = _pages(data, roots["events"])
    leaves = [page for page, kind in events if kind == 10]  # the log is a WITHOUT ROWID table: an index b-tree
    interior = [page for page, kind in events if kind == 2]
    journal = [page for page, kind in _pages(data, roots["events_journal"])[0] if kind == 10]
    runs = [page for page, kind in _pages(data, roots["runs"])[0] if kind == 13]
    assert len(leaves) > 20 and len(interior) > 2 and len(runs) > 1, "the history must span a deep b-tree"
    targets = {
        "events first leaf": leaves[0],
        "events middle leaf": leaves[len(leaves) // 2],
        "events last leaf": leaves[-1],
        "events root": roots["events"],
        "events interior": interior[-1],
        "journal index leaf": journal[len(journal) // 2],
        "runs leaf": runs[0],
    }
    return targets, size


def _garbage(page: bytes, rng: random.Random, _: bytes) -> bytes:
    return rng.randbytes(len(page))


def _garbage_after_header(page: bytes, rng: random.Random, _: bytes) -> bytes:
    start = struct.unpack(">H", page[5:7])[0] or len(page)  # the cell content area
    return page[:start] + rng.randbytes(len(page) - start)


def _fewer_cells(page: bytes, rng: random.Random, _: bytes) -> bytes:
    cells = struct.unpack(">H", page[3:5])[0]
    return page[:3] + struct.pack(">H", max(1, cells // 2)) + page[5:]


def _other_page(page: bytes, rng: random.Random, other: bytes) -> bytes:
    return other


DAMAGE: dict[str, Callable[[bytes, random.Random, bytes], bytes]] = {
    "garbage": _garbage,
    "garbage after the header": _garbage_after_header,
    "halved cell count": _fewer_cells,
    "another page's bytes": _other_page,
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]], list[str]]:
    """The database, the long thread's events (as JSON) and the thread ids, as written."""
    path = tmp_path_factory.mktemp("corrupt") / "good.db"
    asyncio.run(_write(path))
    good = podium("history", "long", "--store", str(path))
    assert good.returncode == 0, good.stderr
    threads = podium("threads", "--store", str(path), "--limit", "100")
    return path, good.stdout.splitlines(), threads.stdout.splitlines()  # type: ignore[return-value]


async def _python_reads(path: Path) -> tuple[list[str], list[str]]:
    store = SQLiteStore(path, read_only=True)
    try:
        runtime = Runtime(store)
        events = [event_to_dict(e) for e in await runtime.events("long")]
        messages = [m.content for m in await runtime.messages("long")]
        return [str(e) for e in events], messages
    finally:
        await store.close()


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_page_is_reported_never_half_read(
    written: tuple[Path, list[str], list[str]], tmp_path: Path, damage: str
) -> None:
    path, history, listing = written
    good_events, good_messages = asyncio.run(_python_reads(path))
    assert len(history) == len(good_events) == TURNS * 4 and len(good_messages) == TURNS * 2
    targets, size = _targets(path)
    data = path.read_bytes()
    rng = random.Random(f"{damage}")
    reported: list[str] = []
    for name, page in targets.items():
        damaged = tmp_path / f"{name.replace(' ', '-')}.db"
        shutil.copy(path, damaged)
        other = targets["events middle leaf"] if page != targets["events middle leaf"] else targets["events last leaf"]
        before = data[(page - 1) * size : page * size]
        after = DAMAGE[damage](before, rng, data[(other - 1) * size : other * size])
        with damaged.open("r+b") as file:
            file.seek((page - 1) * size)
            file.write(after)

        try:
            events, messages = asyncio.run(_python_reads(damaged))
        except StoreCorrupt:
            reported.append(name)
        else:  # read whole, or not at all
            assert (events, messages) == (good_events, good_messages), f"{name}: a partial read went unnoticed"

        for args, expected in ((("history", "long"), history), (("threads", "--limit", "100"), listing)):
            result = podium(*args, "--store", str(damaged))
            if result.returncode == 0:
                assert result.stdout.splitlines() == expected, f"{name}: podium {args[0]} printed a partial log"
            else:
                assert result.returncode == 2 and result.stderr.startswith("error: "), result.stderr
                assert "is damaged" in result.stderr or "not a usable Podium database" in result.stderr, result.stderr
    assert "events root" in reported or damage == "garbage after the header"  # the damage was seen, not missed


def _protect(path: Path, on: bool) -> None:
    """Make ``path`` unwritable (or writable again): by its mode, or as root (whom modes do not bind) immutable."""
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True).returncode and on:
            pytest.skip("running as root without chattr: a read-only file cannot be made")
    else:
        path.chmod((0o555 if path.is_dir() else 0o444) if on else 0o755)


@pytest.mark.parametrize("folder_writable", [True, False])
def test_a_read_only_database_can_be_inspected(
    written: tuple[Path, list[str], list[str]], tmp_path: Path, folder_writable: bool
) -> None:
    path, history, listing = written
    readonly = tmp_path / "folder" / "podium.db"
    readonly.parent.mkdir()
    shutil.copy(path, readonly)
    protected = [readonly] if folder_writable else [readonly, readonly.parent]
    for each in protected:
        _protect(each, True)
    try:
        shown = podium("history", "long", "--store", str(readonly))
        assert (shown.returncode, shown.stdout.splitlines()) == (0, history), shown.stderr
        listed = podium("threads", "--limit", "100", "--store", str(readonly))
        assert (listed.returncode, listed.stdout.splitlines()) == (0, listing), listed.stderr
        written_to = podium("keys", "create", "ci", "--store", str(readonly))
        assert written_to.returncode == 2, written_to.stderr
        assert written_to.stderr.startswith(f"error: cannot write to {readonly}: the file or its folder is read-only")
        if not folder_writable:
            assert [p.name for p in readonly.parent.iterdir()] == ["podium.db"]
    finally:
        for each in protected:
            _protect(each, False)


async def test_read_only_stores_refuse_writes_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no database at"):
        SQLiteStore(tmp_path / "absent.db", read_only=True)
    assert not (tmp_path / "absent.db").exists()
    await SQLiteStore(tmp_path / "p.db").close()
    store = SQLiteStore(tmp_path / "p.db", read_only=True)
    try:
        assert await store.list_threads() == []
        with pytest.raises(StoreError, match="read-only"):
            await store.create_thread("t")
    finally:
        await store.close()
