"""The store interface: threads, runs, the per-thread event log (which is also the journal), leases and state.

Everything a conversation produces is *appended*: events (messages, journal entries, side-channel notes) get the
next sequence number of their thread and are never rewritten, so the bytes written for turn N do not grow with N.
Runs have a small status record that is updated in place; per-thread state values are appended as new versions.

Every backend passes the conformance suite in ``tests/store/test_conformance.py``.
"""

from __future__ import annotations

import os
import socket
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

from podium.events import Event
from podium.messages import Message

__all__ = ["ApiKey", "Durability", "RunRecord", "RunStatus", "Store", "ThreadInfo", "owner_is_alive"]

RunStatus = Literal["running", "interrupted", "completed", "failed", "limit_exceeded", "cancelled"]

Durability = Literal["full", "process"]
"""What a committed write survives: ``"full"``, a power cut (fsync at every commit); ``"process"``, a crash of the
process only (the operating system may still lose the last commits if the machine stops)."""


@dataclass(slots=True, kw_only=True)
class ThreadInfo:
    """A stored conversation."""

    id: str
    """The thread's id."""
    created: float = field(default_factory=time.time)
    """Creation time (seconds since the epoch)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Application data (a title, the app that owns it)."""


@dataclass(slots=True, kw_only=True)
class RunRecord:
    """One run of a thread: what started it and how it stands."""

    id: str
    """The run's id."""
    thread_id: str
    """Its thread."""
    status: RunStatus = "running"
    """Where it stands."""
    input: dict[str, Any] | None = None
    """The message that started it, in JSON form."""
    agent: str = ""
    """Name of the agent that runs it."""
    created: float = field(default_factory=time.time)
    """Start time."""
    updated: float = field(default_factory=time.time)
    """Last status change."""
    result: dict[str, Any] | None = None
    """The outcome's JSON form once it stopped."""


@dataclass(slots=True, kw_only=True)
class ApiKey:
    """An API key of the server, as stored: its secret is never kept, only the secret's SHA-256 digest."""

    id: str
    """The key's public id (shown in listings, used to revoke it)."""
    name: str
    """What the key is for (``podium keys create NAME``)."""
    user: str
    """The user requests made with the key act as."""
    scopes: list[str]
    """What the key may do (``read``, ``run``, ``admin``)."""
    digest: str
    """SHA-256 of the secret, hexadecimal: how a presented key is found."""
    created: float = field(default_factory=time.time)
    """Creation time."""
    revoked: float | None = None
    """When it was revoked, or ``None`` while it is valid."""


def _this_host() -> str:
    return socket.gethostname()


def owner_is_alive(owner: str) -> bool:
    """Whether the process named by a lease owner (``host:pid:token``) may still be running.

    Owners on another host are assumed alive (their lease expires instead).
    """
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != _this_host() or not pid_text.isdigit():
        return True
    pid = int(pid_text)
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def new_owner(token: str) -> str:
    """A lease owner name for this process: ``host:pid:token``."""
    return f"{_this_host()}:{os.getpid()}:{token}"


class Store(ABC):
    """Where conversations live. Methods are async so network databases fit the same interface."""

    # threads
    @abstractmethod
    async def create_thread(self, thread_id: str, metadata: dict[str, Any] | None = None) -> ThreadInfo:
        """Create a thread; return the existing one if the id is taken."""

    @abstractmethod
    async def get_thread(self, thread_id: str) -> ThreadInfo | None:
        """The thread, or ``None``."""

    @abstractmethod
    async def list_threads(self, limit: int = 100) -> list[ThreadInfo]:
        """The most recently created threads first."""

    # event log
    @abstractmethod
    async def append_events(self, thread_id: str, events: list[Event]) -> None:
        """Append events whose ``seq`` the caller assigned (the next numbers of the thread), atomically.

        Raises:
            StoreError: a sequence number or a (run, key) pair is already taken.
        """

    @abstractmethod
    async def read_events(self, thread_id: str, *, after: int = 0, run_id: str | None = None) -> list[Event]:
        """Stored events with ``seq > after`` (of one run, if given), in order."""

    @abstractmethod
    async def last_seq(self, thread_id: str) -> int:
        """The highest sequence number of the thread (0 if none)."""

    @abstractmethod
    async def load_messages(
        self, thread_id: str, namespace: str = "", *, exclude_run: str | None = None
    ) -> list[Message]:
        """The messages of one history of the thread, in order, leaving out those of ``exclude_run``."""

    @abstractmethod
    async def journal(self, run_id: str) -> dict[str, Event]:
        """The run's keyed events (its journal), by key."""

    # runs
    @abstractmethod
    async def create_run(self, run: RunRecord) -> None:
        """Record a new run."""

    @abstractmethod
    async def update_run(self, run_id: str, status: RunStatus, result: dict[str, Any] | None = None) -> None:
        """Change a run's status (and record its outcome)."""

    @abstractmethod
    async def get_run(self, run_id: str) -> RunRecord | None:
        """The run, or ``None``."""

    @abstractmethod
    async def list_runs(self, thread_id: str) -> list[RunRecord]:
        """The thread's runs, oldest first."""

    @abstractmethod
    async def last_run(self, thread_id: str) -> RunRecord | None:
        """The thread's newest run, or ``None`` (read on every turn: must not grow with the thread)."""

    @abstractmethod
    async def delete_run(self, run_id: str) -> None:
        """Drop a run and everything it stored (its events, so its messages and journal): a rollback.

        The run's events must be the end of its thread's log (the run rolled back is the newest); the thread's
        next event takes the sequence number after what remains.

        Raises:
            StoreError: no such run, or events of another run follow its own.
        """

    # single writer
    @abstractmethod
    async def acquire_thread(self, thread_id: str, owner: str, ttl: float) -> str | None:
        """Take the thread's write lease for ``ttl`` seconds.

        Returns ``None`` on success, or the current holder. A lease whose holder expired or (same host) whose
        process is gone is taken over. Acquiring again with the same owner renews it.
        """

    @abstractmethod
    async def release_thread(self, thread_id: str, owner: str) -> None:
        """Give the lease back (no-op if ``owner`` does not hold it)."""

    # state
    @abstractmethod
    async def put_state(self, thread_id: str, key: str, value: Any) -> None:
        """Record a new version of a JSON value under ``key`` (earlier versions are kept)."""

    @abstractmethod
    async def get_state(self, thread_id: str, key: str) -> Any:
        """The latest value under ``key``, or ``None``."""

    # API keys of the server
    @abstractmethod
    async def add_api_key(self, key: ApiKey) -> None:
        """Record a new API key.

        Raises:
            StoreError: its id or digest is already recorded.
        """

    @abstractmethod
    async def find_api_key(self, digest: str) -> ApiKey | None:
        """The key whose secret has this digest (revoked or not), or ``None``."""

    @abstractmethod
    async def list_api_keys(self) -> list[ApiKey]:
        """Every key, revoked ones too, oldest first."""

    @abstractmethod
    async def revoke_api_key(self, key_id: str) -> bool:
        """Revoke a key from now on; whether a valid key with that id was found."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
