"""The options of a supervisor and of a swarm: one typed, validated object each.

:func:`~podium.orchestration.supervisor.create_supervisor` and :func:`~podium.orchestration.supervisor.create_swarm`
take the options as keyword arguments (the familiar call) and build these objects;
:class:`~podium.orchestration.supervisor.Supervisor` and :class:`~podium.orchestration.supervisor.Swarm` take the
objects themselves. Each option is described, and checked, here only.

Token and model-call budgets are :class:`~podium.Limits` only: the run's (``Runtime.run(..., limits=...)``), and,
scoped to a part of the run, a child context's (``ctx.child(..., limits=...)``); a supervisor gives each handoff its
own with ``agent_limits``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from podium.errors import UsageError
from podium.messages import AIMessage
from podium.models.base import ModelRequest, ModelSettings
from podium.orchestration.supervisor.agent_name import AgentNameMode
from podium.runtime.journal import Limits

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "AfterModel",
    "BeforeModel",
    "ContextPolicy",
    "OutputMode",
    "ResponseFormat",
    "SupervisorOptions",
    "SwarmOptions",
]

ContextPolicy = Literal["scoped", "shared"]
"""What delegated agents see: a task (``scoped``) or the whole shared conversation (``shared``)."""
OutputMode = Literal["last_message", "full_history"]
"""What of an agent's work enters the shared conversation (``shared`` policy)."""
BeforeModel = Callable[[ModelRequest], ModelRequest | Awaitable[ModelRequest]]
"""A hook that may change each request of the supervisor's model (trimming, redaction)."""
AfterModel = Callable[[AIMessage], AIMessage | Awaitable[AIMessage]]
"""A hook that may change each reply of the supervisor's model (guardrails); it must be deterministic."""
ResponseFormat: TypeAlias = "type[BaseModel] | dict[str, Any]"
"""A pydantic model or a JSON schema for the structured final response."""


def _check_counts(max_handoffs: int, max_steps: int) -> None:
    if max_handoffs < 0 or max_steps < 1:
        raise UsageError("max_handoffs must be at least 0 and max_steps at least 1")


@dataclass(frozen=True, slots=True, kw_only=True)
class SupervisorOptions:
    """How a supervisor delegates, what its agents see, and when it stops.

    Raises:
        UsageError: an unknown policy or mode, a combination that does not fit, or a count out of range.
    """

    context: ContextPolicy = "scoped"
    """``scoped``: handoffs carry a task, agents see only what they need; ``shared``: everyone sees the
    conversation, with ``Successfully transferred to <agent>`` acknowledgements and hand-back pairs."""
    output_mode: OutputMode = "last_message"
    """``shared`` policy: add an agent's ``last_message`` or its ``full_history`` to the conversation."""
    add_handoff_messages: bool = True
    """Keep the handoff calls in the conversation, answered by the acknowledgement (``shared``) or by the agent's
    result (``scoped``). Off, the calls are left out and the agent's answer stands as its own message (fewer
    characters; the model no longer sees what it asked)."""
    add_handoff_back_messages: bool | None = None
    """``shared`` policy: add the hand-back pair after an agent's answer (``None``: as ``add_handoff_messages``)."""
    handoff_tool_prefix: str | None = None
    """Prefix of the default handoff tools' names (``None``: ``transfer_to_``)."""
    forward_message: bool = False
    """Give the supervisor a ``forward_message`` tool that passes an agent's answer to the user verbatim and ends
    the turn without another model call."""
    parallel_tool_calls: bool = False
    """Let the model hand off to several agents at once (they run concurrently)."""
    response_format: ResponseFormat | tuple[str, ResponseFormat] | None = None
    """A pydantic model or JSON schema (or ``(prompt, schema)``): after the final answer one more model call
    produces it; it is the result's ``data`` and is sent as an artifact."""
    before_model: BeforeModel | None = None
    """A hook changing each request of the supervisor's model."""
    after_model: AfterModel | None = None
    """A hook changing each reply of the supervisor's model (deterministic; its result is recorded)."""
    max_handoffs: int = 20
    """Handoffs allowed in one turn; one more ends the run with status ``limit_exceeded`` and limit ``handoffs``."""
    max_steps: int = 25
    """Model calls of the supervisor in one turn before :class:`~podium.StepLimitExceeded`."""
    max_tool_retries: int = 3
    """Rounds in a row where every call of the supervisor failed (an unknown tool, bad arguments, a tool's error)
    allowed before :class:`~podium.ToolRetriesExceeded`, as for a ``ReactAgent``."""
    agent_limits: Limits | None = None
    """A budget of each handoff (model calls and tokens of the agent it runs and everything below it), besides the
    run's :class:`~podium.Limits`; reaching it ends the run with status ``limit_exceeded``."""
    share_question: bool = True
    """``scoped`` policy: add the user's message to a task that does not quote it."""
    worker_rounds: int | None = 0
    """``scoped`` policy: the supervisor and its ``ReactAgent`` workers are shown the latest ``worker_rounds`` tool
    rounds of the current turn in full and the earlier ones as one line each under the task ("Done so far"): with
    ``0`` (the default) a worker is shown its prompt and its task with every call and result so far, nothing more,
    and the supervisor its latest round whole (at least one); ``None`` shows every round in full. The recorded
    history is complete either way."""
    settings: ModelSettings | None = None
    """Request options of the supervisor's model (``parallel_tool_calls`` set from the option above)."""
    include_agent_name: AgentNameMode | None = None
    """``"inline"`` shows the supervisor's model each agent's name inside its messages' text, for providers that
    ignore ``name``."""

    def __post_init__(self) -> None:
        if self.context not in ("scoped", "shared"):
            raise UsageError(f"context must be 'scoped' or 'shared', not {self.context!r}")
        if self.output_mode not in ("last_message", "full_history"):
            raise UsageError(f"output_mode must be 'last_message' or 'full_history', not {self.output_mode!r}")
        if self.context == "scoped" and self.output_mode == "full_history":
            raise UsageError("output_mode='full_history' shares agents' internals: use it with context='shared'")
        _check_counts(self.max_handoffs, self.max_steps)
        if self.max_tool_retries < 0:
            raise UsageError("max_tool_retries must be 0 or more")
        if self.worker_rounds is not None and self.worker_rounds < 0:
            raise UsageError("worker_rounds must be 0 or more (or None to show every round in full)")
        if self.agent_limits is not None and self.agent_limits.timeout is not None:
            raise UsageError("agent_limits bound model calls and tokens; give timeouts to the run's Limits")

    @property
    def hand_back(self) -> bool:
        """Whether the hand-back pair follows an agent's answer (``shared`` policy)."""
        return self.add_handoff_messages if self.add_handoff_back_messages is None else self.add_handoff_back_messages


@dataclass(frozen=True, slots=True, kw_only=True)
class SwarmOptions:
    """Who may hand off to whom in a swarm, and when it stops.

    Raises:
        UsageError: a count out of range.
    """

    handoffs: Mapping[str, Sequence[str]] | None = None
    """Who may hand off to whom (``None``: everyone to everyone else)."""
    handoff_tool_prefix: str | None = None
    """Prefix of the handoff tools' names (``None``: ``transfer_to_``)."""
    max_handoffs: int = 10
    """Handoffs allowed in one turn; one more ends the run with limit ``handoffs``."""
    max_steps: int = 50
    """Model calls in one turn before :class:`~podium.StepLimitExceeded`."""

    def __post_init__(self) -> None:
        _check_counts(self.max_handoffs, self.max_steps)
