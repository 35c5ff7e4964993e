"""Tasks: responder agents and tasks with sub-tasks over a current pending message.

- :class:`ResponderAgent` (``agent.py``): LLM, tool-handler and user responders.
- :class:`Task` (``task.py``) and its loop (``loop.py``) with done rules (``rules.py``).
- ``tools.py``: tools with handlers, results as tools, and the ``done`` / ``send`` / ``final_result`` / pass /
  sub-task tools; ``types.py``: messages, results, limits and the text signals.
"""

from typing import TYPE_CHECKING, Any

from podium.orchestration.tasks.agent import ResponderAgent
from podium.orchestration.tasks.task import Task, TypedTask
from podium.orchestration.tasks.task_tool import task_tool
from podium.orchestration.tasks.tools import (
    done_pass_tool,
    done_tool,
    final_result_tool,
    forward_tool,
    pass_tool,
    send_tool,
    tool_request,
    with_guidance,
)
from podium.orchestration.tasks.types import (
    DONE,
    NO_ANSWER,
    PASS,
    PASS_TO,
    USER_QUIT_STRINGS,
    AgentState,
    FinalResult,
    KillSwitch,
    TaskDone,
    TaskFailed,
    TaskLimits,
    TaskMessage,
    TaskPass,
    TaskResult,
)

if TYPE_CHECKING:
    from podium.orchestration.tasks.result_tool import ResultTool

__all__ = [
    "DONE",
    "NO_ANSWER",
    "PASS",
    "PASS_TO",
    "USER_QUIT_STRINGS",
    "AgentState",
    "FinalResult",
    "KillSwitch",
    "ResponderAgent",
    "ResultTool",
    "Task",
    "TaskDone",
    "TaskFailed",
    "TaskLimits",
    "TaskMessage",
    "TaskPass",
    "TaskResult",
    "TypedTask",
    "done_pass_tool",
    "done_tool",
    "final_result_tool",
    "forward_tool",
    "pass_tool",
    "send_tool",
    "task_tool",
    "tool_request",
    "with_guidance",
]


def __getattr__(name: str) -> Any:
    if name == "ResultTool":  # a pydantic model: pydantic is imported when it is first asked for
        from podium.orchestration.tasks.result_tool import ResultTool

        return ResultTool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
