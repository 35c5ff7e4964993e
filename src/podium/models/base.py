"""The model interface: one async reply and one stream of typed events, with token usage on every reply."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse

from podium.errors import ModelRequestsBlocked
from podium.messages import AIMessage, Message, Usage
from podium.tools import ToolSpec

__all__ = [
    "Done",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "allow_model_requests",
    "check_allowed",
    "cut_off",
    "estimate_usage",
]


@dataclass(slots=True, kw_only=True)
class ModelSettings:
    """Options of one request; ``None`` leaves the provider's default."""

    temperature: float | None = None
    """Sampling temperature."""
    max_tokens: int | None = None
    """Cap on the reply's length."""
    parallel_tool_calls: bool | None = None
    """Whether the model may call several tools in one reply."""
    tool_choice: Literal["auto", "required", "none"] | str | None = None
    """``auto``, ``required``, ``none``, or the name of the one tool to call."""
    response_format: dict[str, Any] | None = None
    """A JSON schema the reply's text must follow (structured output)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Provider-specific fields passed through unchanged."""


@dataclass(slots=True, kw_only=True)
class ModelRequest:
    """Everything a model is asked in one call."""

    messages: list[Message]
    """The conversation, system message first."""
    tools: list[ToolSpec] = field(default_factory=list)
    """Tools the model may call."""
    settings: ModelSettings = field(default_factory=ModelSettings)
    """Options."""


@dataclass(slots=True, kw_only=True)
class ModelResponse:
    """A model's reply with its usage."""

    message: AIMessage
    """The reply."""
    usage: Usage = field(default_factory=Usage)
    """Tokens spent on this call."""
    model_name: str = ""
    """Which model answered."""
    finish_reason: str | None = None
    """Why the model stopped (``stop``, ``tool_calls``, ``length`` ...)."""

    def __post_init__(self) -> None:
        if self.finish_reason == "length":  # travels with the message into the events and the journal
            self.message.metadata["finish_reason"] = "length"


def cut_off(message: AIMessage) -> bool:
    """True when ``message`` was cut off by the reply length limit (``finish_reason="length"``): not an answer."""
    return message.metadata.get("finish_reason") == "length"


def estimate_usage(request: ModelRequest, reply: AIMessage) -> Usage:
    """A deterministic estimate of one call's usage, at four characters a token: for the test models, and for a
    provider that reports none while a token limit needs a count.

    The characters counted are each message's text and its tool calls' names and arguments, a few tokens of framing
    per message, and the tools' names, descriptions and parameters. It runs at every call of a test model, over the
    whole history: one plain loop, no text joined.
    """
    messages = request.messages
    chars = 16 * len(messages)  # a few tokens of framing per message
    for message in messages:  # (what _chars_of counts, inline: it runs for every message of every call)
        chars += len(message.content)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                chars += len(call.name) + len(call.arguments)
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + 24 * len(tool.parameters.get("properties", ()))
    return Usage((chars + 3) // 4, (_chars_of(reply) + 3) // 4, 1)


def _chars_of(message: Message) -> int:
    chars = len(message.content)
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            chars += len(call.name) + len(call.arguments)
    return chars


@dataclass(slots=True, frozen=True)
class TextDelta:
    """New text of a streamed reply."""

    text: str
    """The text."""
    kind: Literal["text"] = "text"


@dataclass(slots=True, frozen=True)
class ToolCallDelta:
    """A piece of a streamed tool call (``index`` says which call)."""

    index: int
    """Position of the call in the reply."""
    id: str | None = None
    """The call's id, on its first piece."""
    name: str | None = None
    """The tool's name, on its first piece."""
    arguments: str = ""
    """More argument text."""
    kind: Literal["tool_call"] = "tool_call"


@dataclass(slots=True, frozen=True)
class Done:
    """The end of a stream, with the whole reply."""

    response: ModelResponse
    """The complete reply, as :meth:`Model.reply` would return it."""
    kind: Literal["done"] = "done"


StreamEvent = TextDelta | ToolCallDelta | Done
"""What :meth:`Model.stream` yields; the last item is always :class:`Done`."""


class Model(ABC):
    """A chat model with tool calling."""

    name: str = "model"
    """A label for logs and recorded responses."""

    @abstractmethod
    async def reply(self, request: ModelRequest) -> ModelResponse:
        """Answer ``request``."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Answer ``request`` piece by piece; the default yields the whole reply at once."""
        response = await self.reply(request)
        if response.message.content:
            yield TextDelta(response.message.content)
        yield Done(response)


_allowed: bool | None = None


def allow_model_requests(allowed: bool) -> None:
    """Allow or block requests to real (non-loopback) model endpoints in this process.

    The test suite blocks them; the environment variable ``PODIUM_BLOCK_MODEL_REQUESTS=1`` does the same for
    child processes.
    """
    global _allowed
    _allowed = allowed


def check_allowed(base_url: str | None) -> None:
    """Raise :class:`ModelRequestsBlocked` if requests to ``base_url`` are blocked.

    Loopback endpoints (a local server standing in for an API) are always allowed.
    """
    allowed = _allowed
    if allowed is None:
        allowed = os.environ.get("PODIUM_BLOCK_MODEL_REQUESTS", "") not in ("1", "true", "yes")
    if allowed:
        return
    host = urlparse(base_url or "https://api.openai.com/v1").hostname or ""
    if host in ("127.0.0.1", "localhost", "::1"):
        return
    raise ModelRequestsBlocked(
        f"requests to real models are blocked here (tests); refused {base_url or 'the default OpenAI endpoint'}. "
        "Use podium.testing's FunctionModel, ScriptedModel or ReplayModel."
    )
