"""Plan and execute (docs/plan.md): a planner turns a task into ordered steps, each assigned to a specialist agent;
the human approves, rejects, edits or clarifies; approved steps run with their agents' tools.

- :class:`PlanAndExecute` is the agent (one run per task; approvals and clarifications are interrupts).
- :class:`LLMPlanner` plans with a model (structured output, validated, retried); :class:`OfflinePlanner` plans
  with no model, deterministically; both are shown only the catalogue's tools relevant to the task.
- :class:`Catalogue` holds the :class:`Specialist` agents and their tools, with retrieval over them.
- :mod:`~podium.orchestration.plan.types` has the seed's data models and enums; :class:`SessionRecord` is a
  session as stored, and :func:`answer_for` turns an HTTP verdict into the answer that resumes the plan;
  :func:`is_verdict` tells a verdict from a task, and :func:`concern` is the caution check made before planning.
"""

from podium.orchestration.plan.agent import PlanAndExecute
from podium.orchestration.plan.catalogue import Catalogue, CatalogueTool, Specialist, words
from podium.orchestration.plan.caution import concern
from podium.orchestration.plan.facts import facts
from podium.orchestration.plan.offline import OfflineAgentModel, OfflinePlanner
from podium.orchestration.plan.outcome import cannot_do_step
from podium.orchestration.plan.planner import DoneStep, LLMPlanner, Planner, PlanRequest, check_draft
from podium.orchestration.plan.record import (
    RECORD_KEY,
    SessionRecord,
    Verdict,
    agent_messages,
    answer_for,
    describe,
    is_stop,
    is_verdict,
    parse_verdict,
)
from podium.orchestration.plan.types import (
    ActionRequest,
    ActionResponse,
    AgentMessage,
    ApprovalRequest,
    BAgentType,
    DataType,
    HumanClarification,
    HumanFeedback,
    HumanFeedbackStatus,
    InputTask,
    Plan,
    PlanConflict,
    PlanDraft,
    PlannedStep,
    PlanningFailed,
    PlanStateUpdate,
    PlanStatus,
    PlanWithSteps,
    Session,
    Step,
    StepStatus,
)

__all__ = [
    "RECORD_KEY",
    "ActionRequest",
    "ActionResponse",
    "AgentMessage",
    "ApprovalRequest",
    "BAgentType",
    "Catalogue",
    "CatalogueTool",
    "DataType",
    "DoneStep",
    "HumanClarification",
    "HumanFeedback",
    "HumanFeedbackStatus",
    "InputTask",
    "LLMPlanner",
    "OfflineAgentModel",
    "OfflinePlanner",
    "Plan",
    "PlanAndExecute",
    "PlanConflict",
    "PlanDraft",
    "PlanRequest",
    "PlanStateUpdate",
    "PlanStatus",
    "PlanWithSteps",
    "PlannedStep",
    "Planner",
    "PlanningFailed",
    "Session",
    "SessionRecord",
    "Specialist",
    "Step",
    "StepStatus",
    "Verdict",
    "agent_messages",
    "answer_for",
    "cannot_do_step",
    "check_draft",
    "concern",
    "describe",
    "facts",
    "is_stop",
    "is_verdict",
    "parse_verdict",
    "words",
]
