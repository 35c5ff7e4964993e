"""Models: the interface, the OpenAI-compatible adapter, and replay of recorded cassettes.

``OpenAIModel`` is loaded on first use so that ``import podium`` does not import ``openai``.
"""

from typing import TYPE_CHECKING, Any

from podium.models.base import (
    Done,
    Model,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    allow_model_requests,
    cut_off,
)
from podium.models.replay import RecordingModel, ReplayModel

if TYPE_CHECKING:
    from podium.models.openai import OpenAIModel

__all__ = [
    "Done",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIModel",
    "RecordingModel",
    "ReplayModel",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "allow_model_requests",
    "cut_off",
]


def __getattr__(name: str) -> Any:
    if name == "OpenAIModel":
        from podium.models.openai import OpenAIModel

        return OpenAIModel
    raise AttributeError(f"module 'podium.models' has no attribute {name!r}")
