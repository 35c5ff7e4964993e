"""The supervisor: a model that delegates to agents through handoff tools until it can answer.

Build one with :func:`create_supervisor`. Each round the supervisor's model sees the conversation and its tools
(``transfer_to_<agent>`` handoff tools, extra tools, optionally ``forward_message``); the agents it hands off to
run, and their answers come back to it. A :class:`Supervisor` is an :class:`~podium.Agent`, so the runtime drives
it (durable runs, interrupts, streaming) and another supervisor can manage it.

Two context policies:

- ``scoped`` (default): a handoff carries a ``task``; the agent sees its system prompt and the task (with the
  user's message added when the task does not quote it) and, folded under the task, what its own tool loop has
  done so far (``worker_rounds``); its answer is the handoff call's tool result, so the supervisor sees results,
  not internals.
- ``shared``: every agent sees the shared conversation in the layout described in docs/migrating.md
  (``Successfully transferred to <agent>``, the agent's last message or full history, the hand-back pair), so the
  model requests match that conversation's recorded trace.

Each handoff runs its agent in a child context whose path is ``(supervisor, call id, agent)`` and whose history
is its own: the agent's steps are journaled there, its tokens and side-channel events stream with that path, and
a question it asks the human suspends the whole run and resumes exactly there.

Histories stay valid for strict providers in every mode: each tool call, handoffs and parallel handoffs included,
is answered by exactly one tool message right after it, in call order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from podium.agents.base import Agent, AgentResult
from podium.agents.react import ReactAgent
from podium.errors import AgentError, LimitReached, StepLimitExceeded, Suspended, ToolRetriesExceeded, UsageError
from podium.messages import AIMessage, HumanMessage, Message, ToolCall, ToolMessage
from podium.models.base import Model, ModelRequest, ModelSettings
from podium.orchestration.supervisor._loop import (
    Prompt,
    compact_rounds,
    maybe_await,
    record,
    run_react,
    structured_response,
    system_prompt,
)
from podium.orchestration.supervisor.agent_name import AgentNameMode, with_agent_name
from podium.orchestration.supervisor.handoff import (
    FORWARD_MESSAGE,
    ForwardMessageTool,
    HandoffTool,
    canonical_calls,
    error_result,
    forward_answer,
    handoff_back_messages,
    only_call,
    repair_history,
    supervisor_tools,
    without_calls,
)
from podium.orchestration.supervisor.options import (
    AfterModel,
    BeforeModel,
    ContextPolicy,
    OutputMode,
    ResponseFormat,
    SupervisorOptions,
)
from podium.runtime.context import RunContext
from podium.runtime.journal import Limits
from podium.tools import Tool, ToolArgumentsError

__all__ = ["Supervisor", "create_supervisor"]


class _Job:
    """One handoff of a round: the call, its tool, the task, and what the agent is shown."""

    __slots__ = ("call", "handoff", "outputs", "segment", "task", "view")

    def __init__(self, call: ToolCall, handoff: HandoffTool, task: str | None, segment: str) -> None:
        self.call = call
        self.handoff = handoff
        self.task = task
        self.segment = segment
        self.view: list[Message] = []
        self.outputs: list[Message] = []


class Supervisor(Agent):
    """A model that delegates to agents through handoff tools. See :func:`create_supervisor` for the options."""

    def __init__(
        self,
        agents: Sequence[Agent],
        model: Model,
        *,
        prompt: Prompt = None,
        tools: Sequence[Tool | HandoffTool | ForwardMessageTool | Callable[..., Any]] = (),
        name: str = "supervisor",
        description: str = "",
        options: SupervisorOptions | None = None,
    ) -> None:
        """Build the supervisor (:func:`create_supervisor` describes the arguments).

        Raises:
            UsageError: duplicate names, or a handoff tool naming an unknown agent.
        """
        self.options = options = options or SupervisorOptions()
        self.name = name
        self.description = description
        mode = options.include_agent_name
        self.model = with_agent_name(model, mode) if mode is not None else model
        self.prompt = prompt
        self.worker_rounds = options.worker_rounds if options.context == "scoped" else None
        base = options.settings or ModelSettings()
        self.settings = base if base.parallel_tool_calls is not None else replace(base, parallel_tool_calls=False)
        if options.parallel_tool_calls:
            self.settings = replace(self.settings, parallel_tool_calls=True)
        self.response_prompt: str | None = None
        self.response_format: ResponseFormat | None = None
        if isinstance(options.response_format, tuple):
            self.response_prompt, self.response_format = options.response_format
        else:
            self.response_format = options.response_format

        self.agents: dict[str, Agent] = {}
        for agent in agents:
            if agent.name in self.agents or agent.name == name:
                raise UsageError(f"agent names must be unique and differ from the supervisor's: {agent.name!r}")
            self.agents[agent.name] = agent
        given = [t for t in tools if not isinstance(t, ForwardMessageTool)]
        self.forward_message = options.forward_message or len(given) < len(tools)
        self.tools, self.handoffs, specs = supervisor_tools(
            list(self.agents),
            given,
            prefix=options.handoff_tool_prefix,
            task=options.context == "scoped",
            forward=self.forward_message,
        )
        self._specs = specs

    # entry points ---------------------------------------------------------------------------------------------------
    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        """Answer ``input`` in the conversation of ``ctx`` (earlier turns are remembered)."""
        history = repair_history(await ctx.history())
        history.append(await ctx.add_message(input))
        return await self.run_view(ctx, history, start=len(history) - 1)

    async def run_view(self, ctx: RunContext[Any], view: list[Message], *, start: int = 0) -> AgentResult:
        """Run the supervisor's loop on ``view`` (extended in place); new messages are recorded in ``ctx``.

        This is how a parent supervisor runs a nested one on the shared conversation or on a task.

        Raises:
            LimitReached: the handoff limit or the token budget was reached (a typed run outcome).
            StepLimitExceeded: ``max_steps`` model calls without an answer.
        """
        question = next((m.content for m in reversed(view) if isinstance(m, HumanMessage)), "")
        turn = next((i + 1 for i in range(len(view) - 1, -1, -1) if isinstance(view[i], HumanMessage)), len(view))
        segments: dict[str, int] = {}
        handoffs = failing_rounds = 0
        # When a reply may be changed (a hook) or partly hidden (hidden handoffs, a forwarded answer), the model's
        # raw reply is journaled apart and the conversation records only what a client should read.
        hides = self.options.after_model is not None or self.forward_message or not self.options.add_handoff_messages
        raw_ctx = ctx.child("raw", namespace=f"{ctx.namespace}#raw") if hides else ctx
        for _ in range(self.options.max_steps):
            # the supervisor keeps its latest round whole: the answers it is to act on come as its calls' results
            shown = view if self.worker_rounds is None else compact_rounds(view, turn, max(self.worker_rounds, 1))
            request = ModelRequest(
                messages=system_prompt(self.prompt, shown) + shown, tools=self._specs, settings=self.settings
            )
            if self.options.before_model is not None:
                request = await maybe_await(self.options.before_model(request))
            reply = (await raw_ctx.call_model(self.model, request, name=self.name)).message
            if self.options.after_model is not None:
                reply = await maybe_await(self.options.after_model(reply))
            reply = canonical_calls(reply)
            if not reply.tool_calls:
                view.append(await record(ctx, reply) if hides else reply)
                data = await self._structured(ctx, view) if self.response_format is not None else None
                return AgentResult(output=reply.content, messages=view[start:], data=data)
            handoffs += sum(1 for c in reply.tool_calls if c.name in self.handoffs)
            if handoffs > self.options.max_handoffs:
                raise LimitReached(
                    "handoffs",
                    f"supervisor {self.name!r} reached its limit of {self.options.max_handoffs} handoffs in one turn",
                )
            final, answers = await self._round(ctx, view, reply, question, segments, record_reply=hides)
            if final is not None:
                return AgentResult(output=final.content, messages=view[start:])
            if all(a.is_error for a in answers) and not any(c.name in self.handoffs for c in reply.tool_calls):
                failing_rounds += 1  # nothing but failed calls: the model is told why, a few times at most
                if failing_rounds > self.options.max_tool_retries:
                    raise ToolRetriesExceeded(self.name, self.options.max_tool_retries, answers[-1].content)
            else:
                failing_rounds = 0
        raise StepLimitExceeded(self.name, self.options.max_steps)

    async def _structured(self, ctx: RunContext[Any], view: list[Message]) -> Any:
        """Ask the model for the final answer in the response schema; return it parsed."""
        assert self.response_format is not None
        prompt = self.response_prompt if self.response_prompt is not None else self.prompt
        return await structured_response(
            ctx, self.model, self.name, system_prompt(prompt, view) + view, self.settings, self.response_format
        )

    # one round of tool calls ----------------------------------------------------------------------------------------
    async def _round(
        self,
        ctx: RunContext[Any],
        view: list[Message],
        reply: AIMessage,
        question: str,
        segments: dict[str, int],
        *,
        record_reply: bool,
    ) -> tuple[AIMessage | None, list[ToolMessage]]:
        """Answer every call of ``reply``; return the final message when ``forward_message`` ended the turn, and
        the answers of the calls.

        ``record_reply``: the reply was journaled apart, so record what the conversation shows of it here.
        """
        shared = self.options.context == "shared"
        answers: dict[str, ToolMessage] = {}
        jobs: list[_Job] = []
        regular: list[ToolCall] = []
        forwarded: str | None = None
        forward_ids: set[str] = set()
        for call in reply.tool_calls:
            handoff = self.handoffs.get(call.name)
            if handoff is not None:
                try:
                    task = handoff.task_of(call)
                except ToolArgumentsError as exc:
                    answers[call.id] = error_result(call, str(exc))
                    continue
                count = segments[call.id] = segments.get(call.id, 0) + 1
                jobs.append(_Job(call, handoff, task, call.id if count == 1 else f"{call.id}~{count}"))
            elif call.name == FORWARD_MESSAGE and self.forward_message:
                text, answer = forward_answer(view, call, self.handoffs.values(), self.name)
                answers[call.id] = answer
                if text is not None and forwarded is None:
                    forwarded = text
                    forward_ids.add(call.id)
            elif call.name in self.tools:
                regular.append(call)
            else:  # (the runtime would list only the supervisor's own tools, not the handoffs it was offered)
                offered = ", ".join(sorted(spec.name for spec in self._specs)) or "none"
                answers[call.id] = error_result(
                    call, f"Unknown tool '{call.name}'. Available tools: {offered}. Call one of these instead."
                )
        if forwarded is not None:  # the turn ends with the forwarded answer: nobody else is asked
            for job in jobs:
                answers[job.call.id] = error_result(job.call, "Not transferred: an answer was forwarded to the user.")
            jobs = []
        # Hidden handoffs and a successful forward leave no trace in the conversation (as in the shared
        # layout): the forwarded answer ends the turn as the supervisor's own message.
        hidden = {j.call.id for j in jobs} if not self.options.add_handoff_messages else set()
        shown = reply if not (hidden or forward_ids) else without_calls(reply, hidden | forward_ids)
        if record_reply and (shown.tool_calls or shown.content):
            shown = await record(ctx, shown)
        recorded: set[str] = set(forward_ids)
        if regular:
            for result in await ctx.call_tools(self.tools, regular):
                answers[result.tool_call_id] = result
                recorded.add(result.tool_call_id)
        acked = {j.call.id: j.handoff.agent for j in jobs} if shared and self.options.add_handoff_messages else {}
        for call in reply.tool_calls:  # record the other answers in call order (deterministic journal keys)
            if call.id in recorded:
                continue
            if call.id in answers:
                answers[call.id] = await record(ctx, answers[call.id])
            elif call.id in acked:
                ack = ToolMessage(
                    content=f"Successfully transferred to {acked[call.id]}", tool_call_id=call.id, name=call.name
                )
                answers[call.id] = await record(ctx, ack)
        for job in jobs:
            job.view = self._worker_view(view, reply, shown, job, answers, question)
        await self._run_jobs(ctx, jobs)
        if not shared and not hidden:
            for job in jobs:
                result = ToolMessage(content=job.outputs[-1].content, tool_call_id=job.call.id, name=job.call.name)
                answers[job.call.id] = await record(ctx, result)
        if shown.tool_calls or shown.content:
            view.append(shown)
        view.extend(answers[c.id] for c in shown.tool_calls)
        if shared or hidden:
            for job in jobs:
                for message in self._returned(job):
                    view.append(await ctx.add_message(message))
        given = [answers[c.id] for c in reply.tool_calls if c.id in answers]
        if forwarded is None:
            return None, given
        final = await record(ctx, AIMessage(content=forwarded, name=self.name))
        view.append(final)
        return final, given

    def _worker_view(
        self,
        view: list[Message],
        reply: AIMessage,
        shown: AIMessage,
        job: _Job,
        answers: dict[str, ToolMessage],
        question: str,
    ) -> list[Message]:
        """What the agent of ``job`` is shown."""
        if self.options.context == "scoped":
            task = job.task or question
            if self.options.share_question and question and question not in task:
                task = f"{task}\n\nThe user's request: {question}"
            return [HumanMessage(content=task)]
        worker_view = list(view)
        if self.options.add_handoff_messages:
            if len(reply.tool_calls) == 1:
                worker_view.append(shown)
            else:  # parallel calls: this agent sees only its own handoff, answered
                worker_view.append(only_call(shown, job.call))
            worker_view.append(answers[job.call.id])
        if job.task:
            worker_view.append(HumanMessage(content=job.task, name=self.name))
        return worker_view

    def _returned(self, job: _Job) -> list[Message]:
        """What of ``job``'s work enters the conversation after the tool results."""
        if self.options.context == "scoped":  # handoff messages hidden: the result stands as the agent's answer
            return [AIMessage(content=job.outputs[-1].content, name=job.handoff.agent)]
        out = list(job.outputs) if self.options.output_mode == "full_history" else job.outputs[-1:]
        if self.options.hand_back:
            out.extend(handoff_back_messages(job.handoff.agent, self.name, job.segment))
        return out

    async def _run_jobs(self, ctx: RunContext[Any], jobs: list[_Job]) -> None:
        """Run the agents of ``jobs`` concurrently; questions to the human from several are raised together."""
        if len(jobs) == 1:
            jobs[0].outputs = await self._delegate(ctx, jobs[0])
            return
        outcomes = await asyncio.gather(*(self._delegate(ctx, job) for job in jobs), return_exceptions=True)
        interrupts = []
        for job, outcome in zip(jobs, outcomes, strict=True):
            if isinstance(outcome, Suspended):
                interrupts.extend(outcome.interrupts)
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                job.outputs = outcome
        if interrupts:
            raise Suspended(interrupts)

    async def _delegate(self, ctx: RunContext[Any], job: _Job) -> list[Message]:
        """Run one agent in a child context (its own path and history); return the messages it added."""
        agent = self.agents[job.handoff.agent]
        namespace = f"{ctx.namespace}/{job.segment}/{agent.name}" if ctx.namespace else f"{job.segment}/{agent.name}"
        child = ctx.child(job.segment, agent.name, namespace=namespace, limits=self.options.agent_limits)
        start = len(job.view)
        try:
            if isinstance(agent, ReactAgent):
                return await run_react(child, agent, job.view, keep_rounds=self.worker_rounds)
            if isinstance(agent, Supervisor):
                return (await agent.run_view(child, job.view, start=start)).messages
            text = next((m.content for m in reversed(job.view) if isinstance(m, HumanMessage)), "")
            result = await agent.invoke(child, HumanMessage(content=text))
            return [AIMessage(content=result.output, name=agent.name)]
        except AgentError as exc:  # the supervisor hears of the failure and may try something else
            return [*job.view[start:], AIMessage(content=f"I could not complete this: {exc}", name=agent.name)]


def create_supervisor(
    agents: Sequence[Agent],
    *,
    model: Model,
    prompt: Prompt = None,
    tools: Sequence[Tool | HandoffTool | ForwardMessageTool | Callable[..., Any]] = (),
    supervisor_name: str = "supervisor",
    context: ContextPolicy = "scoped",
    output_mode: OutputMode = "last_message",
    add_handoff_messages: bool = True,
    add_handoff_back_messages: bool | None = None,
    handoff_tool_prefix: str | None = None,
    forward_message: bool = False,
    parallel_tool_calls: bool = False,
    response_format: ResponseFormat | tuple[str, ResponseFormat] | None = None,
    before_model: BeforeModel | None = None,
    after_model: AfterModel | None = None,
    max_handoffs: int = 20,
    max_steps: int = 25,
    max_tool_retries: int = 3,
    agent_limits: Limits | None = None,
    share_question: bool = True,
    worker_rounds: int | None = 0,
    description: str = "",
    settings: ModelSettings | None = None,
    include_agent_name: AgentNameMode | None = None,
) -> Supervisor:
    """A supervisor managing ``agents`` (docs/migrating.md gives the options' correspondences with other libraries).

    Args:
        agents: the agents it delegates to (``ReactAgent``, other supervisors, any :class:`~podium.Agent`).
        model: the supervisor's model.
        prompt: its system prompt, or a function of the conversation returning one.
        tools: extra tools for the supervisor, and custom handoff tools (:func:`create_handoff_tool`); agents
            without a custom handoff tool get ``transfer_to_<agent>``. :func:`create_forward_message_tool` here is
            ``forward_message=True``.
        supervisor_name: its name (on its messages and in ``transfer_back_to_<name>``).
        description: what the supervisor does, for a parent choosing among agents.
        context, output_mode, add_handoff_messages, add_handoff_back_messages, handoff_tool_prefix, forward_message,
            parallel_tool_calls, response_format, before_model, after_model, max_handoffs, max_steps,
            max_tool_retries, agent_limits, share_question, worker_rounds, settings, include_agent_name: the
            supervisor's options, each described in :class:`~podium.orchestration.supervisor.SupervisorOptions`
            (its defaults are these). A token budget is the run's :class:`~podium.Limits` (``max_tokens``).

    Raises:
        UsageError: duplicate names, an unknown option value, or a handoff tool naming an unknown agent.
    """
    options = SupervisorOptions(
        context=context,
        output_mode=output_mode,
        add_handoff_messages=add_handoff_messages,
        add_handoff_back_messages=add_handoff_back_messages,
        handoff_tool_prefix=handoff_tool_prefix,
        forward_message=forward_message,
        parallel_tool_calls=parallel_tool_calls,
        response_format=response_format,
        before_model=before_model,
        after_model=after_model,
        max_handoffs=max_handoffs,
        max_steps=max_steps,
        max_tool_retries=max_tool_retries,
        agent_limits=agent_limits,
        share_question=share_question,
        worker_rounds=worker_rounds,
        settings=settings,
        include_agent_name=include_agent_name,
    )
    return Supervisor(
        agents, model, prompt=prompt, tools=tools, name=supervisor_name, description=description, options=options
    )
