"""The run context: what agents and tools see of a run (deps, ask, progress, artifact, state, steps).

Every step with an effect (a model call, a tool call, a message added, a side-channel note, a question to the
human) goes through the context, which gives it a *key*: the agent path plus a counter of that context. A step
whose key is already in the run's journal returns the recorded result instead of running again. That is the
whole resume mechanism (see docs/architecture.md, "The journal is the event log"): after a crash or an interrupt the
runtime executes the run again from its input, completed steps replay from the journal in microseconds, and the
run continues exactly where it stopped. Agent code must therefore be deterministic given its steps' results
(anything random or time-dependent belongs in a step).

Recording, the lease and the live subscribers are in :mod:`podium.runtime.journal`; model and tool calls are
executed by :mod:`podium.runtime.execution`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

from podium._tool_thread import in_thread
from podium.errors import LeaseLost, QuestionDeclined, Suspended, UsageError
from podium.events import (
    Artifact,
    Event,
    Expectation,
    Interrupt,
    InterruptAnswered,
    InterruptRaised,
    MessageAdded,
    SideChannel,
    StepRecorded,
)
from podium.human import EMERGENCY_REPLY, declines, emergency, says_goodbye, yes_or_no
from podium.messages import Message, ToolCall, ToolMessage, Usage, valid_history
from podium.models.base import Model, ModelRequest, ModelResponse
from podium.runtime._history import read_messages
from podium.runtime._values import storable
from podium.runtime._values import text as _text
from podium.runtime.execution import call_model, call_tools
from podium.runtime.journal import Budget, Limits, RunState
from podium.tools import Injectable, Tool

__all__ = ["AskHandler", "Limits", "RunContext"]

DepsT = TypeVar("DepsT")
T = TypeVar("T")
_InjectableT = TypeVar("_InjectableT", bound=Injectable)


AskHandler = Callable[[Interrupt], Awaitable[str]]
"""Answers a question asked with :meth:`RunContext.ask` (or raises :class:`Suspended` to wait for it)."""


class RunContext(Injectable, Generic[DepsT]):
    """The view of a run that an agent or a tool gets: its path, its dependencies, and journaled steps.

    A tool receives one when it declares a parameter annotated ``RunContext`` (or ``RunContext[MyDeps]``).
    """

    __slots__ = (
        "_budgets",
        "_check_answers",
        "_counter",
        "_on_ask",
        "_provided",
        "_scope",
        "_state",
        "deps",
        "namespace",
        "path",
    )

    def __init__(
        self,
        state: RunState,
        *,
        path: tuple[str, ...],
        namespace: str,
        deps: DepsT,
        on_ask: AskHandler | None = None,
        budgets: tuple[Budget, ...] = (),
        provided: Mapping[type, Injectable] | None = None,
        check_answers: bool = False,
    ) -> None:
        self._state = state
        self._counter = 0
        self._scope = "/".join(path)
        """What this context's step keys start with: its path, except that a tool call is named by its position."""
        self._on_ask = on_ask
        self._budgets = budgets
        self._provided: Mapping[type, Injectable] = provided or {}
        self._check_answers = check_answers
        self.path = path
        """Where this context sits: agent names and tool call ids, outermost first."""
        self.namespace = namespace
        """Which message history :meth:`history` and :meth:`add_message` use ("" is the thread's)."""
        self.deps = deps
        """The application's dependencies, as passed to the run."""

    # identity ---------------------------------------------------------------------------------------------------
    @property
    def thread_id(self) -> str:
        """The conversation's id."""
        return self._state.thread_id

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._state.run_id

    @property
    def idempotency_key(self) -> str:
        """A new key per step for an external call, the same every time the run is executed again (after a crash).

        Each read takes the next step of this context, so two external calls of one tool get two keys.
        """
        return f"{self._state.run_id}:{self._next_key()}"

    @property
    def usage(self) -> Usage:
        """Tokens used by the run so far."""
        return self._state.usage

    def child(
        self,
        *segments: str,
        namespace: str | None = None,
        on_ask: AskHandler | None = None,
        limits: Limits | None = None,
    ) -> RunContext[DepsT]:
        """A context one level deeper (a nested agent or a tool call) with its own step counter.

        Args:
            segments: what to add to the path.
            namespace: the child's message history (default: this context's).
            on_ask: who answers :meth:`ask` in the child and its descendants (default: this context's handler,
                or the human through a durable interrupt). An orchestrator that wants its tools' questions handed to
                it (the master agent's task stack) passes one.
            limits: a budget of its own for the child and everything below it (``max_model_calls``,
                ``max_tokens``), besides the run's; reaching it ends the run with status ``limit_exceeded``.

        Raises:
            UsageError: ``limits`` sets a ``timeout`` (a timeout bounds a whole run: give it to the run).
        """
        budgets = self._budgets
        if limits is not None:
            if limits.timeout is not None:
                raise UsageError("a child context's limits bound model calls and tokens; give timeouts to the run")
            path = self.path + segments
            budgets = (*budgets, Budget(limits, owner="/".join(path) or "the run"))
        made = RunContext(
            self._state,
            path=self.path + segments,
            namespace=self.namespace if namespace is None else namespace,
            deps=self.deps,
            on_ask=on_ask or self._on_ask,
            budgets=budgets,
            provided=self._provided,
            check_answers=self._check_answers,
        )
        made._scope = "/".join((self._scope, *segments)) if self._scope else "/".join(segments)
        return made

    def provide(self, value: Injectable) -> None:
        """Hand ``value`` to the tools run from this context (and contexts made from it afterwards) whose parameter
        is annotated with its type, as the run context itself is handed to a parameter annotated ``RunContext``."""
        self._provided = {**self._provided, type(value): value}

    def injected(self, kind: type[_InjectableT]) -> _InjectableT | None:
        """What a tool parameter annotated ``kind`` receives here: this context, or a value :meth:`provide` gave.

        Agents read what their caller provided the same way (``ctx.injected(ToolInput)`` under the master agent).
        """
        if isinstance(self, kind):
            return self
        value = self._provided.get(kind)
        return value if isinstance(value, kind) else None

    def _next_key(self) -> str:
        self._counter += 1
        return f"{self._scope}#{self._counter}"

    # journaled steps ----------------------------------------------------------------------------------------------
    @overload
    async def step(self, function: Callable[[], Awaitable[T]]) -> T: ...

    @overload
    async def step(self, function: Callable[[], T]) -> T: ...

    async def step(self, function: Callable[[], Any]) -> Any:
        """Run ``function`` once per run: its result is journaled and replayed on re-execution.

        ``function`` takes no arguments; a coroutine function (or one returning an awaitable) is awaited, and a
        plain one (``lambda: random.random()``, a blocking HTTP call) runs on a thread of its own, off the event
        loop, as a sync tool does. The result must be JSON data (``None``, booleans, numbers, strings, lists, dicts
        with string keys) so that a re-execution sees exactly the value the first one saw.

        Raises:
            UsageError: the result is not JSON data (a datetime, a set, a tuple, a non-string key ...).
        """
        key = self._next_key()
        done = self._state.journal.get(key)
        if isinstance(done, StepRecorded):
            return done.value
        await self._state.flush()  # what completed before this step is stored before it runs
        if inspect.iscoroutinefunction(function):
            value = await function()
        else:
            value = await in_thread(function, {}, "step")
            if inspect.isawaitable(value):  # a lambda handing back a coroutine
                value = await value
        value = storable(value, "the result of a step")
        await self._state.record(StepRecorded(value=value, key=key, path=self.path))
        return value

    async def load_state(self, key: str, default: Any = None) -> Any:
        """The thread's latest value under ``key`` (JSON), read once per run so re-executions see the same value.

        State is per thread and outlives runs: orchestrators keep task stacks and agents keep their own state
        here (keyed by whatever identifies them, e.g. ``f"agent:{name}:{call_id}"``).
        """
        step_key = self._next_key()
        done = self._state.journal.get(step_key)
        if isinstance(done, StepRecorded):
            return done.value
        value = await self._state.store.get_state(self._state.thread_id, key)
        value = default if value is None else value
        await self._state.record(StepRecorded(value=value, key=step_key, path=self.path))
        return value

    async def save_state(self, key: str, value: Any) -> None:
        """Record a new value (JSON) under ``key`` for the thread, once per run (earlier versions are kept)."""
        step_key = self._next_key()
        if step_key in self._state.journal:
            return
        value = storable(value, f"the state saved under {key!r}")
        state = self._state
        if state.lost_to is not None:
            raise LeaseLost(state.thread_id, state.owner, state.lost_to)
        try:  # only while the run holds its thread: a stalled run another took over writes nothing more
            await state.store.put_state(state.thread_id, key, value, owner=state.owner)
        except LeaseLost as lost:
            state.lost_to = lost.holder or "nobody"
            raise
        await state.record(StepRecorded(value=None, key=step_key, path=self.path))

    async def history(self) -> list[Message]:
        """This context's message history from the thread's earlier runs, as a model can be shown it.

        Tool rounds cut short by a failed, cancelled or limited run are left out
        (:func:`podium.messages.valid_history`).
        """
        state = self._state
        if state.histories is not None:
            return await state.histories.history(state.store, state.thread_id, self.namespace, state.run_id, state.head)
        messages = await read_messages(state.store, state.thread_id, self.namespace, exclude_run=state.run_id)
        return valid_history(messages)

    async def add_message(self, message: Message) -> Message:
        """Append ``message`` to this context's history (once, however often the run is re-executed)."""
        key = self._next_key()
        done = self._state.journal.get(key)
        if isinstance(done, MessageAdded):
            return done.message
        await self._state.record(MessageAdded(message=message, namespace=self.namespace, key=key, path=self.path))
        return message

    async def emit(self, event: Event) -> None:
        """Record and stream an event (side-channel note, artifact, task-stack change) once per run."""
        key = self._next_key()
        if key in self._state.journal:
            return
        event.key = key
        event.path = self.path
        await self._state.record(event)

    async def progress(self, text: str) -> None:
        """Tell the user what is happening, on the side channel (never shown to a model).

        Raises:
            UsageError: ``text`` is not text.
        """
        await self.emit(SideChannel(text=_text(text, "a progress note"), channel="progress"))

    async def rationale(self, text: str) -> None:
        """Tell the user why something was chosen, on the side channel.

        Raises:
            UsageError: ``text`` is not text.
        """
        await self.emit(SideChannel(text=_text(text, "a rationale"), channel="rationale"))

    async def artifact(self, content: Any, *, title: str = "") -> None:
        """Send a result to the user interface's side panel, out of the chat.

        ``content`` is stored as JSON data and comes back the same from every store (see :meth:`step`).

        Raises:
            UsageError: ``content`` is not JSON data (a datetime, a set, a tuple, an object ...), or ``title`` is
                not text.
        """
        content = storable(content, "an artifact's content")
        await self.emit(Artifact(content=content, title=_text(title, "an artifact's title")))

    async def ask(self, prompt: str, *, expectation: Expectation | None = None, data: Any = None) -> str:
        """Ask the human and return the answer; the run suspends durably until it comes.

        The first time, this records the question and unwinds the run (status ``interrupted``). When the answer is
        given to :meth:`podium.Runtime.resume`, in this process or another one, the run executes again and this
        call returns the answer.

        In a context that checks answers (the tools of a ReAct agent: ``call_tools(check_answers=True)``), an answer
        that does not fit ``expectation`` (:meth:`Expectation.fit`: "And in Fahrenheit?" to a yes/no question) is
        not returned: the question is asked again, saying how to answer, and a choice returns the option chosen. An
        answer that declines the question ("never mind", "cancel": :func:`podium.human.declines`; or that takes
        leave: "thanks, bye", :func:`podium.human.says_goodbye`) raises
        :class:`~podium.errors.QuestionDeclined`, which ends the tool call and tells the model. An answer describing
        an emergency (:func:`podium.human.emergency`) is never taken: the question is asked again after
        :data:`podium.human.EMERGENCY_REPLY`.

        Raises:
            UsageError: ``prompt`` is not text, or ``data`` is not JSON data (it is stored with the question).
        """
        prompt = _text(prompt, "the question asked")
        data = storable(data, "the data of a question")
        key = self._next_key()
        if self._on_ask is not None:
            return await self._on_ask(
                Interrupt(id=key, path=self.path, prompt=prompt, expectation=expectation, data=data)
            )
        journal = self._state.journal
        asked, attempt, question = key, 1, prompt
        while isinstance(answer := journal.get(asked + "!"), InterruptAnswered):
            said = answer.answer
            if not self._check_answers:
                return said
            attempt += 1  # if it is not taken: the same question again, under a key of its own
            if emergency(said):  # said while a question waits: the person is sent to emergency services first
                asked, question = f"{key}~{attempt}", f"{EMERGENCY_REPLY}\n\n{prompt}"
                continue
            if _declined(said, expectation):
                raise QuestionDeclined(prompt, said)
            if expectation is None:
                return said
            fit = expectation.fit(said)
            if fit is not None:
                return fit
            if declines(said) or says_goodbye(said):  # "no thanks" to a question it does not answer, "thanks, bye"
                raise QuestionDeclined(prompt, said)
            asked, question = f"{key}~{attempt}", f"{prompt} (Please answer {expectation.hint()}.)"
        raised = journal.get(asked)
        if isinstance(raised, InterruptRaised):
            raise Suspended([raised.interrupt])
        interrupt = Interrupt(id=asked, path=self.path, prompt=question, expectation=expectation, data=data)
        await self._state.record(InterruptRaised(interrupt=interrupt, key=asked, path=self.path))
        raise Suspended([interrupt])

    async def call_model(self, model: Model, request: ModelRequest, *, name: str | None = None) -> ModelResponse:
        """Ask ``model`` (once per run: the reply is journaled and added to this context's history).

        ``name`` is set on the reply (the agent's name). Streams tokens to live subscribers when a client listens.

        Raises:
            LimitReached: the run's model-call or token budget is spent, or the budget of this context or one above
                it (:meth:`child` with ``limits``).
        """
        key = self._next_key()
        return await call_model(
            self._state,
            model,
            request,
            key=key,
            path=self.path,
            namespace=self.namespace,
            name=name,
            budgets=self._budgets,
        )

    async def call_tools(
        self,
        tools: Mapping[str, Tool],
        calls: Sequence[ToolCall],
        *,
        handle_errors: bool = True,
        check_answers: bool = False,
    ) -> list[ToolMessage]:
        """Run a model's tool calls concurrently; each result is journaled and added to this context's history.

        Calls that cannot run (unknown tool, unparseable or invalid arguments, :class:`ModelRetry`, and with
        ``handle_errors`` any exception) are answered with an error message for the model instead of raising, so
        every call gets exactly one result, in the order of the calls. Questions to the human raised by several
        calls are gathered into one suspension after the others finish. With ``check_answers`` the tools' questions
        (and those of agents they run) take only answers that fit their expectation (see :meth:`ask`).
        """
        keys = [self._next_key() for _ in calls]

        def tool_context(call: ToolCall, key: str) -> RunContext[DepsT]:
            """The context a tool call runs in: a child named by the call's id and its position in the run.

            Its steps are keyed by the call's position, never by the id alone: models reuse ids, and a reused id must
            not hand one call's journaled answers to another.
            """
            inner = self.child(call.id)
            inner._scope = f"{self._scope}/{call.id}@{key.rsplit('#', 1)[-1]}"  # the path keeps the id
            inner._check_answers = inner._check_answers or check_answers
            return inner

        return await call_tools(
            self._state,
            tools,
            calls,
            keys=keys,
            path=self.path,
            namespace=self.namespace,
            tool_context=tool_context,
            handle_errors=handle_errors,
        )


def _declined(said: str, expectation: Expectation | None) -> bool:
    """Whether ``said`` declines the question rather than answering it: "never mind", "cancel", "stop" (never a
    plain no, "no thanks", which answers a yes-or-no question; never an option said as it is; an approval reads a
    decline as a rejection)."""
    if not declines(said) or yes_or_no(said, declines_as_no=False) is not None:
        return False
    if expectation is None:
        return True
    bare = said.strip().rstrip(".!").strip().lower()
    return expectation.type != "approval" and all(o.strip().lower() != bare for o in expectation.options)
