"""Checks that a thread's log was read whole from an SQLite file.

A damaged page does not always make SQLite fail: a leaf whose cells were overwritten can end a range scan early
(a garbage key belongs to "another thread"), and a page replaced by another's bytes repeats rows. Reading a log
therefore checks what it got against what the same snapshot says it should get: sequence numbers run ``after+1``,
``after+2``... without a gap or a repeat, up to the thread's highest number (found by a seek, not the scan), and a
whole log holds an event of every run that ended or waits (their end is stored before their status). Anything else is
:class:`~podium.errors.StoreCorrupt`, never a partial log.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from podium.errors import StoreCorrupt

__all__: list[str] = []

T = TypeVar("T")

_RECORDED_RUNS = (
    "SELECT id FROM runs WHERE thread_id=? AND status IN ('completed', 'failed', 'limit_exceeded', 'interrupted')"
)


def snapshot(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work(conn)`` inside one read transaction, so its statements see the same state of the file."""
    if conn.in_transaction:
        return work(conn)
    conn.execute("BEGIN")
    try:
        return work(conn)
    finally:
        conn.execute("COMMIT")


def read_log(
    conn: sqlite3.Connection, path: str, thread_id: str, after: int, sql: str, params: tuple[Any, ...]
) -> list[Any]:
    """The rows of ``sql`` (a thread's events ordered by ``seq``, the first two columns ``seq, run_id``), checked.

    Raises:
        StoreCorrupt: the rows skip or repeat a sequence number, stop short of the thread's last event, or (for a
            whole log) miss a run that ended.
    """

    def work(c: sqlite3.Connection) -> tuple[int, list[Any], list[Any]]:
        last = c.execute("SELECT max(seq) FROM events WHERE thread_id=?", (thread_id,)).fetchone()[0] or 0
        rows = c.execute(sql, params).fetchall()
        runs = c.execute(_RECORDED_RUNS, (thread_id,)).fetchall() if after == 0 else []
        return last, rows, runs

    last, rows, runs = snapshot(conn, work)
    check_log(path, thread_id, after, last, rows, [r[0] for r in runs])
    return rows


def check_log(
    path: str, thread_id: str, after: int, last: int, rows: Sequence[Sequence[Any]], recorded_runs: list[str]
) -> None:
    """Raise :class:`StoreCorrupt` unless ``rows`` (``seq, run_id, ...``) are the whole log after ``after``."""
    expected = after + 1
    for row in rows:
        if row[0] != expected:
            raise StoreCorrupt(
                f"{path} is damaged: thread {thread_id!r} has event {row[0]} where event {expected} should be "
                "(a page of the file was overwritten?); restore it from a backup"
            )
        expected += 1
    if expected - 1 < last:
        raise StoreCorrupt(
            f"{path} is damaged: thread {thread_id!r} ends at event {last}, but reading it stopped after event "
            f"{expected - 1}; restore it from a backup"
        )
    missing = set(recorded_runs) - {row[1] for row in rows}
    if missing:
        raise StoreCorrupt(
            f"{path} is damaged: the log of thread {thread_id!r} has no event of run(s) {', '.join(sorted(missing))}; "
            "restore it from a backup"
        )


def quick_check(conn: sqlite3.Connection, path: str) -> None:
    """Run SQLite's ``PRAGMA quick_check`` over the whole file.

    Raises:
        StoreCorrupt: the file's pages are not a sound database (its report's first lines say where).
    """
    found = [row[0] for row in conn.execute("PRAGMA quick_check(5)").fetchall()]
    if found != ["ok"]:
        report = "; ".join(" ".join(line.split()) for line in found)[:300]
        raise StoreCorrupt(f"{path} is damaged (SQLite's quick_check: {report}); restore it from a backup")
