"""Intent classifiers for orchestrators: the offline router (default), the LLM classifier, and the hybrid.

Modules: ``base`` (queries and decisions), ``router`` (the offline router), ``scoring`` (similarity and per-app
calibration), ``text`` (lexical features), ``embedding`` (the optional embedding model, loaded lazily), ``intents``
(the router's own intents and the harm cues), ``rules`` (expectation fit and the keyword guardrail), ``llm``,
``hybrid``.

The orchestrator (:class:`podium.orchestration.master.agent.MasterAgent`)
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
from podium.orchestration.master.routing.hybrid import CLASSIFIERS, HybridClassifier, classifier_for
from podium.orchestration.master.routing.intents import harm_cue
from podium.orchestration.master.routing.llm import CONTROL_TOOLS, LLMClassifier
from podium.orchestration.master.routing.router import Router, describe_expectation
from podium.orchestration.master.routing.rules import (
    corrections,
    fit_expectation,
    harmful_term,
    is_abandon,
    is_capability_question,
    looks_like_request,
)
from podium.orchestration.master.routing.scoring import Calibration

__all__ = [
    "CLASSIFIERS",
    "CONTROL_TOOLS",
    "Calibration",
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
    "classifier_for",
    "describe_expectation",
    "corrections",
    "fit_expectation",
    "harm_cue",
    "harmful_term",
    "is_abandon",
    "is_capability_question",
    "looks_like_request",
]
