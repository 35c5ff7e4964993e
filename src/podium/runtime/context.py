"""The run context handed to agents and tools, and the journal that makes runs durable.

Every step with an effect (a model call, a tool call, a message added, a side-channel note, a question to the
human) goes through the context, which gives it a *key*: the agent path plus a counter of that context. A step
whose key is already in the run's journal returns the recorded result instead of running again. That is the
whole resume mechanism (see docs/architecture.md, "The journal is the event log"): after a crash or an interrupt the
runtime executes the run again from its input, completed steps replay from the journal in microseconds, and the
run continues exactly where it stopped. Agent code must therefore be deterministic given its steps' results
(anything random or time-dependent belongs in a step).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from podium.errors import LimitReached, ModelError, ModelRetry, StoreError, Suspended
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
    TokenDelta,
    ToolStarted,
)
from podium.messages import AIMessage, Message, ToolCall, ToolMessage, Usage, valid_history
from podium.models.base import Done, Model, ModelRequest, ModelResponse, TextDelta
from podium.tools import Injectable, Tool, ToolArgumentsError, ToolReturn, result_to_text

if TYPE_CHECKING:
    from podium.runtime.bus import EventBus
    from podium.store.base import Store

_log = logging.getLogger("podium.runtime")

__all__ = ["AskHandler", "Limits", "RunContext"]

DepsT = TypeVar("DepsT")
T = TypeVar("T")


@dataclass(slots=True, kw_only=True)
class Limits:
    """Bounds of one run; reaching one ends the run with status ``limit_exceeded`` and says which."""

    max_model_calls: int | None = 200
    """Model calls in the whole run, all agents together."""
    max_tokens: int | None = None
    """Input plus output tokens in the whole run."""
    timeout: float | None = None
    """Wall-clock seconds for one execution of the run."""


@dataclass(slots=True, kw_only=True)
class RunState:
    """What all contexts of one run execution share."""

    store: Store
    thread_id: str
    run_id: str
    journal: dict[str, Event]
    seq: int
    limits: Limits
    owner: str
    lease_ttl: float
    sinks: list[Callable[[Event], Any]] = field(default_factory=list)
    bus: EventBus | None = None
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    last_renewal: float = field(default_factory=time.monotonic)
    stream_tokens: bool = False
    lost_to: str | None = None
    """Set when another owner took the thread over; the run must not write again."""

    async def record(self, event: Event) -> None:
        """Store ``event`` as the next entry of the thread's log and publish it."""
        event.run_id = self.run_id
        self.seq += 1
        event.seq = self.seq
        if self.lost_to is not None or time.monotonic() - self.last_renewal > self.lease_ttl / 3:
            holder = self.lost_to or await self.store.acquire_thread(self.thread_id, self.owner, self.lease_ttl)
            if holder is not None:  # our lease expired and another process took the thread over: write nothing more
                self.lost_to = holder
                raise StoreError(f"run {self.run_id!r} lost thread {self.thread_id!r} to {holder}; it stops here")
            self.last_renewal = time.monotonic()
        await self.store.append_events(self.thread_id, [event])
        if event.key is not None:
            self.journal[event.key] = event
        await self.publish(event)

    async def publish(self, event: Event) -> None:
        """Hand ``event`` to the live subscribers only: the run's ``on_event`` callbacks and the bus.

        A subscriber can neither fail nor stall the run: a callback that raises is logged and dropped, one that
        returns an awaitable has it run as a separate task, and the bus never waits on a subscriber.
        """
        event.run_id = self.run_id
        for sink in self.sinks:
            try:
                outcome = sink(event)
            except Exception:
                _log.exception("an on_event callback of run %s raised; it gets no more events", self.run_id)
                self.sinks = [s for s in self.sinks if s is not sink]
                continue
            if outcome is not None and inspect.isawaitable(outcome):
                _spawn(outcome, self.run_id)
        if self.bus is not None:
            await self.bus.publish(self.thread_id, event)

    def count_model_call(self, usage: Usage) -> None:
        """Add a model call's usage to the run's totals."""
        self.usage = self.usage + usage
        self.model_calls += 1

    def check_limits(self) -> None:
        """Raise :class:`LimitReached` if the next model call would exceed a limit."""
        limits = self.limits
        if limits.max_model_calls is not None and self.model_calls >= limits.max_model_calls:
            raise LimitReached("model_calls", f"the run made its limit of {limits.max_model_calls} model calls")
        if limits.max_tokens is not None and self.usage.total_tokens >= limits.max_tokens:
            raise LimitReached(
                "tokens", f"the run used {self.usage.total_tokens} tokens, reaching its budget of {limits.max_tokens}"
            )


_background: set[asyncio.Task[Any]] = set()


def _spawn(awaitable: Awaitable[Any], run_id: str) -> None:
    async def guarded() -> None:
        try:
            await awaitable
        except Exception:
            _log.exception("an async on_event callback of run %s raised", run_id)

    task = asyncio.ensure_future(guarded())
    _background.add(task)
    task.add_done_callback(_background.discard)


AskHandler = Callable[[Interrupt], Awaitable[str]]
"""Answers a question asked with :meth:`RunContext.ask` (or raises :class:`Suspended` to wait for it)."""


class RunContext(Injectable, Generic[DepsT]):
    """The view of a run that an agent or a tool gets: its path, its dependencies, and journaled steps.

    A tool receives one when it declares a parameter annotated ``RunContext`` (or ``RunContext[MyDeps]``).
    """

    __slots__ = ("_counter", "_on_ask", "_state", "deps", "namespace", "path")

    def __init__(
        self,
        state: RunState,
        *,
        path: tuple[str, ...],
        namespace: str,
        deps: DepsT,
        on_ask: AskHandler | None = None,
    ) -> None:
        self._state = state
        self._counter = 0
        self._on_ask = on_ask
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
        self, *segments: str, namespace: str | None = None, on_ask: AskHandler | None = None
    ) -> RunContext[DepsT]:
        """A context one level deeper (a nested agent or a tool call) with its own step counter.

        Args:
            segments: what to add to the path.
            namespace: the child's message history (default: this context's).
            on_ask: who answers :meth:`ask` in the child and its descendants (default: this context's handler,
                or the human through a durable interrupt). An orchestrator that wants its tools' questions handed to
                it (the master agent's task stack) passes one.
        """
        return RunContext(
            self._state,
            path=self.path + segments,
            namespace=self.namespace if namespace is None else namespace,
            deps=self.deps,
            on_ask=on_ask or self._on_ask,
        )

    def _next_key(self) -> str:
        self._counter += 1
        return f"{'/'.join(self.path)}#{self._counter}"

    # journaled steps ----------------------------------------------------------------------------------------------
    async def step(self, function: Callable[[], Awaitable[T]]) -> T:
        """Run ``function`` once per run: its JSON-able result is journaled and replayed on re-execution."""
        key = self._next_key()
        done = self._state.journal.get(key)
        if isinstance(done, StepRecorded):
            return done.value  # type: ignore[no-any-return]
        value = await function()
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
        await self._state.store.put_state(self._state.thread_id, key, value)
        await self._state.record(StepRecorded(value=None, key=step_key, path=self.path))

    async def history(self) -> list[Message]:
        """This context's message history from the thread's earlier runs, as a model can be shown it.

        Tool rounds cut short by a failed, cancelled or limited run are left out
        (:func:`podium.messages.valid_history`).
        """
        messages = await self._state.store.load_messages(
            self._state.thread_id, self.namespace, exclude_run=self._state.run_id
        )
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
        """Tell the user what is happening, on the side channel (never shown to a model)."""
        await self.emit(SideChannel(text=text, channel="progress"))

    async def rationale(self, text: str) -> None:
        """Tell the user why something was chosen, on the side channel."""
        await self.emit(SideChannel(text=text, channel="rationale"))

    async def artifact(self, content: Any, *, title: str = "") -> None:
        """Send a result to the user interface's side panel, out of the chat."""
        await self.emit(Artifact(content=content, title=title))

    async def ask(self, prompt: str, *, expectation: Expectation | None = None, data: Any = None) -> str:
        """Ask the human and return the answer; the run suspends durably until it comes.

        The first time, this records the question and unwinds the run (status ``interrupted``). When the answer is
        given to :meth:`podium.Runtime.resume`, in this process or another one, the run executes again and this
        call returns the answer.
        """
        key = self._next_key()
        if self._on_ask is not None:
            return await self._on_ask(
                Interrupt(id=key, path=self.path, prompt=prompt, expectation=expectation, data=data)
            )
        journal = self._state.journal
        answer = journal.get(key + "!")
        if isinstance(answer, InterruptAnswered):
            return answer.answer
        raised = journal.get(key)
        if isinstance(raised, InterruptRaised):
            raise Suspended([raised.interrupt])
        interrupt = Interrupt(id=key, path=self.path, prompt=prompt, expectation=expectation, data=data)
        await self._state.record(InterruptRaised(interrupt=interrupt, key=key, path=self.path))
        raise Suspended([interrupt])

    async def call_model(self, model: Model, request: ModelRequest, *, name: str | None = None) -> ModelResponse:
        """Ask ``model`` (once per run: the reply is journaled and added to this context's history).

        ``name`` is set on the reply (the agent's name). Streams tokens to live subscribers when a client listens.

        Raises:
            LimitReached: the run's model-call or token budget is spent.
        """
        key = self._next_key()
        state = self._state
        done = state.journal.get(key)
        if isinstance(done, MessageAdded) and isinstance(done.message, AIMessage):
            usage = done.usage or Usage()
            state.count_model_call(usage)
            return ModelResponse(message=done.message, usage=usage)
        state.check_limits()
        if state.stream_tokens:
            response = None
            async for item in model.stream(request):
                if isinstance(item, TextDelta):
                    await state.publish(TokenDelta(text=item.text, path=self.path))
                elif isinstance(item, Done):
                    response = item.response
            if response is None:
                raise ModelError(f"model {model.name!r} ended its stream without a Done event")
        else:
            response = await model.reply(request)
        if name is not None:
            response.message.name = name
        state.count_model_call(response.usage)
        await state.record(
            MessageAdded(
                message=response.message, namespace=self.namespace, usage=response.usage, key=key, path=self.path
            )
        )
        return response

    async def call_tools(
        self,
        tools: Mapping[str, Tool],
        calls: Sequence[ToolCall],
        *,
        handle_errors: bool = True,
    ) -> list[ToolMessage]:
        """Run a model's tool calls concurrently; each result is journaled and added to this context's history.

        Calls that cannot run (unknown tool, unparseable or invalid arguments, :class:`ModelRetry`, and with
        ``handle_errors`` any exception) are answered with an error message for the model instead of raising, so
        every call gets exactly one result, in the order of the calls. Questions to the human raised by several
        calls are gathered into one suspension after the others finish.
        """
        keys = [self._next_key() for _ in calls]
        if len(calls) == 1:  # the common case: no tasks to spawn
            return [await self._call_tool(tools, calls[0], keys[0], handle_errors)]
        results = await asyncio.gather(
            *(self._call_tool(tools, call, key, handle_errors) for call, key in zip(calls, keys, strict=True)),
            return_exceptions=True,
        )
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

    async def _call_tool(self, tools: Mapping[str, Tool], call: ToolCall, key: str, handle_errors: bool) -> ToolMessage:
        state = self._state
        done = state.journal.get(key)
        if isinstance(done, MessageAdded) and isinstance(done.message, ToolMessage):
            return done.message
        message = await self._execute_tool(tools, call, handle_errors)
        await state.record(MessageAdded(message=message, namespace=self.namespace, key=key, path=self.path))
        return message

    async def _execute_tool(self, tools: Mapping[str, Tool], call: ToolCall, handle_errors: bool) -> ToolMessage:
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
        await self._state.publish(ToolStarted(tool_call_id=call.id, name=call.name, path=self.path))
        try:
            value = await tool.run(self.child(call.id), kwargs)
        except ModelRetry as exc:
            return error(exc.message)
        except Exception as exc:
            if not handle_errors:
                raise
            return error(f"Error: tool '{call.name}' failed with {type(exc).__name__}: {exc}")
        if isinstance(value, ToolReturn):
            return ToolMessage(
                content=result_to_text(value.content),
                tool_call_id=call.id,
                name=call.name,
                artifact=value.artifact,
                metadata=dict(value.metadata),
            )
        return ToolMessage(content=result_to_text(value), tool_call_id=call.id, name=call.name)
