"""Sync tool functions run in threads of their own, off the event loop.

The threads are daemons (a call that hangs does not keep the process from exiting) and are reused: a call goes to
an idle thread if there is one, else to a new one, so a hung call holds only its own thread and never makes others
wait. A thread idle for :data:`IDLE_SECONDS` ends.

Handing the result back to the event loop wakes the loop through its self-pipe (a socket write, then the loop's
``epoll`` and reads), which costs more than most tool functions do. So when the loop has nothing else ready to run,
the call waits for the result on the loop's thread for at most :data:`QUICK_WAIT` (less when a timer is due
sooner): a quick function's result is handed over directly (one wake-up of each thread), and a slower one is left
to its thread as before. The loop is never held longer than that, and only while it would have been idle.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

from podium._handoff import Handoff, Placement, idle_window

IDLE_SECONDS = 30.0
"""How long an idle tool thread waits for another call before it ends."""

QUICK_WAIT = 0.0005
"""How long (seconds) the event loop's thread waits for a call's result when it has nothing else ready to run."""


class _Worker(Placement):
    """One tool thread: its own queue of calls, and where it may run."""

    __slots__ = ("jobs",)

    def __init__(self) -> None:
        super().__init__()
        self.jobs: queue.SimpleQueue[Callable[[], Callable[[], None]]] = queue.SimpleQueue()


class _Threads:
    """Daemon threads running submitted calls, as many as are busy at once plus the idle ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        """Idle workers, the last one to become idle last (it is handed the next call)."""

    def submit(self, job: Callable[[], Callable[[], None]], cpu: int | None) -> None:
        """Run ``job`` on an idle thread, else a new one, woken on ``cpu`` (``None``: wherever); what it returns
        delivers its result (the thread counts as idle again by then, so a call made as soon as the result is seen
        reuses it)."""
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker()
            threading.Thread(target=self._serve, args=(worker, job), name="podium-tool", daemon=True).start()
            return
        worker.place(cpu)
        worker.jobs.put(job)

    def _serve(self, worker: _Worker, job: Callable[[], Callable[[], None]]) -> None:
        worker.native_id = threading.get_native_id()
        while True:
            worker.release()  # awake on the caller's CPU: the call itself may run anywhere
            deliver = job()
            with self._lock:
                self._idle.append(worker)
            deliver()
            while True:
                try:
                    job = worker.jobs.get(timeout=IDLE_SECONDS)
                    break
                except queue.Empty:
                    with self._lock:
                        if worker in self._idle:  # nobody handed this thread a call meanwhile: it ends
                            self._idle.remove(worker)
                            return


_THREADS = _Threads()


def in_thread(function: Callable[..., Any], kwargs: dict[str, Any], name: str) -> asyncio.Future[Any]:
    """Call ``function(**kwargs)`` in a tool thread (with this context's variables); a future of its result (done
    already when the call finished within :data:`QUICK_WAIT` of an otherwise idle loop).

    ``name`` names the call in the thread's name while it runs (for debuggers and thread dumps).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()
    window = idle_window(loop, QUICK_WAIT)
    handoff = Handoff() if window else None

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():  # abandoned (timed out or cancelled)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def job() -> Callable[[], None]:
        thread = threading.current_thread()
        thread.name = f"podium-tool-{name}"
        try:
            value, error = context.run(function, **kwargs), None
        except BaseException as exc:  # handed to the caller
            value, error = None, exc
        thread.name = "podium-tool"

        def deliver() -> None:
            if handoff is not None and handoff.give(value, error):
                return
            try:
                loop.call_soon_threadsafe(settle, value, error)
            except RuntimeError:  # the loop closed meanwhile: nobody waits for the result
                pass

        return deliver

    _THREADS.submit(job, Placement.here() if handoff is not None else None)
    if handoff is not None:
        result = handoff.take(window)
        if result is not None:
            settle(*result)
    return future
