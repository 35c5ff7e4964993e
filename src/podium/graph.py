"""A Mermaid drawing of an agent's structure: what ``podium graph APP`` prints.

Agents are boxes labelled with their kind, tools are rounded; arrows go from an orchestrator to what it can use:
a supervisor to its workers (labelled with the handoff tool), a plan agent to its specialists, a swarm to its
agents (and dotted arrows between agents that can hand off to each other), the master agent to its tools and
agents, a task to its agent's tools and to its sub-tasks, a ReAct agent to its tools. Paste the output into any
Mermaid viewer (GitHub renders it).
"""

from __future__ import annotations

from typing import Any

from podium.agents.base import Agent
from podium.agents.react import ReactAgent

__all__ = ["draw_app", "mermaid"]


class _Drawing:
    def __init__(self) -> None:
        self.lines = ["flowchart TD"]
        self.ids: dict[Any, str] = {}

    def node(self, key: Any, label: str, *, tool: bool = False) -> tuple[str, bool]:
        """The id of the node for ``key`` (an agent's ``id()``, or its ``id()`` and a tool name), and whether it is
        new."""
        if key in self.ids:
            return self.ids[key], False
        ident = f"n{len(self.ids) + 1}"
        self.ids[key] = ident
        text = label.replace('"', "#quot;")
        self.lines.append(f'    {ident}(["{text}"])' if tool else f'    {ident}["{text}"]')
        return ident, True

    def edge(self, source: str, target: str, label: str = "", *, dotted: bool = False) -> None:
        arrow = "-.->" if dotted else "-->"
        text = label.replace('"', "#quot;").replace("|", "/")
        self.lines.append(f"    {source} {arrow}|{text}| {target}" if label else f"    {source} {arrow} {target}")

    def tools(self, source: str, owner: Any, tools: Any) -> None:
        for name in tools:
            self.edge(source, self.node((id(owner), name), name, tool=True)[0])

    def agent(self, agent: Agent) -> str:
        from podium.orchestration.master import AgentTool, MasterAgent
        from podium.orchestration.plan import PlanAndExecute
        from podium.orchestration.supervisor import Supervisor, Swarm
        from podium.orchestration.tasks import Task

        kind = {
            Supervisor: "supervisor",
            Swarm: "swarm",
            MasterAgent: "master agent",
            Task: "task",
            PlanAndExecute: "plan and execute",
        }.get(type(agent), "ReAct agent" if isinstance(agent, ReactAgent) else type(agent).__name__)
        ident, new = self.node(id(agent), f"{agent.name}<br/><i>{kind}</i>")
        if not new:
            return ident
        if isinstance(agent, Supervisor):
            by_worker = {handoff.agent: name for name, handoff in agent.handoffs.items()}
            for name, worker in agent.agents.items():
                self.edge(ident, self.agent(worker), by_worker.get(name, ""))
            self.tools(ident, agent, agent.tools)
        elif isinstance(agent, Swarm):
            members = {name: self.agent(member) for name, member in agent.agents.items()}
            default = agent.default_active_agent
            for name, member_id in members.items():
                self.edge(ident, member_id, "starts" if name == default else "")
            for name, handoffs in agent._handoffs.items():
                for tool_name, handoff in handoffs.items():
                    self.edge(members[name], members[handoff.agent], tool_name, dotted=True)
        elif isinstance(agent, MasterAgent):
            for name, tool in agent.tools.items():
                if isinstance(tool, AgentTool):
                    self.edge(ident, self.agent(tool.agent), "" if name == tool.agent.name else name)
                else:
                    self.edge(ident, self.node((id(agent), name), name, tool=True)[0])
        elif isinstance(agent, Task):
            self.tools(ident, agent, getattr(agent.agent, "usable", {}))
            for sub in agent.sub_tasks:
                self.edge(ident, self.agent(sub), "sub-task")
        elif isinstance(agent, PlanAndExecute):
            for name, specialist in agent.catalogue.specialists.items():
                self.edge(ident, self.agent(specialist.agent), f"steps for {name}")
        elif isinstance(agent, ReactAgent):
            self.tools(ident, agent, agent.current_tools())
        return ident


def mermaid(agent: Agent) -> str:
    """The Mermaid ``flowchart`` of ``agent``: its agents, their tools, and who can hand off or delegate to whom."""
    drawing = _Drawing()
    drawing.agent(agent)
    return "\n".join(drawing.lines) + "\n"


def draw_app(spec: str) -> str:
    """The drawing of the app named by ``spec`` (built around its configured model, its cassette, or a stand-in: the
    structure does not depend on the model).

    Raises:
        UsageError: no such app.
    """
    from podium.app import build_agent, load_app
    from podium.errors import UsageError
    from podium.settings import Settings

    app = load_app(spec)
    try:
        model = app.model(Settings.load())
    except UsageError:  # no cassette and no model configured: nothing will be asked of it
        from podium.testing import FunctionModel

        model = FunctionModel(lambda messages, request: "", name="stand-in")
    return mermaid(build_agent(app, model))
