"""Orchestrations built on the core, each a subpackage usable alone from Python.

- ``master/``: :class:`MasterAgent`, one orchestrator over agents exposed as tools, with a task stack,
  intent classification (its ``routing/``), guardrails and artifacts.
- ``supervisor/``: :func:`create_supervisor` / :func:`create_swarm`, a supervisor delegating through
  handoff tools (and forwarding an agent's answer with :func:`create_forward_message_tool`), and agents handing off
  to each other.
- ``tasks/``: :class:`Task`, agents as message transformers with LLM, tool-handler and user responders,
  and tasks with sub-tasks over a current pending message.

Each subpackage is imported when one of its names is first asked for here, so ``import
podium.orchestration.supervisor`` loads the supervisor alone, not the master agent's routing and the tasks' models.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
        ForwardMessageTool,
        HandoffTool,
        Supervisor,
        Swarm,
        create_forward_message_tool,
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

_HOME = {
    "AgentTool": "master",
    "FinalResult": "tasks",
    "ForwardMessageTool": "supervisor",
    "FunctionTool": "master",
    "HandoffTool": "supervisor",
    "KillSwitch": "tasks",
    "MasterAgent": "master",
    "MasterTool": "master",
    "ResponderAgent": "tasks",
    "Supervisor": "supervisor",
    "Swarm": "supervisor",
    "Task": "tasks",
    "TaskDone": "tasks",
    "TaskEntry": "master",
    "TaskFailed": "tasks",
    "TaskLimits": "tasks",
    "TaskResult": "tasks",
    "TaskStack": "master",
    "ToolArgument": "master",
    "ToolCallRequest": "master",
    "ToolContent": "master",
    "as_master_tool": "master",
    "create_forward_message_tool": "supervisor",
    "create_handoff_tool": "supervisor",
    "create_supervisor": "supervisor",
    "create_swarm": "supervisor",
    "done_tool": "tasks",
    "final_result_tool": "tasks",
    "history_problems": "supervisor",
    "repair_history": "supervisor",
    "send_tool": "tasks",
}
"""The subpackage each public name comes from."""

__all__ = [
    "AgentTool",
    "FinalResult",
    "ForwardMessageTool",
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
    "create_forward_message_tool",
    "create_handoff_tool",
    "create_supervisor",
    "create_swarm",
    "done_tool",
    "final_result_tool",
    "history_problems",
    "repair_history",
    "send_tool",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
