"""Orchestrations built on the core, each a subpackage usable alone from Python.

- ``master/``: :class:`MasterAgent`, one orchestrator over agents exposed as tools, with a task stack,
  intent classification (its ``routing/``), guardrails and artifacts.
- ``supervisor/``: :func:`create_supervisor` / :func:`create_swarm`, a supervisor delegating through
  handoff tools, and agents handing off to each other.
- ``tasks/``: :class:`Task`, agents as message transformers with LLM, tool-handler and user responders,
  and tasks with sub-tasks over a current pending message.
"""

from podium.orchestration.master import (
    AgentTool,
    FunctionTool,
    MasterAgent,
    MasterTool,
    TaskEntry,
    TaskStack,
    ToolArgument,
    ToolCallRequest,
    ToolContent,
    as_master_tool,
)
from podium.orchestration.supervisor import (
    HandoffTool,
    Supervisor,
    Swarm,
    create_handoff_tool,
    create_supervisor,
    create_swarm,
    history_problems,
    repair_history,
)
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
