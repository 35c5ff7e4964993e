"""The iterator :meth:`Runtime.stream <podium.runtime.Runtime.stream>` returns: a run's events as they happen.

The run starts when the stream is first read, and lasts as long as someone reads it: closing the stream (``aclose``,
leaving an ``async with`` block), or dropping it unfinished (a ``break`` out of ``async for``, which lets go of the
stream at once), cancels the run as :meth:`Runtime.cancel <podium.runtime.Runtime.cancel>` does. ``aclose`` returns
once the run's end is recorded and its thread is free; a stream dropped without it has its run cancelled at once,
and the runtime's next call on that thread waits the moment its end takes instead of finding the thread busy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any

from podium.events import Event

if TYPE_CHECKING:
    from podium.runtime._run import RunResult

__all__: list[str] = []

Start = Callable[[Callable[[Event], None]], Coroutine[Any, Any, "RunResult"]]
"""Makes the run's coroutine, given the callback that gets its events."""
Stop = Callable[["asyncio.Task[Any]"], Coroutine[Any, Any, None]]
"""Cancels the run executing in a task and waits until its end is recorded."""
Abandon = Callable[["asyncio.Task[Any]"], None]
"""Cancels the run executing in a task, without waiting."""


class RunStream:
    """An async iterator of a run's events, ending with its ``RunEnded``; also an async context manager that
    closes it (see the module's docstring)."""

    __slots__ = ("__weakref__", "_abandon", "_closed", "_queue", "_start", "_stop", "_task")

    def __init__(self, start: Start, stop: Stop, abandon: Abandon) -> None:
        self._start: Start | None = start
        self._stop = stop
        self._abandon = abandon
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._task: asyncio.Task[RunResult] | None = None
        self._closed = False

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> Event:
        if self._closed:
            raise StopAsyncIteration
        task = self._task
        if task is None:
            assert self._start is not None
            queue = self._queue  # (the task refers to the queue, never to the stream: dropping it is seen at once)
            task = self._task = asyncio.get_running_loop().create_task(self._start(queue.put_nowait))
            self._start = None
            task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            event = await self._queue.get()
        except asyncio.CancelledError:  # the reader was cancelled: nobody reads the run any more
            self._closed = True
            self._abandon(task)
            raise
        if event is None:
            self._closed = True
            await task  # its error, if it failed to start (ThreadBusy, UsageError ...)
            raise StopAsyncIteration
        return event

    async def aclose(self) -> None:
        """Stop reading: a run still executing is cancelled, and this returns once its end is recorded and its
        thread is free (a run that ended meanwhile is left as it ended)."""
        self._closed = True
        self._start = None
        task = self._task
        if task is not None and not task.done():
            await self._stop(task)

    async def __aenter__(self) -> RunStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def __del__(self) -> None:
        task = self._task
        if task is not None and not task.done():
            try:
                self._abandon(task)
            except RuntimeError:  # its event loop is closed: nothing runs any more
                pass
