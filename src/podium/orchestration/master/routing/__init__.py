"""Intent classifiers for orchestrators: the offline router (default), the LLM classifier, and the hybrid.

See ``specs/master_agent.md``, "Classifiers". The orchestrator (:class:`podium.orchestration.master.agent.MasterAgent`)
builds a :class:`Query` per message and acts on the :class:`Decision`.
"""

from podium.orchestration.master.routing.base import (
    Classifier,
    Decision,
    DecisionKind,
    PendingTask,
    Query,
    ToolCatalog,
    ToolProfile,
)
from podium.orchestration.master.routing.hybrid import HybridClassifier
from podium.orchestration.master.routing.llm import CONTROL_TOOLS, LLMClassifier
from podium.orchestration.master.routing.router import Router, describe_expectation
from podium.orchestration.master.routing.rules import (
    fit_expectation,
    harmful_term,
    is_abandon,
    is_capability_question,
    looks_like_request,
)

__all__ = [
    "CONTROL_TOOLS",
    "Classifier",
    "Decision",
    "DecisionKind",
    "HybridClassifier",
    "LLMClassifier",
    "PendingTask",
    "Query",
    "Router",
    "ToolCatalog",
    "ToolProfile",
    "describe_expectation",
    "fit_expectation",
    "harmful_term",
    "is_abandon",
    "is_capability_question",
    "looks_like_request",
]
