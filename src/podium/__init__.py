"""Podium: agents, orchestrations and a durable runtime for multi-agent systems.

The public API is re-exported here. Heavy dependencies (``openai``, ``pydantic``) load on first use, and so do the
stores' drivers: :class:`SQLiteStore` and :class:`PostgresStore` are imported when first asked for (constructing a
``PostgresStore`` without the ``postgres`` extra raises :class:`UsageError` saying what to install).
"""

import typing as _typing

from podium.agents import Agent, AgentResult, ReactAgent, Toolset
from podium.errors import (
    AgentError,
    CassetteError,
    InvalidData,
    LeaseLost,
    LimitReached,
    ModelError,
    ModelHTTPError,
    ModelRequestsBlocked,
    ModelRetry,
    PodiumError,
    QuestionDeclined,
    RunNotFound,
    StepLimitExceeded,
    StoreCorrupt,
    StoreError,
    StoreLocked,
    SubscriberLagged,
    Suspended,
    ThreadBusy,
    ThreadNotFound,
    ThreadWaiting,
    ToolDefinitionError,
    ToolRetriesExceeded,
    ToolTimeout,
    UsageError,
)
from podium.events import (
    Artifact,
    ErrorEvent,
    Event,
    Expectation,
    Interrupt,
    InterruptAnswered,
    InterruptRaised,
    MessageAdded,
    RunEnded,
    RunStarted,
    SideChannel,
    StepRecorded,
    TaskStackChanged,
    TokenDelta,
    ToolStarted,
    event_from_dict,
    event_to_dict,
)
from podium.messages import (
    AIMessage,
    HumanMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSignal,
    Usage,
    message_from_dict,
    message_to_dict,
)
from podium.models import Model, ModelRequest, ModelResponse, ModelSettings
from podium.models.openai_format import from_openai, to_openai
from podium.runtime import Cancelled, EventBus, InProcessBus, Limits, RunContext, RunResult, Runtime
from podium.settings import Settings, open_store
from podium.store import MemoryStore, Store
from podium.tools import Tool, ToolArgumentsError, ToolMetadata, ToolReturn, ToolSpec, tool

if _typing.TYPE_CHECKING:
    from podium.store.postgres import PostgresStore
    from podium.store.sqlite import SQLiteStore

__version__ = "0.1.0"

__all__ = [
    "Cancelled",
    "EventBus",
    "InProcessBus",
    "RunNotFound",
    "SubscriberLagged",
    "AIMessage",
    "Agent",
    "AgentError",
    "AgentResult",
    "Artifact",
    "CassetteError",
    "ErrorEvent",
    "Event",
    "Expectation",
    "HumanMessage",
    "Interrupt",
    "InterruptAnswered",
    "InterruptRaised",
    "InvalidData",
    "LeaseLost",
    "LimitReached",
    "Limits",
    "MemoryStore",
    "Message",
    "MessageAdded",
    "Model",
    "ModelError",
    "ModelHTTPError",
    "ModelRequest",
    "ModelRequestsBlocked",
    "ModelResponse",
    "ModelRetry",
    "QuestionDeclined",
    "ModelSettings",
    "PodiumError",
    "PostgresStore",
    "ReactAgent",
    "RunContext",
    "RunEnded",
    "RunResult",
    "RunStarted",
    "Runtime",
    "SQLiteStore",
    "Settings",
    "SideChannel",
    "StepLimitExceeded",
    "StepRecorded",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "Suspended",
    "SystemMessage",
    "TaskStackChanged",
    "ThreadBusy",
    "ThreadNotFound",
    "ThreadWaiting",
    "TokenDelta",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolDefinitionError",
    "ToolMessage",
    "ToolSignal",
    "ToolMetadata",
    "ToolRetriesExceeded",
    "ToolReturn",
    "ToolSpec",
    "ToolStarted",
    "ToolTimeout",
    "Toolset",
    "Usage",
    "UsageError",
    "__version__",
    "event_from_dict",
    "event_to_dict",
    "from_openai",
    "message_from_dict",
    "message_to_dict",
    "open_store",
    "tool",
    "to_openai",
]

_LAZY = {"PostgresStore": "podium.store.postgres", "SQLiteStore": "podium.store.sqlite"}
"""Public names imported on first use, and the module each comes from."""


def __getattr__(name: str) -> _typing.Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(home), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
