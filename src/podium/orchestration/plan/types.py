"""The plan service's data models and enums (docs/plan.md), and its two errors.

A *session* holds *plans*; a plan has *versions* (a clarification or a re-plan after a failure makes the next one)
and *steps* in an explicit order. A step moves through::

    planned -> awaiting_feedback -> approved -> action_requested -> completed | failed
                                 \\-> rejected

and a step its plan left undecided or unfinished (the plan superseded, its run cancelled) ends ``cancelled``.
Every transition is stored (the session record, see :mod:`podium.orchestration.plan.record`) and emitted as an
event. A plan's ``overall_status`` is stored too: ``in_progress``, ``completed`` (at least one step done; the
``reason`` counts the rejected ones), ``rejected`` (nothing was done: every step rejected, or the human stopped the
plan at a question), ``failed``, ``superseded`` when a newer version replaced it, or ``cancelled`` when its run was
cancelled.
"""

from __future__ import annotations

import time
import uuid
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from podium.errors import PodiumError, UsageError

__all__ = [
    "ActionRequest",
    "ActionResponse",
    "AgentMessage",
    "ApprovalRequest",
    "BAgentType",
    "DataType",
    "HumanClarification",
    "HumanFeedback",
    "HumanFeedbackStatus",
    "InputTask",
    "Plan",
    "PlanConflict",
    "PlanDraft",
    "PlanStateUpdate",
    "PlanStatus",
    "PlanWithSteps",
    "PlannedStep",
    "PlanningFailed",
    "Session",
    "Step",
    "StepStatus",
]


def _id() -> str:
    return uuid.uuid4().hex


class DataType(StrEnum):
    """What a stored record is."""

    session = "session"
    plan = "plan"
    step = "step"
    agent_message = "agent_message"


class BAgentType(StrEnum):
    """Kinds of participants."""

    human = "human"
    ai_assistant = "ai_assistant"
    external_service = "external_service"


class StepStatus(StrEnum):
    """Where a step stands (see the module docstring for the allowed moves)."""

    planned = "planned"
    awaiting_feedback = "awaiting_feedback"
    approved = "approved"
    rejected = "rejected"
    action_requested = "action_requested"
    completed = "completed"
    failed = "failed"
    cancelled = "cancelled"
    """Its plan ended before the step was decided or done: superseded by a newer version, or its run cancelled."""


class PlanStatus(StrEnum):
    """Where a plan version stands."""

    in_progress = "in_progress"
    completed = "completed"
    """At least one step ran; ``reason`` says how many were rejected, if any."""
    rejected = "rejected"
    """Nothing was done: the human rejected every step, or stopped the plan at the planner's question."""
    failed = "failed"
    superseded = "superseded"
    cancelled = "cancelled"
    """Its run was cancelled (the thread API, a newer run replacing it, the session deleted) before it ended."""


class HumanFeedbackStatus(StrEnum):
    """What became of the human's feedback on a step."""

    requested = "requested"
    accepted = "accepted"
    rejected = "rejected"


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = Field(default_factory=_id)
    """Unique id."""
    ts: float = Field(default_factory=time.time)
    """Creation time (seconds since the epoch)."""


class Session(_Record):
    """A user's conversation with the plan service."""

    data_type: Literal["session"] = "session"
    user_id: str = ""
    """Who owns it."""
    current_status: str = "active"
    """``active`` while a plan runs or waits, ``idle`` otherwise."""
    message_to_user: str | None = None
    """The last thing the service said to the user."""


class Step(_Record):
    """One action of a plan, assigned to one agent."""

    data_type: Literal["step"] = "step"
    plan_id: str
    session_id: str = ""
    user_id: str = ""
    order: int
    """Position in the plan, from 1."""
    action: str
    """What to do."""
    agent: str
    """Which agent does it."""
    tool: str | None = None
    """The tool the planner meant the step for, when it named one (the agent is told; the action stays prose)."""
    status: StepStatus = StepStatus.planned
    agent_reply: str | None = None
    """The agent's answer once it ran."""
    human_feedback: str | None = None
    """The human's comment on the step."""
    updated_action: str | None = None
    """The action as the human edited it (run instead of ``action``)."""
    human_approval_status: HumanFeedbackStatus = HumanFeedbackStatus.requested
    error: str | None = None
    """Why the step failed."""


class Plan(_Record):
    """One version of a plan."""

    data_type: Literal["plan"] = "plan"
    session_id: str
    user_id: str = ""
    version: int = 1
    """1 for the first plan of a task; each re-plan adds one."""
    supersedes: str | None = None
    """The plan this version replaced."""
    initial_goal: str
    """The goal, in the planner's words."""
    summary: str = ""
    overall_status: PlanStatus = PlanStatus.in_progress
    human_clarification_request: str | None = None
    """The planner's question, when information was missing."""
    human_clarification_response: str | None = None
    """The human's answer (which made the next version)."""
    reason: str | None = None
    """Why the plan failed or was superseded."""
    planner: str = ""
    """Which planner made it (``offline`` or the model's name)."""
    tools_shown: int = 0
    """How many catalogue tools the planner was shown."""


class PlanWithSteps(Plan):
    """A plan with its steps in order and their counts."""

    steps: list[Step] = Field(default_factory=list)
    total_steps: int = 0
    planned: int = 0
    awaiting_feedback: int = 0
    approved: int = 0
    rejected: int = 0
    action_requested: int = 0
    completed: int = 0
    failed: int = 0
    cancelled: int = 0
    completed_steps: int = 0
    """Steps completed."""
    pending_steps: int = 0
    """Steps still to approve or run."""

    def update_step_counts(self) -> PlanWithSteps:
        """Recount the steps (returns ``self``)."""
        counts = dict.fromkeys(StepStatus, 0)
        for step in self.steps:
            counts[step.status] += 1
        for status, count in counts.items():
            setattr(self, status.value, count)
        self.total_steps = len(self.steps)
        self.completed_steps = counts[StepStatus.completed]
        self.pending_steps = sum(
            counts[s]
            for s in (
                StepStatus.planned,
                StepStatus.awaiting_feedback,
                StepStatus.approved,
                StepStatus.action_requested,
            )
        )
        return self


class AgentMessage(_Record):
    """Something an agent (the planner, a specialist, the human) said in a session."""

    data_type: Literal["agent_message"] = "agent_message"
    session_id: str
    user_id: str = ""
    plan_id: str
    content: str
    source: str
    """Who said it: ``PlannerAgent``, ``HumanAgent`` or a specialist's name."""
    step_id: str | None = None


class InputTask(BaseModel):
    """A task for the planner."""

    session_id: str | None = Field(None, min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:-]+$")
    description: str = Field(min_length=1, max_length=20_000)

    @field_validator("description")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the description is empty: say what should be done")
        return value


class HumanFeedback(BaseModel):
    """The human's verdict on one step."""

    step_id: str
    plan_id: str
    session_id: str
    approved: bool
    human_feedback: str | None = Field(None, max_length=20_000)
    updated_action: str | None = Field(None, max_length=20_000)


class ApprovalRequest(BaseModel):
    """A verdict on one step, or on every remaining step when ``step_id`` is absent."""

    step_id: str | None = None
    plan_id: str
    session_id: str
    approved: bool = True
    human_feedback: str | None = Field(None, max_length=20_000)
    updated_action: str | None = Field(None, max_length=20_000)


class HumanClarification(BaseModel):
    """The human's answer to the planner's question (or new information): it re-plans."""

    plan_id: str
    session_id: str
    human_clarification: str = Field(min_length=1, max_length=20_000)


class ActionRequest(BaseModel):
    """What an agent is asked to do for a step."""

    session_id: str
    plan_id: str
    step_id: str | None = None
    action: str
    agent: str


class ActionResponse(BaseModel):
    """What came of an :class:`ActionRequest`."""

    step_id: str
    status: StepStatus
    message: str | None = None


class PlanStateUpdate(BaseModel):
    """A plan changed status."""

    plan_id: str
    session_id: str
    new_state: PlanStatus
    timestamp: float = Field(default_factory=time.time)


class PlannedStep(BaseModel):
    """One step as a planner writes it."""

    model_config = ConfigDict(extra="forbid")
    action: str = Field(min_length=1, description="What to do, in one sentence, with the details the agent needs.")
    agent: str = Field(min_length=1, description="The name of the agent that does it.")
    tool: str | None = Field(None, description="The agent's tool the step is for, if one fits, else null.")


class PlanDraft(BaseModel):
    """A planner's structured output."""

    model_config = ConfigDict(extra="forbid")
    initial_goal: str = Field(min_length=1, description="The goal, restated in one sentence.")
    steps: list[PlannedStep] = Field(description="The steps, in the order they must run.")
    summary: str = Field(description="A one-line summary of the plan.")
    human_clarification_request: str | None = Field(
        None, description="A question for the human when information needed to plan is missing, else null."
    )
    unplanned: SkipJsonSchema[list[str]] = Field(default_factory=list)
    """Parts of the task no agent can do, left out of the steps (the offline planner's: said to the human before
    the first step; never part of the schema a model is shown)."""


class PlanningFailed(PodiumError):
    """The planner could not produce a valid plan; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"planning failed: {reason}")
        self.reason = reason
        """What was wrong with the planner's last answer."""


class PlanConflict(UsageError):
    """A verdict that does not fit the plan's state: a step approved out of order or twice, an unknown step."""
