"""What an intent classifier sees and decides (see docs/architecture.md, "Who answers a question").

The orchestrator hands a classifier a :class:`Query`: the text to classify (a human's message, or a tool's request
that named no tool), the tools it may route to, and the pending task on top of the task stack with its typed
expectation. The classifier answers with a :class:`Decision`: route to a tool, ask the human, ask the human to
clarify, refuse (guardrail), describe the capabilities, or abandon the pending task. Decisions are plain JSON so
the orchestrator journals them (a re-executed run never classifies twice).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from podium.events import Expectation

if TYPE_CHECKING:
    from podium.runtime.context import RunContext

__all__ = [
    "Classifier",
    "Decision",
    "DecisionKind",
    "PendingTask",
    "Query",
    "ToolCatalog",
    "ToolProfile",
]

DecisionKind: TypeAlias = Literal["route", "ask", "clarify", "refuse", "capabilities", "abandon"]
"""``route``: call ``tool``; ``ask``: ask the human ``text``; ``clarify``: the answer does not fit what the pending
task expects; ``refuse``: harmful or out of scope (guardrail); ``capabilities``: answer "what can you do?";
``abandon``: drop the pending task ("never mind")."""


@dataclass(slots=True, frozen=True, kw_only=True)
class ToolProfile:
    """What a classifier knows about one tool."""

    name: str
    """The tool's name."""
    description: str = ""
    """What it does, as a model is told."""
    introduction: str = ""
    """How it presents itself to users."""
    examples: tuple[str, ...] = ()
    """Example requests it serves."""
    expose_to_user: bool = True
    """Listed to users, and a target of human messages."""
    parameters: dict[str, Any] = field(default_factory=dict, compare=False)
    """Extra JSON-schema properties the tool takes besides ``text`` and ``rationale``."""


@dataclass(slots=True, frozen=True, eq=False, weakref_slot=True)
class ToolCatalog:
    """The tools of one orchestrator, built once so classifiers can cache their indexes on it (by identity)."""

    profiles: tuple[ToolProfile, ...]
    """Every tool, in registration order."""

    def get(self, name: str) -> ToolProfile | None:
        """The profile named ``name``, if any."""
        return next((p for p in self.profiles if p.name == name), None)

    @property
    def names(self) -> tuple[str, ...]:
        """The tools' names."""
        return tuple(p.name for p in self.profiles)

    @classmethod
    def of(cls, profiles: Iterable[ToolProfile]) -> ToolCatalog:
        """A catalog of ``profiles``."""
        return cls(tuple(profiles))


@dataclass(slots=True, kw_only=True)
class PendingTask:
    """The task on top of the stack, as a classifier sees it: who waits, for what, and what answer fits."""

    tool: str
    """The tool whose task waits."""
    content: str = ""
    """The request it made (usually the question the human was asked)."""
    context: str = ""
    """What the task is waiting for, for the classifier."""
    expectation: Expectation | None = None
    """The answer it expects, if declared."""
    takes_corrections: bool = False
    """The tool reads corrections of what it was told (``ToolMetadata.takes_corrections``)."""


@dataclass(slots=True, kw_only=True)
class Query:
    """One classification request."""

    text: str
    """The human's message, or the content of a tool's request."""
    catalog: ToolCatalog
    """All the orchestrator's tools."""
    candidates: tuple[str, ...]
    """The tools this query may be routed to."""
    origin: Literal["human", "tool"] = "human"
    """``human``: a message from the human; ``tool``: a tool's request that named no tool."""
    pending: PendingTask | None = None
    """The task on top of the stack, if any (for ``tool`` queries: the requesting task)."""
    waiting: tuple[PendingTask, ...] = ()
    """Every task waiting on the stack, bottom first (the top one is ``pending``): an answer that fits what a task
    lower down waits for (its claim number, say) is evidence for that task."""
    previous: str | None = None
    """The tool that answered the conversation's last request, when no task waits: a follow-up ("and on sunday?",
    "same again for 6543WF") that names no tool of its own goes back to it."""


@dataclass(slots=True, kw_only=True)
class Decision:
    """What a classifier decided."""

    kind: DecisionKind
    """What to do."""
    tool: str | None = None
    """The tool to call, for ``route``."""
    text: str = ""
    """For ``route``: the text to send; otherwise what to tell the human."""
    rationale: str = ""
    """Why (shown on the side channel for routes, never fed to a model as conversation)."""
    confidence: float = 1.0
    """How sure the classifier is, 0 to 1 (the hybrid classifier asks the LLM below its threshold)."""
    reason: str = ""
    """A short code for refusals and clarifications (``harmful``, ``out_of_scope``, ``no_fit``, ``empty`` ...);
    for a route, ``return`` (back to a task left waiting) or ``correction`` (the text corrects what the waiting
    task was told: ``ToolInput.correction``)."""
    source: str = ""
    """Which classifier decided (``router``, ``llm``, ``bypass``, ``master``)."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """Extra arguments for the tool, for ``route``."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        data: dict[str, Any] = {"kind": self.kind, "text": self.text, "rationale": self.rationale}
        data["confidence"] = round(self.confidence, 4)
        if self.tool is not None:
            data["tool"] = self.tool
        if self.reason:
            data["reason"] = self.reason
        if self.source:
            data["source"] = self.source
        if self.arguments:
            data["arguments"] = dict(self.arguments)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decision:
        """Read the JSON form."""
        return cls(
            kind=data["kind"],
            tool=data.get("tool"),
            text=data.get("text", ""),
            rationale=data.get("rationale", ""),
            confidence=float(data.get("confidence", 1.0)),
            reason=data.get("reason", ""),
            source=data.get("source", ""),
            arguments=dict(data.get("arguments") or {}),
        )


class Classifier(ABC):
    """Decides what the orchestrator does with a message. Implementations:
    :class:`~podium.orchestration.master.Router` (offline), :class:`~podium.orchestration.master.LLMClassifier`,
    :class:`~podium.orchestration.master.HybridClassifier`."""

    name: str = "classifier"
    """A label recorded with each decision."""

    @abstractmethod
    async def classify(self, ctx: RunContext[Any], query: Query) -> Decision:
        """Decide what to do with ``query``; model calls go through ``ctx`` so they are journaled."""
