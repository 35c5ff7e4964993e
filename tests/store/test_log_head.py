"""An append lands right after the thread's last event, or not at all.

A database server that crashes at durability ``process`` (PostgreSQL ``synchronous_commit=off``) may lose the last
commits a live writer was told of. The writer's next append, numbered after what it believes is stored, must then be
refused (nothing written), so the log is cut at some point and never holed in the middle; a run stops and goes on
from its stored journal. Lost commits are simulated by deleting the last events of a thread behind the writer's
back. (SQLite needs no such check: a crash that loses its commits ends the process holding the position too.)
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from podium import (
    AIMessage,
    Message,
    MessageAdded,
    ModelRequest,
    ReactAgent,
    Runtime,
    StoreError,
    ToolMessage,
    tool,
)
from podium.errors import LeaseLost
from podium.messages import HumanMessage
from podium.store.base import RunRecord, Store
from podium.store.memory import MemoryStore
from podium.testing import FunctionModel, tool_call

BACKENDS = ["memory", "postgres"]


def message(seq: int, text: str, *, run: str = "r1", key: str | None = None) -> MessageAdded:
    return MessageAdded(message=HumanMessage(content=text), run_id=run, seq=seq, key=key)


def lose_last(store: Store, request: pytest.FixtureRequest, thread_id: str, count: int) -> None:
    """Delete the thread's last ``count`` events, as a crash of the database server losing its last commits."""
    if isinstance(store, MemoryStore):
        thread = store._thread(thread_id)
        lost, thread.events = thread.events[-count:], thread.events[:-count]
        for event in lost:
            if event.key is not None:
                store._journals.get(event.run_id, {}).pop(event.key, None)
        return
    import psycopg

    url, schema = request.getfixturevalue("postgres_schema")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f'DELETE FROM "{schema}".events WHERE thread_id=%s AND seq > '
            f'(SELECT max(seq) FROM "{schema}".events WHERE thread_id=%s) - %s',
            (thread_id, thread_id, count),
        )


@pytest.mark.parametrize("store", BACKENDS, indirect=True)
@pytest.mark.parametrize("how", ["one", "several", "soon", "end", "unfenced one", "unfenced several"])
async def test_an_append_after_lost_commits_is_refused_and_leaves_no_gap(
    store: Store, request: pytest.FixtureRequest, how: str
) -> None:
    await store.create_thread("t")
    me = "me"
    assert await store.acquire_thread("t", me, 60) is None
    await store.create_run(RunRecord(id="r1", thread_id="t"))
    await store.append_events("t", [message(n, f"m{n}", key=f"k{n}") for n in range(1, 6)], owner=me)
    lose_last(store, request, "t", 2)  # the writer still believes the log ends at 5

    owner = None if how.startswith("unfenced") else me
    batch = [message(6, "after", key="k6")] if how.endswith("one") else [message(6, "a"), message(7, "b", key="k7")]
    with pytest.raises(StoreError, match=r"ends at event 3, not 5|event seq 6 is not the next \(4\)") as refused:
        if how == "soon":
            await store.append_events_soon("t", batch, owner=owner)
        elif how == "end":
            await store.end_run("t", batch, "r1", "completed", {"output": "x"}, owner=me, release=True)
        else:
            await store.append_events("t", batch, owner=owner)
    assert not isinstance(refused.value, LeaseLost)  # the lease is still the writer's: only its position is stale
    assert [e.seq for e in await store.read_events("t")] == [1, 2, 3]
    assert set(await store.journal("r1")) == {"k1", "k2", "k3"}
    run = await store.get_run("r1")
    assert run is not None and run.status == "running"  # a refused end records no status either
    assert await store.renew_thread("t", me, 60) is None  # nor gives the lease back

    await store.append_events("t", [message(4, "again", key="k4")], owner=owner)  # numbered on from what is stored
    assert [e.seq for e in await store.read_events("t")] == [1, 2, 3, 4]


@pytest.mark.parametrize("store", BACKENDS, indirect=True)
@pytest.mark.parametrize("owner", [None, "me"])
async def test_an_append_numbered_over_stored_events_or_with_gaps_is_refused(store: Store, owner: str | None) -> None:
    await store.create_thread("t")
    assert await store.acquire_thread("t", "me", 60) is None
    await store.append_events("t", [message(1, "a"), message(2, "b")], owner=owner)
    for batch in ([message(2, "taken")], [message(1, "x"), message(2, "y")], [message(3, "c"), message(5, "gap")]):
        with pytest.raises(StoreError):
            await store.append_events("t", batch, owner=owner)
    assert [e.message.content for e in await store.read_events("t") if isinstance(e, MessageAdded)] == ["a", "b"]


def _agent(store: Store, request: pytest.FixtureRequest, lose_at: str, tools_run: Counter[int]) -> ReactAgent:
    """Calls ``work(0)``, then ``work(1)`` and ``work(2)`` at once, then answers; at ``lose_at`` (once) the last two
    stored events are lost behind the run's back."""
    lost = False

    def lose(where: str) -> None:
        nonlocal lost
        if where == lose_at and not lost:
            lost = True
            lose_last(store, request, "t", 2)

    @tool
    async def work(n: int) -> str:
        """Do part ``n``."""
        tools_run[n] += 1
        lose(f"tool {n}")
        return f"did {n}"

    def model(messages: list[Message], _: ModelRequest) -> AIMessage:
        results = sum(isinstance(m, ToolMessage) for m in messages)
        lose(f"model {results}")
        if results == 0:
            return AIMessage(tool_calls=[tool_call("work", {"n": 0}, id="c0")])
        if results == 1:
            return AIMessage(tool_calls=[tool_call("work", {"n": 1}, id="c1"), tool_call("work", {"n": 2}, id="c2")])
        return AIMessage(content="done")

    return ReactAgent("worker", FunctionModel(model), [work])


def _assert_whole(events: list[Any]) -> None:
    """The log has no hole, and every tool result follows the model message that called it."""
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    called: set[str] = set()
    for event in events:
        if isinstance(event, MessageAdded) and isinstance(event.message, AIMessage):
            called |= {c.id for c in event.message.tool_calls}
        if isinstance(event, MessageAdded) and isinstance(event.message, ToolMessage):
            assert event.message.tool_call_id in called


@pytest.mark.parametrize("store", BACKENDS, indirect=True)
@pytest.mark.parametrize(
    ("lose_at", "again"),
    [
        ("model 1", {0: 2, 1: 1, 2: 1}),  # the model's call of 0 and 0's result lost: 0 is made again
        ("tool 1", {0: 2, 1: 2, 2: 2}),  # 0's result and the call of 1 and 2 lost: the two results are refused together
        ("model 3", {0: 1, 1: 2, 2: 2}),  # the results of 1 and 2 lost; the run's end refused
    ],
)
async def test_a_run_whose_last_commits_were_lost_stops_and_goes_on_without_a_hole(
    store: Store, request: pytest.FixtureRequest, lose_at: str, again: dict[int, int]
) -> None:
    tools_run: Counter[int] = Counter()
    agent = _agent(store, request, lose_at, tools_run)
    runtime = Runtime(store)
    with pytest.raises(StoreError, match=r"is not the next|ends at event"):
        await runtime.run(agent, "go", thread_id="t")
    _assert_whole(await store.read_events("t"))  # cut where the commits were lost, nothing written after

    result = await runtime.resume(agent, "t")  # goes on from the stored journal
    assert (result.status, result.output) == ("completed", "done")
    events = await store.read_events("t")
    _assert_whole(events)
    assert tools_run == again  # only the steps whose records were lost are made again
    contents = [(m.kind, m.content) for m in await runtime.messages("t")]
    assert contents == [
        ("human", "go"),
        ("ai", ""),
        ("tool", "did 0"),
        ("ai", ""),
        ("tool", "did 1"),
        ("tool", "did 2"),
        ("ai", "done"),
    ]
