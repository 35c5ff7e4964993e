"""A LangGraph graph that asks the human (``interrupt``), wrapped for Podium, as the tests and the restart worker
use it. Its checkpoints go to a SQLite file, so a second process resumes it."""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from podium import ToolMetadata
from podium.integrations.langchain import LangGraphAgent
from podium.orchestration.master import AgentTool, MasterAgent

CALLS: list[str] = []
"""Nodes run in this process, in order (a resumed graph does not run its first node again)."""


class Claim(TypedDict, total=False):
    messages: list[Any]
    product: str


def intake(state: Claim) -> Claim:
    CALLS.append("intake")
    return {}


def ask_product(state: Claim) -> Claim:
    CALLS.append("ask_product")
    product = interrupt({"question": "Which product is the claim for?", "options": ["Home", "Motor"]})
    return {"product": product}


def file_claim(state: Claim) -> Claim:
    CALLS.append("file_claim")
    request = state["messages"][-1]
    text = request["content"] if isinstance(request, dict) else request.content
    return {
        "messages": [*state["messages"], {"role": "assistant", "content": f"{state['product']} claim filed: {text}"}]
    }


def graph(checkpointer: Any) -> Any:
    builder = StateGraph(Claim)
    builder.add_node("intake", intake)
    builder.add_node("ask_product", ask_product)
    builder.add_node("file_claim", file_claim)
    builder.add_edge(START, "intake")
    builder.add_edge("intake", "ask_product")
    builder.add_edge("ask_product", "file_claim")
    builder.add_edge("file_claim", END)
    return builder.compile(checkpointer=checkpointer)


def claims_agent(checkpointer: Any) -> LangGraphAgent:
    return LangGraphAgent(
        graph(checkpointer),
        name="ClaimFiler",
        description="Files an insurance claim.",
    )


def master(checkpointer: Any) -> MasterAgent:
    metadata = ToolMetadata(
        expose_to_user=True,
        introduction="File an insurance claim.",
        can_generate_task=True,
        examples=["I want to file a claim", "file a claim for my car"],
    )
    return MasterAgent([AgentTool(claims_agent(checkpointer), metadata=metadata)], name="desk")
