"""Agents: the base class and the ReAct agent."""

from podium.agents.base import Agent, AgentResult, Toolset
from podium.agents.react import ReactAgent

__all__ = ["Agent", "AgentResult", "ReactAgent", "Toolset"]
