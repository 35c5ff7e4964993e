"""Planners: from a task (and what the human said, and what already ran) to a :class:`PlanDraft`.

:class:`LLMPlanner` asks a model for structured output (the draft's JSON schema as the response format), shown the
specialists and only the catalogue's tools relevant to the task. An answer that is not valid JSON, does not fit the
schema, names an unknown agent or has no steps (and no question) is sent back with the problem, up to
``retries`` times; then :class:`PlanningFailed` says why, and the plan is stored as failed (never as a success).
The offline planner is :class:`podium.orchestration.plan.offline.OfflinePlanner`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from podium.messages import HumanMessage, Message, SystemMessage
from podium.models.base import Model, ModelRequest, ModelSettings
from podium.orchestration.plan.types import PlanDraft, PlanningFailed

if TYPE_CHECKING:
    from podium.orchestration.plan.catalogue import Catalogue
    from podium.runtime.context import RunContext

__all__ = ["DoneStep", "LLMPlanner", "PlanRequest", "Planner", "check_draft"]


@dataclass(slots=True, kw_only=True)
class DoneStep:
    """A step that already ran, as a re-plan is told about it."""

    action: str
    agent: str
    result: str
    tool: str | None = None
    """The tool the step was planned for, if the planner named one."""


@dataclass(slots=True, kw_only=True)
class PlanRequest:
    """What a planner plans from."""

    task: str
    """The human's task."""
    clarifications: list[str] = field(default_factory=list)
    """The human's answers and additions, oldest first."""
    done: list[DoneStep] = field(default_factory=list)
    """Steps completed by earlier versions, in order (not to be planned again)."""
    failure: str | None = None
    """The step that failed and its error, when re-planning after a failure."""
    confirmed: bool = False
    """The human confirmed a task the caution check (:mod:`~podium.orchestration.plan.caution`) asked about."""
    questions: list[str] = field(default_factory=list)
    """The planner's questions the human already answered, oldest first (a planner asks each one once)."""

    def text(self) -> str:
        """Everything the human said, for retrieval."""
        return ". ".join([self.task.rstrip(". "), *self.clarifications])


class Planner(ABC):
    """Makes plans."""

    name: str = "planner"
    """Stored on each plan it makes."""
    plans_questions: bool = True
    """Whether a question ("what is our leave policy?") may be a task for it: a model plans it for the catalogue's
    tools that answer questions. A planner that cannot (the offline one) has questions answered as no task."""

    def __init__(self, catalogue: Catalogue) -> None:
        """A planner over ``catalogue``."""
        self.catalogue = catalogue

    @abstractmethod
    async def plan(self, ctx: RunContext[Any], request: PlanRequest) -> tuple[PlanDraft, int]:
        """A valid draft and how many tools the planner was shown.

        Raises:
            PlanningFailed: no valid plan could be made.
        """


def check_draft(draft: PlanDraft, catalogue: Catalogue) -> PlanDraft:
    """``draft`` with agent names as the catalogue spells them.

    Raises:
        PlanningFailed: an unknown agent, or no steps and no question.
    """
    if not draft.steps and not draft.human_clarification_request:
        raise PlanningFailed("the plan has no steps and asks no question")
    for number, step in enumerate(draft.steps, 1):
        specialist = catalogue.get(step.agent)
        if specialist is None:
            known = ", ".join(catalogue.specialists)
            raise PlanningFailed(f"step {number} names the unknown agent {step.agent!r}; the agents are {known}")
        step.agent = specialist.name
    return draft


_INSTRUCTIONS = """Plan the user's task for a team of agents: the steps it needs, in order, each one action for one
listed agent that its tools can do. If a name or date you need is missing, ask in human_clarification_request.
Answer with JSON only."""


class LLMPlanner(Planner):
    """A model plans, with structured output, retrieval over the catalogue, validation and retries."""

    def __init__(self, catalogue: Catalogue, model: Model, *, retries: int = 2, tool_limit: int | None = 10) -> None:
        """A planner asking ``model``.

        Args:
            catalogue: the specialists and tools.
            model: the model that plans.
            retries: invalid answers sent back for another try before planning fails.
            tool_limit: how many tools (the most relevant) the model is shown; ``None`` shows every tool (for
                comparison: the prompt grows with the catalogue).
        """
        super().__init__(catalogue)
        self.model = model
        self.retries = retries
        self.tool_limit = tool_limit
        self.name = model.name
        self._schema = PlanDraft.model_json_schema()

    def prompt(self, request: PlanRequest) -> tuple[list[Message], int]:
        """The messages the model is shown, and how many tools they list."""
        agents = "\n".join(f"- {s.name}: {s.description}" for s in self.catalogue.specialists.values())
        tools = (
            self.catalogue.tools
            if self.tool_limit is None
            else self.catalogue.relevant(request.text(), self.tool_limit)
        )
        listed = "\n".join(f"- {t.agent}.{t.tool.name}: {t.tool.description}" for t in tools)
        system = f"{_INSTRUCTIONS}\n\nAgents:\n{agents}\n\nTools that may help (agent.tool: what it does):\n{listed}"
        parts = [f"Task: {request.task}"]
        parts += [f"The user added: {text}" for text in request.clarifications]
        if request.done:
            parts.append("Already done (do not plan again):")
            parts += [f"{n}. {d.agent}: {d.action} -> {d.result}" for n, d in enumerate(request.done, 1)]
        if request.failure:
            parts.append(f"This step failed: {request.failure}. Plan the rest of the work from there.")
        return [SystemMessage(content=system), HumanMessage(content="\n".join(parts))], len(tools)

    async def plan(self, ctx: RunContext[Any], request: PlanRequest) -> tuple[PlanDraft, int]:
        from pydantic import ValidationError

        messages, shown = self.prompt(request)
        settings = ModelSettings(response_format=self._schema, temperature=0)
        problem = ""
        for _ in range(self.retries + 1):
            reply = (await ctx.call_model(self.model, ModelRequest(messages=messages, settings=settings))).message
            try:
                return check_draft(PlanDraft.model_validate_json(reply.content), self.catalogue), shown
            except ValidationError as exc:
                problem = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in exc.errors()[:5]
                )
            except PlanningFailed as exc:
                problem = exc.reason
            messages = [
                *messages,
                reply,
                HumanMessage(
                    content=f"That answer is not a valid plan ({problem}). Answer again with JSON only, "
                    f"following this schema: {json.dumps(self._schema)}"
                ),
            ]
        raise PlanningFailed(f"the model gave no valid plan in {self.retries + 1} tries; last problem: {problem}")
