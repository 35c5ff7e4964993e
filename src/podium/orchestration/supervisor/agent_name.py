"""Agent names in message text, for providers that ignore the ``name`` field of messages.

Several agents write into one conversation, and a model that does not read ``name`` cannot tell whose answer it
sees. :func:`with_agent_name` wraps a model so that every named AI message it is shown carries its name in the
text (``<name>research_expert</name><content>...</content>``) and its own replies come back without the tags.
``create_supervisor(..., include_agent_name="inline")`` applies it to the supervisor's model.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Literal, TypeVar

from podium.errors import UsageError
from podium.messages import AIMessage, Message
from podium.models.base import Done, Model, ModelRequest, ModelResponse, StreamEvent

__all__ = ["AgentNameMode", "add_inline_agent_name", "remove_inline_agent_name", "with_agent_name"]

AgentNameMode = Literal["inline"]
"""How agent names are shown to a model: ``inline`` writes them into the message text with XML-style tags."""

M = TypeVar("M", bound=Message)

_NAME = re.compile(r"<name>(.*?)</name>", re.DOTALL)
_CONTENT = re.compile(r"<content>(.*?)</content>", re.DOTALL)


def add_inline_agent_name(message: M) -> M:
    """``message`` with its agent's name in its text, when it is a named AI message (others are returned as is).

    ``AIMessage("Hello", name="assistant")`` becomes ``AIMessage("<name>assistant</name><content>Hello</content>",
    name="assistant")``.
    """
    if not isinstance(message, AIMessage) or not message.name:
        return message
    return replace(message, content=f"<name>{message.name}</name><content>{message.content}</content>")


def remove_inline_agent_name(message: M) -> M:
    """``message`` without the name and content tags :func:`add_inline_agent_name` adds (others as they are)."""
    if not isinstance(message, AIMessage) or not message.content:
        return message
    content = _CONTENT.search(message.content)
    if _NAME.search(message.content) is None or content is None:
        return message
    return replace(message, content=content.group(1))


class _AgentNameModel(Model):
    """A model shown agent names inline, whose replies come back without them."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.name = model.name

    def _request(self, request: ModelRequest) -> ModelRequest:
        return replace(request, messages=[add_inline_agent_name(m) for m in request.messages])

    def _response(self, response: ModelResponse) -> ModelResponse:
        return replace(response, message=remove_inline_agent_name(response.message))

    async def reply(self, request: ModelRequest) -> ModelResponse:
        return self._response(await self.model.reply(self._request(request)))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in self.model.stream(self._request(request)):
            yield Done(response=self._response(event.response)) if isinstance(event, Done) else event


def with_agent_name(model: Model, agent_name_mode: AgentNameMode) -> Model:
    """``model``, shown the names of the agents whose messages it reads (see the module docstring).

    Raises:
        UsageError: an unknown mode.
    """
    if agent_name_mode != "inline":
        raise UsageError(f"agent_name_mode must be 'inline', not {agent_name_mode!r}")
    return _AgentNameModel(model)
