"""Pieces the supervisor and the swarm share: prompts, budgets, and a ReAct agent's loop over a given history.

:class:`podium.ReactAgent` answers one input on its own history. A supervisor needs the same loop on a history it
builds (the shared conversation, or a task), so :func:`run_react` runs a ``ReactAgent``'s model, tools, prompt and
limits over any message list, with the same journaled steps and errors.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar, cast

from podium.agents.react import ReactAgent
from podium.errors import AgentError
from podium.messages import AIMessage, HumanMessage, Message, SystemMessage, ToolCall, ToolMessage
from podium.models.base import Model, ModelRequest, ModelSettings
from podium.orchestration.supervisor.handoff import canonical_calls
from podium.runtime.context import RunContext

__all__ = [
    "Prompt",
    "compact_rounds",
    "maybe_await",
    "record",
    "run_react",
    "structured_response",
    "system_prompt",
]

T = TypeVar("T")
M = TypeVar("M", bound=Message)

Prompt = str | Callable[[list[Message]], str | None] | None
"""A system prompt, or a function of the history that returns one."""


def system_prompt(prompt: Prompt, messages: list[Message]) -> list[Message]:
    """The system message list for ``prompt`` (empty when there is none)."""
    text = prompt(messages) if callable(prompt) else prompt
    return [SystemMessage(content=text)] if text else []


async def maybe_await(value: T | Awaitable[T]) -> T:
    """``value``, awaited if it is awaitable (hooks may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


async def record(ctx: RunContext[Any], message: M) -> M:
    """Record ``message`` in ``ctx``'s history; on a re-execution, the recorded one (of the same type)."""
    return cast(M, await ctx.add_message(message))


async def structured_response(
    ctx: RunContext[Any], model: Model, name: str, messages: list[Message], settings: ModelSettings, schema: Any
) -> Any:
    """Ask ``model`` for a reply following ``schema`` (a pydantic model or a JSON schema) and return it parsed.

    The reply is recorded apart from the conversation (its own namespace) and sent to the client as an artifact.

    Raises:
        AgentError: the reply does not fit the schema.
    """
    is_model = isinstance(schema, type)
    request = ModelRequest(
        messages=messages,
        settings=replace(settings, response_format=schema.model_json_schema() if is_model else schema),
    )
    child = ctx.child("structured_response", namespace=f"{ctx.namespace}#structured")
    text = (await child.call_model(model, request, name=name)).message.content
    try:
        value: Any = schema.model_validate_json(text) if is_model else json.loads(text)
    except ValueError as exc:
        raise AgentError(f"{name!r}: the structured response does not fit its schema: {exc}") from None
    await ctx.artifact(value.model_dump(mode="json") if is_model else value, title="structured_response")
    return value


def _call_text(call: ToolCall) -> str:
    return _call_line(call.name, call.arguments)


@functools.lru_cache(maxsize=4096)
def _call_line(name: str, arguments: str) -> str:
    """``name(a=1, b="x")`` for a call's JSON arguments (folded rounds are written again at every model call of the
    agent, so each call's line is made once)."""
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
        if not isinstance(parsed, dict):
            raise ValueError("not an object")
        text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in parsed.items())
    except ValueError:
        text = arguments
    return f"{name}({text})"


def compact_rounds(messages: list[Message], start: int, keep: int) -> list[Message]:
    """``messages`` with the tool rounds after ``start``, all but the last ``keep``, folded into one line each.

    A round is a model reply with tool calls and the results answering it. Folded rounds become a "Done so far"
    note appended to the last human message before ``start`` (the task), so the history stays valid for strict
    providers and keeps every call and result, in a few characters instead of a message pair each.
    """
    if sum(1 for m in messages[start:] if isinstance(m, AIMessage)) <= keep:  # the common case: nothing to fold
        return messages
    rounds: list[list[Message]] = []
    for message in messages[start:]:
        if isinstance(message, AIMessage) or not rounds:
            rounds.append([message])
        else:
            rounds[-1].append(message)
    folded = rounds[: max(len(rounds) - keep, 0)]
    if not folded or not all(isinstance(r[0], AIMessage) and r[0].tool_calls for r in folded):
        return messages
    results = {m.tool_call_id: m.content for r in folded for m in r if isinstance(m, ToolMessage)}
    lines = [
        f"{_call_text(call)} -> {results.get(call.id, '(no result)')}"
        for r in folded
        for call in r[0].tool_calls  # type: ignore[union-attr]
    ]
    head = list(messages[:start])
    note = "Done so far:\n" + "\n".join(lines)
    if head and isinstance(head[-1], HumanMessage):
        head[-1] = replace(head[-1], content=f"{head[-1].content}\n\n{note}")
    else:
        head.append(HumanMessage(content=note))
    return head + [m for r in rounds[len(folded) :] for m in r]


async def run_react(
    ctx: RunContext[Any],
    agent: ReactAgent,
    messages: list[Message],
    *,
    keep_rounds: int | None = None,
) -> list[Message]:
    """Run ``agent``'s loop (:meth:`ReactAgent.loop`) on a history the supervisor built; return what it added.

    Replies join the history with canonical tool-call arguments (compact JSON, docs/migrating.md). With
    ``keep_rounds``, the model is shown only the latest ``keep_rounds`` tool rounds in full and the earlier ones
    folded into a note (:func:`compact_rounds`); what is recorded is the full history either way.

    Raises:
        StepLimitExceeded: ``agent.max_steps`` model calls without an answer.
        ToolRetriesExceeded: more consecutive all-failing tool rounds than ``agent.max_tool_retries``.
    """
    start = len(messages)
    return await agent.loop(
        ctx,
        messages,
        shown=None if keep_rounds is None else (lambda view: compact_rounds(view, start, keep_rounds)),
        after_model=canonical_calls,
    )
