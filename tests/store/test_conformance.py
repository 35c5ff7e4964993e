"""The conformance suite: every store backend must pass all of it (the ``store`` fixture runs each backend)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from podium import AIMessage, HumanMessage, MessageAdded, SideChannel, StepRecorded, StoreError, ToolCall
from podium.errors import LeaseLost, UsageError
from podium.store.base import RunRecord, Store, new_owner


def message(seq: int, text: str, *, run: str = "r1", ns: str = "", key: str | None = None) -> MessageAdded:
    return MessageAdded(message=HumanMessage(content=text), namespace=ns, run_id=run, seq=seq, key=key)


async def test_threads_are_created_once_and_listed(store: Store) -> None:
    first = await store.create_thread("t1", {"agent": "a"})
    again = await store.create_thread("t1", {"agent": "other"})
    assert again.metadata == {"agent": "a"} and again.created == first.created
    await store.create_thread("t2")
    assert await store.ensure_thread("t1", {"agent": "b"}) == first  # for a run: the existing one, unchanged
    made = await store.ensure_thread("t3", {"agent": "c"})
    assert await store.get_thread("t3") == made and made.metadata == {"agent": "c"}
    assert await store.get_thread("missing") is None
    assert {t.id for t in await store.list_threads()} == {"t1", "t2", "t3"}
    assert len(await store.list_threads(limit=1)) == 1
    assert await store.list_threads(limit=0) == []
    assert len(await store.list_threads(limit=10**30)) == 3  # more than a database integer: every thread
    for bad in (-1, 2.5, True):
        with pytest.raises(UsageError, match="a listing's limit is a whole number"):
            await store.list_threads(limit=bad)  # type: ignore[arg-type]


async def test_events_round_trip_in_order(store: Store) -> None:
    await store.create_thread("t")
    reply = AIMessage(content="", tool_calls=[ToolCall(id="c1", name="f", arguments='{"x": 1}')], name="agent")
    events = [
        message(1, "hello", key="a#1"),
        MessageAdded(message=reply, run_id="r1", seq=2, key="a#2", path=("a",)),
        SideChannel(text="working", run_id="r1", seq=3, path=("a", "c1")),
        StepRecorded(value={"n": [1, 2]}, run_id="r1", seq=4, key="a#3"),
    ]
    await store.append_events("t", events)
    back = await store.read_events("t")
    assert [e.seq for e in back] == [1, 2, 3, 4]
    assert isinstance(back[1], MessageAdded) and back[1].message == reply and back[1].path == ("a",)
    assert isinstance(back[2], SideChannel) and back[2].text == "working" and back[2].path == ("a", "c1")
    assert isinstance(back[3], StepRecorded) and back[3].value == {"n": [1, 2]}
    assert [e.seq for e in await store.read_events("t", after=2)] == [3, 4]
    assert await store.last_seq("t") == 4


async def test_events_stored_soon_are_stored_like_any_and_fenced_the_same(store: Store) -> None:
    """``append_events_soon`` returns once the events are committed (where a sync of its own would follow, it is not
    waited for): readable at once, numbered and fenced like ``append_events``."""
    await store.create_thread("t")
    me = "me"
    assert await store.acquire_thread("t", me, 30) is None
    await store.append_events_soon("t", [message(1, "a", run="r1", key="k1")], owner=me)
    with pytest.raises(LeaseLost):
        await store.append_events_soon("t", [message(2, "stale", run="r1")], owner="another")
    with pytest.raises(StoreError):
        await store.append_events_soon("t", [message(1, "same number")])
    await store.append_events("t", [message(2, "b", run="r1")], owner=me)
    assert [e.seq for e in await store.read_events("t")] == [1, 2]
    assert set(await store.journal("r1")) == {"k1"}


async def test_sequence_numbers_cannot_be_reused_or_skipped(store: Store) -> None:
    await store.create_thread("t")
    await store.append_events("t", [message(1, "a")])
    with pytest.raises(StoreError):
        await store.append_events("t", [message(1, "again")])
    assert [e.seq for e in await store.read_events("t")] == [1]


async def test_a_batch_is_atomic(store: Store) -> None:
    await store.create_thread("t")
    await store.append_events("t", [message(1, "a", key="k")])
    with pytest.raises(StoreError):
        await store.append_events("t", [message(2, "b"), message(3, "dup", key="k")])
    assert [e.seq for e in await store.read_events("t")] == [1]


async def test_journal_holds_keyed_events_of_one_run(store: Store) -> None:
    await store.create_thread("t")
    await store.append_events("t", [message(1, "a", key="x#1"), message(2, "b"), message(3, "c", run="r2", key="x#1")])
    journal = await store.journal("r1")
    assert list(journal) == ["x#1"]
    assert isinstance(journal["x#1"], MessageAdded) and journal["x#1"].message.content == "a"
    assert (await store.journal("r2"))["x#1"].seq == 3
    assert await store.journal("nothing") == {}


async def test_messages_by_namespace_and_excluding_a_run(store: Store) -> None:
    await store.create_thread("t")
    await store.append_events(
        "t",
        [
            message(1, "main1"),
            message(2, "inner", ns="agent/c1"),
            SideChannel(text="note", run_id="r1", seq=3),
            message(4, "main2", run="r2"),
        ],
    )
    assert [m.content for m in await store.load_messages("t")] == ["main1", "main2"]
    assert [m.content for m in await store.load_messages("t", "agent/c1")] == ["inner"]
    assert [m.content for m in await store.load_messages("t", exclude_run="r2")] == ["main1"]


async def test_runs_record_status_and_result(store: Store) -> None:
    await store.create_thread("t")
    await store.create_run(RunRecord(id="r1", thread_id="t", input={"kind": "human", "content": "hi"}, agent="a"))
    await store.create_run(RunRecord(id="r2", thread_id="t", agent="a"))
    await store.update_run("r1", "completed", {"status": "completed", "output": "ok"})
    run = await store.get_run("r1")
    assert run is not None and run.status == "completed" and run.result == {"status": "completed", "output": "ok"}
    assert run.input == {"kind": "human", "content": "hi"}
    assert [r.id for r in await store.list_runs("t")] == ["r1", "r2"]
    last = await store.last_run("t")
    assert last is not None and last.id == "r2"
    await store.create_thread("empty")
    assert await store.last_run("empty") is None
    assert await store.get_run("nope") is None
    with pytest.raises(StoreError):
        await store.update_run("nope", "failed")
    with pytest.raises(StoreError):
        await store.create_run(RunRecord(id="r1", thread_id="t"))


async def test_stored_results_and_state_share_nothing_with_the_callers_values(store: Store) -> None:
    await store.create_thread("t")
    await store.create_run(RunRecord(id="r1", thread_id="t", agent="a"))
    result = {"status": "completed", "interrupts": [{"id": "k", "data": {"n": [1, 2.5, None, True]}}]}
    await store.update_run("r1", "completed", result)
    value = {"slots": [{"a": "x"}], "deep": [[[["y"]]]]}
    await store.put_state("t", "s", value)
    expected_result, expected_value = repr(result), repr(value)
    result["interrupts"][0]["data"]["n"].append("changed")  # the caller's values change after they were stored
    value["slots"][0]["a"] = "changed"
    run = await store.get_run("r1")
    assert run is not None and repr(run.result) == expected_result
    read = await store.get_state("t", "s")
    assert repr(read) == expected_value
    read["deep"][0][0][0].append("changed")  # and what was read changes
    assert repr(await store.get_state("t", "s")) == expected_value


async def test_deleting_the_newest_run_drops_what_it_stored(store: Store) -> None:
    await store.create_thread("t")
    await store.create_run(RunRecord(id="r1", thread_id="t", agent="a"))
    await store.create_run(RunRecord(id="r2", thread_id="t", agent="a"))
    await store.append_events("t", [message(1, "kept", run="r1", key="k1"), message(2, "gone", run="r2", key="k1")])
    await store.append_events("t", [message(3, "gone too", run="r2", key="k2")])
    with pytest.raises(StoreError, match="not the newest"):
        await store.delete_run("r1")
    await store.delete_run("r2")
    assert await store.get_run("r2") is None
    assert [r.id for r in await store.list_runs("t")] == ["r1"]
    last = await store.last_run("t")
    assert last is not None and last.id == "r1"
    assert [m.content for m in await store.load_messages("t")] == ["kept"]
    assert await store.journal("r2") == {}
    assert await store.last_seq("t") == 1
    await store.append_events("t", [message(2, "next", run="r1", key="k2")])
    assert [e.seq for e in await store.read_events("t")] == [1, 2]
    with pytest.raises(StoreError):
        await store.delete_run("r2")


async def test_deleting_a_thread_drops_everything_it_stored_and_frees_its_id(store: Store) -> None:
    """A deleted thread's id makes a new, empty thread: none of the old events, runs, journals, state or lease come
    back, and another thread is untouched."""
    for thread in ("t", "other"):
        await store.create_thread(thread, {"owner": "ada"})
        await store.create_run(RunRecord(id=f"{thread}-r1", thread_id=thread))
        await store.append_events(thread, [message(1, "old", run=f"{thread}-r1", key="k1")])
        await store.put_state(thread, "server.thread", {"metadata": {"title": "old"}})
    assert await store.acquire_thread("t", new_owner("old"), 60) is None
    await store.delete_thread("t")
    assert await store.get_thread("t") is None and "t" not in {t.id for t in await store.list_threads()}
    assert await store.get_run("t-r1") is None and await store.journal("t-r1") == {}
    made = await store.create_thread("t", {"owner": "bob"})
    assert made.metadata == {"owner": "bob"}
    assert (
        await store.read_events("t") == [] and await store.last_seq("t") == 0 and await store.log_head("t") == (0, "")
    )
    assert await store.list_runs("t") == [] and await store.last_run("t") is None
    assert await store.load_messages("t") == [] and await store.get_state("t", "server.thread") is None
    assert await store.acquire_thread("t", new_owner("new"), 60) is None  # the old lease went with it
    await store.append_events("t", [message(1, "new", run="t-r2", key="k1")])
    assert [m.content for m in await store.load_messages("t")] == ["new"]
    assert [m.content for m in await store.load_messages("other")] == ["old"]
    assert await store.get_state("other", "server.thread") == {"metadata": {"title": "old"}}
    await store.delete_thread("never-made")  # nothing to delete: nothing happens


async def test_lease_is_exclusive_renewable_and_released(store: Store) -> None:
    await store.create_thread("t")
    me, other = new_owner("me"), new_owner("other")
    assert await store.acquire_thread("t", me, 60) is None
    assert await store.acquire_thread("t", other, 60) == me
    assert await store.acquire_thread("t", me, 60) is None  # renewal
    await store.release_thread("t", other)  # not the holder: no effect
    assert await store.acquire_thread("t", other, 60) == me
    await store.release_thread("t", me)
    assert await store.acquire_thread("t", other, 60) is None


async def test_expired_lease_and_dead_holder_are_taken_over(store: Store) -> None:
    await store.create_thread("t")
    assert await store.acquire_thread("t", new_owner("old"), -1) is None  # already expired
    assert await store.acquire_thread("t", new_owner("new"), 60) is None
    await store.create_thread("u")
    code = "from podium.store.base import new_owner; print(new_owner('gone'))"
    dead = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert await store.acquire_thread("u", dead, 60) is None  # its process has ended: its life mark is free
    assert await store.acquire_thread("u", new_owner("live"), 60) is None


async def test_fenced_append_writes_only_for_the_lease_holder(store: Store) -> None:
    await store.create_thread("t")
    me, other = new_owner("me"), new_owner("other")
    assert await store.acquire_thread("t", me, 60) is None
    await store.append_events("t", [message(1, "mine", run="r1", key="k1")], owner=me)
    with pytest.raises(LeaseLost, match="now held by") as lost:
        await store.append_events("t", [message(2, "stale", run="r2", key="k1")], owner=other)
    assert lost.value.holder == me
    await store.release_thread("t", me)
    with pytest.raises(LeaseLost, match="no longer held"):
        await store.append_events("t", [message(2, "a", run="r1"), message(3, "b", run="r1")], owner=me)
    assert [e.seq for e in await store.read_events("t")] == [1]
    assert await store.acquire_thread("t", other, 60) is None
    await store.append_events("t", [message(2, "a", run="r2"), message(3, "b", run="r2")], owner=other)
    assert [e.seq for e in await store.read_events("t")] == [1, 2, 3]


async def test_a_run_ends_with_its_events_and_status_together_or_not_at_all(store: Store) -> None:
    await store.create_thread("t")
    me, other = new_owner("me"), new_owner("other")
    await store.create_run(RunRecord(id="r1", thread_id="t"))
    assert await store.acquire_thread("t", me, 60) is None
    with pytest.raises(LeaseLost):  # fenced off: neither the events nor the status are written
        await store.end_run("t", [message(1, "a"), message(2, "b")], "r1", "completed", {"n": 1}, owner=other)
    with pytest.raises(StoreError, match="no run"):  # an unknown run: the events are not written either
        await store.end_run("t", [message(1, "a"), message(2, "b")], "nope", "completed", {"n": 1}, owner=me)
    run = await store.get_run("r1")
    assert run is not None and run.status == "running" and await store.read_events("t") == []
    await store.end_run("t", [message(1, "a"), message(2, "b")], "r1", "completed", {"n": 1}, owner=me)
    await store.end_run("t", [message(3, "c")], "r1", "failed", {"n": 2}, owner=me)  # one row: fenced alone
    run = await store.get_run("r1")
    assert run is not None and (run.status, run.result) == ("failed", {"n": 2})
    assert [e.seq for e in await store.read_events("t")] == [1, 2, 3]


async def test_a_run_can_give_its_lease_back_with_its_end(store: Store) -> None:
    await store.create_thread("t")
    me, other = new_owner("me"), new_owner("other")
    await store.create_run(RunRecord(id="r1", thread_id="t"))
    assert await store.acquire_thread("t", me, 60) is None
    with pytest.raises(LeaseLost):  # fenced off: the lease stays with its holder
        await store.end_run("t", [message(1, "a")], "r1", "completed", {}, owner=other, release=True)
    assert await store.acquire_thread("t", other, 60) == me
    assert await store.end_run("t", [message(1, "a")], "r1", "completed", {}, owner=me) is False
    assert await store.acquire_thread("t", other, 60) == me  # not given back unless asked
    assert await store.end_run("t", [message(2, "b")], "r1", "completed", {}, owner=me, release=True) is True
    assert await store.acquire_thread("t", other, 60) is None  # given back with the end
    run = await store.get_run("r1")
    assert run is not None and run.status == "completed"
    assert [e.seq for e in await store.read_events("t")] == [1, 2]


async def test_a_renewal_extends_only_a_lease_its_owner_still_holds(store: Store) -> None:
    """A process that stalled past its lease: another took the thread over, finished and gave it back. The stalled
    one's renewal must not take the free lease (its next writes would pass the lease check)."""
    await store.create_thread("t")
    me, other = new_owner("me"), new_owner("other")
    assert await store.renew_thread("t", me, 60) == ""  # nobody holds it: not taken
    assert await store.acquire_thread("t", other, 60) is None  # so another can take it
    assert await store.acquire_thread("t", me, 0.01) == other
    assert await store.renew_thread("t", me, 60) == other
    await store.release_thread("t", other)
    assert await store.renew_thread("t", me, 60) == ""  # given back: still not taken by a renewal
    assert await store.acquire_thread("t", me, 0.05) is None
    await asyncio.sleep(0.1)  # expired, but nobody took it: the holder may renew
    assert await store.renew_thread("t", me, 60) is None
    assert await store.acquire_thread("t", other, 60) == me


async def test_a_run_state_is_written_only_under_its_lease(store: Store) -> None:
    await store.create_thread("t")
    me, other = new_owner("me"), new_owner("other")
    assert await store.acquire_thread("t", me, 60) is None
    await store.put_state("t", "slots", {"a": 1}, owner=me)
    with pytest.raises(LeaseLost):  # fenced: a stalled writer another took the thread from
        await store.put_state("t", "slots", {"a": 2}, owner=other)
    await store.release_thread("t", me)
    with pytest.raises(LeaseLost):  # nobody holds it: nobody writes under it
        await store.put_state("t", "slots", {"a": 3}, owner=me)
    assert await store.get_state("t", "slots") == {"a": 1}
    await store.put_state("t", "slots", {"a": 4})  # the server's own records need no lease
    assert await store.get_state("t", "slots") == {"a": 4}


async def test_state_keeps_versions_and_returns_latest(store: Store) -> None:
    await store.create_thread("t")
    assert await store.get_state("t", "stack") is None
    await store.put_state("t", "stack", [1])
    await store.put_state("t", "stack", [1, 2])
    await store.put_state("t", "other", {"a": "b"})
    assert await store.get_state("t", "stack") == [1, 2]
    assert await store.get_state("t", "other") == {"a": "b"}


async def test_paths_and_usage_survive_the_compact_row_encoding(store: Store) -> None:
    from podium import Usage

    await store.create_thread("t")
    reply = AIMessage(content="hi", name="a")
    events = [
        MessageAdded(
            message=reply, run_id="r", seq=1, key="sup/call_1/a#2", path=("sup", "call_1", "a"), usage=Usage(5, 7, 1)
        ),
        SideChannel(text="x", run_id="r", seq=2, key="odd/name#1", path=("odd/name",)),  # a "/" inside a segment
        SideChannel(text="y", run_id="r", seq=3, path=("free",)),  # no key
        StepRecorded(value=1, run_id="r", seq=4, key="@start1"),
    ]
    await store.append_events("t", events)
    back = await store.read_events("t")
    assert [e.path for e in back] == [("sup", "call_1", "a"), ("odd/name",), ("free",), ()]
    first = back[0]
    assert isinstance(first, MessageAdded) and first.usage == Usage(5, 7, 1)


async def test_api_keys_are_found_by_digest_listed_and_revoked(store: Store) -> None:
    from podium.store.base import ApiKey

    first = ApiKey(id="k1", name="ci", user="alice", scopes=["read", "run"], digest="d1", created=1.0)
    second = ApiKey(id="k2", name="ops", user="bob", scopes=["admin"], digest="d2", created=2.0)
    await store.add_api_key(first)
    await store.add_api_key(second)
    assert await store.find_api_key("d1") == first
    assert await store.find_api_key("missing") is None
    with pytest.raises(StoreError):
        await store.add_api_key(ApiKey(id="k3", name="dup", user="eve", scopes=[], digest="d1"))
    assert [k.id for k in await store.list_api_keys()] == ["k1", "k2"]
    assert await store.revoke_api_key("k1") is True
    assert await store.revoke_api_key("k1") is False  # already revoked
    assert await store.revoke_api_key("nope") is False
    revoked = await store.find_api_key("d1")
    assert revoked is not None and revoked.revoked is not None and revoked.user == "alice"
    assert [k.revoked is None for k in await store.list_api_keys()] == [False, True]


async def test_the_log_head_names_the_last_event_and_its_run(store: Store) -> None:
    await store.create_thread("t")
    assert await store.log_head("t") == (0, "")
    await store.create_run(RunRecord(id="r1", thread_id="t"))
    await store.append_events("t", [message(1, "a", run="r1"), message(2, "b", run="r1")])
    assert await store.log_head("t") == (2, "r1")
    await store.create_run(RunRecord(id="r2", thread_id="t"))
    await store.append_events("t", [message(3, "c", run="r2")])
    assert await store.log_head("t") == (3, "r2")
    await store.delete_run("r2")  # rolled back: the head is the earlier run's again
    assert await store.log_head("t") == (2, "r1")
    await store.append_events("t", [message(3, "d", run="r3")])
    assert await store.log_head("t") == (3, "r3")  # the same number, another run: the log changed


async def test_claiming_a_thread_makes_it_takes_its_lease_and_reads_what_a_run_needs(store: Store) -> None:
    me, other = new_owner("me"), new_owner("other")
    claim = await store.claim_thread("t", me, 30, {"agent": "a"})
    assert (claim.holder, claim.last_run, claim.head) == (None, None, (0, ""))
    assert (await store.get_thread("t")).metadata == {"agent": "a"}  # type: ignore[union-attr]
    assert (await store.claim_thread("t", other, 30, {"agent": "b"})).holder == me  # held: nothing else read
    await store.create_run(RunRecord(id="r1", thread_id="t"))
    await store.append_events("t", [message(1, "a", run="r1")], owner=me)
    again = await store.claim_thread("t", me, 30, {"agent": "b"})  # a renewal by the holder
    assert again.holder is None and again.last_run is not None and again.last_run.id == "r1"
    assert again.head == (1, "r1")
    assert (await store.get_thread("t")).metadata == {"agent": "a"}  # type: ignore[union-attr]  # kept as made
    await store.release_thread("t", me)
    assert (await store.claim_thread("t", other, 30)).holder is None


async def test_events_since_a_head_are_the_newer_ones_or_none_once_it_was_rolled_back(store: Store) -> None:
    await store.create_thread("t")
    await store.create_run(RunRecord(id="r1", thread_id="t"))
    await store.append_events("t", [message(1, "a", run="r1"), message(2, "b", run="r1")])
    assert [e.seq for e in await store.events_since("t", (0, "")) or []] == [1, 2]
    await store.create_run(RunRecord(id="r2", thread_id="t"))
    await store.append_events("t", [message(3, "c", run="r2")])
    assert [e.seq for e in await store.events_since("t", (2, "r1")) or []] == [3]
    assert await store.events_since("t", (3, "r2")) == []
    await store.delete_run("r2")
    await store.append_events("t", [message(3, "d", run="r3")])
    assert await store.events_since("t", (3, "r2")) is None  # its event is gone: read the log again in full
