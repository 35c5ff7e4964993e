"""The store interface: threads, runs, the per-thread event log (which is also the journal), leases and state.

Everything a conversation produces is *appended*: events (messages, journal entries, side-channel notes) get the
next sequence number of their thread and are never rewritten, so the bytes written for turn N do not grow with N.
Runs have a small status record that is updated in place; per-thread state values are appended as new versions.

Every backend passes the conformance suite in ``tests/store/test_conformance.py``.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from podium._ids import random_id
from podium.errors import StoreError, UsageError
from podium.events import Event
from podium.messages import Message

__all__ = ["ApiKey", "Claim", "Durability", "RunRecord", "RunStatus", "Store", "ThreadInfo", "owner_is_alive"]

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


@dataclass(frozen=True, slots=True)
class Claim:
    """What :meth:`Store.claim_thread` found: the lease's holder, and what a run starting in the thread needs."""

    holder: str | None
    """``None``: the caller holds the lease now; else the owner holding it (and nothing else was read)."""
    last_run: RunRecord | None = None
    """The thread's last run."""
    head: tuple[int, str] = (0, "")
    """The thread's log head (:meth:`Store.log_head`)."""


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


SWEEP_EVERY = 3_600.0
"""Seconds between two sweeps of the life marks of ended processes, on one machine (see ``_LifeMark``)."""


class _LifeMark:
    """This process's life mark: a file it holds an exclusive lock on for as long as it lives.

    The kernel drops the lock when the process ends, however it ends (a SIGKILL too), and the lock is seen from every
    process on the machine whatever its PID namespace. A lease owner names its process's mark, so a lease whose mark
    is unlocked belongs to a process that is gone. PIDs are never looked up: two containers may reuse each other's.
    """

    folder = Path(tempfile.gettempdir()) / f"podium-life-{os.getuid() if hasattr(os, 'getuid') else 0}"

    def __init__(self) -> None:
        self.name = ""
        self._file: Any = None

    def mark(self) -> str:
        """The mark's name, made (and locked) on first use in this process."""
        if self.name:
            return self.name
        name = random_id()[:20]
        try:
            import fcntl

            self.folder.mkdir(mode=0o700, exist_ok=True)
            handle = (self.folder / name).open("a+b")
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (ImportError, OSError):  # no locks here: liveness comes from the lease's expiry alone
            name = f"nomark-{random_id()}"
            handle = None
        self.name, self._file = name, handle
        if handle is not None and self._sweep_due():  # on a thread of its own: a folder of many marks takes a while
            threading.Thread(target=self._sweep, name="podium-life-sweep", daemon=True).start()
        return name

    def _sweep_due(self) -> bool:
        """Whether this process should sweep: no process on the machine did in the last :data:`SWEEP_EVERY` seconds.

        A sweep looks at every mark (a folder of thousands after a day of short processes, such as a test suite's),
        and its thread competes with the process's own for the interpreter while it lasts: once an hour is enough
        for marks that are removed after a day. The folder's ``.swept`` file tells when the last one began.
        """
        stamp = self.folder / ".swept"
        with contextlib.suppress(OSError):
            if time.time() - stamp.stat().st_mtime < SWEEP_EVERY:
                return False
        with contextlib.suppress(OSError):
            stamp.touch()
        return True

    def _sweep(self) -> None:
        """Delete the marks of processes that ended more than a day ago (no lease lasts that long)."""
        old = time.time() - 86_400
        for path in self.folder.iterdir():
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < old:
                    self.gone(path.name, remove=True)

    def forget(self) -> None:
        """In a forked child: the parent's mark is the parent's; the child makes its own when it needs one."""
        self.name, self._file = "", None

    def gone(self, name: str, *, remove: bool = False) -> bool:
        """Whether the process that made mark ``name`` has certainly ended (unknown marks are not); ``remove``: and
        delete its mark (only the sweep does: every lease the process left, on any thread, is told by the mark)."""
        if not name or name == self.name or "/" in name or name.startswith((".", "nomark-")):
            return False
        try:
            import fcntl

            handle = os.open(self.folder / name, os.O_RDWR)  # never created here: a missing mark proves nothing
        except (ImportError, OSError):  # missing (another machine, another /tmp): it may be alive
            return False
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # locked: its process lives
            return False
        finally:
            os.close(handle)
        if remove:
            (self.folder / name).unlink(missing_ok=True)
        return True


_LIFE = _LifeMark()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_LIFE.forget)


THREAD_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,200}")
"""The ids a client on the network may give a new thread (the server's routes, MCP): letters, digits and
``._:-``, at most 200 characters (no path, no space, nothing a log or a URL would have to escape)."""


def check_new_thread_id(thread_id: str) -> None:
    """Refuse an id a network client may not give a new thread (see :data:`THREAD_ID`).

    Raises:
        UsageError: it is not one.
    """
    if THREAD_ID.fullmatch(thread_id) is None:
        raise UsageError(
            f"a new thread's id is 1 to 200 letters, digits and '._:-', not {thread_id[:60]!r}"
            + ("..." if len(thread_id) > 60 else "")
        )


MAX_LIMIT: Final = 2**62
"""The largest count a listing passes to a database (a larger one means "every row", as this does)."""


def listing_limit(limit: int) -> int:
    """``limit``, checked for a listing of rows: a count of zero or more, capped at :data:`MAX_LIMIT`.

    Raises:
        UsageError: it is not a whole number, or is negative.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise UsageError(f"a listing's limit is a whole number, zero or more, not {limit!r}")
    return min(limit, MAX_LIMIT)


def owner_is_alive(owner: str) -> bool:
    """Whether the process holding a lease as ``owner`` may still be running.

    Only an owner whose life mark (see :func:`new_owner`) is no longer held is known to be gone; any other owner is
    taken as alive until its lease expires. No PID is looked up.
    """
    parts = owner.split(":")
    return len(parts) < 4 or not _LIFE.gone(parts[2])


def new_owner(token: str) -> str:
    """A lease owner name for this process: ``host:pid:mark:token`` (the mark tells whether the process lives)."""
    return f"{_this_host()}:{os.getpid()}:{_LIFE.mark()}:{token}"


class Store(ABC):
    """Where conversations live. Methods are async so network databases fit the same interface."""

    # threads
    @abstractmethod
    async def create_thread(self, thread_id: str, metadata: dict[str, Any] | None = None) -> ThreadInfo:
        """Create a thread; return the existing one if the id is taken."""

    async def ensure_thread(self, thread_id: str, metadata: dict[str, Any] | None = None) -> ThreadInfo:
        """:meth:`create_thread` for a run about to start in it.

        A store may commit a new thread here without a sync of its own: the run's first events, written durably
        before the run does anything, are committed after it and sync it along (a power cut in between loses a
        thread nobody was told of). The default is :meth:`create_thread`.
        """
        return await self.create_thread(thread_id, metadata)

    @abstractmethod
    async def get_thread(self, thread_id: str) -> ThreadInfo | None:
        """The thread, or ``None``."""

    @abstractmethod
    async def list_threads(self, limit: int = 100) -> list[ThreadInfo]:
        """The most recently created threads first, at most ``limit`` of them.

        Raises:
            UsageError: ``limit`` is not a whole number, zero or more.
        """

    # event log
    @abstractmethod
    async def append_events(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        """Append events whose ``seq`` the caller assigned (the next numbers of the thread), atomically.

        Args:
            thread_id: the thread.
            events: the events.
            owner: when given, the events are written only if ``owner`` holds the thread's write lease, checked in
                the same atomic write (a writer whose lease another process took over is fenced off).

        Raises:
            LeaseLost: ``owner`` does not hold the thread's lease; nothing was written.
            StoreError: a sequence number or a (run, key) pair is already taken.
        """

    async def append_events_soon(self, thread_id: str, events: list[Event], *, owner: str | None = None) -> None:
        """:meth:`append_events`, returning once the events are committed: where making a commit durable takes a
        sync of its own (SQLite at durability ``full``), that sync is started and not waited for; the next call
        that waits for its own sync (or the one started) makes these events durable too, since a sync covers every
        commit made before it. A run stores this way what precedes a model call, whose sync then runs during the
        call; what precedes a tool call, a step or the run's answer is stored with :meth:`append_events`.

        By default the same as :meth:`append_events` (a store whose commits are durable when they return).

        Raises:
            LeaseLost: as :meth:`append_events`.
            StoreError: as :meth:`append_events`.
        """
        await self.append_events(thread_id, events, owner=owner)

    @abstractmethod
    async def read_events(self, thread_id: str, *, after: int = 0, run_id: str | None = None) -> list[Event]:
        """Stored events with ``seq > after`` (of one run, if given), in order."""

    @abstractmethod
    async def last_seq(self, thread_id: str) -> int:
        """The highest sequence number of the thread (0 if none)."""

    async def log_head(self, thread_id: str) -> tuple[int, str]:
        """The sequence number and run of the thread's last event (``(0, "")`` if none).

        Two equal heads read at two moments mean the log did not change in between: events are only appended, and a
        run rolled back (:meth:`delete_run`) never comes back, so the event at that number would belong to another
        run. The default reads the last event.
        """
        last = await self.last_seq(thread_id)
        events = await self.read_events(thread_id, after=last - 1) if last else []
        return (events[0].seq, events[0].run_id) if events else (0, "")

    async def events_since(self, thread_id: str, head: tuple[int, str]) -> list[Event] | None:
        """The thread's events after ``head`` (a :meth:`log_head` read earlier; ``(0, "")``: all of them), or
        ``None`` when the log no longer holds that event (its end was rolled back: read the log again in full).

        What incremental readers (a runtime's kept histories, a server's kept values) use to catch up.
        """
        seq, _ = head
        if not seq:
            return await self.read_events(thread_id)
        events = await self.read_events(thread_id, after=seq - 1)
        if not events or (events[0].seq, events[0].run_id) != head:
            return None
        return events[1:]

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

    async def open_run(self, run: RunRecord) -> None:
        """:meth:`create_run` for a run about to execute.

        A store may commit the record without a sync of its own: the run's first events, written durably before the
        run has any effect (its first model call, tool or step), are committed after it and sync it along (a power
        cut in between loses a run that had done nothing, whose caller was never answered). The default is
        :meth:`create_run`.
        """
        await self.create_run(run)

    @abstractmethod
    async def update_run(self, run_id: str, status: RunStatus, result: dict[str, Any] | None = None) -> None:
        """Change a run's status (and record its outcome)."""

    async def end_run(
        self,
        thread_id: str,
        events: list[Event],
        run_id: str,
        status: RunStatus,
        result: dict[str, Any],
        *,
        owner: str | None = None,
        release: bool = False,
    ) -> bool:
        """Append a run's last events, then record its outcome: :meth:`append_events` and :meth:`update_run`;
        with ``release``, then give ``owner``'s lease back (:meth:`release_thread`): the run's last write.
        Returns whether the lease was given back (here a failure to give it back leaves the end stored and the
        lease to its holder's :meth:`release_thread`).

        A store that can do it all in one transaction overrides this (one commit, one fsync, at the end of every
        run). Here they are two writes, the events first: called again after the status failed, the events already
        stored under their numbers by this run are not appended twice. A run whose process stopped between the two
        is finished from its stored end by :meth:`~podium.runtime.Runtime.resume`.

        Raises:
            LeaseLost: ``owner`` does not hold the thread's lease; nothing was written.
            StoreError: as :meth:`append_events` and :meth:`update_run`.
        """
        if events:
            stored = await self.read_events(thread_id, after=events[0].seq - 1, run_id=run_id)
            if not stored or stored[0].seq != events[0].seq:  # not stored by an earlier attempt
                await self.append_events(thread_id, events, owner=owner)
        await self.update_run(run_id, status, result)
        return release and await self._release_after_end(thread_id, owner)

    async def _release_after_end(self, thread_id: str, owner: str | None) -> bool:
        """Give ``owner``'s lease back after a run's end was stored; whether that worked."""
        if owner is None:
            return False
        try:
            await self.release_thread(thread_id, owner)
        except StoreError:
            return False
        return True

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

    @abstractmethod
    async def delete_thread(self, thread_id: str) -> None:
        """Drop a thread and everything it stored: its events (so its messages and journals), runs, state and lease.

        Its id is free again: a thread created with it starts empty. Stop the thread's runs first (a run still
        writing would fail or, holding no lease, write into the new thread). Deleting a missing thread does nothing.
        """

    # single writer
    @abstractmethod
    async def acquire_thread(self, thread_id: str, owner: str, ttl: float) -> str | None:
        """Take the thread's write lease for ``ttl`` seconds.

        Returns ``None`` on success, or the current holder. A lease whose holder expired or (same host) whose
        process is gone is taken over. Acquiring again with the same owner renews it.
        """

    async def renew_thread(self, thread_id: str, owner: str, ttl: float) -> str | None:
        """Extend ``owner``'s lease of the thread by ``ttl`` seconds from now, only if ``owner`` still holds it
        (expired or not): a renewal never takes a lease that another owner took, or took and gave back.

        Returns ``None`` when renewed, else the holder (``""`` when nobody holds it). The default, for stores that
        predate it, is :meth:`acquire_thread`, which would take a lease given back meanwhile: a store overrides it.
        """
        return await self.acquire_thread(thread_id, owner, ttl)

    async def claim_thread(
        self, thread_id: str, owner: str, ttl: float, metadata: dict[str, Any] | None = None
    ) -> Claim:
        """What a run does before it starts, in one call: :meth:`ensure_thread` (with ``metadata`` for a new
        thread), :meth:`acquire_thread`, and once the lease is the caller's, :meth:`last_run` and :meth:`log_head`
        (which stay as they are while it holds the lease). A store may do it all in one transaction; the default
        makes those calls.
        """
        await self.ensure_thread(thread_id, metadata)
        holder = await self.acquire_thread(thread_id, owner, ttl)
        if holder is not None:
            return Claim(holder=holder)
        return Claim(holder=None, last_run=await self.last_run(thread_id), head=await self.log_head(thread_id))

    @abstractmethod
    async def release_thread(self, thread_id: str, owner: str) -> None:
        """Give the lease back (no-op if ``owner`` does not hold it)."""

    # state
    @abstractmethod
    async def put_state(self, thread_id: str, key: str, value: Any, *, owner: str | None = None) -> None:
        """Record a new version of a JSON value under ``key`` (earlier versions are kept).

        With an ``owner`` (a run's state), only while it holds the thread's lease, like :meth:`append_events`.

        Raises:
            LeaseLost: ``owner`` does not hold the lease; nothing was written.
        """

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

    async def ping(self) -> None:
        """Answer if the store can be used now (a readiness probe: ``/health``); a store may check more than a read.

        Raises:
            StoreError: it cannot.
        """
        await self.get_thread("__podium_health__")

    async def check(self) -> None:  # noqa: B027 - optional hook
        """Check that the stored data is intact (SQLite: the whole file); a store that cannot tell does nothing.

        Raises:
            StoreCorrupt: the data is damaged.
        """

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
