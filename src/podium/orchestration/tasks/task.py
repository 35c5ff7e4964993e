"""Tasks: an agent's responders and sub-tasks run over a current pending message until done.

A :class:`Task` wraps a :class:`ResponderAgent` and turns a message into a result, like a responder does, so a
task can be a sub-task (a responder) of another task: trees and DAGs of tasks. A task is also a podium
:class:`~podium.agents.base.Agent`, so ``Runtime.run`` / ``resume`` and ``podium chat`` drive it, durably.

**One step** tries the eligible responders in this order: the agent's ``agent`` responder (tool handling), its
``llm`` responder, its ``user`` responder, then the sub-tasks in the order they were added. The first valid (non-
``None``) response becomes the pending message, and the next step starts again from the top.

**Eligibility**:

1. a responder never answers its own message;
2. a message with a recipient (the structured ``recipient`` field, ``TO[name]:`` or ``@name`` text) may only be
   answered by that recipient; an unknown recipient is answered by the task with an error message;
3. a message calling tools is offered only to the responders that handle one of them (the agent, sub-tasks whose
   tree handles it); when none does, the task answers with an error the model sees next;
4. the user responder answers only when the task is interactive or the message is addressed to ``user``.

So a model's unaddressed text that the agent does not react to goes to the first sub-task (fail-over): a
coordinator answers the human directly with ``DONE``, and routes with an address. A response passing its input on
(``__PASS__``, ``__PASS__:name``, the pass tools) leaves that input pending for another responder; a
``DO-NOT-KNOW`` counts only when nobody else answers (the text signals of ``types.py``).

**Done**: a response signalling done (the Done tool, a ``DONE`` text from any responder, a handler returning
:class:`TaskDone` or a :class:`ResultTool`, the user's quit strings), a sub-task addressing its caller, a final
result (ends every ancestor too), ``done_if_response`` (a named responder answered), ``done_if_no_response``
(a named responder was tried on a message without tool calls, the input included, and gave nothing), ``done_on_tool``
(a response calls any tool, or a named one), ``done_sequences``, and ``done_if_unanswered``: a step where nobody
answers a message from one of these senders (default ``llm`` for a non-interactive task) ends the task with it.

**Outcomes**: every ending is a :class:`TaskResult` with an outcome and a reason: ``done``, ``stalled``,
``max_turns``, ``fixed_turns``, ``budget``, ``timeout``, ``infinite_loop`` or ``killed`` (see :class:`TaskLimits`).
Model mistakes (bad tool arguments or JSON, unknown tools or recipients) are answered with errors the model sees
next, up to ``TaskLimits.max_retries`` in a row.

Example::

    worker = Task(ResponderAgent("worker", model, prompt="Multiply with the tool.", tools=[multiply]))
    boss = Task(ResponderAgent("boss", model, prompt="Delegate with TO[worker]:"), sub_tasks=[worker])
    result = await boss.run("What is 6 times 7?")          # a TaskResult: outcome, reason, content, value
    answer = await boss.run("...", output_type=Answer)     # a validated Answer (the model gets final_result)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from typing import Any, Generic, Literal, TypeVar, overload

from podium.agents.base import Agent, AgentResult
from podium.errors import AgentError, UsageError
from podium.events import Event
from podium.messages import AIMessage, HumanMessage
from podium.orchestration.tasks.agent import AgentSession, NoToolReaction, ResponderAgent
from podium.orchestration.tasks.loop import Scope, execute
from podium.orchestration.tasks.rules import parse_sequence
from podium.orchestration.tasks.tools import (
    done_tool,
    final_result_tool,
    handler_tool,
    send_tool,
    tool_guide,
    with_guidance,
)
from podium.orchestration.tasks.types import (
    AGENT,
    LLM,
    TASK,
    USER,
    AgentState,
    FinalResult,
    KillSwitch,
    Outcome,
    TaskDone,
    TaskFailed,
    TaskLimits,
    TaskMessage,
    TaskResult,
)
from podium.runtime.context import Limits, RunContext
from podium.runtime.runtime import RunResult, Runtime
from podium.tools import Tool

__all__ = [
    "AgentSession",
    "AgentState",
    "FinalResult",
    "KillSwitch",
    "NoToolReaction",
    "Outcome",
    "ResponderAgent",
    "Task",
    "TaskDone",
    "TaskFailed",
    "TaskLimits",
    "TaskMessage",
    "TaskResult",
    "TypedTask",
    "done_tool",
    "final_result_tool",
    "send_tool",
    "tool_guide",
    "with_guidance",
]

T = TypeVar("T")

_RESERVED = frozenset({LLM, AGENT, USER, TASK})


class Task(Agent):
    """Runs an agent's responders and sub-tasks over a current pending message until a done condition or a limit."""

    def __init__(
        self,
        agent: ResponderAgent,
        *,
        name: str | None = None,
        sub_tasks: Sequence[Task] = (),
        interactive: bool = False,
        history: Literal["keep", "restart"] = "keep",
        done_if_response: Collection[str] = (),
        done_if_no_response: Collection[str] = (),
        done_if_unanswered: Collection[str] | None = None,
        done_on_tool: bool | Collection[str] = False,
        done_sequences: Sequence[str | Sequence[str]] = (),
        allow_null_result: bool = False,
        limits: TaskLimits | None = None,
        kill_switch: KillSwitch | None = None,
        trace: bool = True,
        clock: Callable[[], float] = time.monotonic,
        description: str = "",
    ) -> None:
        """Build the task.

        Args:
            agent: the agent whose responders the task runs.
            name: the task's name (default: the agent's); sub-tasks are addressed by it.
            sub_tasks: tasks to add as responders (see :meth:`add_sub_tasks`).
            interactive: the user responder may answer any message (default: only messages addressed to ``user``).
            history: ``keep`` the agent's history (and state) across invocations and runs of the thread, or
                ``restart`` it on every invocation.
            done_if_response: responders whose valid response ends the task with it.
            done_if_no_response: responders whose lack of response ends the task with the pending message.
            done_if_unanswered: senders whose message, when nobody answers it, ends the task with it (default:
                ``("llm",)`` when not interactive, none when interactive).
            done_on_tool: end the task with a response that calls any tool (True) or one of the named tools.
            done_sequences: sequences of responses that end the task, e.g. ``"tool, agent, llm"`` or, in
                letter codes (docs/migrating.md), ``"T, A, C[quit|exit]"`` (``content:REGEX`` matches a response's
                text).
            allow_null_result: when nobody answers, continue with a ``DO-NOT-KNOW`` message from the other side
                (the user's message gets one from the LLM, anything else one from the user) instead of ending or
                stalling; the stall bound still applies.
            limits: turn, stall, retry, budget, time and loop bounds.
            kill_switch: a switch that stops the task (and its sub-tasks) at their next step.
            trace: record which responder answered each step on the event stream.
            clock: the time source of ``limits.timeout`` (seconds).
            description: what the task does, for a caller choosing among agents.

        Raises:
            UsageError: an unknown history mode, a bad done sequence, or a bad sub-task (see :meth:`add_sub_tasks`).
        """
        self.agent = agent
        self.name = name or agent.name
        if history not in ("keep", "restart"):
            raise UsageError(f"history must be 'keep' or 'restart', not {history!r}")
        self.history = history
        self.interactive = interactive
        self.done_if_response = frozenset(done_if_response)
        self.done_if_no_response = frozenset(done_if_no_response)
        default_unanswered = () if interactive else (LLM,)
        self.done_if_unanswered = frozenset(default_unanswered if done_if_unanswered is None else done_if_unanswered)
        self.done_on_tool: bool | frozenset[str] = (
            done_on_tool if isinstance(done_on_tool, bool) else frozenset(done_on_tool)
        )
        self.done_sequences = [parse_sequence(s) for s in done_sequences]
        self.allow_null_result = allow_null_result
        self.limits = limits or TaskLimits()
        self.kill_switch = kill_switch
        self.trace = trace
        self.clock = clock
        self.description = description or agent.description
        self._subs: dict[str, Task] = {}
        self._order: tuple[str, ...] = (AGENT, LLM, USER)
        self._final_tools: dict[Any, Tool] = {}
        self._adapters: dict[Any, Any] = {}
        self.add_sub_tasks(*sub_tasks)

    def __repr__(self) -> str:
        return f"Task({self.name!r}, sub_tasks={list(self._subs)})"

    def __getitem__(self, output_type: type[T]) -> TypedTask[T]:
        """This task typed by its result (``task[ResultType]``): its ``run`` returns an ``output_type``."""
        return TypedTask(self, output_type)

    # -- the tree -------------------------------------------------------------------------------------------------
    @property
    def sub_tasks(self) -> list[Task]:
        """The sub-tasks, in the order they are tried."""
        return list(self._subs.values())

    def add_sub_tasks(self, *tasks: Task) -> Task:
        """Append ``tasks`` to the responders (after the agent's and earlier sub-tasks); returns ``self``.

        A task may be the sub-task of several tasks (a DAG), never of itself or of its descendants.

        Raises:
            UsageError: a cycle, a reserved or duplicate name, or two different tasks with one name in the tree.
        """
        for task in tasks:
            if task is self or self in task._descendants():
                raise UsageError(f"adding {task.name!r} under {self.name!r} would make a cycle")
            if task.name in _RESERVED or task.name in (self.name, self.agent.name):
                raise UsageError(f"sub-task name {task.name!r} is reserved here; name the task differently")
            if task.name in self._subs and self._subs[task.name] is not task:
                raise UsageError(f"task {self.name!r} already has a sub-task named {task.name!r}")
            self._subs[task.name] = task
        seen: dict[str, Task] = {}
        for task in (self, *self._descendants()):
            if seen.setdefault(task.name, task) is not task:
                raise UsageError(f"two different tasks are named {task.name!r} in the tree of {self.name!r}")
        self._order = (AGENT, LLM, USER, *self._subs)
        return self

    def _descendants(self) -> list[Task]:
        found: dict[int, Task] = {}
        stack = list(self._subs.values())
        while stack:
            task = stack.pop()
            if id(task) not in found:
                found[id(task)] = task
                stack.extend(task._subs.values())
        return list(found.values())

    @property
    def responders(self) -> tuple[str, ...]:
        """The responders a step tries, in order: ``agent``, ``llm``, ``user``, then the sub-tasks' names."""
        return self._order

    def sub_task(self, name: str) -> Task:
        """The sub-task named ``name``.

        Raises:
            KeyError: no such sub-task.
        """
        return self._subs[name]

    def handled_tools(self) -> frozenset[str]:
        """Names of the tools this task's agent or any of its descendants handles."""
        names = set(self.agent.handlers)
        for task in self._descendants():
            names.update(task.agent.handlers)
        return frozenset(names)

    # -- running --------------------------------------------------------------------------------------------------
    # -- running --------------------------------------------------------------------------------------------------
    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        """Run the task on the human's message (the :class:`~podium.agents.base.Agent` protocol)."""
        return await self.invoke_root(ctx, input)

    async def invoke_root(
        self, ctx: RunContext[Any], input: HumanMessage, *, user_default: str | None = None, output_type: Any = None
    ) -> AgentResult:
        """Run the task as the root of a tree; ``AgentResult.data`` is the :class:`TaskResult`.

        Args:
            ctx: the run context.
            input: the human's message (added to the context's history, with the final answer).
            user_default: answer every user responder of the tree with this instead of asking.
            output_type: give the root's model a final-result tool returning this type.
        """
        await ctx.add_message(input)
        scope = Scope(user_default=user_default, final_tool=self._final_tool(output_type))
        result = await execute(self, ctx, scope, TaskMessage(content=input.content, sender=USER))
        text = result.content
        if not result.ok:
            text = f"[{result.outcome}] {result.reason}" + (f"\n{result.content}" if result.content else "")
            await ctx.progress(f"task {self.name} ended: {result.outcome}: {result.reason}")
        await ctx.add_message(AIMessage(content=text, name=self.name))
        return AgentResult(output=text, data=result)

    def _final_tool(self, output_type: Any) -> Tool | None:
        if output_type is None:
            return None
        made = self._final_tools.get(output_type)
        if made is None:
            made = self._final_tools[output_type] = handler_tool(final_result_tool(output_type))[0]
        return made

    @overload
    async def run(
        self,
        input: str | HumanMessage,
        *,
        output_type: None = None,
        runtime: Runtime | None = None,
        thread_id: str | None = None,
        deps: Any = None,
        user_default: str | None = None,
        limits: Limits | None = None,
        on_event: Callable[[Event], Any] | None = None,
    ) -> TaskResult: ...

    @overload
    async def run(
        self,
        input: str | HumanMessage,
        *,
        output_type: type[T],
        runtime: Runtime | None = None,
        thread_id: str | None = None,
        deps: Any = None,
        user_default: str | None = None,
        limits: Limits | None = None,
        on_event: Callable[[Event], Any] | None = None,
    ) -> T: ...

    async def run(
        self,
        input: str | HumanMessage,
        *,
        output_type: Any = None,
        runtime: Runtime | None = None,
        thread_id: str | None = None,
        deps: Any = None,
        user_default: str | None = None,
        limits: Limits | None = None,
        on_event: Callable[[Event], Any] | None = None,
    ) -> Any:
        """Run the task tree on ``input`` in a run of ``runtime`` (default: a new one on an in-memory store).

        Returns the :class:`TaskResult` (outcome ``interrupted`` while a user responder waits: answer it with
        :meth:`resume`), or, with ``output_type``, the result validated as that type: the root's model gets a
        final-result tool of that type.

        Raises:
            TaskFailed: with ``output_type``: the task did not end ``done``, or its result does not validate.
            Exception: whatever made the run fail (a handler's exception with ``handle_errors=False``).
        """
        runner = _Runner(self, user_default, output_type)
        runtime = runtime or Runtime()
        ran = await runtime.run(runner, input, thread_id=thread_id, deps=deps, limits=limits, on_event=on_event)
        return self._finish(runner, ran, output_type)

    async def resume(
        self,
        answer: str | dict[str, str] | None,
        *,
        runtime: Runtime,
        thread_id: str,
        output_type: Any = None,
        deps: Any = None,
        user_default: str | None = None,
        limits: Limits | None = None,
        on_event: Callable[[Event], Any] | None = None,
    ) -> Any:
        """Answer the question the thread's run waits on (or finish a run whose process died) and continue.

        Pass the same ``output_type`` and ``user_default`` as the run had. Returns like :meth:`run`.
        """
        runner = _Runner(self, user_default, output_type)
        ran = await runtime.resume(runner, thread_id, answer, deps=deps, limits=limits, on_event=on_event)
        return self._finish(runner, ran, output_type)

    def _finish(self, runner: _Runner, ran: RunResult, output_type: Any) -> Any:
        result = runner.result
        if ran.status == "failed":
            if isinstance(ran.error, Exception):
                raise ran.error
            raise AgentError(ran.reason)
        if ran.status != "completed" or result is None:
            outcomes: dict[str | None, Outcome] = {"time": "timeout", "steps": "max_turns"}
            outcome: Outcome = "interrupted" if ran.status == "interrupted" else "killed"
            if ran.status == "limit_exceeded":
                outcome = outcomes.get(ran.limit, "budget")
            prompt = ran.interrupts[0].prompt if ran.interrupts else ""
            result = TaskResult(
                outcome=outcome,
                reason=ran.reason,
                message=TaskMessage(content=prompt, sender=TASK),
                task=self.name,
                usage=ran.usage,
                interrupts=list(ran.interrupts),
            )
        result.thread_id = ran.thread_id
        return result if output_type is None else self._typed(result, output_type)

    def _typed(self, result: TaskResult, output_type: Any) -> Any:
        from pydantic import TypeAdapter, ValidationError

        if not result.ok:
            raise TaskFailed(result)
        if isinstance(output_type, type) and isinstance(result.value, output_type):
            return result.value
        if output_type is str and result.value is None:
            return result.content
        adapter = self._adapters.get(output_type)
        if adapter is None:
            adapter = self._adapters[output_type] = TypeAdapter(output_type)
        try:
            if result.value is None:
                return adapter.validate_json(result.content)
            return adapter.validate_python(result.value)
        except ValidationError as exc:
            raise TaskFailed(result, f"task {self.name!r} ended without a valid {output_type!r}: {exc}") from None


class TypedTask(Generic[T]):
    """A task whose :meth:`run` returns a validated result type (``task[ResultType]``)."""

    def __init__(self, task: Task, output_type: type[T]) -> None:
        """Type ``task``'s result as ``output_type``."""
        self.task = task
        self.output_type = output_type

    async def run(self, input: str | HumanMessage, **options: Any) -> T:
        """:meth:`Task.run` with ``output_type``; the same keyword options.

        Raises:
            TaskFailed: the task did not end ``done``, or its result does not validate.
        """
        return await self.task.run(input, output_type=self.output_type, **options)


class _Runner(Agent):
    """Runs a task as the root of one run with per-call options, and keeps its result for :meth:`Task.run`."""

    def __init__(self, task: Task, user_default: str | None, output_type: Any) -> None:
        self.task = task
        self.name = task.name  # the same path as the task itself, so either can resume the other's runs
        self.user_default = user_default
        self.output_type = output_type
        self.result: TaskResult | None = None

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        outcome = await self.task.invoke_root(ctx, input, user_default=self.user_default, output_type=self.output_type)
        self.result = outcome.data
        return outcome
