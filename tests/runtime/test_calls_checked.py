"""What the runtime is handed is checked before anything is created; a damaged history is reported, never half-read."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from podium import (
    AIMessage,
    Limits,
    MemoryStore,
    Message,
    ModelRequest,
    ReactAgent,
    Runtime,
    SQLiteStore,
    StoreCorrupt,
    ThreadBusy,
    ThreadWaiting,
    ToolMessage,
    UsageError,
)
from podium.testing import FunctionModel, tool_call


def _agent() -> ReactAgent:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"sum {messages[-1].content}")
        return AIMessage(tool_calls=[tool_call("add", {"a": 1, "b": 2}, id="c")])

    return ReactAgent("adder", FunctionModel(model), [add])


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"agent": None}, "agent must be an agent"),
        ({"agent": "adder"}, "agent must be an agent"),
        ({"agent": object()}, "agent must be an agent"),
        ({"limits": {"max_model_calls": 1}}, "limits must be a podium Limits"),
        ({"limits": 5}, "limits must be a podium Limits"),
        ({"on_event": 5}, "on_event must be a function"),
        ({"on_event": "print"}, "on_event must be a function"),
    ],
)
@pytest.mark.parametrize("call", ["run", "send", "resume", "stream"])
async def test_run_send_resume_and_stream_refuse_bad_arguments_before_a_thread_exists(
    call: str, change: dict[str, Any], words: str
) -> None:
    store = MemoryStore()
    runtime = Runtime(store)
    arguments: dict[str, Any] = {"agent": _agent(), **change}
    agent = arguments.pop("agent")
    if call == "stream" and "on_event" in arguments:
        pytest.skip("a stream takes no on_event")
    with pytest.raises(UsageError, match=words):
        if call == "run":
            await runtime.run(agent, "go", thread_id="t", **arguments)
        elif call == "send":
            await runtime.send(agent, "go", thread_id="t", **arguments)
        elif call == "resume":
            await runtime.resume(agent, "t", "yes", **arguments)
        else:
            runtime.stream(agent, "go", thread_id="t", **arguments)
    assert await store.get_thread("t") is None


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"store": "memory"}, r"open_store\('memory'\)"),
        ({"store": "sqlite:///x.db"}, r"open_store\('sqlite:///x.db'\)"),
        ({"store": 5}, "store must be a podium Store"),
        ({"bus": object()}, "bus must be a podium EventBus"),
        ({"limits": {"timeout": 1}}, "limits must be a podium Limits"),
        ({"lease_ttl": 0}, "lease_ttl must be a number of seconds, at least 0.03"),
        ({"lease_ttl": 0.001}, "lease_ttl must be a number of seconds, at least 0.03"),
        ({"lease_ttl": -1}, "lease_ttl"),
        ({"lease_ttl": float("nan")}, "lease_ttl"),
        ({"busy_poll": 0}, "busy_poll must be a number of seconds, at least 0.001"),
        ({"busy_poll": "0.1"}, "busy_poll"),
        ({"busy_poll": True}, "busy_poll"),
    ],
)
def test_a_runtime_refuses_what_it_cannot_work_with(options: dict[str, Any], words: str) -> None:
    with pytest.raises(UsageError, match=words):
        Runtime(**options)


async def test_the_shortest_lease_and_poll_allowed_work() -> None:
    runtime = Runtime(MemoryStore(), lease_ttl=0.03, busy_poll=0.001, limits=Limits(max_model_calls=5))
    assert (await runtime.run(_agent(), "go")).output == "sum 3"


async def test_a_wait_for_a_busy_thread_that_runs_out_says_so() -> None:
    store = MemoryStore()
    runtime = Runtime(store)
    gate = asyncio.Event()

    async def hold() -> str:
        """Hold the thread."""
        await gate.wait()
        return "held"

    model = FunctionModel(
        lambda m, r: "ok" if isinstance(m[-1], ToolMessage) else AIMessage(tool_calls=[tool_call("hold")])
    )
    holder = asyncio.create_task(runtime.run(ReactAgent("h", model, [hold]), "go", thread_id="t"))
    await asyncio.sleep(0.05)
    with pytest.raises(ThreadBusy, match=r"still busy after waiting 0.2 s \(busy_timeout\)") as waited:
        await runtime.send(_agent(), "go", thread_id="t", if_busy="wait", busy_timeout=0.2)
    assert waited.value.waited == 0.2
    with pytest.raises(ThreadBusy, match="pass if_busy='wait'") as failed:
        await runtime.send(_agent(), "go", thread_id="t")
    assert failed.value.waited is None
    gate.set()
    assert (await holder).status == "completed"


async def test_a_thread_left_with_a_running_run_says_how_to_resume_or_cancel_it() -> None:
    from podium.runtime._run import RunRecord

    store = MemoryStore()
    runtime = Runtime(store)
    await runtime.run(_agent(), "go", thread_id="t")
    await store.create_run(RunRecord(id="left", thread_id="t", input={"kind": "human", "content": "x"}, agent="adder"))
    with pytest.raises(ThreadWaiting, match=r"Runtime.resume\(agent, 't'\).*Runtime.cancel\('left'\)"):
        await runtime.send(_agent(), "again", thread_id="t")
    assert (await runtime.cancel("left")).status == "cancelled"
    assert (await runtime.send(_agent(), "again", thread_id="t")).status == "completed"


@pytest.mark.parametrize(
    "damage",
    [
        "update events set kind='zzz' where seq=3",
        "update events set kind='message' where seq=1",
        "update events set body='{not json' where seq=4",
    ],
)
async def test_messages_of_a_damaged_history_are_refused_like_its_events(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "s.db"
    store = SQLiteStore(path)
    await Runtime(store).run(_agent(), "go", thread_id="t")
    assert len(await Runtime(store).messages("t")) == 4
    await store.close()
    with sqlite3.connect(path) as connection:
        connection.execute(damage)
    store = SQLiteStore(path)
    runtime = Runtime(store)
    with pytest.raises(StoreCorrupt):
        await runtime.events("t")
    with pytest.raises(StoreCorrupt):
        await runtime.messages("t")
    await store.close()
