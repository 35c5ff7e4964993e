"""The master agent: one orchestrator loop over tools, a task stack, intent classifiers, artifacts.

- :class:`MasterAgent` (``agent.py``): the loop; every human message goes through a classifier.
- ``tools.py``: :class:`MasterTool` and its kinds (functions, agents, task functions); ``types.py``: the seed's
  shapes (:class:`ToolContent`, :class:`ToolCallRequest`, :class:`TaskEntry`, :class:`TaskStack`).
- ``routing/``: the classifiers only the master agent uses: the offline :class:`Router` (the default), the
  :class:`LLMClassifier` and the :class:`HybridClassifier`.
"""

from podium.orchestration.master.agent import MasterAgent
from podium.orchestration.master.routing import (
    Classifier,
    Decision,
    DecisionKind,
    HybridClassifier,
    LLMClassifier,
    PendingTask,
    Query,
    Router,
    ToolCatalog,
    ToolProfile,
    classifier_for,
    corrections,
    describe_expectation,
    fit_expectation,
    harmful_term,
    is_abandon,
    is_capability_question,
    looks_like_request,
)
from podium.orchestration.master.tools import AgentTool, FunctionTool, MasterTool, TaskFunctionTool, as_master_tool
from podium.orchestration.master.types import (
    HUMAN,
    TaskEntry,
    TaskStack,
    ToolArgument,
    ToolCallRequest,
    ToolContent,
    ToolInput,
)

__all__ = [
    "HUMAN",
    "AgentTool",
    "Classifier",
    "Decision",
    "DecisionKind",
    "FunctionTool",
    "HybridClassifier",
    "LLMClassifier",
    "MasterAgent",
    "MasterTool",
    "PendingTask",
    "Query",
    "Router",
    "TaskEntry",
    "TaskFunctionTool",
    "TaskStack",
    "ToolArgument",
    "ToolCallRequest",
    "ToolCatalog",
    "ToolContent",
    "ToolInput",
    "ToolProfile",
    "as_master_tool",
    "classifier_for",
    "describe_expectation",
    "corrections",
    "fit_expectation",
    "harmful_term",
    "is_abandon",
    "is_capability_question",
    "looks_like_request",
]
