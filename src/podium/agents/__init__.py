"""Agents: the base class and the ReAct agent."""

from podium.agents.base import Agent, AgentResult
from podium.agents.react import ReactAgent

__all__ = ["Agent", "AgentResult", "ReactAgent"]
