"""The supervisor and the swarm: ReAct agents delegating to each other through handoff tools.

- :func:`create_supervisor` / :class:`Supervisor` (``supervisor.py``): one agent delegates to workers.
- :func:`create_swarm` / :class:`Swarm` (``swarm.py``): agents hand off to each other.
- :class:`SupervisorOptions` / :class:`SwarmOptions` (``options.py``): their options, described and checked once.
- ``handoff.py``: the handoff tools and the history checks both use; ``agent_name.py``: agent names in text.
"""

from podium.orchestration.supervisor.agent_name import (
    AgentNameMode,
    add_inline_agent_name,
    remove_inline_agent_name,
    with_agent_name,
)
from podium.orchestration.supervisor.handoff import (
    ForwardMessageTool,
    HandoffTool,
    create_forward_message_tool,
    create_handoff_tool,
    history_problems,
    repair_history,
)
from podium.orchestration.supervisor.options import (
    AfterModel,
    BeforeModel,
    ContextPolicy,
    OutputMode,
    ResponseFormat,
    SupervisorOptions,
    SwarmOptions,
)
from podium.orchestration.supervisor.supervisor import Supervisor, create_supervisor
from podium.orchestration.supervisor.swarm import Swarm, create_swarm

__all__ = [
    "AfterModel",
    "AgentNameMode",
    "BeforeModel",
    "ContextPolicy",
    "ForwardMessageTool",
    "HandoffTool",
    "OutputMode",
    "ResponseFormat",
    "Supervisor",
    "SupervisorOptions",
    "Swarm",
    "SwarmOptions",
    "add_inline_agent_name",
    "create_forward_message_tool",
    "create_handoff_tool",
    "create_supervisor",
    "create_swarm",
    "history_problems",
    "remove_inline_agent_name",
    "repair_history",
    "with_agent_name",
]
