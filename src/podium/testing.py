"""Public test doubles and helpers: use these instead of writing fake models.

- :class:`FunctionModel`: replies computed by a function of the messages (and the request).
- :class:`ScriptedModel`: a queue of replies, with :meth:`ScriptedModel.assert_complete`; :class:`ScriptMismatch`
  when the script and the requests do not match.
- :class:`ReplayModel` / :class:`RecordingModel`: play or record a cassette.
- :func:`tool_call`: build a tool call for a scripted reply.
- :func:`block_model_requests`: refuse requests to real (non-loopback) endpoints, as the test suite does.
"""

from podium.models.base import allow_model_requests
from podium.models.replay import RecordingModel, ReplayModel
from podium.models.test import FunctionModel, ScriptedModel, ScriptMismatch, tool_call

__all__ = [
    "FunctionModel",
    "RecordingModel",
    "ReplayModel",
    "ScriptMismatch",
    "ScriptedModel",
    "block_model_requests",
    "tool_call",
]


def block_model_requests() -> None:
    """Refuse requests to real model endpoints in this process (loopback stand-ins stay allowed)."""
    allow_model_requests(False)
