"""Orchestrations built on the core, each in its own module and each usable alone from Python.

- :class:`MasterAgent` (seed 000): one orchestrator over agents exposed as tools, with a task stack, intent
  classification (``podium.routing``), guardrails and artifacts.
- :func:`create_supervisor` / :func:`create_swarm` (seed 001): a supervisor delegating through handoff tools, and
  agents handing off to each other.
- :class:`Task` (seed 003): agents as message transformers with LLM, tool-handler and user responders, and tasks
  with sub-tasks over a current pending message.
"""

from podium.orchestration.handoff import HandoffTool, create_handoff_tool, history_problems, repair_history
from podium.orchestration.master import MasterAgent
from podium.orchestration.master_tools import AgentTool, FunctionTool, MasterTool, as_master_tool
from podium.orchestration.master_types import TaskEntry, TaskStack, ToolArgument, ToolCallRequest, ToolContent
from podium.orchestration.supervisor import Supervisor, create_supervisor
from podium.orchestration.swarm import Swarm, create_swarm
from podium.orchestration.tasks import (
    FinalResult,
    KillSwitch,
    ResponderAgent,
    Task,
    TaskDone,
    TaskFailed,
    TaskLimits,
    TaskResult,
    done_tool,
    final_result_tool,
    send_tool,
)

__all__ = [
    "AgentTool",
    "FinalResult",
    "FunctionTool",
    "HandoffTool",
    "KillSwitch",
    "MasterAgent",
    "MasterTool",
    "ResponderAgent",
    "Supervisor",
    "Swarm",
    "Task",
    "TaskDone",
    "TaskEntry",
    "TaskFailed",
    "TaskLimits",
    "TaskResult",
    "TaskStack",
    "ToolArgument",
    "ToolCallRequest",
    "ToolContent",
    "as_master_tool",
    "create_handoff_tool",
    "create_supervisor",
    "create_swarm",
    "done_tool",
    "final_result_tool",
    "history_problems",
    "repair_history",
    "send_tool",
]
