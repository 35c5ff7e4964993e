"""The official ``langgraph-sdk`` client drives every example app over real HTTP.

Each app's script goes through the server (a new run per message, or a resume command when the thread waits on
a question) and the transcript the server shows is the one the runtime gives in process for the same script.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph_sdk import get_client

from examples import faang, smart_investigator, tasks_demo, trip
from podium import Runtime, Settings
from podium.app import example_names, load_app

SCRIPTS: dict[str, list[list[str]]] = {
    "trip": trip.SCRIPT,
    "tasks-demo": tasks_demo.SCRIPT,
    "faang": [[faang.QUESTION]],
    "smart-investigator": [smart_investigator.DEMO[:5]],
    "clinic-desk": [["why is my bill so high this month?", "INV-40877"]],
    "plan-service": [["Onboard Jessica Smith, who starts next week as a data analyst", "approve", "approve all"]],
}
MODES = ["values", "updates", "messages-tuple", "custom", "events"]


def _shape(message: dict[str, Any]) -> tuple[str, str, list[str]]:
    return message["type"], message["content"], [c["name"] for c in message.get("tool_calls", [])]


async def _in_process(app_name: str, script: list[str]) -> list[tuple[str, str, list[str]]]:
    app = load_app(app_name)
    agent = app.build(app.model(Settings.load(env={})))
    runtime = Runtime()
    thread = "reference"
    for line in script:
        status, _ = await runtime.pending(thread) if await runtime.store.get_thread(thread) else (None, [])
        if status == "interrupted":
            await runtime.resume(agent, thread, line)
        else:
            await runtime.run(agent, line, thread_id=thread)
    kinds = {"human": "human", "ai": "ai", "tool": "tool", "system": "system"}
    return [
        (kinds[m.kind], m.content, [c.name for c in getattr(m, "tool_calls", [])])
        for m in await runtime.messages(thread)
    ]


def test_every_example_has_a_script() -> None:
    assert sorted(SCRIPTS) == example_names()


@pytest.mark.parametrize("app_name", sorted(SCRIPTS))
async def test_each_example_through_the_sdk(server: str, app_name: str) -> None:
    async with get_client(url=server) as client:
        await _drive(client, app_name)


async def _drive(client: Any, app_name: str) -> None:
    assert (await client.assistants.get(app_name))["graph_id"] == app_name
    for number, script in enumerate(SCRIPTS[app_name]):
        thread = await client.threads.create(metadata={"script": number, "app": app_name})
        thread_id = thread["thread_id"]
        for line in script:
            state = await client.threads.get_state(thread_id)
            request: dict[str, Any] = (
                {"command": {"resume": line}}
                if state["interrupts"]
                else {"input": {"messages": [{"role": "user", "content": line}]}}
            )
            before = len(state["values"].get("messages", []))
            parts = [p async for p in client.runs.stream(thread_id, app_name, stream_mode=MODES, **request)]
            assert parts[0].event == "metadata"
            assert {"values", "updates", "events"} <= {p.event for p in parts}
            grew = len([p.data for p in parts if p.event == "values"][-1]["messages"]) > before
            assert ("messages" in {p.event for p in parts}) == grew  # only what the thread's history gained
            ends = [p.data for p in parts if p.event == "events" and p.data["kind"] == "run_ended"]
            assert ends and ends[-1]["status"] in ("completed", "interrupted")
            last_values = [p.data for p in parts if p.event == "values"][-1]
            state = await client.threads.get_state(thread_id)
            assert state["values"]["messages"] == last_values["messages"]
            assert bool(state["interrupts"]) == (ends[-1]["status"] == "interrupted")
            if state["interrupts"]:
                assert "__interrupt__" in last_values and state["next"] == ["agent"]
        messages = [_shape(m) for m in state["values"]["messages"]]
        assert messages == await _in_process(app_name, script)
        history = await client.threads.get_history(thread_id, limit=100)
        assert len(history) == len(script)
        assert history[0]["values"] == state["values"]
        assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
        found = await client.threads.search(metadata={"script": number, "app": app_name})
        assert [t["thread_id"] for t in found] == [thread_id]
        assert found[0]["metadata"]["graph_id"] == app_name and found[0]["status"] in ("idle", "interrupted")


async def test_a_run_without_a_thread_gets_a_thread_of_its_own(server: str) -> None:
    async with get_client(url=server) as client:
        waited = await client.runs.wait(
            None, "faang", input={"messages": [{"role": "user", "content": faang.QUESTION}]}
        )
        assert "1,977,586" in waited["messages"][-1]["content"]
        parts = [
            p
            async for p in client.runs.stream(
                None, "faang", input={"messages": [{"role": "user", "content": faang.QUESTION}]}, stream_mode="values"
            )
        ]
        assert parts[0].event == "metadata" and "1,977,586" in parts[-1].data["messages"][-1]["content"]
        threads = await client.threads.search(metadata={"graph_id": "faang"}, limit=100)
        kept = [t for t in threads if t["values"] and "1,977,586" in t["values"]["messages"][-1]["content"]]
        assert len(kept) >= 2  # each run's new thread is kept, with the run's messages


async def test_counts_and_a_search_by_values(server: str) -> None:
    """``threads.count``, ``assistants.count`` (common LangGraph UIs call them) and ``threads.search(values=...)``."""
    async with get_client(url=server) as client:
        assistants = await client.assistants.search(limit=100)
        assert await client.assistants.count() == len(assistants) > 0
        assert await client.assistants.count(graph_id="trip") == 1
        before = await client.threads.count()
        first = await client.threads.create(metadata={"team": "count-test"})
        await client.threads.create(metadata={"team": "count-test"})
        assert await client.threads.count() == before + 2
        assert await client.threads.count(metadata={"team": "count-test"}) == 2
        said = {"messages": [{"role": "human", "content": "What's the weather in Lisbon?"}]}
        await client.runs.wait(first["thread_id"], "trip", input=said)
        state = await client.threads.get_state(first["thread_id"])
        found = await client.threads.search(values={"messages": state["values"]["messages"]})
        assert [t["thread_id"] for t in found] == [first["thread_id"]]
        assert (
            await client.threads.search(values={"messages": []}, metadata={"team": "count-test"}) != []
        )  # the new one
