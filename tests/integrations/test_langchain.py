"""LangChain tools and LangGraph graphs as Podium tools, agents and master-agent tools."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from tests.integrations.langgraph_support import CALLS, claims_agent

from podium import AIMessage, MemoryStore, Message, ModelRequest, ReactAgent, Runtime, ToolMessage
from podium.integrations.langchain import LangChainTool, LangGraphAgent, from_langchain
from podium.testing import FunctionModel, ScriptedModel, tool_call

ROOT = Path(__file__).parents[2]


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two whole numbers."""
    return a * b


@tool
def lookup(key: str) -> str:
    """Look a key up in the directory."""
    raise ToolException(f"no entry for {key!r}")


async def test_a_langchain_tool_is_a_podium_tool_and_its_errors_reach_the_model() -> None:
    product = from_langchain(multiply)
    assert isinstance(product, LangChainTool) and product.name == "multiply"
    assert product.description == "Multiply two whole numbers."
    assert product.parameters == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    model = ScriptedModel(
        [
            AIMessage(tool_calls=[tool_call("multiply", {"a": 6, "b": 7}), tool_call("lookup", {"key": "x"})]),
            AIMessage(tool_calls=[tool_call("multiply", {"a": "six"})]),
            AIMessage(content="42"),
        ]
    )
    runtime = Runtime(MemoryStore())
    agent = ReactAgent("calc", model, [product, from_langchain(lookup)])
    result = await runtime.run(agent, "6 times 7?")
    assert result.output == "42"
    results = [
        (m.name, m.content, m.is_error) for m in await runtime.messages(result.thread_id) if isinstance(m, ToolMessage)
    ]
    assert results[0] == ("multiply", "42", False)
    assert results[1] == ("lookup", "no entry for 'x'", True)
    name, text, is_error = results[2]
    assert (
        name == "multiply"
        and is_error
        and text.startswith("Invalid arguments for tool 'multiply': a: ")
        and "b: Field required" in text
    )
    with pytest.raises(Exception, match="not valid JSON"):
        product.validate("{")
    with pytest.raises(Exception, match="must be a JSON object"):
        product.validate("[]")


async def test_a_graph_asks_the_human_through_a_durable_interrupt() -> None:
    CALLS.clear()
    runtime = Runtime(MemoryStore())
    agent = claims_agent(InMemorySaver())
    asked = await runtime.run(agent, "my bike was stolen")
    assert asked.status == "interrupted"
    (question,) = asked.interrupts
    assert question.prompt == "Which product is the claim for?"
    assert question.expectation is not None and question.expectation.options == ["Home", "Motor"]
    assert question.path[0] == "ClaimFiler" and question.path[1].startswith("interrupt-")
    done = await runtime.resume(agent, asked.thread_id, "Home")
    assert done.status == "completed" and done.output == "Home claim filed: my bike was stolen"
    assert CALLS == ["intake", "ask_product", "ask_product", "file_claim"]  # LangGraph re-runs the asking node

    CALLS.clear()  # the next message continues the graph's thread: a new claim
    again = await runtime.run(agent, "a window broke", thread_id=asked.thread_id)
    assert again.status == "interrupted"
    assert (await runtime.resume(agent, asked.thread_id, "Motor")).output == "Motor claim filed: a window broke"


async def test_a_graph_as_a_react_agents_tool() -> None:
    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"Done: {messages[-1].content}")
        return AIMessage(tool_calls=[tool_call("ClaimFiler", {"text": "hail on the roof"})])

    runtime = Runtime(MemoryStore())
    agent = ReactAgent("helper", FunctionModel(model), [claims_agent(InMemorySaver()).as_tool()])
    asked = await runtime.run(agent, "File a claim: hail on the roof")
    assert asked.status == "interrupted" and asked.interrupts[0].prompt == "Which product is the claim for?"
    done = await runtime.resume(agent, asked.thread_id, "Home")
    assert done.output == "Done: Home claim filed: hail on the roof"


async def test_a_graph_that_keeps_asking_is_stopped() -> None:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def nag(state: dict[str, Any]) -> dict[str, Any]:
        return {"answer": [interrupt("Again?"), interrupt("And again?")]}

    builder = StateGraph(dict)
    builder.add_node("nag", nag)
    builder.add_edge(START, "nag")
    builder.add_edge("nag", END)
    agent = LangGraphAgent(builder.compile(checkpointer=InMemorySaver()), name="nagger", max_interrupts=1)
    runtime = Runtime(MemoryStore())
    first = await runtime.run(agent, "hi")
    assert first.interrupts[0].prompt == "Again?"
    failed = await runtime.resume(agent, first.thread_id, "yes")
    assert failed.status == "failed" and "asked more than 1 questions" in failed.reason


def turn(tmp_path: Path, text: str) -> dict[str, Any]:
    """One human message, in a process of its own."""
    args = [str(tmp_path / "podium.db"), str(tmp_path / "graph.db"), "claims-1", text]
    run = subprocess.run(
        [sys.executable, "tests/integrations/langgraph_worker.py", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stderr
    return dict(json.loads(run.stdout.strip().splitlines()[-1]))


def test_a_graph_as_a_master_agent_tool_asks_and_resumes_after_a_process_restart(tmp_path: Path) -> None:
    first = turn(tmp_path, "I want to file a claim")
    assert first["status"] == "interrupted" and first["reason"].endswith("Which product is the claim for?"), first
    assert first["calls"] == ["intake", "ask_product"]
    second = turn(tmp_path, "Motor")  # a new process: the master's task stack and the graph's checkpoint reload
    assert second["status"] == "completed", second
    assert second["output"].startswith("Motor claim filed: I want to file a claim\n\nWhat else can I help you with?")
    assert second["calls"] == ["ask_product", "file_claim"]  # the graph resumed at its interrupt, not from the start


def test_answers_and_questions_are_read_from_any_shape() -> None:
    from langchain_core.messages import AIMessage as LangChainAIMessage

    from podium.integrations.langchain import _last_message, _question

    assert _last_message({"messages": [LangChainAIMessage(content="hi")]}) == "hi"
    assert _last_message({"messages": [{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]}) == (
        '[{"type": "text", "text": "x"}]'
    )
    assert _last_message({"total": 3}) == '{"total": 3}'
    assert _question("Sure?") == ("Sure?", None)
    assert _question({"prompt": "Name?"}) == ("Name?", None)
    assert _question({"value": 1}) == ('{"value": 1}', None)
