"""Start a coroutine at once, and make a task of it only if it has to wait.

Handing a coroutine to a task costs several turns of the event loop (the task's first step, its wake-ups, the
callbacks of :func:`asyncio.shield`), even when the coroutine would finish without waiting for anything: a write to
the in-memory store, or one that SQLite commits on the event loop's own connection. :func:`first_step` runs the
coroutine's first step in the caller; a coroutine that finishes there costs no task, and one that suspends goes on
from where it stopped, in the awaiting task or in a task of its own (:func:`firm`), exactly as if it had been
awaited or a task from the start.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["firm", "first_step"]


class _Firm(asyncio.Task):  # type: ignore[type-arg]
    """A task that cannot be cancelled: a task awaiting it and cancelled meanwhile gets its ``CancelledError``
    once this one has finished (what ``asyncio.shield`` gives, without its two extra turns of the loop)."""

    def cancel(self, msg: Any = None) -> bool:
        return False


def first_step(coro: Coroutine[Any, Any, T]) -> tuple[bool, Any]:
    """Run ``coro`` until it first waits: ``(True, result)`` if it finished, else ``(False, awaitable)``, the
    awaitable going on with it from there in the awaiting task. An exception it raises first propagates."""
    try:
        waiting_on = coro.send(None)
    except StopIteration as stop:
        return True, stop.value
    return False, _resume(coro, waiting_on)


def firm(going_on: Any) -> asyncio.Future[Any]:
    """A task that cannot be cancelled, going on with a started coroutine (the awaitable :func:`first_step` gave):
    a task awaiting it and cancelled meanwhile gets its ``CancelledError`` once it has finished."""
    return _Firm(_finish(going_on), loop=asyncio.get_running_loop())


async def _finish(going_on: Any) -> Any:
    return await going_on


@types.coroutine
def _resume(coro: Coroutine[Any, Any, T], waiting_on: Any) -> Generator[Any, Any, T]:
    """Go on with a started ``coro``, which is waiting on ``waiting_on``: what a task driving it would do."""
    while True:
        try:
            sent = yield waiting_on
        except BaseException as exc:
            try:
                waiting_on = coro.throw(exc)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
        else:
            try:
                waiting_on = coro.send(sent)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
