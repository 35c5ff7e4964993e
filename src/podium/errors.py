"""Podium's exceptions.

Every failure the library raises derives from :class:`PodiumError`::

    PodiumError
    ├── UsageError               the caller must change something (bad option, bad argument)
    │   └── ScriptMismatch       a test's ScriptedModel got more requests than replies, or fewer (podium.testing)
    ├── InvalidData              data is not a valid message or event (its JSON form)
    ├── ThreadNotFound           no conversation with that id in the store
    ├── ThreadBusy               another run holds the conversation (single writer)
    ├── ThreadWaiting            the conversation waits for an answer to an interrupt
    ├── RunNotFound              no run with that id in the store
    ├── SubscriberLagged         an event-bus subscriber fell behind and missed events
    ├── StoreError               the store cannot be used
    │   ├── LeaseLost            another process took the thread's write lease over (this writer is fenced)
    │   ├── StoreLocked          the database stayed locked past the busy timeout
    │   └── StoreCorrupt         the file is damaged, not a Podium database, or from a newer Podium
    ├── ModelError               a model could not answer
    │   ├── ModelRequestsBlocked real model requests are blocked (tests)
    │   ├── ModelHTTPError       the endpoint answered with an error status
    │   └── CassetteError        a replay cassette is malformed or has no answer for a request
    ├── ToolDefinitionError      a function cannot be made into a tool
    ├── ToolArgumentsError       a model's arguments do not fit a tool (the text is for the model)
    ├── ToolTimeout              a tool call did not finish within the tool's timeout
    └── AgentError               an agent gave up
        ├── StepLimitExceeded    the step limit was reached
        └── ToolRetriesExceeded  the model kept producing failing tool calls

Control-flow signals are not failures and do not derive from :class:`PodiumError`::

    ModelRetry (Exception)       a tool asks the model to try again with the given advice
    └── QuestionDeclined         the human declined a tool's question ("never mind"): the model is told
    Suspended (BaseException)    the run waits for the human; the runtime ends it as ``interrupted``
    LimitReached (BaseException) the run reached one of its limits; the runtime ends it as ``limit_exceeded``

A run's task cancelled with :data:`PROCESS_STOPPING` as its message (``task.cancel(PROCESS_STOPPING)``: a server
stopping) is left as a crash leaves it, no end recorded, for the next start or another process to finish; any other
cancellation ends the run ``cancelled``.

``Suspended`` and ``LimitReached`` derive from ``BaseException`` so that a tool's ``except Exception`` cannot
swallow them; code that catches everything must let them through. A run's outcome (see ``RunResult``) reports
them, so callers of the runtime never see them raised.

:class:`InvalidData` and :class:`ToolArgumentsError` also derive from ``ValueError``, which they are.
Exceptions carry typed fields and do nothing when constructed.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentError",
    "CassetteError",
    "InvalidData",
    "LeaseLost",
    "LimitReached",
    "ModelError",
    "ModelHTTPError",
    "ModelRequestsBlocked",
    "ModelRetry",
    "PodiumError",
    "QuestionDeclined",
    "RunNotFound",
    "StepLimitExceeded",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "SubscriberLagged",
    "Suspended",
    "ThreadBusy",
    "ThreadNotFound",
    "ThreadWaiting",
    "ToolArgumentsError",
    "ToolDefinitionError",
    "ToolRetriesExceeded",
    "ToolTimeout",
    "UsageError",
]

PROCESS_STOPPING = "podium: the process is stopping"
"""The message of a run task's cancellation that leaves the run unfinished (not ended ``cancelled``): its process
stops, and the next start or another process finishes it from its journal. (A message, not an exception: outside
``__all__``, which lists the exceptions.)"""


class PodiumError(Exception):
    """Root of every error Podium raises."""


class UsageError(PodiumError):
    """The library was called in a way it does not support; the message says what to change."""


class InvalidData(PodiumError, ValueError):
    """Data is not a valid message or event (the JSON form the stores, the command line and the server use)."""


class ThreadNotFound(PodiumError):
    """No conversation with this id exists in the store."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"no thread {thread_id!r} in the store")
        self.thread_id = thread_id


class ThreadBusy(PodiumError):
    """Another run is in progress on this conversation (one writer per thread)."""

    def __init__(self, thread_id: str, owner: str, *, waited: float | None = None, note: str = "") -> None:
        super().__init__(
            (
                f"thread {thread_id!r} is busy: a run held by {owner} is in progress; "
                "wait for it to end or pass if_busy='wait'"
                if waited is None
                else f"thread {thread_id!r} is still busy after waiting {waited:g} s (busy_timeout): a run held by "
                f"{owner} is in progress; wait longer (a larger busy_timeout) or try again once it ends"
            )
            + (f"; {note}" if note else "")
        )
        self.thread_id = thread_id
        self.owner = owner
        self.waited = waited
        """Seconds waited for the thread (``if_busy="wait"``), or ``None`` when the call did not wait."""


class ThreadWaiting(PodiumError):
    """The conversation is suspended on an interrupt; answer it with ``Runtime.resume``."""

    def __init__(self, thread_id: str, interrupt_ids: list[str], *, message: str | None = None) -> None:
        super().__init__(
            message
            or f"thread {thread_id!r} is waiting for an answer to interrupt(s) "
            f"{', '.join(interrupt_ids)}; call Runtime.resume() with the answer"
        )
        self.thread_id = thread_id
        self.interrupt_ids = interrupt_ids


class RunNotFound(PodiumError):
    """No run with that id in the store."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run {run_id!r} in this store")
        self.run_id = run_id


class SubscriberLagged(PodiumError):
    """An event-bus subscriber fell behind: its queue overflowed and events were dropped for it.

    Re-read the stored events from the store after :attr:`last_seq` (the last stored event it received).
    """

    def __init__(self, last_seq: int) -> None:
        super().__init__(
            f"the subscriber fell behind and missed events; re-read stored events after seq {last_seq} from the store"
        )
        self.last_seq = last_seq


class StoreError(PodiumError):
    """The store cannot be used (I/O, schema or database error)."""


class LeaseLost(StoreError):
    """Another process took the thread's write lease over: this writer is fenced off and must stop."""

    def __init__(self, thread_id: str, owner: str, holder: str | None) -> None:
        now = f"now held by {holder}" if holder else "no longer held by it"
        super().__init__(f"{owner} lost the write lease of thread {thread_id!r} ({now}); it writes nothing more")
        self.thread_id = thread_id
        self.holder = holder


class StoreLocked(StoreError):
    """The database stayed locked by another connection past the busy timeout."""


class StoreCorrupt(StoreError):
    """The stored data is damaged, is not a Podium database, or was written by a newer Podium.

    A read that finds a gap in a thread's log, or a page SQLite finds malformed, raises this: never a partial log.
    """


class ModelError(PodiumError):
    """A model could not produce a reply."""


class ModelRequestsBlocked(ModelError):
    """Requests to real models are blocked (set while tests run)."""


class ModelHTTPError(ModelError):
    """The model endpoint answered with an error status after retries."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"model endpoint answered {status_code}: {message}")
        self.status_code = status_code


class CassetteError(ModelError):
    """A replay cassette is malformed, or holds no answer for the request made."""


class ToolDefinitionError(PodiumError):
    """A function cannot be turned into a tool (for example an untyped parameter)."""


class ToolArgumentsError(PodiumError, ValueError):
    """The arguments a model gave do not fit the tool; the message tells the model how to fix them."""

    def __init__(self, message: str, *, problem: str | None = None) -> None:
        super().__init__(message)
        self.problem = problem or message
        """What does not fit, for a person (without the schema the message shows a model)."""


class ToolTimeout(PodiumError):
    """A tool call did not finish within its tool's timeout (a sync tool's thread may still be running)."""

    def __init__(self, tool: str, timeout: float) -> None:
        super().__init__(f"tool {tool!r} did not finish within its timeout of {timeout:g} s")
        self.tool = tool
        self.timeout = timeout


class AgentError(PodiumError):
    """An agent stopped without an answer."""


class StepLimitExceeded(AgentError):
    """The agent reached its step limit before answering."""

    def __init__(self, agent: str, limit: int) -> None:
        super().__init__(f"agent {agent!r} reached its step limit of {limit} model calls without answering")
        self.agent = agent
        self.limit = limit


class ToolRetriesExceeded(AgentError):
    """The model produced failing tool calls more times in a row than allowed."""

    def __init__(self, agent: str, retries: int, last_error: str) -> None:
        super().__init__(
            f"agent {agent!r} gave up after {retries} consecutive failing tool calls; last error: {last_error}"
        )
        self.agent = agent
        self.retries = retries
        self.last_error = last_error


class ModelRetry(Exception):
    """Raised by a tool to send ``message`` back to the model so it can try again.

    This is control flow, not a failure: the agent answers the tool call with the message and lets the model
    correct itself (bounded by the agent's retry limit).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class QuestionDeclined(ModelRetry):
    """The human declined to answer a tool's question ("never mind", "cancel", "skip it"): the tool call ends here,
    and the model is told so, to answer what the human says next instead of asking again."""

    def __init__(self, question: str, said: str) -> None:
        super().__init__(
            f"The user declined to answer the question {question!r} (they said {said!r}). Do not ask it again; "
            "acknowledge it and help with whatever they ask next."
        )
        self.question = question
        self.said = said


class Suspended(BaseException):
    """Unwinds a run that waits for the human; the runtime turns it into an ``interrupted`` outcome.

    A ``BaseException`` so that ``except Exception`` in user code (tools that catch everything) cannot swallow it.
    """

    def __init__(self, interrupts: list[Any]) -> None:
        super().__init__(f"waiting for {len(interrupts)} answer(s)")
        self.interrupts = interrupts
        """The :class:`podium.Interrupt` events waiting for answers (typed loosely: errors sit below events)."""


class LimitReached(BaseException):
    """Unwinds a run that reached one of its limits (kept out of reach of ``except Exception``).

    The runtime turns it into a ``limit_exceeded`` outcome naming ``limit`` (``"tokens"``, ``"requests"``...).
    """

    def __init__(self, limit: str, reason: str) -> None:
        super().__init__(reason)
        self.limit = limit
        self.reason = reason
