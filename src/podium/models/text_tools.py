"""Tool calls written as text, for models that do not fill the API's tool-call field (docs/models.md).

Small and local models often write a call as JSON in their reply: bare, in a fenced code block, or between
``<tool_call>`` tags. A model's ``tool_format`` says what to expect:

- ``native`` (the default): tools go in the API's ``tools`` field; a reply whose text is *obviously* a call of a
  known tool (the whole reply is the call, fenced or not, or it holds ``<tool_call>`` tags) is still taken as one.
- ``text``: the tools and their JSON schemas are described in the system prompt with the format to use, earlier
  calls and results are shown as text (``<tool_call>`` / ``<tool_response>``), nothing goes in ``tools``, and the
  reply is read with the same tolerant parser (which then also takes calls of unknown tools, so the model hears
  that the tool does not exist).

A call is an object with the tool's ``name`` and its ``arguments`` (or ``parameters``, ``args``, ``input``), or
``{"function": {"name": ..., "arguments": ...}}``; the arguments may be an object or its JSON text. Several calls
are several tagged objects, or a JSON list.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Collection, Iterator
from dataclasses import replace
from typing import Any, Literal

from podium.messages import AIMessage, HumanMessage, Message, SystemMessage, ToolCall, ToolMessage
from podium.models.base import ModelRequest, ModelResponse

__all__ = ["TOOL_FORMATS", "ToolFormat", "parse_tool_calls", "read_tool_calls", "text_tools_request"]

ToolFormat = Literal["native", "text"]
"""How a model calls tools: the API's tool-call field, or JSON written in its reply."""

TOOL_FORMATS: tuple[str, ...] = ("native", "text")
"""The tool formats a setting can name (``PODIUM_TOOL_FORMAT``)."""

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL | re.IGNORECASE)
_FENCED = re.compile(r"```[ \t]*(?:json|tool_call|tool)?[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_PYTHON = {"true": "True", "false": "False", "null": "None"}
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "tool_input")


def _loads(text: str) -> Any:
    """JSON, forgiving what small models get wrong most: trailing commas, and Python's quotes and constants."""
    text = text.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    fixed = re.sub(r",\s*([}\]])", r"\1", text)
    try:
        return json.loads(fixed)
    except json.JSONDecodeError:
        pass
    import ast

    python = re.sub(r"\b(true|false|null)\b", lambda m: _PYTHON[m.group(1)], fixed)
    try:
        return ast.literal_eval(python)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _call(data: Any, known: Collection[str] | None) -> ToolCall | None:
    """The call an object describes, or ``None`` when it is not shaped as one (or names an unknown tool)."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("function"), dict) and "name" not in data:
        data = data["function"]
    name = data.get("name", data.get("tool"))
    if not isinstance(name, str) or not name.strip():
        return None
    name = name.strip()
    arguments: Any = next((data[k] for k in _ARGUMENT_KEYS if k in data), None)
    extra = set(data) - {"name", "tool", "id", "type", *_ARGUMENT_KEYS}
    if known is not None and name not in known:
        return None
    if arguments is None:
        if extra:  # {"name": ..., "city": ...}: flat arguments, only for a tool known to exist
            if known is None:
                return None
            arguments = {k: data[k] for k in extra}
        else:
            arguments = {}
    elif extra:
        return None  # some other object that happens to have a name
    if isinstance(arguments, str):
        parsed = _loads(arguments) if arguments.strip() else {}
        text = arguments if parsed is None else json.dumps(parsed, ensure_ascii=False)
    else:
        text = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=f"call_{uuid.uuid4().hex[:12]}", name=name, arguments=text)


def _calls(payload: str, known: Collection[str] | None) -> list[ToolCall] | None:
    data = _loads(payload)
    items = data if isinstance(data, list) else [data]
    calls = [_call(item, known) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def parse_tool_calls(text: str, known: Collection[str] | None = None) -> tuple[str, list[ToolCall]] | None:
    """The tool calls written in ``text`` and the text left around them, or ``None`` when it holds none.

    Args:
        text: a model's reply.
        known: the tools that exist: only their calls count, and a bare or fenced call must be the whole reply
            (what "obviously a tool call" means in native mode). ``None`` (text mode) takes any call-shaped object
            and fenced calls among prose.
    """
    if not text.strip():
        return None
    tagged = list(_TAGGED.finditer(text))
    if tagged:
        calls: list[ToolCall] = []
        for match in tagged:
            found = _calls(match.group(1), known)
            if found is None:
                return None
            calls.extend(found)
        return _TAGGED.sub("", text).strip(), calls
    fenced = list(_FENCED.finditer(text))
    rest = _FENCED.sub("", text).strip()
    if fenced:
        calls = []
        for match in fenced:
            found = _calls(match.group(1), known)
            if found is None:
                return None
            calls.extend(found)
        return rest, calls
    found = _calls(text, known)
    return ("", found) if found else None


def read_tool_calls(response: ModelResponse, request: ModelRequest, *, text_format: bool) -> ModelResponse:
    """``response`` with the tool calls its text holds moved to ``tool_calls`` (unchanged when there are none).

    In native mode (``text_format`` false) only an obvious call of one of the request's tools counts.
    """
    message = response.message
    if message.tool_calls or not request.tools or not message.content:
        return response
    known = None if text_format else {t.name for t in request.tools}
    parsed = parse_tool_calls(message.content, known)
    if parsed is None:
        return response
    text, calls = parsed
    metadata = {**message.metadata, "podium.text_tool_calls": True}
    found = AIMessage(content=text, tool_calls=calls, name=message.name, metadata=metadata)
    return replace(response, message=found)


def _instructions(request: ModelRequest) -> str:
    lines = [
        "You can call tools. To call one, reply with a JSON object between <tool_call> and </tool_call> tags, "
        "and nothing else:",
        '<tool_call>{"name": "<tool name>", "arguments": {<the arguments>}}</tool_call>',
        "To call several tools, write one tagged object per call. The results come back between <tool_response> "
        "tags; then answer the user in plain text, without tags.",
        "",
        "Tools:",
    ]
    for spec in request.tools:
        lines.append(f"- {spec.name}: {spec.description}".rstrip(": "))
        lines.append(f"  arguments (JSON schema): {json.dumps(spec.parameters, ensure_ascii=False)}")
    return "\n".join(lines)


def _as_text(messages: list[Message]) -> Iterator[Message]:
    for message in messages:
        if isinstance(message, AIMessage) and message.tool_calls:
            written = [
                f'<tool_call>{{"name": {json.dumps(c.name)}, "arguments": {c.arguments or "{}"}}}</tool_call>'
                for c in message.tool_calls
            ]
            content = "\n".join([message.content, *written]).strip()
            yield AIMessage(content=content, name=message.name, metadata=message.metadata)
        elif isinstance(message, ToolMessage):
            status = ' error="true"' if message.is_error else ""
            body = f'<tool_response name="{message.name}"{status}>\n{message.content}\n</tool_response>'
            yield HumanMessage(content=body)
        else:
            yield message


def text_tools_request(request: ModelRequest) -> ModelRequest:
    """The request for a model that calls tools in text: the tools described in the system prompt (none in the
    ``tools`` field), earlier calls and results written as text."""
    if not request.tools:
        return request
    messages = list(_as_text(request.messages))
    guide = _instructions(request)
    if messages and isinstance(messages[0], SystemMessage):
        messages[0] = SystemMessage(content=f"{messages[0].content}\n\n{guide}", metadata=messages[0].metadata)
    else:
        messages.insert(0, SystemMessage(content=guide))
    settings = replace(request.settings, tool_choice=None, parallel_tool_calls=None)
    return ModelRequest(messages=messages, tools=[], settings=settings)
