"""Test doubles that are part of the public API: a model written as a function, and a scripted queue of replies.

Both report token usage (estimated at four characters a token) so budgets can be tested, and both can stream.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TypeAlias

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

__all__ = ["FunctionModel", "Reply", "ScriptedModel", "tool_call"]

Reply: TypeAlias = AIMessage | str | ModelResponse
"""What a test model may answer: a full message, plain text, or a response with usage."""


def tool_call(name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None) -> ToolCall:
    """A tool call for a scripted reply; ``arguments`` may be a dict or raw (possibly invalid) JSON text."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return ToolCall(id=id or f"call_{uuid.uuid4().hex[:12]}", name=name, arguments=text)


def _to_response(reply: Reply, request: ModelRequest, model_name: str) -> ModelResponse:
    if isinstance(reply, ModelResponse):
        return reply
    message = AIMessage(content=reply) if isinstance(reply, str) else reply
    usage = estimate_usage(request, message)
    return ModelResponse(
        message=message,
        usage=usage,
        model_name=model_name,
        finish_reason="tool_calls" if message.tool_calls else "stop",
    )


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
    an :class:`AIMessage`, text, or a :class:`ModelResponse`.
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
        stand-in)."""
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
        return _to_response(result, request, self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = await self.reply(request)
        async for event in _stream_response(response, self.stream_chunk, self.stream_delay):
            yield event


class ScriptedModel(Model):
    """A model that answers with a fixed queue of replies, in order.

    An item may be a reply, an exception to raise, or a function of the request returning a reply.
    :meth:`assert_complete` fails if some replies were never asked for.
    """

    def __init__(
        self,
        replies: Iterable[Reply | BaseException | Callable[[ModelRequest], Reply]],
        *,
        name: str = "scripted",
    ) -> None:
        """Queue ``replies``."""
        self._queue = list(replies)
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
            raise AssertionError(
                f"ScriptedModel {self.name!r} has no reply left for request #{len(self.requests)} "
                f"(it was given {len(self._queue)})"
            )
        item = self._queue[self._position]
        self._position += 1
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            item = item(request)
        return _to_response(item, request, self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = await self.reply(request)
        async for event in _stream_response(response, 8):
            yield event

    def assert_complete(self) -> None:
        """Fail unless every scripted reply was used."""
        if self.remaining:
            raise AssertionError(
                f"ScriptedModel {self.name!r}: {self.remaining} of {len(self._queue)} replies were never requested"
            )
