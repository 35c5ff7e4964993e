"""A result handed from a worker thread to the event loop's thread directly, while the loop has nothing else to do.

A worker thread (a sync tool's) usually hands its result back with ``call_soon_threadsafe``, which wakes the loop
through its self-pipe: a socket write, then the loop's ``epoll`` and reads. When the loop had nothing else ready to
run, the caller may instead wait on the loop's thread for a short, bounded time: a result
that arrives within it is handed over with one wake-up, and a later one goes through the loop as before.

:class:`Placement` makes that wake-up cheaper still: a worker about to be handed a quick call is placed on its
waker's CPU, so neither wake-up crosses CPUs.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any, ClassVar


class Handoff:
    """A result handed from a worker thread to the event loop's thread while that thread waits for it."""

    __slots__ = ("_arrived", "_mutex", "_waiting", "result")

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._arrived = threading.Lock()
        self._arrived.acquire()  # released when a result is handed over
        self._waiting = True
        self.result: tuple[Any, BaseException | None] | None = None

    def give(self, value: Any, error: BaseException | None) -> bool:
        """On the worker's thread: hand the result over if the loop's thread still waits for it (``False``: it
        went on, so deliver the result through the loop as usual)."""
        with self._mutex:
            if not self._waiting:
                return False
            self.result = (value, error)
        self._arrived.release()
        return True

    def take(self, seconds: float) -> tuple[Any, BaseException | None] | None:
        """On the loop's thread: wait up to ``seconds`` for the result; ``None`` if it is left to the thread."""
        self._arrived.acquire(timeout=seconds)
        with self._mutex:
            self._waiting = False
            return self.result


def idle_window(loop: asyncio.AbstractEventLoop, seconds: float) -> float:
    """How long (at most ``seconds``) ``loop``'s thread may wait without holding anything up: 0 when a callback is
    ready to run, else until its next timer is due (a timer due within 0.1 ms leaves no window either)."""
    ready = getattr(loop, "_ready", None)  # asyncio's run queue; a loop without one is never waited on
    if ready is None or ready:
        return 0.0
    scheduled = getattr(loop, "_scheduled", None)  # asyncio's timers, a heap: the next one first
    if scheduled:
        seconds = min(seconds, scheduled[0].when() - loop.time())
    return seconds if seconds >= 0.0001 else 0.0


class Placement:
    """Where a sleeping worker thread wakes up: on the CPU of the thread handing it work.

    A thread woken on another CPU than its waker's costs a cross-CPU wake-up (an interrupt to that CPU, which may be
    asleep: tens of µs, more under virtualisation); one woken on the waker's CPU, which is about to wait for it, is a
    plain switch. So a worker about to get a quick call from a thread that will wait for it is placed on that
    thread's CPU (:meth:`place`), and lets itself run anywhere again as soon as it is awake (:meth:`release`), before
    the call runs: the call, and any thread it starts, may run on any CPU. Where the system cannot tell or set a
    thread's CPU, nothing is moved.
    """

    __slots__ = ("cpu", "native_id")

    _getcpu: ClassVar[Any] = False  # sched_getcpu, once looked up (None: not available)
    _anywhere: ClassVar[set[int]] = set()

    def __init__(self) -> None:
        self.native_id = 0
        """The worker's thread (set by the worker itself when it starts)."""
        self.cpu: int | None = None
        """The CPU it was placed on until it wakes, or ``None`` (anywhere)."""

    @classmethod
    def here(cls) -> int | None:
        """The CPU the calling thread runs on, or ``None`` where that cannot be known."""
        if cls._getcpu is False:
            cls._getcpu = _load_getcpu()
            cls._anywhere = os.sched_getaffinity(0) if cls._getcpu is not None else set()
        if cls._getcpu is None:
            return None
        cpu = int(cls._getcpu())
        return cpu if cpu >= 0 else None

    def place(self, cpu: int | None) -> None:
        """Before waking the worker: let it wake only on ``cpu`` (``None``: leave it be)."""
        if cpu is None or cpu == self.cpu or not self.native_id:
            return
        try:
            os.sched_setaffinity(self.native_id, {cpu})
        except ProcessLookupError:  # the thread ended
            return
        except (OSError, ValueError):  # not allowed here (a sandbox), or the CPU was taken: stop trying
            Placement._getcpu = None
            return
        self.cpu = cpu

    def release(self) -> None:
        """On the worker's thread, once awake: let it run on any CPU again."""
        if self.cpu is None:
            return
        self.cpu = None
        try:
            os.sched_setaffinity(0, Placement._anywhere)
        except (OSError, ValueError):  # (a CPU was taken from this process meanwhile: it keeps the one it has)
            pass


def _load_getcpu() -> Any:
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        import ctypes

        getcpu = ctypes.CDLL(None).sched_getcpu
        getcpu.restype, getcpu.argtypes = ctypes.c_int, []
        if getcpu() < 0:
            return None
    except (OSError, AttributeError):
        return None
    return getcpu
