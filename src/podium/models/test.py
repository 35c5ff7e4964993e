"""Test doubles that are part of the public API: a model written as a function, and a scripted queue of replies.

Both report token usage (estimated at four characters a token) so budgets can be tested, and both can stream.
A double used wrongly fails with a :class:`podium.UsageError` saying what to change, which a run reports as its
error (``RunResult.error``): a function or script item that gives something other than a :data:`Reply`, or a
script that does not match the requests made (:class:`ScriptMismatch`, an ``AssertionError`` too). An exception a
function raises, or a script item that is one, reaches the run as it is.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TypeAlias

from podium.errors import UsageError
from podium.messages import AIMessage, Message, ToolCall
from podium.models.base import (
    Done,
    Model,
    ModelRequest,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    estimate_usage,
)

__all__ = ["FunctionModel", "Reply", "ScriptMismatch", "ScriptedModel", "tool_call"]

Reply: TypeAlias = AIMessage | str | ModelResponse
"""What a test model may answer: a full message, plain text, or a response with usage."""


def tool_call(name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None) -> ToolCall:
    """A tool call for a scripted reply; ``arguments`` may be a dict or raw (possibly invalid) JSON text."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return ToolCall(id=id or f"call_{uuid.uuid4().hex[:12]}", name=name, arguments=text)


class ScriptMismatch(UsageError, AssertionError):
    """A :class:`ScriptedModel`'s script does not match the requests made: a request came after its last reply, or
    (:meth:`ScriptedModel.assert_complete`) replies were never requested.

    A :class:`podium.UsageError` (the test or its script must change) and an ``AssertionError`` (what a test runner
    reports as a failed check).
    """


_MAY_RETURN = "a str (the reply's text), an AIMessage or a ModelResponse"


def _to_response(reply: Any, request: ModelRequest, model_name: str, said: str) -> ModelResponse:
    """``reply`` as a response with its usage; ``said`` names where it came from, for the error ("the function of
    FunctionModel 'f' returned").

    Raises:
        UsageError: ``reply`` is not a :data:`Reply`, or its message is not a well-formed :class:`AIMessage`.
    """
    if isinstance(reply, ModelResponse):
        _check_message(reply.message, f"{said} a ModelResponse whose message")
        return reply
    if isinstance(reply, str):
        message = AIMessage(content=reply)
    elif isinstance(reply, AIMessage):
        _check_message(reply, f"{said} an AIMessage that")
        message = reply
    else:
        raise UsageError(f"{said} {_shown(reply)}: it may return {_MAY_RETURN}")
    usage = estimate_usage(request, message)
    return ModelResponse(
        message=message,
        usage=usage,
        model_name=model_name,
        finish_reason="tool_calls" if message.tool_calls else "stop",
    )


def _check_message(message: Any, what: str) -> None:
    """Refuse a reply message a real model could not give (its text not a str, its calls not ToolCalls)."""
    if not isinstance(message, AIMessage):
        raise UsageError(f"{what} is {_shown(message)}, not an AIMessage")
    if not isinstance(message.content, str):
        raise UsageError(f"{what} has content {_shown(message.content)}: the text of a reply is a str ('' for none)")
    if not isinstance(message.tool_calls, list) or not all(isinstance(c, ToolCall) for c in message.tool_calls):
        raise UsageError(f"{what} has tool_calls {_shown(message.tool_calls)}: give a list of ToolCall (tool_call())")


def _shown(value: Any) -> str:
    return f"{type(value).__name__} {value!r:.80}"


async def _stream_response(response: ModelResponse, chunk: int, delay: float = 0.0) -> AsyncIterator[StreamEvent]:
    text = response.message.content
    for start in range(0, len(text), chunk):
        if delay and start:
            await asyncio.sleep(delay)
        yield TextDelta(text[start : start + chunk])
    for index, call in enumerate(response.message.tool_calls):
        yield ToolCallDelta(index=index, id=call.id, name=call.name, arguments=call.arguments)
    yield Done(response)


ModelFunction: TypeAlias = Callable[[list[Message], ModelRequest], Reply | Awaitable[Reply]]


class FunctionModel(Model):
    """A model whose replies are computed by ``function(messages, request)``.

    The function sees exactly what a real model would (the messages, and the request with its tools and settings),
    so a test can answer like a model would and assert on what it was shown. It may be sync or async and returns
    an :class:`AIMessage`, text, or a :class:`ModelResponse`; anything else fails the request with a
    :class:`podium.UsageError` saying so (what it raises is raised as it is).
    """

    def __init__(
        self,
        function: ModelFunction,
        *,
        name: str = "function",
        stream_chunk: int = 8,
        stream_delay: float = 0.0,
        keep: int | None = None,
    ) -> None:
        """Wrap ``function``; ``stream_chunk`` is the size of streamed text pieces, ``stream_delay`` the seconds
        between two of them (so a client can watch a reply arrive); ``keep``: how many of the latest requests
        :attr:`requests` keeps (``None``: all, for tests; a bound for a model that serves, such as an app's offline
        stand-in).

        Raises:
            UsageError: ``function`` is not callable.
        """
        if not callable(function):
            raise UsageError(
                f"FunctionModel takes a function of (messages, request) returning {_MAY_RETURN}, not {_shown(function)}"
            )
        self.function = function
        self.name = name
        self.stream_chunk = stream_chunk
        self.stream_delay = stream_delay
        self.keep = keep
        self.requests: list[ModelRequest] = []
        """The requests received, in order (the latest ``keep`` of them)."""

    async def reply(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self.keep is not None and len(self.requests) > self.keep:
            del self.requests[: len(self.requests) - self.keep]
        result = self.function(request.messages, request)
        if inspect.isawaitable(result):
            result = await result
        return _to_response(result, request, self.name, f"the function of FunctionModel {self.name!r} returned")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = await self.reply(request)
        async for event in _stream_response(response, self.stream_chunk, self.stream_delay):
            yield event


class ScriptedModel(Model):
    """A model that answers with a fixed queue of replies, in order.

    An item may be a reply, an exception to raise, or a function of the request returning a reply. A request after
    the last reply fails with :class:`ScriptMismatch`; :meth:`assert_complete` fails with it if some replies were
    never asked for.
    """

    def __init__(
        self,
        replies: Iterable[Reply | BaseException | Callable[[ModelRequest], Reply]],
        *,
        name: str = "scripted",
    ) -> None:
        """Queue ``replies``.

        Raises:
            UsageError: ``replies`` is not a list (or other iterable) of replies, exceptions and functions.
        """
        if isinstance(replies, str | AIMessage | ModelResponse) or not isinstance(replies, Iterable):
            raise UsageError(f"ScriptedModel takes a list of replies, not {_shown(replies)}: write [reply]")
        self._queue = list(replies)
        for number, item in enumerate(self._queue, 1):
            if not isinstance(item, str | AIMessage | ModelResponse | BaseException) and not callable(item):
                raise UsageError(
                    f"ScriptedModel {name!r}: reply #{number} is {_shown(item)}; a reply is {_MAY_RETURN}, an "
                    "exception to raise, or a function of the request returning a reply"
                )
        self._position = 0
        self.name = name
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""

    @property
    def remaining(self) -> int:
        """Replies not yet used."""
        return len(self._queue) - self._position

    async def reply(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self._position >= len(self._queue):
            raise ScriptMismatch(
                f"ScriptedModel {self.name!r} has no reply left for request #{len(self.requests)} "
                f"(it was given {len(self._queue)})"
            )
        item = self._queue[self._position]
        self._position += 1
        if isinstance(item, BaseException):
            raise item
        said = f"reply #{self._position} of ScriptedModel {self.name!r} is"
        if callable(item):
            item = item(request)
            said = f"the function of reply #{self._position} of ScriptedModel {self.name!r} returned"
        return _to_response(item, request, self.name, said)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = await self.reply(request)
        async for event in _stream_response(response, 8):
            yield event

    def assert_complete(self) -> None:
        """Fail unless every scripted reply was used.

        Raises:
            ScriptMismatch: some replies were never requested.
        """
        if self.remaining:
            raise ScriptMismatch(
                f"ScriptedModel {self.name!r}: {self.remaining} of {len(self._queue)} replies were never requested"
            )
