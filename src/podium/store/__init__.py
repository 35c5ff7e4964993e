"""Stores: one interface, an in-memory backend, the SQLite default and PostgreSQL.

``SQLiteStore`` and ``PostgresStore`` are imported when first asked for: ``import podium`` loads neither driver.
"""

from typing import TYPE_CHECKING, Any

from podium.store.base import RunRecord, Store, ThreadInfo
from podium.store.memory import MemoryStore

if TYPE_CHECKING:
    from podium.store.postgres import PostgresStore
    from podium.store.sqlite import SQLiteStore

__all__ = ["MemoryStore", "PostgresStore", "RunRecord", "SQLiteStore", "Store", "ThreadInfo"]


def __getattr__(name: str) -> Any:
    if name == "SQLiteStore":  # imported on first use: a program in memory never needs it
        from podium.store.sqlite import SQLiteStore

        return SQLiteStore
    if name == "PostgresStore":  # imported on first use: most programs never need it
        from podium.store.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
