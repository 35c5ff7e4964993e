"""Sync tool functions run in a thread of their own, off the event loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any


def in_thread(function: Callable[..., Any], kwargs: dict[str, Any], name: str) -> asyncio.Future[Any]:
    """Call ``function(**kwargs)`` in a new daemon thread (with this context's variables); a future of its result.

    A thread per call, not a pool: a call that hangs holds only its own thread, never a worker others wait for, and
    a daemon thread does not keep the process from exiting.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():  # abandoned (timed out or cancelled)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def work() -> None:
        try:
            value, error = context.run(function, **kwargs), None
        except BaseException as exc:  # handed to the caller
            value, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:  # the loop closed meanwhile: nobody waits for the result
            pass

    threading.Thread(target=work, name=f"podium-tool-{name}", daemon=True).start()
    return future
