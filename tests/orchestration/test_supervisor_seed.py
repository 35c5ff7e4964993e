"""Seed 001 reproduced: in ``shared`` mode the FAANG run sends the requests of the seed's trace, and the example
answers offline from its cassette (in process and through ``podium chat``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from examples.faang import ADDS, CASSETTE, QUESTION, SEED_ADDS, build, seed_reply
from podium import Event, MessageAdded, Runtime, SQLiteStore, ToolMessage
from podium.models.openai_format import request_to_openai
from podium.orchestration.supervisor.handoff import history_problems
from podium.testing import FunctionModel, ReplayModel

ROOT = Path(__file__).parents[2]
SEED = ROOT.parent / "shared" / "seeds" / "001_0e813c878fd151ba.txt"

# --- the seed's first five requests, transcribed ------------------------------------------------------------------


def _fn(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def _call(id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function", "id": id, "function": {"name": name, "arguments": arguments}}


NUMBER = {"type": "number"}
SUPERVISOR_TOOLS = [
    _fn("transfer_to_research_expert", "Ask agent 'research_expert' for help", {"properties": {}, "type": "object"}),
    _fn("transfer_to_math_expert", "Ask agent 'math_expert' for help", {"properties": {}, "type": "object"}),
]
RESEARCH_TOOLS = [
    _fn(
        "web_search",
        "Search the web for information.",
        {"properties": {"query": {"type": "string"}}, "required": ["query"], "type": "object"},
    )
]
MATH_PARAMETERS = {"properties": {"a": NUMBER, "b": NUMBER}, "required": ["a", "b"], "type": "object"}
MATH_TOOLS = [
    _fn("add", "Add two numbers.", MATH_PARAMETERS),
    _fn("multiply", "Multiply two numbers.", MATH_PARAMETERS),
]

SUPERVISOR_SYSTEM = {
    "content": "You are a team supervisor managing a research expert and a math expert. For current events, use "
    "research_agent. For math problems, use math_agent.",
    "role": "system",
}
RESEARCH_SYSTEM = {
    "content": "You are a world class researcher with access to web search. Do not do any math.",
    "role": "system",
}
MATH_SYSTEM = {"content": "You are a math expert. Always use one tool at a time.", "role": "system"}
USER = {"content": "what's the combined headcount of the FAANG companies in 2024?", "role": "user"}
TO_RESEARCH = {
    "content": None,
    "name": "supervisor",
    "role": "assistant",
    "tool_calls": [_call("call_fyew4c06vn9ide7nhk6sijws", "transfer_to_research_expert", "{}")],
}
TO_RESEARCH_DONE = {
    "content": "Successfully transferred to research_expert",
    "role": "tool",
    "tool_call_id": "call_fyew4c06vn9ide7nhk6sijws",
}
SEARCH_CALL = {
    "content": None,
    "name": "research_expert",
    "role": "assistant",
    "tool_calls": [
        _call(
            "call_t52sv5g0zm4x1tft5hcnwjjs", "web_search", '{"query": "Combined headcount of FAANG companies in 2024"}'
        )
    ],
}
SEARCH_RESULT = {
    "content": "Here are the headcounts for each of the FAANG companies in 2024:\n1. **Facebook (Meta)**: 67,317 "
    "employees.\n2. **Apple**: 164,000 employees.\n3. **Amazon**: 1,551,000 employees.\n4. **Netflix**: 14,000 "
    "employees.\n5. **Google (Alphabet)**: 181,269 employees.",
    "role": "tool",
    "tool_call_id": "call_t52sv5g0zm4x1tft5hcnwjjs",
}
# The seed's requests quote this answer as "... combined head - count." while its response log (and our model)
# say "... combined headcount.": a hyphenation left in the article's text. The response's spelling is used.
RESEARCH_ANSWER = {
    "content": "The individual headcounts of FAANG companies in 2024 are as follows: Meta has 67,317 employees, "
    "Apple has 164,000 employees, Amazon has 1,551,000 employees, Netflix has 14,000 employees, and Alphabet has "
    "181,269 employees. You can sum these figures to get the combined headcount.",
    "name": "research_expert",
    "role": "assistant",
}
# The hand-back call's id is random in langgraph-supervisor; both sides are compared with it replaced by BACK_ID.
BACK_ID = "<handoff-back-id>"
BACK = {
    "content": "Transferring back to supervisor",
    "name": "research_expert",
    "role": "assistant",
    "tool_calls": [_call(BACK_ID, "transfer_back_to_supervisor", "{}")],
}
BACK_DONE = {"content": "Successfully transferred back to supervisor", "role": "tool", "tool_call_id": BACK_ID}
TO_MATH = {
    "content": None,
    "name": "supervisor",
    "role": "assistant",
    "tool_calls": [_call("call_z9x3nnqjvnp9hxuehejkivgn", "transfer_to_math_expert", "{}")],
}
TO_MATH_DONE = {
    "content": "Successfully transferred to math_expert",
    "role": "tool",
    "tool_call_id": "call_z9x3nnqjvnp9hxuehejkivgn",
}
SHARED_SO_FAR = [USER, TO_RESEARCH, TO_RESEARCH_DONE, RESEARCH_ANSWER, BACK, BACK_DONE]

SEED_REQUESTS: list[dict[str, Any]] = [
    {"tools": SUPERVISOR_TOOLS, "parallel_tool_calls": False, "messages": [SUPERVISOR_SYSTEM, USER]},
    {"tools": RESEARCH_TOOLS, "messages": [RESEARCH_SYSTEM, USER, TO_RESEARCH, TO_RESEARCH_DONE]},
    {
        "tools": RESEARCH_TOOLS,
        "messages": [RESEARCH_SYSTEM, USER, TO_RESEARCH, TO_RESEARCH_DONE, SEARCH_CALL, SEARCH_RESULT],
    },
    {"tools": SUPERVISOR_TOOLS, "parallel_tool_calls": False, "messages": [SUPERVISOR_SYSTEM, *SHARED_SO_FAR]},
    {"tools": MATH_TOOLS, "messages": [MATH_SYSTEM, *SHARED_SO_FAR, TO_MATH, TO_MATH_DONE]},
]


def _same_back_ids(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the hand-back call's id replaced by BACK_ID, after checking its call and answer agree."""
    ids = [
        c["id"]
        for m in body["messages"]
        for c in m.get("tool_calls") or ()
        if c["function"]["name"] == "transfer_back_to_supervisor"
    ]
    text = json.dumps(body)
    for back_id in ids:
        assert text.count(json.dumps(back_id)) == 2  # the call and its one answer
        text = text.replace(json.dumps(back_id), json.dumps(BACK_ID))
    return json.loads(text)  # type: ignore[no-any-return]


async def test_shared_mode_sends_the_seed_requests() -> None:
    model = FunctionModel(seed_reply)
    result = await Runtime().run(build(model, "shared"), QUESTION)
    assert result.status == "completed"
    assert result.output == "The combined headcount of the FAANG companies in 2024 is 1,977,586."
    sent = [_same_back_ids(request_to_openai(r)) for r in model.requests]
    for number, (actual, expected) in enumerate(zip(sent[:5], SEED_REQUESTS, strict=True), 1):
        assert actual == expected, f"request {number} differs from the seed's"
    assert [len(r.messages) for r in model.requests] == [2, 4, 6, 7, 9, 11, 13, 15, 12]
    for request in model.requests:
        assert history_problems(request.messages) == []


@pytest.mark.skipif(not SEED.exists(), reason="the seed documents are not beside the repository")
def test_the_transcription_matches_the_seed_text() -> None:
    bodies = [
        json.loads(line[len("request: ") :]) for line in SEED.read_text().splitlines() if line.startswith("request: ")
    ]
    for number, (seed, ours) in enumerate(zip(bodies[:5], SEED_REQUESTS, strict=True), 1):
        seed = _same_back_ids(seed)
        text = json.dumps(seed).replace("head - count", "headcount")
        assert json.loads(text) == ours, f"request {number}"


async def test_the_example_answers_offline_from_its_cassette(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "faang.db")
    runtime = Runtime(store)
    agent = build(ReplayModel(CASSETTE))
    first = await runtime.run(agent, QUESTION, thread_id="t")
    assert first.status == "completed", first.reason
    assert first.output == "The combined headcount of the FAANG companies in 2024 is 1,977,586."
    # The same question again in the same conversation: the cassette answers the turn after a longer history.
    second = await runtime.run(agent, QUESTION, thread_id="t")
    assert second.status == "completed", second.reason
    history = await runtime.messages("t")
    assert [m.kind for m in history].count("human") == 2 and history_problems(history) == []
    await store.close()


def test_podium_chat_faang_offline(tmp_path: Path) -> None:
    env = {**os.environ, "PODIUM_DATA_DIR": str(tmp_path), "PODIUM_BLOCK_MODEL_REQUESTS": "1"}
    env.pop("PODIUM_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "podium", "chat", "faang", "--jsonl"],
        input=QUESTION + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    [ended] = [e for e in events if e["kind"] == "run_ended"]
    assert ended["status"] == "completed"
    assert re.search(r"\b1,977,586\b", ended["output"])
    paths = {tuple(e["path"]) for e in events if e["kind"] == "message"}
    assert ("supervisor", "call_z9x3nnqjvnp9hxuehejkivgn", "math_expert") in paths  # the worker's own steps


def test_the_benchmark_workload_matches_the_baselines_prompt_characters() -> None:
    from bench import faang as workload

    chars = {row["variant"]: row["prompt_chars"] for row in workload.accounting()}
    # langgraph-supervisor 0.0.31 on the same workload: 15,905 / 20,688 / 7,572 characters.
    assert chars["context=shared, last_message"] == 15905
    assert chars["context=shared, full_history"] == 20688
    assert chars["context=shared, no handoff msgs"] == 7572
    assert chars["context=scoped (default)"] < 15905 // 1.9


def test_scoped_prompts_on_the_benchmark_stay_under_the_goal_with_every_fact_each_agent_needs() -> None:
    import asyncio

    from bench import faang as workload

    [scoped] = [row for row in workload.accounting() if row["variant"] == "context=scoped (default)"]
    assert scoped["prompt_chars"] <= 6000  # issue 18's goal, in the baseline's measure (6,372 before folding)
    agent = workload.build()
    asyncio.run(workload.run_one(Runtime(), agent))
    shown: dict[str, list[str]] = {}
    for request in agent.model.requests:
        who = {"web_search": "research", "add": "math"}.get(request.tools[0].name, "supervisor")
        shown.setdefault(who, []).append("\n".join(m.content for m in request.messages))
    figures = ["67,317", "164,000", "1,551,000", "14,000", "181,269"]
    sums = ["231317.0", "1782317.0", "1796317.0", "1977586.0"]
    for n, text in enumerate(shown["math"]):  # the question, every figure, and every sum it has made so far
        assert workload.QUESTION in text and all(f in text for f in figures) and all(s in text for s in sums[:n])
    assert len(shown["math"]) == len(sums) + 1
    [first, second] = shown["research"]  # the question, then the search's whole result
    assert workload.QUESTION in first and workload.QUESTION in second and workload.SEARCH_RESULT in second
    *_, last = shown["supervisor"]  # the question, the research result and the math expert's answer
    assert workload.QUESTION in last and all(f in last for f in figures) and workload.FINAL_MATH in last


async def test_the_example_s_cassette_shows_a_trail_of_additions_that_adds_up_to_its_answer() -> None:
    events: list[Event] = []
    result = await Runtime().run(build(ReplayModel(CASSETTE)), QUESTION, on_event=events.append)
    added = [e.message for e in events if isinstance(e, MessageAdded) and isinstance(e.message, ToolMessage)]
    sums = [float(m.content) for m in added if m.name == "add"]
    assert sums == [231317.0, 1782317.0, 1796317.0, 1977586.0]  # the seed's three, and Alphabet's it skipped
    assert result.output == f"The combined headcount of the FAANG companies in 2024 is {sums[-1]:,.0f}."
    assert len(SEED_ADDS) == 3 and ADDS[:3] == SEED_ADDS  # seed_reply stays the seed's own trace
