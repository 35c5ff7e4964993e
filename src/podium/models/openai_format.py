"""The OpenAI chat-completions wire format: Podium's messages, tools and requests as the ``openai`` package types them.

One conversion, shared by the OpenAI adapter (:mod:`podium.models.openai`), the replay model's cassettes
(:mod:`podium.models.replay`) and the server's OpenAI-compatible endpoint. The types are the ``openai`` package's own
request ``TypedDict`` and response models, named for the type checker only: at run time the params are plain dicts,
so this module does not import ``openai``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from podium.errors import InvalidData
from podium.messages import AIMessage, HumanMessage, Message, SystemMessage, ToolCall, ToolMessage, Usage

if TYPE_CHECKING:
    from openai.types import CompletionUsage
    from openai.types.chat import (
        ChatCompletionAssistantMessageParam,
        ChatCompletionFunctionToolParam,
        ChatCompletionMessageFunctionToolCallParam,
        ChatCompletionMessageParam,
        ChatCompletionToolChoiceOptionParam,
        ChatCompletionUserMessageParam,
    )

    from podium.models.base import ModelRequest
    from podium.tools import ToolSpec

__all__ = ["from_openai", "request_to_openai", "to_openai", "tool_to_openai", "usage_from"]


def to_openai(message: Message) -> ChatCompletionMessageParam:
    """The chat-completions form of ``message`` (``metadata``, artifacts and error flags stay behind)."""
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, HumanMessage):
        user: ChatCompletionUserMessageParam = {"role": "user", "content": message.content}
        if message.name:
            user["name"] = message.name
        return user
    if isinstance(message, AIMessage):
        reply: ChatCompletionAssistantMessageParam = {
            "role": "assistant",
            "content": message.content if (message.content or not message.tool_calls) else None,
        }
        if message.name:
            reply["name"] = message.name
        if message.tool_calls:
            reply["tool_calls"] = [_call_to_openai(c) for c in message.tool_calls]
        return reply
    return {"role": "tool", "content": message.content, "tool_call_id": message.tool_call_id}


def _call_to_openai(call: ToolCall) -> ChatCompletionMessageFunctionToolCallParam:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def from_openai(data: Mapping[str, Any]) -> Message:
    """Read a message from its chat-completions form (as a client sends it, or a cassette holds it).

    Raises:
        InvalidData: the role is unknown or a required field is missing.
    """
    role = data.get("role")
    content = data.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    text = str(content or "")
    if role in ("system", "developer"):
        return SystemMessage(content=text)
    if role == "user":
        return HumanMessage(content=text, name=data.get("name"))
    if role == "assistant":
        calls = []
        for c in data.get("tool_calls") or ():
            fn = c.get("function") or {}
            arguments = fn.get("arguments")
            calls.append(
                ToolCall(
                    id=c.get("id", ""), name=fn.get("name", ""), arguments="{}" if arguments is None else arguments
                )
            )
        return AIMessage(content=text, tool_calls=calls, name=data.get("name"))
    if role == "tool":
        if "tool_call_id" not in data:
            raise InvalidData("a tool message needs a tool_call_id")
        return ToolMessage(content=text, tool_call_id=data["tool_call_id"], name=data.get("name", ""))
    raise InvalidData(f"unknown message role {role!r}")


def tool_to_openai(spec: ToolSpec) -> ChatCompletionFunctionToolParam:
    """The chat-completions ``tools`` entry of ``spec``."""
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": spec.parameters},
    }


def request_to_openai(request: ModelRequest) -> dict[str, Any]:
    """The chat-completions request body of ``request``, without the model name (``create``'s keyword arguments)."""
    body: dict[str, Any] = {"messages": [to_openai(m) for m in request.messages]}
    if request.tools:
        body["tools"] = [tool_to_openai(t) for t in request.tools]
    s = request.settings
    if s.temperature is not None:
        body["temperature"] = s.temperature
    if s.max_tokens is not None:
        body["max_tokens"] = s.max_tokens
    if s.parallel_tool_calls is not None and request.tools:
        body["parallel_tool_calls"] = s.parallel_tool_calls
    if s.tool_choice is not None and request.tools:
        choice: ChatCompletionToolChoiceOptionParam
        if s.tool_choice in ("auto", "required", "none"):
            choice = s.tool_choice  # type: ignore[assignment]  # narrowed by the test above
        else:
            choice = {"type": "function", "function": {"name": s.tool_choice}}
        body["tool_choice"] = choice
    if s.response_format is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": s.response_format},
        }
    body.update(s.extra)
    return body


def usage_from(raw: CompletionUsage | None) -> Usage:
    """Podium's usage of one request (a server that reports none counts the request alone)."""
    if raw is None:
        return Usage(requests=1)
    return Usage(int(raw.prompt_tokens or 0), int(raw.completion_tokens or 0), 1)
