"""Journaled execution of model calls and tool calls (what :class:`~podium.runtime.RunContext` does for agents).

A model reply and each tool result are recorded under the step key the context gives them; when the key is
already in the journal the recorded message is returned instead of calling again.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from podium.errors import ModelError, ModelRetry, Suspended, UsageError
from podium.events import Expectation, Interrupt, MessageAdded, TokenDelta, ToolStarted
from podium.messages import AIMessage, ToolCall, ToolMessage, Usage, well_formed
from podium.models.base import Done, Model, ModelRequest, ModelResponse, TextDelta, cut_off, estimate_usage
from podium.runtime._values import storable
from podium.tools import Injector, Tool, ToolArgumentsError, ToolReturn, bounded, result_to_text

if TYPE_CHECKING:
    from podium.runtime.journal import Budget, RunState

__all__ = ["approval", "call_model", "call_tools"]

_log = logging.getLogger("podium.runtime")


class ToolCallContext(Injector, Protocol):
    """What running a tool call needs of the context it runs in (a :class:`~podium.runtime.context.RunContext`)."""

    async def ask(self, prompt: str, *, expectation: Expectation | None = None, data: Any = None) -> str:
        """Ask the human (see :meth:`RunContext.ask <podium.runtime.context.RunContext.ask>`)."""
        ...


ToolContext = Callable[[ToolCall, str], ToolCallContext]
"""Makes the context a tool call runs in, from the call and its step key."""


_unmetered: set[str] = set()
"""Models already warned of reporting no usage (the warning is given once per model and process)."""


def _counts_tokens(state: RunState, budgets: Sequence[Budget]) -> bool:
    """True when the run, or a part of it, has a token limit."""
    return state.limits.max_tokens is not None or any(b.limits.max_tokens is not None for b in budgets)


def _estimated(model: Model, request: ModelRequest, reply: AIMessage) -> Usage:
    if model.name not in _unmetered:
        _unmetered.add(model.name)
        _log.warning(
            "model %r reports no token usage; token limits count it at an estimate of four characters a token",
            model.name,
        )
    return estimate_usage(request, reply)


def _cut_off_text(model: Model, request: ModelRequest) -> str:
    cap = request.settings.max_tokens or getattr(model, "max_tokens", None)
    limit = f" of {cap} tokens" if isinstance(cap, int) else ""
    return (
        f"the reply of model {model.name!r} was cut off at its length limit{limit} (finish_reason 'length'), so it "
        "is no answer; raise the cap: PODIUM_MAX_TOKENS, or the agent's ModelSettings(max_tokens=...)"
    )


async def call_model(
    state: RunState,
    model: Model,
    request: ModelRequest,
    *,
    key: str,
    path: tuple[str, ...],
    namespace: str,
    name: str | None,
    budgets: Sequence[Budget] = (),
) -> ModelResponse:
    """Ask ``model`` once per run under ``key``: the reply is journaled (in ``namespace``) or replayed.

    Raises:
        LimitReached: the run's model-call or token budget is spent, or one of ``budgets`` (the calling context's
            and its ancestors' own) is.
        ModelError: a streaming model ended without its final response, or the reply was cut off by the length
            limit with no tool call in it (text cut short is never an answer; it is counted, not recorded).

    When a token limit applies and the model reports no usage (a server that ignores ``include_usage``), the call
    is counted at an estimate of four characters a token, with a warning once per model, so the limit still holds.
    """
    done = state.journal.get(key)
    if isinstance(done, MessageAdded) and isinstance(done.message, AIMessage):
        usage = done.usage or Usage()
        state.count_model_call(usage)
        for budget in budgets:
            budget.count(usage)
        return ModelResponse(message=done.message, usage=usage)
    state.check_limits()
    for budget in budgets:
        budget.check()
    await state.flush(wait=False)  # the round before this call is stored (its sync runs during the call)
    if state.stream_tokens:
        response = None
        async for item in model.stream(request):
            if isinstance(item, TextDelta):
                await state.publish(TokenDelta(text=item.text, path=path, namespace=namespace))
            elif isinstance(item, Done):
                response = item.response
        if response is None:
            raise ModelError(f"model {model.name!r} ended its stream without a Done event")
    else:
        response = await model.reply(request)
    if name is not None:
        response.message.name = name
    reply = response.message
    reply.content = well_formed(reply.content)  # half an emoji must not make the reply unstorable
    for call in reply.tool_calls:
        call.arguments = well_formed(call.arguments)
    if response.usage.total_tokens == 0 and _counts_tokens(state, budgets):
        response.usage = _estimated(model, request, reply)
    state.count_model_call(response.usage)
    for budget in budgets:
        budget.count(response.usage)
    if cut_off(reply) and not reply.tool_calls:  # spent, but never an answer (a cut-off call goes to its agent)
        raise ModelError(_cut_off_text(model, request))
    await state.record(
        MessageAdded(message=response.message, namespace=namespace, usage=response.usage, key=key, path=path)
    )
    return response


async def call_tools(
    state: RunState,
    tools: Mapping[str, Tool],
    calls: Sequence[ToolCall],
    *,
    keys: Sequence[str],
    path: tuple[str, ...],
    namespace: str,
    tool_context: ToolContext,
    handle_errors: bool,
) -> list[ToolMessage]:
    """Run tool calls concurrently, each once per run under its key; one result per call, in the calls' order.

    Questions to the human raised by several calls are gathered into one :class:`Suspended` after the others finish.
    """
    # the model's reply that asked for them is stored before they run: synced first, unless no call can change
    # anything (read-only tools, or names of no tool): then committed, its sync running beside them
    if len(calls) == 1:  # the common case: no tasks to spawn
        call = calls[0]
        await state.flush(wait=not getattr(tools.get(call.name), "read_only", True))
        return [await _call_tool(state, tools, call, keys[0], path, namespace, tool_context, handle_errors)]
    await state.flush(wait=not all(getattr(tools.get(call.name), "read_only", True) for call in calls))
    running = len(calls)

    async def one(call: ToolCall, key: str) -> ToolMessage:
        nonlocal running
        try:
            message = await _call_tool(state, tools, call, key, path, namespace, tool_context, handle_errors)
        finally:
            running -= 1
        if running and state.pending:  # done while others of its round run: stored now, never run again
            await state.flush(wait=False)
        return message

    results = await asyncio.gather(*(one(c, k) for c, k in zip(calls, keys, strict=True)), return_exceptions=True)
    interrupts: list[Interrupt] = []
    messages: list[ToolMessage] = []
    for result in results:
        if isinstance(result, Suspended):
            interrupts.extend(result.interrupts)
        elif isinstance(result, BaseException):
            raise result
        else:
            messages.append(result)
    if interrupts:
        raise Suspended(interrupts)
    return messages


async def _call_tool(
    state: RunState,
    tools: Mapping[str, Tool],
    call: ToolCall,
    key: str,
    path: tuple[str, ...],
    namespace: str,
    tool_context: ToolContext,
    handle_errors: bool,
) -> ToolMessage:
    done = state.journal.get(key)
    if isinstance(done, MessageAdded) and isinstance(done.message, ToolMessage):
        return done.message
    message = await _execute_tool(state, tools, call, key, path, tool_context, handle_errors)
    await state.record(MessageAdded(message=message, namespace=namespace, key=key, path=path))
    return message


async def _execute_tool(
    state: RunState,
    tools: Mapping[str, Tool],
    call: ToolCall,
    key: str,
    path: tuple[str, ...],
    tool_context: ToolContext,
    handle_errors: bool,
) -> ToolMessage:
    def error(text: str) -> ToolMessage:
        return ToolMessage(content=text, tool_call_id=call.id, name=call.name, is_error=True)

    tool = tools.get(call.name)
    if tool is None:
        available = ", ".join(sorted(tools)) or "none"
        return error(f"Unknown tool '{call.name}'. Available tools: {available}. Call one of these instead.")
    try:
        kwargs = tool.validate(call.arguments)
    except ToolArgumentsError as exc:
        return error(str(exc))
    context: ToolCallContext | None = None
    if tool.approval or tool.takes_context or type(tool).run is not Tool.run:  # a plain tool taking none sees none
        context = tool_context(call, key)
    edited = ""
    if context is not None and tool.approval:
        decided = await approval(context, tool, json.loads(call.arguments.strip() or "{}"))  # (valid: checked)
        if isinstance(decided, str):
            return ToolMessage(content=decided, tool_call_id=call.id, name=call.name, metadata={"approval": "rejected"})
        kwargs, edited = decided
    if state.listened():
        await state.publish(ToolStarted(tool_call_id=call.id, name=call.name, path=path))
    try:
        value = await tool.run(context, kwargs)
    except ModelRetry as exc:
        return error(exc.message)
    except Exception as exc:
        if not handle_errors:
            raise
        if isinstance(exc, UsageError):  # the tool's code misused Podium (ctx.step, ctx.artifact ...): a bug to fix
            _log.warning(
                "tool %r misused Podium (%s); the model was told the tool failed, but the tool's code needs a fix",
                call.name,
                exc,
                exc_info=exc,
            )
        return error(f"Error: tool '{call.name}' failed with {type(exc).__name__}: {exc}")
    try:  # a result that cannot be stored as it is (a tuple key, a cycle, bytes, an object) is the tool's fault:
        # the model hears of it, and no store keeps a value another store would give back changed
        if isinstance(value, ToolReturn):
            return ToolMessage(
                content=edited + bounded(well_formed(result_to_text(value.content))),
                tool_call_id=call.id,
                name=call.name,
                artifact=storable(value.artifact, "its artifact"),
                value=storable(value.value, "its value"),
                signal=value.signal,
                metadata=storable(dict(value.metadata), "its metadata"),
            )
        text = bounded(well_formed(result_to_text(value)))
        return ToolMessage(content=edited + text, tool_call_id=call.id, name=call.name)
    except (UsageError, TypeError, ValueError, RecursionError) as exc:  # (RecursionError: nested too deep for JSON)
        _log.warning(
            "tool %r returned a result that cannot be stored (%s); the model was told, but the tool's code needs a fix",
            call.name,
            exc,
        )
        return error(f"Error: tool '{call.name}' returned a result that cannot be serialised ({exc}).")


async def approval(
    ctx: ToolCallContext, tool: Tool, arguments: dict[str, Any], fixed: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], str] | str:
    """Ask the human to approve a call of ``tool`` (one with ``approval``) with ``arguments`` (as the model gave
    them): the keyword arguments to run it with and a note for the model when the human edited them, or the text
    telling the model the call was rejected (not run). ``fixed``: arguments the caller fills itself, neither shown
    nor edited.

    An edit names the arguments to change (``edit: {"amount": 40}``); the others keep the model's values. Edited
    arguments that do not fit the tool's parameters are not run: the question is asked again, saying why.
    """
    expectation = Expectation.approval()
    prompt = f"May I call {tool.name} with {json.dumps(arguments, ensure_ascii=False)}?"
    data = {"approval": {"name": tool.name, "arguments": arguments}}
    question = prompt
    while True:
        said = await ctx.ask(question, expectation=expectation, data=data)
        decision = expectation.fit(said)  # (a context that checks answers has already taken only one that fits)
        if decision is None:
            question = f"{prompt} (Please answer {expectation.hint()}.)"
            continue
        verdict, _, rest = decision.partition(": ")
        if verdict == "approve":
            return tool.validate({**(fixed or {}), **arguments}), ""
        if verdict == "reject":
            why = f" They said: {rest}" if rest else ""
            return f"The user rejected this call of {tool.name}; it was not run.{why}"
        edited = {**arguments, **json.loads(rest)}  # the arguments the human names replace the model's
        try:
            kwargs = tool.validate({**(fixed or {}), **edited})
        except ToolArgumentsError as exc:
            question = f"{prompt} ({exc.problem} Edit them again, approve the call as it was, or reject it.)"
            continue
        shown = json.dumps(edited, separators=(",", ":"), ensure_ascii=False)
        return kwargs, f"(The user changed the arguments to {shown}; this is the result of that call.)\n"
