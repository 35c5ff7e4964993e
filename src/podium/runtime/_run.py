"""How one execution of a run goes, and what it returns: :class:`RunResult`, :class:`Cancelled`.

:func:`execute` records a resume's answers as journal steps, re-executes the agent from the run's input (completed
steps replay from the journal) and records the outcome; the :class:`~podium.runtime.Runtime` around it handles
threads, leases and cancellation requests.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from podium.errors import (
    PROCESS_STOPPING,
    AgentError,
    LeaseLost,
    LimitReached,
    StepLimitExceeded,
    StoreError,
    Suspended,
    UsageError,
)
from podium.events import ErrorEvent, Event, Interrupt, InterruptAnswered, InterruptRaised, RunEnded, RunStarted
from podium.messages import HumanMessage, Usage, message_from_dict
from podium.runtime.context import RunContext
from podium.runtime.journal import RunState
from podium.store.base import RunRecord, RunStatus, Store

if TYPE_CHECKING:
    from podium.runtime.bus import Outlet

_log = logging.getLogger("podium.runtime")
_unreleased: dict[tuple[int, str], tuple[Store, str, asyncio.Task[None]]] = {}
"""Leases of runs of this process that ended but could not release them, by (store, thread): the owner's name and
the task trying again in the background."""

__all__ = ["Cancelled", "IfBusy", "RunResult"]


class _Answer(Protocol):
    output: str


class _Agent(Protocol):
    """What the runtime runs: any :class:`podium.Agent` (the runtime sits below the agents and names only this)."""

    name: str

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage, /) -> _Answer:
        """Answer ``input`` in ``ctx``."""


@dataclass(slots=True, kw_only=True)
class RunResult:
    """How a run stopped. ``status`` says which way; nothing is ever a bare ``None``."""

    status: RunStatus
    """``completed``, ``interrupted`` (waiting for the human), ``failed``, ``limit_exceeded`` or ``cancelled``."""
    thread_id: str
    """The conversation."""
    run_id: str
    """The run."""
    output: str | None = None
    """The final answer, when completed."""
    reason: str = ""
    """Why it stopped, when not completed."""
    limit: str | None = None
    """Which limit was reached, for ``limit_exceeded``: ``model_calls``, ``tokens``, ``time``, ``steps``, or one an
    orchestration sets (``handoffs`` for a supervisor)."""
    interrupts: list[Interrupt] = field(default_factory=list)
    """The questions waiting for the human, when interrupted."""
    usage: Usage = field(default_factory=Usage)
    """Tokens and model calls of the run (all executions together)."""
    error: BaseException | None = None
    """The exception that failed the run, in the process that saw it (not stored)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (as stored with the run)."""
        return {
            "status": self.status,
            "output": self.output,
            "reason": self.reason,
            "limit": self.limit,
            "interrupts": [i.to_dict() for i in self.interrupts],
            "usage": self.usage.to_dict(),
        }


def pending_interrupts(journal: dict[str, Event]) -> list[Interrupt]:
    return [e.interrupt for key, e in journal.items() if isinstance(e, InterruptRaised) and key + "!" not in journal]


@dataclass(frozen=True, slots=True)
class Cancelled:
    """What :meth:`Runtime.cancel` did."""

    run_id: str
    """The run."""
    thread_id: str
    """Its thread."""
    status: Literal["cancelled", "already_ended"]
    """``cancelled`` (this call ended it) or ``already_ended`` (it had stopped before)."""


IfBusy = Literal["fail", "wait"]
ENDED = ("completed", "failed", "limit_exceeded", "cancelled")


def answers_by_id(record: RunRecord, pending: list[Interrupt], answer: str | dict[str, str] | None) -> dict[str, str]:
    if record.status == "running" and (answer is None or not pending):
        # a run whose process stopped while it asked (between storing the answer and its status) still takes one
        if answer is not None:
            raise UsageError(f"run {record.id!r} is not waiting for an answer; resume it without one")
        return {}
    if answer is None:
        raise UsageError(f"run {record.id!r} waits for an answer to {', '.join(i.id for i in pending)}")
    if isinstance(answer, str):
        if len(pending) != 1:
            raise UsageError(
                f"run {record.id!r} waits on {len(pending)} interrupts; pass answers by id: "
                + ", ".join(i.id for i in pending)
            )
        return {pending[0].id: answer}
    known = {i.id for i in pending}
    unknown = sorted(set(answer) - known)
    if unknown:
        raise UsageError(
            f"no pending interrupt {', '.join(unknown)} in run {record.id!r} (answered meanwhile?); it waits on "
            + (", ".join(i.id for i in pending) or "nothing")
        )
    return dict(answer)


async def execute(
    agent: _Agent, record: RunRecord, state: RunState, answers: dict[str, str], deps: Any, cancelling: set[str]
) -> RunResult:
    """Execute ``record`` once more: record the answers, replay the journal, run the agent, record the outcome.

    A cancel through :meth:`Runtime.cancel` (``record.id`` in ``cancelling``) ends the run as ``cancelled`` and
    returns; any other cancellation records the same and propagates.
    """
    limits = state.limits
    journal = state.journal
    for interrupt_id, text in answers.items():
        await state.record(InterruptAnswered(answer=text, key=interrupt_id + "!"))
    attempt = 1 + sum(1 for key in journal if key.startswith("@start"))
    message = message_from_dict(record.input or {"kind": "human", "content": ""})
    assert isinstance(message, HumanMessage)
    await state.record(RunStarted(input=message if attempt == 1 else None, attempt=attempt, key=f"@start{attempt}"))
    ctx: RunContext[Any] = RunContext(state, path=(agent.name,), namespace="", deps=deps)
    result = RunResult(status="completed", thread_id=record.thread_id, run_id=record.id)
    try:
        async with asyncio.timeout(limits.timeout):
            outcome = await agent.invoke(ctx, message)
        result.output = outcome.output
    except Suspended as suspended:
        result.status = "interrupted"
        result.interrupts = pending_interrupts(state.journal) or suspended.interrupts
        result.reason = f"waiting for the human: {result.interrupts[0].prompt}"
    except LimitReached as reached:
        result.status, result.limit, result.reason = "limit_exceeded", reached.limit, reached.reason
    except TimeoutError:
        result.status, result.limit = "limit_exceeded", "time"
        result.reason = f"the run took longer than its timeout of {limits.timeout} s"
    except StepLimitExceeded as exc:
        result.status, result.limit, result.reason, result.error = "limit_exceeded", "steps", str(exc), exc
    except (AgentError, Exception) as exc:
        result.status, result.reason, result.error = "failed", f"{type(exc).__name__}: {exc}", exc
        if state.lost_to is not None:  # the thread belongs to another run now: leave its records alone
            return _lost(state, result)
        if state.store_fault is not None:  # the store failed, not the agent: the run stays resumable
            raise
        await state.record(ErrorEvent(error=type(exc).__name__, message=str(exc), path=ctx.path))
    except asyncio.CancelledError as exc:
        if exc.args == (PROCESS_STOPPING,):  # its process stops: left as a crash leaves it, finished elsewhere
            raise
        result.status, result.usage = "cancelled", state.usage
        if record.id not in cancelling:  # cancelled from outside (a caller gave up): end it, propagate
            await asyncio.shield(end_cancelled(state, result, path=ctx.path, final=False))
            raise
        task = asyncio.current_task()
        assert task is not None
        task.uncancel()
        await end_cancelled(state, result, path=ctx.path)
        return result
    result.usage = state.usage
    end = RunEnded(status=result.status, reason=result.reason, output=result.output, path=ctx.path)
    end.key = f"@end{attempt}"  # once per execution: a kill before the status update is finished by finish_ended
    try:
        await state.record(end)
        await state.flush(outcome=(result.status, result.to_dict()))  # its end and its status: one transaction
    except LeaseLost:
        return _lost(state, result)
    return result


def _lost(state: RunState, result: RunResult) -> RunResult:
    """The outcome of an execution fenced off by the store: another process owns the thread and finishes the run."""
    lost = LeaseLost(state.thread_id, state.owner, state.lost_to)
    result.status, result.reason, result.error, result.output = "failed", str(lost), lost, None
    result.usage = state.usage
    return result


CANCEL_KEY = "@cancel"
"""The journal key of a run's cancellation (recorded once: a stored cancel is final)."""


async def end_cancelled(state: RunState, result: RunResult, *, path: tuple[str, ...] = (), final: bool = True) -> None:
    """Record that the run of ``state`` was cancelled (its ``RunEnded`` and its status, in one write).

    ``final``: cancelled by :meth:`~podium.runtime.Runtime.cancel`, for good (its end is keyed, so no answer or
    recovery executes it again); otherwise its caller gave up (a server stopping may set it running again, to be
    finished by its next start).
    """
    result.reason = result.reason or "cancelled"
    if state.lost_to is not None:  # another process owns the thread now: it writes the run's end
        return
    # a write cut short may have left a gap: what was recorded but not stored goes right after what is stored
    last = await state.store.last_seq(state.thread_id)
    for offset, event in enumerate(state.pending, 1):
        event.seq = last + offset
    state.seq = last + len(state.pending)
    end = RunEnded(status="cancelled", reason=result.reason, path=path)
    if final:
        end.key = CANCEL_KEY  # once per run: a stored cancel is final (see recorded_end)
    await state.record(end)
    await state.flush(outcome=("cancelled", result.to_dict()))  # its end and its status: one transaction


def recorded_end(journal: dict[str, Event]) -> RunEnded | None:
    """The end its last execution recorded, if the process stopped before storing the run's status."""
    cancelled = journal.get(CANCEL_KEY)
    if isinstance(cancelled, RunEnded):  # a cancelled run stays cancelled, whatever its status says
        return cancelled
    attempt = sum(1 for key in journal if key.startswith("@start"))
    end = journal.get(f"@end{attempt}")
    if not isinstance(end, RunEnded) or any(e.seq > end.seq for e in journal.values()):
        return None  # not ended, or answers were recorded after it: execute again
    return end


async def finish_ended(state: RunState, record: RunRecord, end: RunEnded) -> RunResult:
    """Store the status of a run whose end is recorded (once: its end event is never written twice)."""
    status: RunStatus = end.status if end.status in (*ENDED, "interrupted") else "failed"  # type: ignore[assignment]
    result = RunResult(status=status, thread_id=record.thread_id, run_id=record.id, output=end.output)
    result.reason = end.reason
    if status == "interrupted":
        result.interrupts = pending_interrupts(state.journal)
    await state.store.update_run(record.id, status, result.to_dict())
    return result


async def restore_unstored(
    store: Store, bus: Outlet, thread_id: str, journal: dict[str, Event], events: list[Event], owner: str
) -> None:
    """Store what an execution of this process recorded but could not store (its store failed), into ``journal``.

    Only if nothing was written to the thread since (the events' numbers follow on): the effects they record (a
    tool's result) are then not lost and not repeated by the next execution.
    """
    if not events or await store.last_seq(thread_id) != events[0].seq - 1:
        return
    await store.append_events(thread_id, events, owner=owner)
    for event in events:
        if event.key is not None:
            journal[event.key] = event
        try:
            bus.put(thread_id, event)
        except Exception:  # stored: a bus in trouble must not stop the resume
            _log.exception("publishing an event of thread %s failed; live followers may miss it", thread_id)


async def release(store: Store, thread_id: str, owner: str, ttl: float) -> None:
    """Release the thread's lease; if the store fails, keep trying in the background until the lease expires.

    A store in trouble (a lock held by another process) must neither replace the error the run stopped with nor
    keep the thread busy for a whole lease once it recovers.
    """
    try:
        await store.release_thread(thread_id, owner)
    except StoreError as exc:
        _log.warning("releasing thread %s failed (%s); trying again in the background", thread_id, exc)
        key = (id(store), thread_id)
        task = asyncio.get_running_loop().create_task(_release_later(store, thread_id, owner, ttl))
        _unreleased[key] = (store, owner, task)
        task.add_done_callback(lambda done: _forget(key, done))


def _forget(key: tuple[int, str], task: asyncio.Task[None]) -> None:
    entry = _unreleased.get(key)
    if entry is not None and entry[2] is task:  # not a later run's entry for the same thread
        del _unreleased[key]


def adopt_unreleased(store: Store, thread_id: str) -> str | None:
    """The owner name of a run of this process that ended on ``thread_id`` without releasing its lease, if any.

    Its release in the background stops: the caller, a new run of this process, takes the lease over under that
    name (the run that held it has ended, so nothing else writes under it). Without this, the lease left behind by
    a store in trouble would make the thread busy for this process's next run until the lease expires.
    """
    entry = _unreleased.pop((id(store), thread_id), None)  # the entry holds its store: the id is that one's
    if entry is None:
        return None
    entry[2].cancel()
    return entry[1]


async def _release_later(store: Store, thread_id: str, owner: str, ttl: float) -> None:
    deadline = time.monotonic() + ttl
    while time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        try:
            await store.release_thread(thread_id, owner)
            return
        except StoreError:
            continue
