"""The iterator :meth:`Runtime.stream <podium.runtime.Runtime.stream>` returns: a run's events as they happen.

The run starts when the stream is first read, and lasts as long as someone reads it: closing the stream (``aclose``,
leaving an ``async with`` block) cancels the run as :meth:`Runtime.cancel <podium.runtime.Runtime.cancel>` does, and
so does letting go of it unfinished: dropping it (a ``break`` out of ``async for runtime.stream(...)``), or, for a
stream kept in a variable, a call of the runtime on the same thread from the task that read it (after a ``break``),
or its reader task ending. ``aclose`` returns once the run's end is recorded and its thread is free; a call that
finds a stream let go of waits the moment its run's end takes instead of finding the thread busy.

A stream has one reader at a time: a second task reading it while the first waits is refused with a
:class:`~podium.errors.UsageError` (several consumers follow a run through the runtime's bus, or ``on_event``).
Closing it from another task while its reader waits ends the reader's loop: with the run's ``RunEnded``
(``cancelled``) if the run had started, or at once (``StopAsyncIteration``) if it still waited for its thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any

from podium.errors import UsageError
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
Started = Callable[["asyncio.Task[Any]", "RunStream"], None]
"""Told the task a stream's run executes in, once it is made."""


class RunStream:
    """An async iterator of a run's events, ending with its ``RunEnded``; also an async context manager that
    closes it (see the module's docstring)."""

    __slots__ = (
        "__weakref__",
        "_abandon",
        "_closed",
        "_ended",
        "_queue",
        "_reader",
        "_reading",
        "_start",
        "_started",
        "_stop",
        "_task",
    )

    def __init__(self, start: Start, stop: Stop, abandon: Abandon, started: Started) -> None:
        self._start: Start | None = start
        self._stop = stop
        self._abandon = abandon
        self._started = started
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._task: asyncio.Task[RunResult] | None = None
        self._closed = False
        self._reader: asyncio.Task[Any] | None = None
        """The task that read the stream last."""
        self._reading = False
        """Whether its reader waits for an event now."""
        self._ended = False
        """Whether its run's ``RunEnded`` came (the run is over but for its last write)."""

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> Event:
        if self._closed:
            raise StopAsyncIteration
        if self._reading:
            raise UsageError(
                "this stream is being read by another task already: a stream has one reader at a time; to give "
                "several consumers a run's events, subscribe them to the runtime's bus (runtime.bus.subscribe("
                "thread_id)) or pass on_event to Runtime.run"
            )
        self._reader = asyncio.current_task()
        task = self._task
        if task is None:
            assert self._start is not None
            queue = self._queue  # (the task refers to the queue, never to the stream: dropping it is seen at once)
            task = self._task = asyncio.get_running_loop().create_task(self._start(queue.put_nowait))
            self._start = None
            task.add_done_callback(lambda _: queue.put_nowait(None))
            self._started(task, self)
        self._reading = True
        try:
            event = await self._queue.get()
        except asyncio.CancelledError:  # the reader was cancelled: nobody reads the run any more
            self._closed = True
            self._abandon(task)
            raise
        finally:
            self._reading = False
        if event is None:
            self._closed = True
            if task.cancelled():  # closed while it waited for its thread: it never began, nothing to tell
                raise StopAsyncIteration
            await task  # its error, if it failed to start (ThreadBusy, UsageError ...)
            raise StopAsyncIteration
        if event.kind == "run_ended":
            self._ended = True
        return event

    def let_go_by(self, task: asyncio.Task[Any] | None) -> bool:
        """Whether the stream's reader let go of it, as seen from ``task`` (a call of the runtime on its thread):
        nobody waits on it, and its reader is ``task`` itself (which left its loop) or ended."""
        reader = self._reader
        return not self._reading and reader is not None and (reader is task or reader.done())

    @property
    def ended(self) -> bool:
        """Whether its reader got the run's ``RunEnded``."""
        return self._ended

    async def aclose(self) -> None:
        """Stop reading: a run still executing is cancelled, and this returns once its end is recorded and its
        thread is free (a run that ended meanwhile is left as it ended). A reader waiting in another task then
        gets the run's ``RunEnded`` and its loop ends."""
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
