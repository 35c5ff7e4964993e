"""Stores: one interface, an in-memory backend and the SQLite default."""

from podium.store.base import RunRecord, Store, ThreadInfo
from podium.store.memory import MemoryStore
from podium.store.sqlite import SQLiteStore

__all__ = ["MemoryStore", "RunRecord", "SQLiteStore", "Store", "ThreadInfo"]
