"""The SQLite store's file on disk: its folder, and reading it where it cannot be written."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from podium.errors import StoreError

__all__: list[str] = []


def make_folder(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return those it created, outermost first.

    Raises:
        StoreError: a folder cannot be created (a file in the way, no permission).
    """
    missing = [folder, *folder.parents]
    missing = [p for p in missing if not p.exists()][::-1]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder {folder} for the database: {exc.strerror or exc}") from None
    return missing


def connect_read_only(path: str, busy_timeout: float) -> sqlite3.Connection:
    """A read-only connection; in a read-only folder with no pending write-ahead log, an immutable one.

    SQLite reads a file in WAL mode through a shared-memory file beside it; where that cannot be created (a
    read-only folder) and no log is waiting to be checkpointed, the file alone holds everything committed.
    """
    uri = f"file:{quote(str(Path(path).absolute()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout, isolation_level=None)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        conn.close()
        wal = Path(path + "-wal")
        if wal.exists() and wal.stat().st_size:
            raise
        conn = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=busy_timeout, isolation_level=None)
    return conn


def writable(path: str) -> bool:
    """Whether this process may write the file at ``path`` and create files beside it (SQLite's log)."""
    file = Path(path)
    return os.access(file.parent, os.W_OK) and (not file.exists() or os.access(file, os.W_OK))


def lock_for_serving(path: str) -> int | None:
    """Take the advisory lock of the one process serving the database at ``path``: an exclusive ``flock`` on the
    file ``path + "-serve.lock"`` (which keeps the holder's process id), held while the descriptor returned is
    open (the operating system releases it when the process ends, however it ends). ``None`` where there is no
    ``flock`` (Windows).

    Raises:
        StoreError: another process holds it (the message names that process), or the lock file cannot be made.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    lock = path + "-serve.lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(f"cannot create {lock}, which marks the process serving {path}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        who = f"process {holder}" if holder.isdigit() else "another process"
        raise StoreError(
            f"{who} serves {path} already (it holds {lock}): on SQLite one process serves a database; stop that "
            "server first, or serve another file (--store), or use PostgreSQL for several processes"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd
