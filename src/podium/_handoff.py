"""A result handed from a worker thread to the event loop's thread directly, while the loop has nothing else to do.

A worker thread (a sync tool's) usually hands its result back with ``call_soon_threadsafe``, which wakes the loop
through its self-pipe: a socket write, then the loop's ``epoll`` and reads. When the loop had nothing else ready to
run, the caller may instead wait on the loop's thread for a short, bounded time: a result
that arrives within it is handed over with one wake-up, and a later one goes through the loop as before.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any


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
