"""The run and thread routes over real HTTP: shapes, headers, bad input with JSON ``detail``, isolation."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest


def _say(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _thread(url: str, **body: Any) -> str:
    return str(httpx.post(f"{url}/threads", json=body).json()["thread_id"])


def test_a_background_run_answers_at_once_and_names_itself(gated_server: str, gate: tuple[Path, Path]) -> None:
    thread_id = _thread(gated_server)
    created = httpx.post(
        f"{gated_server}/threads/{thread_id}/runs", json={"assistant_id": "gated", "input": _say("hi")}
    )
    assert created.status_code == 200
    run = created.json()
    assert created.headers["content-location"] == f"/threads/{thread_id}/runs/{run['run_id']}"
    assert run["status"] in ("pending", "running") and run["assistant_id"] == "gated"
    gate[0].touch()
    joined = httpx.get(f"{gated_server}/threads/{thread_id}/runs/{run['run_id']}/join", timeout=30).json()
    assert [m["content"] for m in joined["messages"] if m["type"] == "ai" and m["content"]] == ["finished: hi"]
    assert gate[1].read_text().split() == ["1", "2"]
    thread = httpx.get(f"{gated_server}/threads/{thread_id}").json()
    assert thread["status"] == "idle" and thread["metadata"] == {"graph_id": "gated", "assistant_id": "gated"}


def test_threads_crud_search_and_history(server: str) -> None:
    thread_id = _thread(server, thread_id="my-thread", metadata={"team": "a"})
    assert thread_id == "my-thread"
    again = httpx.post(f"{server}/threads", json={"thread_id": "my-thread"})
    assert again.status_code == 409 and "already exists" in again.json()["detail"]
    same = httpx.post(f"{server}/threads", json={"thread_id": "my-thread", "if_exists": "do_nothing"}).json()
    assert same["metadata"] == {"team": "a"}
    patched = httpx.patch(f"{server}/threads/my-thread", json={"metadata": {"mood": "ok"}}).json()
    assert patched["metadata"] == {"team": "a", "mood": "ok"}
    other = _thread(server, metadata={"team": "b"})
    found = httpx.post(f"{server}/threads/search", json={"metadata": {"team": "a"}}).json()
    assert [t["thread_id"] for t in found] == ["my-thread"]
    assert {t["thread_id"] for t in httpx.post(f"{server}/threads/search", json={"status": "idle"}).json()} == {
        "my-thread",
        other,
    }
    ordered = httpx.post(f"{server}/threads/search", json={"sort_by": "thread_id", "sort_order": "asc"}).json()
    assert [t["thread_id"] for t in ordered] == sorted([other, "my-thread"])
    paged = httpx.post(f"{server}/threads/search", json={"sort_by": "thread_id", "limit": 1, "offset": 1}).json()
    assert [t["thread_id"] for t in paged] == sorted([other, "my-thread"], reverse=True)[1:]
    newest = httpx.post(f"{server}/threads/search", json={"sort_by": "updated_at", "limit": 1}).json()
    assert [t["thread_id"] for t in newest] == [other] and newest[0]["status"] == "idle"  # made after the patch
    by_status = httpx.post(f"{server}/threads/search", json={"sort_by": "status", "limit": 1, "offset": 1}).json()
    assert len(by_status) == 1 and by_status[0]["status"] == "idle"  # sorted on what the histories say, then paged
    waited = httpx.post(
        f"{server}/threads/my-thread/runs/wait", json={"assistant_id": "trip", "input": _say("Compare Paris and Oslo")}
    )
    assert waited.headers["location"].endswith("/join")
    history = httpx.get(f"{server}/threads/my-thread/history").json()
    assert len(history) == 1 and history[0]["metadata"]["status"] == "completed"
    before = httpx.post(
        f"{server}/threads/my-thread/history", json={"before": {"checkpoint_id": history[0]["checkpoint_id"]}}
    )
    assert before.json() == []
    bad = httpx.post(f"{server}/threads/my-thread/history", json={"before": "latest"})
    assert bad.status_code == 422 and "checkpoint_id" in bad.json()["detail"]
    assert httpx.delete(f"{server}/threads/my-thread").status_code == 204
    assert httpx.get(f"{server}/threads/my-thread").status_code == 404
    assert [t["thread_id"] for t in httpx.post(f"{server}/threads/search", json={}).json()] == [other]


def test_interrupt_values_and_resume_answers(server: str) -> None:
    thread_id = _thread(server)
    runs = f"{server}/threads/{thread_id}/runs"
    asked = httpx.post(f"{runs}/wait", json={"assistant_id": "trip", "input": _say("Save a note: umbrella for Paris")})
    interrupt = asked.json()["__interrupt__"][0]
    assert interrupt["value"]["prompt"] == "Save this note to your trip notebook: 'umbrella for Paris'?"
    assert interrupt["value"]["expectation"] == {"type": "choice", "options": ["yes", "no"]}
    assert interrupt["value"]["path"][0] == "trip_helper"
    assert interrupt["value"]["review_configs"] == [
        {"action_name": "save_trip_note", "allowed_decisions": ["approve", "reject"]}
    ]
    assert interrupt["value"]["action_requests"][0]["args"] == {"text": "umbrella for Paris"}
    state = httpx.get(f"{server}/threads/{thread_id}").json()
    assert state["status"] == "interrupted" and next(iter(state["interrupts"].values()))[0]["id"] == interrupt["id"]
    busy = httpx.post(runs, json={"assistant_id": "trip", "input": _say("hello")})
    assert busy.status_code == 409 and "waits for an answer" in busy.json()["detail"]
    for bad, fragment in [
        (5, "resume must be text"),
        ({"nope": "yes"}, "no pending interrupt 'nope'"),
        ({interrupt["id"]: 3}, "must be text"),
        ({"decisions": [{"type": "maybe"}]}, "decision type must be"),
        ({"decisions": "approve"}, "decisions must be a list"),
    ]:
        refused = httpx.post(runs, json={"assistant_id": "trip", "command": {"resume": bad}})
        assert refused.status_code == 422 and fragment in refused.json()["detail"], refused.text
    wrong_app = httpx.post(runs, json={"assistant_id": "faang", "command": {"resume": "yes"}})
    assert wrong_app.status_code == 422 and "belongs to assistant 'trip'" in wrong_app.json()["detail"]
    goto = httpx.post(runs, json={"assistant_id": "trip", "command": {"goto": "x"}})
    assert goto.status_code == 422 and "only resume" in goto.json()["detail"]
    done = httpx.post(
        f"{runs}/wait",
        json={"assistant_id": "trip", "command": {"resume": {interrupt["id"]: {"decisions": [{"type": "reject"}]}}}},
    ).json()
    assert done["messages"][-1]["content"] == "Fine, I did not save it." and "__interrupt__" not in done
    nothing = httpx.post(runs, json={"assistant_id": "trip", "command": {"resume": "yes"}})
    assert nothing.status_code == 409 and "no interrupt waiting" in nothing.json()["detail"]


def test_bad_requests_get_a_fitting_status_and_a_json_detail(server: str) -> None:
    thread_id = _thread(server)
    runs = f"{server}/threads/{thread_id}/runs"
    cases: list[tuple[httpx.Response, int, str]] = [
        (httpx.post(runs, json={"assistant_id": "nope", "input": _say("hi")}), 404, "no assistant 'nope'"),
        (httpx.post(runs, content=b"assistant_id=trip", headers={"content-type": "text/plain"}), 415, "send JSON"),
        (
            httpx.post(runs, content=b"{" + b" " * 2_000_000 + b"}", headers={"content-type": "application/json"}),
            413,
            "larger than",
        ),
        (httpx.post(runs, json={"assistant_id": "trip"}), 422, "either input"),
        (
            httpx.post(runs, json={"assistant_id": "trip", "input": _say("hi"), "command": {"resume": "x"}}),
            422,
            "either input",
        ),
        (httpx.post(runs, json={"assistant_id": "trip", "input": {"messages": []}}), 422, "exactly one message"),
        (
            httpx.post(
                runs, json={"assistant_id": "trip", "input": {"messages": [{"role": "system", "content": "x"}]}}
            ),
            422,
            "role 'system'",
        ),
        (httpx.post(runs, json={"assistant_id": "trip", "input": _say("  ")}), 422, "empty"),
        (
            httpx.post(
                runs,
                json={
                    "assistant_id": "trip",
                    "input": {"messages": [{"role": "user", "content": [{"type": "image"}]}]},
                },
            ),
            422,
            "text parts",
        ),
        (
            httpx.post(runs, json={"assistant_id": "trip", "input": _say("hi"), "stream_mode": "debug"}),
            422,
            "unknown stream_mode debug",
        ),
        (  # a pause the server cannot make is refused, never skipped: the tools must not run unasked
            httpx.post(runs, json={"assistant_id": "trip", "input": _say("hi"), "interrupt_before": ["tools"]}),
            422,
            "interrupt_before: not supported",
        ),
        (
            httpx.post(f"{runs}/wait", json={"assistant_id": "trip", "input": _say("hi"), "webhook": "http://x/"}),
            422,
            "webhook: not supported",
        ),
        (
            httpx.post(f"{server}/threads/nope/runs", json={"assistant_id": "trip", "input": _say("hi")}),
            404,
            "no thread 'nope'",
        ),
        (httpx.get(f"{runs}/nope"), 404, "no run 'nope'"),
        (httpx.get(f"{runs}/nope/stream", headers={"Last-Event-ID": "x"}), 404, "no run"),
        (httpx.post(f"{server}/threads", json={"thread_id": "bad id!"}), 422, ""),
    ]
    for response, status, fragment in cases:
        assert response.status_code == status, (response.request.url, response.text)
        assert fragment in str(response.json()["detail"]), response.text
    assert httpx.get(runs).json() == []  # nothing refused ran
    made = httpx.post(
        f"{server}/threads/new-one/runs/wait",
        json={"assistant_id": "trip", "input": _say("What's the weather in Lisbon?"), "if_not_exists": "create"},
    )
    assert made.json()["messages"][-1]["content"] == "Today in Lisbon: 24 °C, sunny."
    run_id = made.headers["content-location"].rsplit("/", 1)[1]
    bad_id = httpx.get(f"{server}/threads/new-one/runs/{run_id}/stream", headers={"Last-Event-ID": "x"})
    assert bad_id.status_code == 422 and "sequence number" in bad_id.json()["detail"]


def test_another_users_thread_looks_missing(tmp_path: Path) -> None:
    from tests.server.conftest import example_apps, live_server

    from podium.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "s.db")
    asyncio.run(store.create_thread("theirs", {"owner": "someone-else"}))
    asyncio.run(store.create_thread("cli-made"))
    with live_server(example_apps("trip"), store) as url:
        for path in ("theirs", "cli-made"):
            assert httpx.get(f"{url}/threads/{path}").status_code == 404
            assert httpx.get(f"{url}/threads/{path}/state").status_code == 404
            assert httpx.get(f"{url}/threads/{path}/runs").status_code == 404
            taken = httpx.post(
                f"{url}/threads/{path}/runs",
                json={"assistant_id": "trip", "input": _say("hi"), "if_not_exists": "create"},
            )
            assert taken.status_code == 404
        assert httpx.post(f"{url}/threads/search", json={}).json() == []


@pytest.mark.parametrize("strategy", ["enqueue", "reject"])
def test_runs_list_filters_by_status(server: str, strategy: str) -> None:
    thread_id = _thread(server)
    body = {"assistant_id": "trip", "input": _say("Compare Paris and Oslo"), "multitask_strategy": strategy}
    httpx.post(f"{server}/threads/{thread_id}/runs/wait", json=body)
    listed = httpx.get(f"{server}/threads/{thread_id}/runs", params={"status": "success"}).json()
    assert [r["multitask_strategy"] for r in listed] == [strategy]
    assert httpx.get(f"{server}/threads/{thread_id}/runs", params={"status": "error"}).json() == []


def test_a_refused_run_leaves_no_thread_behind(server: str) -> None:
    def count() -> int:
        return len(httpx.post(f"{server}/threads/search", json={"limit": 1000}).json())

    before = count()
    refused = [
        httpx.post(f"{server}/runs/wait", json={"assistant_id": "trip", "command": {"resume": "yes"}}),
        httpx.post(f"{server}/runs/wait", json={"assistant_id": "trip"}),
        httpx.post(f"{server}/runs/wait", json={"assistant_id": "trip", "input": {"messages": []}}),
        httpx.post(
            f"{server}/threads/new-one/runs/wait",
            json={"assistant_id": "trip", "if_not_exists": "create", "command": {"resume": "yes", "goto": "x"}},
        ),
    ]
    assert [r.status_code for r in refused] == [409, 422, 422, 422]
    assert all(isinstance(r.json()["detail"], str) for r in refused)
    assert count() == before
    made = httpx.post(
        f"{server}/runs/wait", json={"assistant_id": "trip", "input": _say("What's the weather in Lisbon?")}
    )
    assert made.status_code == 200 and count() == before + 1


async def test_a_thread_another_client_made_meanwhile_is_not_taken_over() -> None:
    """Two clients create the same new thread id at once: the one whose creation the store did not keep gets 409
    (another user's, or the same user's in another tab), and the thread keeps its owner and record."""
    from fastapi import HTTPException

    from podium import MemoryStore
    from podium.server._records import create_thread, owned_thread

    store = MemoryStore()
    await create_thread(store, "t", "alice", {"mine": True})
    with pytest.raises(HTTPException) as refused:
        await create_thread(store, "t", "bob", {}, checked=True)  # bob saw no thread an instant before
    assert refused.value.status_code == 409
    info, record = await owned_thread(store, "t", "alice")
    assert info.metadata["owner"] == "alice" and record["metadata"] == {"mine": True}
    with pytest.raises(HTTPException) as again:  # the same user in another tab: the creation is not theirs either
        await create_thread(store, "t", "alice", {"mine": False}, checked=True)
    assert again.value.status_code == 409
    assert (await owned_thread(store, "t", "alice"))[1]["metadata"] == {"mine": True}


def test_json_a_store_cannot_write_and_numbers_out_of_range_are_422_and_create_nothing(server: str) -> None:
    """Text with a lone surrogate, JSON nested too deep, sequence numbers no store can hold or not made of ASCII
    digits: each a 422 with a JSON detail (they were 500s, and POST /threads left a half-made thread behind)."""
    json_headers = {"content-type": "application/json"}
    surrogate = b'{"thread_id": "half-made", "metadata": {"note": "\\ud800"}}'
    made = httpx.post(f"{server}/threads", content=surrogate, headers=json_headers)
    assert made.status_code == 422 and "lone surrogate" in made.text
    assert httpx.get(f"{server}/threads/half-made").status_code == 404  # nothing was created
    deep = b'{"metadata": {"a": ' + b'{"a": ' * 100 + b"1" + b"}" * 101 + b"}"
    assert httpx.post(f"{server}/threads", content=deep, headers=json_headers).status_code == 422
    thread_id = _thread(server)
    runs = f"{server}/threads/{thread_id}/runs"
    said = b'{"assistant_id": "trip", "input": {"messages": [{"role": "user", "content": "caf\\udce9"}]}}'
    assert httpx.post(runs, content=said, headers=json_headers).status_code == 422
    huge = str(2**64)
    assert httpx.get(f"{server}/threads/{thread_id}/events", params={"after": huge}).status_code == 422
    for before in ({"configurable": "abc"}, "\u00b2", huge):
        answer = httpx.post(f"{server}/threads/{thread_id}/history", json={"before": before})
        assert answer.status_code == 422 and "checkpoint_id" in answer.json()["detail"]
    run = httpx.post(f"{runs}/wait", json={"assistant_id": "trip", "input": _say("hi")})
    assert run.status_code == 200
    listed = httpx.get(runs).json()
    stream = f"{runs}/{listed[0]['run_id']}/stream"
    for last in (huge.encode(), "\u00b2".encode("latin-1")):  # a latin-1 byte reads as a digit to str.isdigit
        cut = httpx.get(stream, headers={"Last-Event-ID": last})
        assert cut.status_code == 422 and "Last-Event-ID" in cut.json()["detail"]
    chat = b'{"model": "trip", "messages": [{"role": "user", "content": "\\ud83d"}]}'
    assert httpx.post(f"{server}/v1/chat/completions", content=chat, headers=json_headers).status_code == 422


def test_a_chunked_body_over_the_limit_is_refused_and_creates_nothing(server: str) -> None:
    """The 1 MB limit holds for a body sent without Content-Length (chunked): it used to be read whole and used."""

    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b" " * 65_536  # 2.5 MB of whitespace before a valid JSON object
        yield b'{"thread_id": "chunked-big"}'

    answer = httpx.post(f"{server}/threads", content=chunks(), headers={"content-type": "application/json"})
    assert answer.status_code == 413 and "larger than" in answer.json()["detail"]
    assert httpx.get(f"{server}/threads/chunked-big").status_code == 404
    small = httpx.post(
        f"{server}/threads",
        content=iter([b'{"thread_id": ', b'"chunked-small"}']),
        headers={"content-type": "application/json"},
    )
    assert small.status_code == 200


def test_a_run_that_creates_its_thread_follows_the_thread_id_rules(server: str) -> None:
    """``if_not_exists: create`` names a new thread like POST /threads does: no spaces, paths or 3,000 characters."""
    for bad in ("has space", "a" * 300, "\u00fcn\u00efcode"):
        answer = httpx.post(
            f"{server}/threads/{bad}/runs/wait",
            json={"assistant_id": "trip", "input": _say("hi"), "if_not_exists": "create"},
        )
        assert answer.status_code == 422 and "letters, digits" in answer.json()["detail"], answer.text
        assert httpx.get(f"{server}/threads/{bad}").status_code == 404
    fine = httpx.post(
        f"{server}/threads/ok-1/runs/wait",
        json={"assistant_id": "trip", "input": _say("hi"), "if_not_exists": "create"},
    )
    assert fine.status_code == 200
