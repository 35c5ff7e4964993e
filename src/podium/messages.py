"""Message types shared by every orchestration, their JSON form and the OpenAI chat-completions wire format.

Each message is a small dataclass with a literal ``kind`` tag, so one discriminated adapter round-trips any history
to JSON (:func:`message_to_dict` / :func:`message_from_dict`) and another function converts it to and from the wire
format (:func:`to_openai` / :func:`from_openai`). ``metadata`` carries data that travels with a message but is
never sent to a model (side-channel notes, UI hints).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from podium import _codec
from podium.errors import InvalidData

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = [
    "AIMessage",
    "HumanMessage",
    "MESSAGE_TYPES",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "ToolSignal",
    "Usage",
    "message_from_dict",
    "message_to_dict",
    "order_tool_results",
    "valid_history",
    "well_formed",
]


@dataclass(slots=True)
class Usage:
    """Token usage of one or more model replies."""

    input_tokens: int = 0
    """Tokens in the prompts."""
    output_tokens: int = 0
    """Tokens in the replies."""
    requests: int = 0
    """Number of model requests counted."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
        )

    def to_dict(self) -> dict[str, int]:
        """The JSON form (every count written, zeros too)."""
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "requests": self.requests}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        """Read the JSON form.

        Raises:
            InvalidData: the data is not token usage.
        """
        usage: Usage = _codec.load(data, _codec.adapter(Usage), "Usage")
        return usage


@dataclass(slots=True, kw_only=True)
class SystemMessage(_codec.Tagged):
    """Instructions for the model."""

    content: str
    """The instruction text."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Data that travels with the message and is never sent to a model."""
    kind: Literal["system"] = "system"
    """Tag for the JSON form."""


@dataclass(slots=True, kw_only=True)
class HumanMessage(_codec.Tagged):
    """A message written by a person (or by a parent agent speaking as the user)."""

    content: str
    """The text."""
    name: str | None = None
    """Optional name of the speaker."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Data that travels with the message and is never sent to a model."""
    kind: Literal["human"] = "human"
    """Tag for the JSON form."""


@dataclass(slots=True, kw_only=True)
class ToolCall:
    """A model's request to call one tool."""

    id: str
    """Identifier the tool result must echo."""
    name: str
    """Name of the tool to call."""
    arguments: str = "{}"
    """The arguments exactly as the model wrote them (a JSON object, possibly invalid)."""

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict.

        Raises:
            ValueError: the model's text is not a JSON object.
        """
        text = self.arguments.strip() or "{}"
        value = json.loads(text)
        if not isinstance(value, dict):
            raise InvalidData(f"expected a JSON object, got {type(value).__name__}")
        return value


@dataclass(slots=True, kw_only=True)
class AIMessage(_codec.Tagged):
    """A model's reply: text, tool calls, or both."""

    content: str = ""
    """The text of the reply ("" when the model only called tools)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """Tools the model asks to call, in order."""
    name: str | None = None
    """Name of the agent that produced the reply."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Data that travels with the message and is never sent to a model."""
    kind: Literal["ai"] = "ai"
    """Tag for the JSON form."""


@dataclass(slots=True, kw_only=True)
class ToolSignal:
    """What a tool's result asks of the agent that called the tool, beyond its content.

    Task handlers (see :mod:`podium.orchestration.tasks`) return results that end a task, pass a message on or
    address someone; the signal carries that request with the result, typed and stored with it, so a resumed run
    acts on it exactly as the first run did. Every field is optional: an empty signal asks nothing.
    """

    end: Literal["task", "all"] | None = None
    """``"task"``: the result ends the calling task with the message's ``value``; ``"all"``: it ends every task up
    the chain (a final result)."""
    passed: bool = False
    """The message is passed on rather than answered (to ``recipient`` when set)."""
    pass_input: bool = False
    """What is passed on is the task's input rather than the current message."""
    recipient: str | None = None
    """Who the result is addressed to (a task's name)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """Calls the result asks another responder to handle (often a sub-task)."""


@dataclass(slots=True, kw_only=True)
class ToolMessage(_codec.Tagged):
    """The result of one tool call, answering the call with the same ``tool_call_id``."""

    content: str
    """The result as text (what the model sees)."""
    tool_call_id: str
    """The id of the call this answers."""
    name: str = ""
    """The tool's name."""
    is_error: bool = False
    """True when the content reports an error the model should correct."""
    artifact: Any = None
    """A result for the user interface (a document, a table), kept out of the model's view."""
    value: Any = None
    """The result as JSON data when the tool returned data (what code acting on the result reads, such as a task's
    value, while the model reads ``content``); ``None`` for a text result."""
    signal: ToolSignal | None = None
    """What the result asks of the calling agent (ending a task, passing a message on), if anything."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Data that travels with the message and is never sent to a model."""
    kind: Literal["tool"] = "tool"
    """Tag for the JSON form."""


Message: TypeAlias = SystemMessage | HumanMessage | AIMessage | ToolMessage
"""Any message of a conversation."""

MESSAGE_TYPES: tuple[type[Message], ...] = (SystemMessage, HumanMessage, AIMessage, ToolMessage)
"""The variants of :data:`Message` (the one place a new one is added)."""


def well_formed(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate (half an emoji, a file name decoded with ``os.fsdecode``) replaced
    by U+FFFD, so that it can be written as UTF-8; ``text`` itself when it has none (the common case, checked first).
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def message_to_dict(message: Message, *, compact: bool = False) -> dict[str, Any]:
    """The JSON-ready form of ``message`` (round-trips through :func:`message_from_dict`).

    Data in ``metadata``, ``value`` and ``artifact`` that JSON cannot hold exactly is written as JSON reads it back,
    without a warning: a tuple or set as a list, a key that is not text as its text (``1`` as ``"1"``), a date or
    time as ISO 8601 text, NaN and infinities as null, bytes as their UTF-8 text, a Decimal, UUID or path as its
    text, an enum as its value, a dataclass or pydantic model as an object, and anything else as its ``str``.

    Args:
        message: the message.
        compact: leave fields at their default out, as stored rows do.

    Raises:
        InvalidData: a field of a fixed type holds a value of another (``content`` that is not text, a tool call
            that is not a :class:`ToolCall`), or bytes are not UTF-8 text: the message says which field.
    """
    return _codec.dump(message, _messages(), compact=compact)


def message_from_dict(data: dict[str, Any]) -> Message:
    """Read a message from its JSON form.

    Raises:
        InvalidData: the data is not a message.
    """
    message: Message = _codec.load(data, _messages(), "message")
    return message


def _messages() -> TypeAdapter[Message]:
    """The adapter of :data:`Message`: the variants told apart by ``kind``."""
    return _codec.union_adapter(MESSAGE_TYPES)


def order_tool_results(messages: list[Message]) -> list[Message]:
    """``messages`` with each block of tool results in the order of the calls they answer.

    Concurrent tool calls are stored as they finish; strict providers want the results in call order.
    """
    out: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        out.append(message)
        index += 1
        if isinstance(message, AIMessage) and len(message.tool_calls) > 1:
            end = index
            while end < len(messages) and isinstance(messages[end], ToolMessage):
                end += 1
            position = {call.id: n for n, call in enumerate(message.tool_calls)}
            block = messages[index:end]
            block.sort(key=lambda m: position.get(m.tool_call_id, len(position)) if isinstance(m, ToolMessage) else 0)
            out.extend(block)
            index = end
    return out


def valid_history(messages: list[Message]) -> list[Message]:
    """``messages`` as a strict provider accepts them: every tool call answered by one result, right after it, in order.

    A history read back from the store may hold calls without answers (a run that failed, was cancelled or hit a
    limit in the middle of a tool round) or results without their call; those are left out, and so is a reply with
    neither text nor calls. Nothing is changed in the store: this is the view a model is shown.
    """
    out: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if isinstance(message, ToolMessage):
            continue  # an orphan: its call is not right before it
        if not isinstance(message, AIMessage) or not message.tool_calls:
            if not isinstance(message, AIMessage) or message.content:
                out.append(message)  # an empty reply (a model that said nothing) is left out
            continue
        results: dict[str, list[ToolMessage]] = {}
        while index < len(messages) and isinstance(messages[index], ToolMessage):
            result = messages[index]
            assert isinstance(result, ToolMessage)
            results.setdefault(result.tool_call_id, []).append(result)
            index += 1
        # results pair with calls in order, so two calls sharing one id keep one result each
        paired = [(c, results[c.id].pop(0)) for c in message.tool_calls if results.get(c.id)]
        if len(paired) != len(message.tool_calls):
            if not paired and not message.content:
                continue
            kept = [c for c, _ in paired]
            message = AIMessage(content=message.content, tool_calls=kept, name=message.name, metadata=message.metadata)
        out.append(message)
        out.extend(r for _, r in paired)
    return out
