"""The runtime: conversations (threads) with runs, one writer per thread, durable interrupts and crash recovery.

A *run* processes one input on a thread until it completes, waits for the human, fails, reaches a limit, or is
cancelled.
:meth:`Runtime.run` starts one; :meth:`Runtime.resume` answers a waiting run, or finishes one whose process died.
Both execute the agent from the run's input again: the journal (see :mod:`podium.runtime.journal`) replays the
completed steps, so nothing is repeated and nothing is lost.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from podium._ids import random_id
from podium.errors import (
    RunNotFound,
    StoreError,
    ThreadBusy,
    ThreadNotFound,
    ThreadWaiting,
    UsageError,
)
from podium.events import (
    Event,
    Interrupt,
)
from podium.messages import HumanMessage, Message, message_to_dict, order_tool_results
from podium.runtime._history import HistoryCache, read_messages
from podium.runtime._inputs import check_answer, check_call, check_input, check_options, check_runtime
from podium.runtime._run import (
    CANCEL_KEY,
    ENDED,
    Cancelled,
    IfBusy,
    RunResult,
    _Agent,
    adopt_unreleased,
    answers_by_id,
    end_cancelled,
    execute,
    finish_ended,
    pending_interrupts,
    recorded_end,
    release,
    restore_unstored,
)
from podium.runtime._stream import RunStream
from podium.runtime.bus import EventBus, InProcessBus, Outlet
from podium.runtime.journal import Limits, RunState
from podium.store.base import Claim, RunRecord, RunStatus, Store, new_owner

__all__ = ["Cancelled", "IfBusy", "RunResult", "Runtime"]


_FINAL = ("completed", "failed", "limit_exceeded")
"""How an execution ends when its run can never be resumed and all it recorded went through the journal's flushes."""


class Runtime:
    """Runs agents on stored conversations."""

    def __init__(
        self,
        store: Store | None = None,
        *,
        bus: EventBus | None = None,
        limits: Limits | None = None,
        lease_ttl: float = 60.0,
        busy_poll: float = 0.02,
    ) -> None:
        """Use ``store`` (default: an in-memory store).

        Args:
            store: where conversations live, a :class:`~podium.store.Store` (``open_store("memory")``,
                ``MemoryStore()``, ``SQLiteStore(path)``...); see :func:`podium.open_store` for the SQLite default.
            bus: where every event of every run is published after it is stored (default: an
                :class:`~podium.runtime.bus.InProcessBus`). A run never waits on it (see
                :meth:`EventBus.publish <podium.runtime.bus.EventBus.publish>`).
            limits: default limits of every run.
            lease_ttl: seconds a run's write lease lasts without renewal, at least
                :data:`~podium.runtime._inputs.MIN_LEASE_TTL`; it is renewed every third of this while a run
                executes. A process that crashed releases its threads after this, or at once when its end is seen
                on this machine (see docs/architecture.md, "Single writer").
            busy_poll: seconds between checks when waiting for a busy thread, at least
                :data:`~podium.runtime._inputs.MIN_BUSY_POLL`.

        Raises:
            UsageError: a ``store`` that is not a :class:`~podium.store.Store` (a name such as ``"memory"``: open it
                with :func:`podium.open_store`), a ``bus`` that is not an :class:`EventBus`, ``limits`` that are not
                :class:`Limits`, or a ``lease_ttl`` or ``busy_poll`` that is not a number of seconds at least its
                minimum (a lease that expires between its renewals hands the thread to another writer mid-run; a
                poll of 0 spins a core).
        """
        check_runtime(store, bus, limits, lease_ttl, busy_poll)
        if store is None:
            from podium.store.memory import MemoryStore

            store = MemoryStore()
        self.store = store
        self.bus: EventBus = bus if bus is not None else InProcessBus()
        self._outlet = Outlet(self.bus)
        self.limits = limits or Limits()
        self.lease_ttl = lease_ttl
        self.busy_poll = busy_poll
        self._histories = HistoryCache()
        self._executing: dict[str, asyncio.Task[Any]] = {}
        self._on_thread: dict[str, tuple[str, asyncio.Task[Any]]] = {}
        """The run executing here on each thread, and its task."""
        self._cancelling: set[str] = set()
        self._streams: weakref.WeakValueDictionary[asyncio.Task[Any], RunStream] = weakref.WeakValueDictionary()
        """The streams still held whose runs execute in these tasks (:meth:`_let_go`)."""
        self._unstored: dict[str, list[Event]] = {}
        """Events of runs whose store failed, recorded but not stored (see :func:`restore_unstored`)."""

    # public API ---------------------------------------------------------------------------------------------------
    async def run(
        self,
        agent: _Agent,
        input: str | HumanMessage,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        deps: Any = None,
        limits: Limits | None = None,
        if_busy: IfBusy = "fail",
        busy_timeout: float = 30.0,
        on_event: Callable[[Event], Any] | None = None,
    ) -> RunResult:
        """Run ``agent`` on ``input`` in a thread (a new one by default; created if the id is new).

        Args:
            agent: the agent to run.
            input: the human's message.
            thread_id: the conversation to continue or create.
            run_id: the new run's id (default: a fresh one), so a caller can name it before it starts.
            deps: dependencies handed to tools through their :class:`RunContext`.
            limits: bounds of this run (default: the runtime's).
            if_busy: when another run holds the thread: ``"fail"`` raises :class:`ThreadBusy`, ``"wait"`` waits
                up to ``busy_timeout`` seconds.
            busy_timeout: see ``if_busy``.
            on_event: called with every event as it happens (stored ones and streamed-only ones), on the event
                loop; it cannot fail the run (one that raises is dropped), and slow work belongs in an awaitable it
                returns (run as a task of its own): a callback that blocks holds every run of the loop.

        Raises:
            ThreadBusy: another run holds the thread.
            ThreadWaiting: the thread waits for an answer (use :meth:`resume` or :meth:`send`) or has an
                unfinished run.
            UsageError: an ``agent`` that is not an agent, empty or non-text input (or text that cannot be stored:
                a lone surrogate), ``limits`` that are not :class:`Limits`, an ``on_event`` that is not callable, an
                unknown ``if_busy``, a negative ``busy_timeout``, an empty id, or a ``run_id`` already used. Input
                is checked before anything is created: a refused call leaves no thread behind.
        """
        message = check_input(input)
        check_call(thread_id, run_id, if_busy, busy_timeout)
        check_options(agent, limits, on_event)
        if run_id is not None and await self.store.get_run(run_id) is not None:
            raise UsageError(f"run id {run_id!r} is already used; pass a new one or none")
        thread_id = thread_id or random_id()
        owner, claim = await self._acquire(thread_id, if_busy, busy_timeout, {"agent": agent.name})
        released = False
        try:
            last = claim.last_run
            if last is not None and last.status in ("interrupted", "running"):
                pending = [i.id for i in pending_interrupts(await self.store.journal(last.id))]
                if last.status == "running":
                    raise ThreadWaiting(
                        thread_id,
                        pending,
                        message=f"thread {thread_id!r} has an unfinished run {last.id!r} (its process stopped, or "
                        f"it was left running); finish it first with Runtime.resume(agent, {thread_id!r}), or end it "
                        f"with Runtime.cancel({last.id!r})",
                    )
                raise ThreadWaiting(thread_id, pending)
            record = RunRecord(
                id=run_id or random_id(), thread_id=thread_id, input=message_to_dict(message), agent=agent.name
            )
            await self.store.open_run(record)  # synced with the run's first events, before anything happens
            result, released = await self._execute(agent, record, {}, {}, owner, deps, limits, on_event, claim.head)
            return result
        finally:
            if not released:
                await release(self.store, thread_id, owner, self.lease_ttl)

    async def resume(
        self,
        agent: _Agent,
        thread_id: str,
        answer: str | dict[str, str] | None = None,
        *,
        run_id: str | None = None,
        deps: Any = None,
        limits: Limits | None = None,
        if_busy: IfBusy = "fail",
        busy_timeout: float = 30.0,
        on_event: Callable[[Event], Any] | None = None,
    ) -> RunResult:
        """Continue the thread's last run: answer its interrupt(s), or finish it after its process died.

        The answers are recorded in the run's journal like every other step (and published), then the run executes
        again from its input.

        Args:
            agent: the same agent that started the run.
            thread_id: the conversation.
            answer: the answer to the one pending interrupt (text), or answers by interrupt id (a dict of texts).
                Leave it out to finish a run whose process stopped mid-way. Anything else (a number, a list, text
                with a lone surrogate) is refused with :class:`UsageError` before anything is stored.
            run_id: the run expected to be resumed (default: the thread's last); a different last run is an error.
            deps: see :meth:`run`.
            limits: see :meth:`run`.
            if_busy: see :meth:`run`.
            busy_timeout: see :meth:`run`.
            on_event: see :meth:`run`.

        Raises:
            ThreadNotFound: no such thread.
            UsageError: nothing to resume, another agent or run than the last one's, a missing answer, an answer
                that is not text, an answer to an unknown interrupt, or options refused as by :meth:`run`.
        """
        check_answer(answer)
        check_call(thread_id, run_id, if_busy, busy_timeout)
        check_options(agent, limits, on_event)
        if await self.store.get_thread(thread_id) is None:
            raise ThreadNotFound(thread_id)
        owner, claim = await self._acquire(thread_id, if_busy, busy_timeout)
        released = False
        try:
            record = claim.last_run
            if record is None or record.status not in ("interrupted", "running"):
                raise UsageError(f"thread {thread_id!r} has no run to resume; start one with Runtime.run()")
            if run_id is not None and record.id != run_id:
                raise UsageError(f"thread {thread_id!r} waits in run {record.id!r}, not {run_id!r}")
            if record.agent and record.agent != agent.name:
                raise UsageError(
                    f"run {record.id!r} was started by agent {record.agent!r}; resume it with that agent, "
                    f"not {agent.name!r}"
                )
            journal = await self.store.journal(record.id)
            if answer is None:  # an answer given again replaces what was not stored
                unstored = self._unstored.get(record.id, [])
                await restore_unstored(self.store, self._bus_outlet(), thread_id, journal, unstored, owner)
            self._unstored.pop(record.id, None)  # stored now, or replaced (kept while the store still fails)
            cancelled = CANCEL_KEY in journal  # its status not stored: no answer revives a cancelled run
            answers = {} if cancelled else answers_by_id(record, pending_interrupts(journal), answer)
            ended = recorded_end(journal) if cancelled or (record.status == "running" and not answers) else None
            if ended is not None:  # its process stopped between the end and the status: store the status, once
                return await finish_ended(await self._state(record, journal, owner, limits, None), record, ended)
            if record.status != "running":
                await self.store.update_run(record.id, "running")
            result, released = await self._execute(agent, record, journal, answers, owner, deps, limits, on_event)
            return result
        finally:
            if not released:
                await release(self.store, thread_id, owner, self.lease_ttl)

    async def send(
        self,
        agent: _Agent,
        text: str,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        deps: Any = None,
        limits: Limits | None = None,
        if_busy: IfBusy = "fail",
        busy_timeout: float = 30.0,
        on_event: Callable[[Event], Any] | None = None,
    ) -> RunResult:
        """Say ``text`` in a thread: the answer to the question it waits on, or else a new run.

        If the thread's last run waits on one interrupt, ``text`` answers it (:meth:`resume`); otherwise a new run
        starts (:meth:`run`). Options are those of :meth:`run`.

        Raises:
            UsageError: the last run waits on several interrupts (answer them by id with :meth:`resume`), or
                what :meth:`run` and :meth:`resume` raise.
        """
        check_call(thread_id, run_id, if_busy, busy_timeout)
        check_options(agent, limits, on_event)
        if thread_id is not None and await self.store.get_thread(thread_id) is not None:
            last = await self.store.last_run(thread_id)
            if last is not None and last.status in ("interrupted", "running"):
                pending = pending_interrupts(await self.store.journal(last.id))
                if len(pending) > 1:
                    raise UsageError(
                        f"thread {thread_id!r} waits on {len(pending)} interrupts; answer them by id with "
                        "Runtime.resume(): " + ", ".join(i.id for i in pending)
                    )
                if pending:  # the question seen now, by id: a concurrent answer moving the run on is not redone
                    return await self.resume(
                        agent,
                        thread_id,
                        {pending[0].id: text},
                        run_id=last.id,
                        deps=deps,
                        limits=limits,
                        if_busy=if_busy,
                        busy_timeout=busy_timeout,
                        on_event=on_event,
                    )
        return await self.run(
            agent,
            text,
            thread_id=thread_id,
            run_id=run_id,
            deps=deps,
            limits=limits,
            if_busy=if_busy,
            busy_timeout=busy_timeout,
            on_event=on_event,
        )

    async def cancel(self, run_id: str) -> Cancelled:
        """Stop a run and record that it was cancelled (``RunEnded(status="cancelled")``, once).

        A run executing in this process stops at its next await. A run not executing here (waiting for the human,
        or ``running`` in a process that stopped) is ended under the thread's lease.

        Raises:
            RunNotFound: no such run.
            ThreadBusy: the run executes in another live process (it holds the thread).
        """
        record = await self.store.get_run(run_id)
        if record is None:
            raise RunNotFound(run_id)
        task = self._executing.get(run_id)
        if task is not None and run_id not in self._cancelling:
            self._cancelling.add(run_id)
            task.cancel()
            await asyncio.wait({task})
            return Cancelled(run_id=run_id, thread_id=record.thread_id, status="cancelled")
        if task is not None:  # a concurrent cancel is ending it
            await asyncio.wait({task})
        if record.status in ENDED or task is not None:
            return Cancelled(run_id=run_id, thread_id=record.thread_id, status="already_ended")
        thread_id = record.thread_id
        owner, _ = await self._acquire(thread_id, "fail", 0.0)
        try:
            fresh = await self.store.get_run(run_id)
            if fresh is not None and fresh.status in ENDED:
                return Cancelled(run_id=run_id, thread_id=thread_id, status="already_ended")
            state = await self._state(record, {}, owner, limits=None, on_event=None)
            await end_cancelled(state, RunResult(status="cancelled", thread_id=thread_id, run_id=run_id))
        finally:
            await release(self.store, thread_id, owner, self.lease_ttl)
        return Cancelled(run_id=run_id, thread_id=thread_id, status="cancelled")

    def stream(
        self,
        agent: _Agent,
        input: str | HumanMessage,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        deps: Any = None,
        limits: Limits | None = None,
        if_busy: IfBusy = "fail",
        busy_timeout: float = 30.0,
    ) -> RunStream:
        """Run like :meth:`run` and yield its events as they happen, ending with :class:`RunEnded`.

        The run starts when the stream is first read. Closing the stream before the run ends (``await
        stream.aclose()``, or leaving ``async with runtime.stream(...) as stream``) cancels the run, which ends
        ``cancelled`` as with :meth:`cancel`, and returns once its end is recorded and the thread is free. Letting
        go of it unfinished does the same: a ``break`` out of ``async for`` over ``runtime.stream(...)`` (which
        drops it), or, for a stream kept in a variable, a ``break`` followed by a call of this runtime on the same
        thread from the same task (or the reading task ending); the call waits for the run's end instead of
        finding the thread busy. A run read from another task keeps going until that stream is read to its end or
        closed. Closing the stream from another task ends its reader's loop (after the run's ``RunEnded``, or at
        once if the run still waited for its thread). One task reads a stream at a time.

        Raises:
            UsageError: as :meth:`run` (its arguments are checked here, before anything starts); reading the
                stream from a second task while another waits on it.
        """
        check_input(input)
        check_call(thread_id, run_id, if_busy, busy_timeout)
        check_options(agent, limits, None)
        start = partial(
            self.run,
            agent,
            input,
            thread_id=thread_id,
            run_id=run_id,
            deps=deps,
            limits=limits,
            if_busy=if_busy,
            busy_timeout=busy_timeout,
        )
        return RunStream(
            lambda on_event: start(on_event=on_event),
            self._stop_stream,
            self._abandon_stream,
            self._streams.__setitem__,
        )

    async def messages(self, thread_id: str, namespace: str = "") -> list[Message]:
        """The thread's message history.

        Read from the thread's whole log, checked as :meth:`events` checks it: a damaged history is reported, never
        half-read.

        Raises:
            ThreadNotFound: no such thread.
            StoreCorrupt: an event of the thread cannot be read (an unknown kind, a damaged body, a gap).
        """
        await self._require(thread_id)
        return order_tool_results(await read_messages(self.store, thread_id, namespace))

    async def events(self, thread_id: str, *, after: int = 0) -> list[Event]:
        """The thread's stored events after sequence number ``after``.

        A follower of the bus that missed events (a gap in ``seq``, or a bus that dropped some) reads them here.

        Raises:
            ThreadNotFound: no such thread.
            StoreCorrupt: a stored event cannot be read (an unknown kind, a damaged body).
        """
        await self._require(thread_id)
        return await self.store.read_events(thread_id, after=after)

    async def pending(self, thread_id: str) -> tuple[RunStatus | None, list[Interrupt]]:
        """The status of the thread's last run and the interrupts it waits on.

        Raises:
            ThreadNotFound: no such thread.
        """
        await self._require(thread_id)
        last = await self.store.last_run(thread_id)
        if last is None:
            return None, []
        return last.status, pending_interrupts(await self.store.journal(last.id))

    # internals ----------------------------------------------------------------------------------------------------
    async def _require(self, thread_id: str) -> None:
        if await self.store.get_thread(thread_id) is None:
            raise ThreadNotFound(thread_id)

    async def _acquire(
        self, thread_id: str, if_busy: str, busy_timeout: float, metadata: dict[str, Any] | None = None
    ) -> tuple[str, Claim]:
        """Take the thread's lease (creating the thread with ``metadata`` if it is new): the owner name and what
        the store found (:meth:`Store.claim_thread`)."""
        adopted = adopt_unreleased(self.store, thread_id)  # a lease this process's last run there left behind
        owner = adopted or new_owner(random_id()[:8])
        deadline = time.monotonic() + busy_timeout
        try:
            while (claim := await self.store.claim_thread(thread_id, owner, self.lease_ttl, metadata)).holder:
                if self._ending(thread_id) or self._let_go(thread_id):  # a run of ours ending: wait for its end
                    await asyncio.sleep(self.busy_poll)
                    continue
                if if_busy == "fail":
                    raise ThreadBusy(thread_id, claim.holder, note=self._streamed(thread_id))
                if time.monotonic() >= deadline:
                    raise ThreadBusy(thread_id, claim.holder, waited=busy_timeout, note=self._streamed(thread_id))
                await asyncio.sleep(self.busy_poll)
        except StoreError:
            if adopted:  # still ours and still left behind: go on trying to release it
                await release(self.store, thread_id, adopted, self.lease_ttl)
            raise
        return owner, claim

    def _ending(self, thread_id: str) -> bool:
        """Whether the run executing here on ``thread_id`` is being cancelled (it ends at its next await)."""
        executing = self._on_thread.get(thread_id)
        if executing is None:
            return False
        run_id, task = executing
        return run_id in self._cancelling or task.cancelling() > 0

    def _let_go(self, thread_id: str) -> bool:
        """Whether the run executing here on ``thread_id`` is a stream's whose reader let go of it without closing
        it (a ``break`` out of ``async for`` over a stream kept in a variable, and a call on its thread from the
        same task; or a reader task that ended): its run is cancelled as a dropped stream's is, unless its end
        came already, and the caller waits for that end."""
        executing = self._on_thread.get(thread_id)
        if executing is None:
            return False
        stream = self._streams.get(executing[1])
        if stream is None or not stream.let_go_by(asyncio.current_task()):
            return False
        if not stream.ended:
            self._abandon_stream(executing[1])
        return True

    def _streamed(self, thread_id: str) -> str:
        """What :class:`ThreadBusy` adds when the run holding ``thread_id`` is one of this runtime's streams."""
        executing = self._on_thread.get(thread_id)
        if executing is None or executing[1] not in self._streams:
            return ""
        return (
            "the run is read through a stream of this runtime (Runtime.stream), which holds the thread until it is "
            "read to its end or closed: use `async with runtime.stream(...) as stream`, or `await stream.aclose()`"
        )

    def _bus_outlet(self) -> Outlet:
        """How runs hand events to :attr:`bus` (made again if the attribute was set to another bus)."""
        outlet = self._outlet
        if outlet.bus is not self.bus:
            outlet = self._outlet = Outlet(self.bus, outlet.context)
        return outlet

    def _running_in(self, task: asyncio.Task[Any]) -> str | None:
        """The run executing here in ``task``, if any."""
        return next((run_id for run_id, executing in self._executing.items() if executing is task), None)

    async def _stop_stream(self, task: asyncio.Task[Any]) -> None:
        """End the run of a stream that was closed, as :meth:`cancel` does, and wait for its task."""
        run_id = self._running_in(task)
        if run_id is not None:
            await self.cancel(run_id)
        else:  # not executing yet (waiting for its thread), or ending: nothing of it to record
            task.cancel()
        await asyncio.wait({task})

    def _abandon_stream(self, task: asyncio.Task[Any]) -> None:
        """Cancel the run of a stream nobody reads any more, as :meth:`cancel` does, without waiting."""
        run_id = self._running_in(task)
        if run_id is not None:
            if run_id in self._cancelling:
                return
            self._cancelling.add(run_id)
        task.cancel()

    async def _state(
        self,
        record: RunRecord,
        journal: dict[str, Event],
        owner: str,
        limits: Limits | None,
        on_event: Callable[[Event], Any] | None,
        head: tuple[int, str] | None = None,
    ) -> RunState:
        if head is None:
            head = await self.store.log_head(record.thread_id)
        return RunState(
            store=self.store,
            thread_id=record.thread_id,
            run_id=record.id,
            journal=journal,
            seq=head[0],
            head=head,
            limits=limits or self.limits,
            owner=owner,
            lease_ttl=self.lease_ttl,
            sinks=[on_event] if on_event is not None else [],
            bus=self._bus_outlet(),
            stream_tokens=on_event is not None,
            histories=self._histories,
        )

    async def _execute(
        self,
        agent: _Agent,
        record: RunRecord,
        journal: dict[str, Event],
        answers: dict[str, str],
        owner: str,
        deps: Any,
        limits: Limits | None,
        on_event: Callable[[Event], Any] | None,
        head: tuple[int, str] | None = None,
    ) -> tuple[RunResult, bool]:
        """Execute the run under ``owner``'s lease: its result, and whether its recorded end gave the lease back
        (else the caller releases it)."""
        task = asyncio.current_task()
        assert task is not None
        self._executing[record.id] = task
        self._on_thread[record.thread_id] = (record.id, task)
        stop_keeping: Callable[[], Awaitable[None]] | None = None
        state: RunState | None = None
        try:
            state = await self._state(record, journal, owner, limits, on_event, head)
            state.release_at_end = True
            stop_keeping = state.keep_lease()
            result = await execute(agent, record, state, answers, deps, self._cancelling)
            if result.status in _FINAL and state.lost_to is None and not state.pending:
                self._histories.advance(record.thread_id, state.stored)  # the next turn reads none of it back
            return result, state.released
        finally:
            if stop_keeping is not None:
                await stop_keeping()
            if state is not None and state.store_fault is not None and state.pending:
                self._unstored[record.id] = state.pending
            del self._executing[record.id]
            if self._on_thread.get(record.thread_id, (None,))[0] == record.id:
                del self._on_thread[record.thread_id]
            self._cancelling.discard(record.id)
