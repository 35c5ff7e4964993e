"""Tasks (seed 003): responder agents and tasks with sub-tasks over a current pending message.

- :class:`ResponderAgent` (``agent.py``): LLM, tool-handler and user responders.
- :class:`Task` (``task.py``) and its loop (``loop.py``) with done rules (``rules.py``).
- ``tools.py``: tools with handlers, and the ``done`` / ``send`` / ``final_result`` tools; ``types.py``: messages,
  results and limits.
"""

from podium.orchestration.tasks.agent import ResponderAgent
from podium.orchestration.tasks.task import Task
from podium.orchestration.tasks.tools import done_tool, final_result_tool, send_tool, with_guidance
from podium.orchestration.tasks.types import (
    AgentState,
    FinalResult,
    KillSwitch,
    TaskDone,
    TaskFailed,
    TaskLimits,
    TaskMessage,
    TaskResult,
)

__all__ = [
    "AgentState",
    "FinalResult",
    "KillSwitch",
    "ResponderAgent",
    "Task",
    "TaskDone",
    "TaskFailed",
    "TaskLimits",
    "TaskMessage",
    "TaskResult",
    "done_tool",
    "final_result_tool",
    "send_tool",
    "with_guidance",
]
