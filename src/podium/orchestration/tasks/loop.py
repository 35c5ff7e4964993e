"""The Task loop, top to bottom: one invocation of a task over its current pending message.

:func:`execute` runs a task (and, through :func:`_delegate`, its sub-tasks) inside a run context. Every effect goes
through that context (model calls, tool calls, messages, questions to the human, time and kill-switch checks), so
a re-execution after an interrupt or a crash takes the same decisions from the journal and continues where it
stopped. What the invocations of one run execution share lives in a :class:`Scope` that is dropped with the run.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from podium.events import StepRecorded
from podium.messages import Message, ToolCall, Usage
from podium.orchestration.tasks.agent import AgentSession, ResponderAgent
from podium.orchestration.tasks.rules import Mark, loop_period, mark_of, sequence_done
from podium.orchestration.tasks.types import (
    AGENT,
    LLM,
    NO_ANSWER,
    TASK,
    USER,
    AgentState,
    KillSwitch,
    Outcome,
    TaskLimits,
    TaskMessage,
    TaskResult,
    is_no_answer,
)
from podium.runtime.context import RunContext
from podium.tools import Tool

__all__ = ["Scope", "execute"]


class _Task(Protocol):
    """What the loop reads of a :class:`podium.orchestration.tasks.Task` (named here so the loop does not import it)."""

    agent: ResponderAgent
    name: str
    history: Literal["keep", "restart"]
    interactive: bool
    done_if_response: frozenset[str]
    done_if_no_response: frozenset[str]
    done_if_unanswered: frozenset[str]
    done_on_tool: bool | frozenset[str]
    done_sequences: list[tuple[str, ...]]
    allow_null_result: bool
    limits: TaskLimits
    kill_switch: KillSwitch | None
    trace: bool
    clock: Callable[[], float]

    @property
    def responders(self) -> tuple[str, ...]:
        """The responders a step tries, in order."""

    def sub_task(self, name: str) -> _Task:
        """The sub-task named ``name``."""

    def handled_tools(self) -> frozenset[str]:
        """Names of the tools this task's agent or any of its descendants handles."""


@dataclass(slots=True)
class Frame:
    """One task invocation in progress; the stack of them is what ancestors' limits are checked against."""

    task: _Task
    start: Usage
    mark: float
    elapsed: float = 0.0


@dataclass(slots=True)
class Scope:
    """What the task invocations of one run execution share; dropped when the run ends (no global state)."""

    user_default: str | None = None
    """Answer every user responder with this instead of asking."""
    final_tool: Tool | None = None
    """A final-result tool given to the root's model (typed results)."""
    histories: dict[str, list[Message]] = field(default_factory=dict)
    """Agents' histories loaded in this execution, by namespace."""
    frames: list[Frame] = field(default_factory=list)
    """The invocations in progress, outermost first."""


def _used(now: Usage, start: Usage) -> Usage:
    return Usage(
        now.input_tokens - start.input_tokens, now.output_tokens - start.output_tokens, now.requests - start.requests
    )


async def execute(task: _Task, ctx: RunContext[Any], scope: Scope, message: TaskMessage) -> TaskResult:
    """Run ``task`` on ``message`` in ``ctx`` until a done condition or a limit; the result says which."""
    keep = task.history == "keep"
    namespace = f"task:{task.name}" if keep else "task:" + "/".join(ctx.path)
    saved = ctx.namespace
    ctx.namespace = namespace
    frame = Frame(task, ctx.usage, task.clock())
    scope.frames.append(frame)
    try:
        session = await _session(task, ctx, scope, namespace, keep)
        result = await _loop(task, session, scope, frame, message)
        if session.state is not None and keep:
            await ctx.save_state(f"task-agent-state:{task.name}", session.state.data)
        return result
    finally:
        scope.frames.pop()
        ctx.namespace = saved


async def _session(task: _Task, ctx: RunContext[Any], scope: Scope, namespace: str, keep: bool) -> AgentSession:
    agent = task.agent
    history = scope.histories.get(namespace)
    if history is None:
        history = await ctx.history() if keep and agent.model is not None else []
        scope.histories[namespace] = history
    state = None
    if agent.stateful:
        initial = copy.deepcopy(agent.initial_state)
        data = await ctx.load_state(f"task-agent-state:{task.name}", initial) if keep else initial
        state = AgentState(copy.deepcopy(data))
    session = AgentSession(
        task=task.name,
        ctx=ctx,
        namespace=namespace,
        history=history,
        handlers=agent.handlers,
        specs=agent.specs,
        system=agent.system_message(),
        state=state,
        user_default=scope.user_default,
        histories=scope.histories,
        value_types=agent.value_types,
    )
    final = scope.final_tool
    if final is not None and len(scope.frames) == 1 and agent.model is not None:
        session.handlers = {**agent.handlers, final.name: final}
        session.specs = [*agent.specs, final.spec]
        session.system = agent.system_message([final])
        if final.metadata.result_type is not None:
            session.value_types = {**agent.value_types, final.name: final.metadata.result_type}
    return session


async def _loop(task: _Task, session: AgentSession, scope: Scope, frame: Frame, message: TaskMessage) -> TaskResult:
    limits, ctx = task.limits, session.ctx
    guarded = any(f.task.limits.timeout is not None or f.task.kill_switch is not None for f in scope.frames)
    pending = message
    chain = [message]  # the pending messages of this invocation, for the pass signal
    turn = stalled = retries = 0
    trail: list[Mark] = []
    calls: dict[str, int] = {}

    def end(outcome: Outcome, reason: str, last: TaskMessage) -> TaskResult:
        usage = _used(ctx.usage, frame.start)
        return TaskResult(outcome=outcome, reason=reason, message=last, task=task.name, turns=turn, usage=usage)

    while True:
        stop = _limit(task, turn, scope, ctx.usage)
        if stop is None and guarded:
            stop = await _guard(task, ctx, scope, frame)
        if stop is not None:
            return end(stop[0], stop[1], pending)
        turn += 1
        response, responder, ended = await _step(task, session, scope, pending, calls)
        if ended is not None:
            return end("done", ended, pending)
        if response is None or responder is None:
            if task.allow_null_result:  # a DO-NOT-KNOW from the other side keeps the task going
                pending = TaskMessage(content=NO_ANSWER, sender=LLM if pending.sender == USER else USER)
                chain.append(pending)
            elif not pending.tool_calls and pending.sender in task.done_if_unanswered:
                return end("done", f"nobody answered the message from {pending.sender}", pending)
            stalled += 1
            if stalled >= limits.max_stalled_steps:
                return end("stalled", f"{stalled} steps in a row without a valid response", pending)
            continue
        if response.passed:
            passed = _passed_on(chain, pending, response, responder)
            if response.done:
                return end("done", f"{responder} passed its input on as the result", passed)
            pending = passed
            chain.append(pending)
            stalled += 1  # passing makes no progress by itself (it counts as a stalled step)
            if stalled >= limits.max_stalled_steps:
                return end("stalled", f"{stalled} steps in a row without a valid response", pending)
            continue
        stalled = 0
        if task.trace:
            await ctx.emit(StepRecorded(value={"task": task.name, "turn": turn, "responder": responder}))
        if response.is_error:
            retries += 1
            if retries > limits.max_retries:
                bound = f"{retries} error answers to the model in a row (retry bound {limits.max_retries})"
                return end("stalled", f"{bound}; last: {response.content}", response)
        elif responder != LLM:
            retries = 0
        trail.append(mark_of(responder, response))
        done = _done_reason(task, response, responder, trail) or _to_caller(scope, response)
        if done is not None:
            return end("done", done, response)
        period = loop_period(trail, limits.loop_cycle, limits.loop_repeats) if limits.loop_cycle else None
        if period is not None:
            return end("infinite_loop", f"the last {period} response(s) repeated {limits.loop_repeats} times", response)
        pending = response
        chain.append(pending)


def _passed_on(chain: list[TaskMessage], pending: TaskMessage, response: TaskMessage, responder: str) -> TaskMessage:
    """The message a pass signal hands on: the one the passer was answering.

    A model's ``__PASS__`` passes its input; a pass tool the model called passes the model's input too (the message
    before the call); another tool's handler passing passes the model's message with the call, for whoever else
    handles that tool. The passer may not answer it again.
    """
    by_pass_tool = responder == AGENT and response.pass_input
    source = chain[-2] if by_pass_tool and len(chain) > 1 else pending
    passer = pending.sender if by_pass_tool else responder
    recipient = response.recipient if response.recipient is not None else source.recipient
    passed = replace(source, recipient=recipient, block=passer, passed=False, pass_input=False, done=False)
    if responder == AGENT and not by_pass_tool:  # the model's calls were answered already: the next handler's
        passed.namespace, passed.tool_results = "", []  # results are its own, and come back as its message
    return passed


def _limit(task: _Task, turn: int, scope: Scope, usage: Usage) -> tuple[Outcome, str] | None:
    limits = task.limits
    if limits.turns is not None and turn >= limits.turns:
        return "fixed_turns", f"ran its {limits.turns} turn(s)"
    if turn >= limits.max_turns:
        return "max_turns", f"reached its limit of {limits.max_turns} turns"
    for frame in reversed(scope.frames):
        bound = frame.task.limits
        if bound.max_tokens is None and bound.max_cost is None:
            continue
        used = _used(usage, frame.start)
        owner = "its" if frame.task is task else f"task {frame.task.name!r}'s"
        if bound.max_tokens is not None and used.total_tokens >= bound.max_tokens:
            return "budget", f"used {used.total_tokens} tokens, reaching {owner} budget of {bound.max_tokens}"
        if bound.max_cost is not None:
            price_in, price_out = bound.price_per_million
            cost = (used.input_tokens * price_in + used.output_tokens * price_out) / 1e6
            if cost >= bound.max_cost:
                return "budget", f"spent {cost:.6f}, reaching {owner} cost budget of {bound.max_cost}"
    return None


async def _guard(task: _Task, ctx: RunContext[Any], scope: Scope, frame: Frame) -> tuple[Outcome, str] | None:
    """Check kill switches and running time, journaled so a re-execution takes the same decisions.

    Running time is the sum of the journaled step times, so time spent suspended (waiting for the human, or
    between a crash and the resume) does not count.
    """
    now = task.clock()

    async def check() -> list[Any]:
        elapsed = frame.elapsed + (now - frame.mark)
        for other in reversed(scope.frames):
            owner, switch, timeout = other.task.name, other.task.kill_switch, other.task.limits.timeout
            if switch is not None and switch.killed:
                return [elapsed, "killed", f"task {owner!r} was killed: {switch.reason}"]
            spent = elapsed if other is frame else other.elapsed + (other.task.clock() - other.mark)
            if timeout is not None and spent >= timeout:
                return [elapsed, "timeout", f"task {owner!r} ran {spent:.3f} s, reaching its timeout of {timeout} s"]
        return [elapsed]

    value = await ctx.step(check)
    frame.elapsed, frame.mark = float(value[0]), now
    return (value[1], value[2]) if len(value) == 3 else None


def _done_reason(task: _Task, response: TaskMessage, responder: str, trail: list[Mark]) -> str | None:
    if response.final:
        return f"final result from {responder}"
    if response.done:
        return f"{responder} signalled done"
    if responder in task.done_if_response:
        return f"{responder} answered"
    if response.tool_calls and task.done_on_tool:
        names = {c.name for c in response.tool_calls}
        if task.done_on_tool is True or (not isinstance(task.done_on_tool, bool) and names & task.done_on_tool):
            return f"{responder} called {', '.join(sorted(names))}"
    for sequence in task.done_sequences:
        if sequence_done(trail, sequence):
            return f"sequence {', '.join(sequence)} happened"
    return None


async def _step(
    task: _Task, session: AgentSession, scope: Scope, pending: TaskMessage, calls: dict[str, int]
) -> tuple[TaskMessage | None, str | None, str | None]:
    """The first valid response to ``pending``, who gave it, and a done reason when a silence ends the task."""
    agent = task.agent
    addressed = pending.recipient is not None
    tools = bool(pending.tool_calls)
    order = task.responders
    if pending.recipient is not None:
        target = _resolve(task, pending.recipient)
        if target is None:
            known = ", ".join(_known(task))
            return (
                _routing_error(task, pending, f"Unknown recipient '{pending.recipient}'. You can address: {known}."),
                TASK,
                None,
            )
        order = (target,)
    no_answer: tuple[TaskMessage, str] | None = None
    for responder in order:
        if responder in (pending.sender, pending.block):
            continue
        if responder == AGENT:
            response = await agent.agent_response(session, pending)
        elif responder == LLM:
            if agent.model is None or (tools and not addressed):
                continue
            response = await agent.llm_response(session, pending)
        elif responder == USER:
            if (tools and not addressed) or not (task.interactive or addressed):
                continue
            response = await agent.user_response(session, pending)
        else:
            sub = task.sub_task(responder)
            handles = tools and not sub.handled_tools().isdisjoint(c.name for c in pending.tool_calls)
            if (tools and not addressed and not handles) or (sub.agent.respond_tools_only and not handles):
                continue
            response = await _delegate(task, session, scope, sub, pending, calls)
        if response is not None and not response.tool_calls and is_no_answer(response.content):
            no_answer = no_answer or (response, responder)  # counts only if nobody gives a real answer
            continue
        if response is not None:
            return response, responder, None
        if responder in task.done_if_no_response and not tools:
            return None, responder, f"{responder} gave no response"
    if no_answer is not None:
        return no_answer[0], no_answer[1], None
    if tools and not addressed:
        return _routing_error(task, pending, _unhandled(task, pending.tool_calls)), TASK, None
    return None, None, None


def _resolve(task: _Task, recipient: str) -> str | None:
    """The responder ``recipient`` names (names match case-insensitively)."""
    key = recipient.lower()
    if key in (LLM, task.name.lower(), task.agent.name.lower()):
        return LLM if task.agent.model is not None else None
    return next((r for r in (AGENT, USER, *task.responders[3:]) if r.lower() == key), None)


def _to_caller(scope: Scope, response: TaskMessage) -> str | None:
    """A done reason when ``response`` is addressed to the task that called this one: its result goes up."""
    if response.recipient is None or len(scope.frames) < 2:
        return None
    caller = scope.frames[-2].task
    if response.recipient.lower() not in (caller.name.lower(), caller.agent.name.lower()):
        return None
    response.recipient = None
    return f"addressed its caller {caller.name!r}"


def _known(task: _Task) -> list[str]:
    return [*([LLM] if task.agent.model is not None else []), AGENT, USER, *task.responders[3:]]


def _unhandled(task: _Task, calls: list[ToolCall]) -> str:
    names = ", ".join(sorted({f"'{c.name}'" for c in calls}))
    handled = ", ".join(sorted(task.handled_tools())) or "none"
    return f"Unknown tool {names}: nobody here handles it. Tools handled here: {handled}. Call one of these instead."


def _routing_error(task: _Task, pending: TaskMessage, text: str) -> TaskMessage:
    """An error for whoever made ``pending``: a sub-task's model, else this task's model."""
    if pending.sender in task.responders[3:]:
        recipient: str | None = pending.sender
    else:
        recipient = LLM if task.agent.model is not None else None
    return TaskMessage(content=text, sender=TASK, recipient=recipient, is_error=True)


async def _delegate(
    task: _Task, session: AgentSession, scope: Scope, sub: _Task, pending: TaskMessage, calls: dict[str, int]
) -> TaskMessage:
    """Run ``sub`` on ``pending`` (which it sees as coming from its user) and return its result as a message."""
    ctx = session.ctx
    number = calls[sub.name] = calls.get(sub.name, 0) + 1
    await ctx.progress(f"{task.name} → {sub.name}")
    inbound = TaskMessage(
        content=pending.content,
        sender=USER,
        tool_calls=pending.tool_calls,
        namespace=pending.namespace,
        tool_results=pending.tool_results,
        value=pending.value,
    )
    # Each call gets its own path segment, so its journal keys never collide with an earlier call's.
    result = await execute(sub, ctx.child(f"{sub.name}.{number}"), scope, inbound)
    await ctx.progress(f"{sub.name} → {task.name} ({result.outcome}: {result.reason})")
    last = result.message
    # Ending on a fixed turn budget is a normal result (a single-round sub-task), not a failure to report.
    done = result.outcome in ("done", "fixed_turns")
    content = last.content
    if not done:
        content = f"[{sub.name} stopped: {result.outcome}: {result.reason}]" + (f"\n{content}" if content else "")
    return TaskMessage(
        content=content,
        sender=sub.name,
        tool_calls=list(last.tool_calls) if done else [],
        namespace=last.namespace,
        tool_results=last.tool_results,
        value=last.value,
        final=last.final and done,
        outcome=result.outcome,
    )
