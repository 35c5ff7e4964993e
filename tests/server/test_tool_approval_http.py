"""A tool that waits for approval, over real HTTP with the official ``langgraph-sdk`` client: the interrupt carries
the HITL request (approve, edit, reject), and each HITL decision resumes the run as the runtime takes it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from tests.approval_support import transfer_agent
from tests.server.conftest import live_server

from podium import ReactAgent
from podium.app import App
from podium.models.base import Model

SENT: list[dict[str, Any]] = []


def _build(model: Model) -> ReactAgent:
    return transfer_agent(SENT)


def bank_app() -> App:
    """The app ``bank``: its agent pays Ada 100 with :func:`transfer`, which waits for approval."""
    return App(name="bank", build=_build, cassette=Path(__file__).parent / "cassettes" / "empty.json")


@pytest.fixture
def bank(tmp_path: Path) -> Iterator[str]:
    from podium.store.sqlite import SQLiteStore

    SENT.clear()
    with live_server({"bank": bank_app()}, SQLiteStore(tmp_path / "bank.db")) as url:
        yield url


async def _asked(client: Any, thread_id: str) -> dict[str, Any]:
    state = await client.runs.wait(thread_id, "bank", input={"messages": [{"role": "user", "content": "pay Ada"}]})
    (interrupt,) = state["__interrupt__"]
    return dict(interrupt)


@pytest.mark.parametrize(
    ("decision", "sent", "said"),
    [
        ({"type": "approve"}, [{"amount": 100, "to": "Ada"}], "done: sent 100 to Ada"),
        (
            {"type": "edit", "edited_action": {"name": "transfer", "args": {"amount": 40, "to": "Ada"}}},
            [{"amount": 40, "to": "Ada"}],
            'done: (The user changed the arguments to {"amount":40,"to":"Ada"}; this is the result of that call.)\n'
            "sent 40 to Ada",
        ),
        (
            {"type": "reject", "message": "she was paid already"},
            [],
            "done: The user rejected this call of transfer; it was not run. They said: she was paid already",
        ),
    ],
)
async def test_each_hitl_decision_resumes_the_approval(
    bank: str, decision: dict[str, Any], sent: list[dict[str, Any]], said: str
) -> None:
    async with get_client(url=bank) as client:
        thread = await client.threads.create()
        interrupt = await _asked(client, thread["thread_id"])
        value = interrupt["value"]
        assert value["expectation"] == {"type": "approval", "options": ["approve", "reject"]}
        assert value["action_requests"] == [
            {"name": "transfer", "args": {"amount": 100, "to": "Ada"}, "description": value["prompt"]}
        ]
        assert value["review_configs"] == [
            {"action_name": "transfer", "allowed_decisions": ["approve", "edit", "reject"]}
        ]
        assert not SENT
        done = await client.runs.wait(thread["thread_id"], "bank", command={"resume": {"decisions": [decision]}})
        assert done["messages"][-1]["content"] == said and "__interrupt__" not in done
        assert sent == SENT


def test_bad_hitl_decisions_are_refused_with_a_fitting_detail(bank: str) -> None:
    thread_id = httpx.post(f"{bank}/threads", json={}).json()["thread_id"]
    runs = f"{bank}/threads/{thread_id}/runs"
    httpx.post(f"{runs}/wait", json={"assistant_id": "bank", "input": {"messages": [{"role": "user", "content": "x"}]}})
    for bad, fragment in [
        ({"type": "maybe"}, "decision type must be 'approve', 'edit', 'reject'"),
        ("approve", 'decisions must be a list of one {"type": "approve" | "edit" | "reject"}'),
        ({"type": "edit"}, 'an edit decision needs "edited_action"'),
        ({"type": "edit", "edited_action": {"name": "transfer", "args": [1]}}, 'needs "edited_action"'),
        ({"type": "edit", "edited_action": {"name": "delete_all", "args": {}}}, "not the tool called"),
        ({"type": "reject", "message": 5}, "message must be text"),
    ]:
        refused = httpx.post(runs, json={"assistant_id": "bank", "command": {"resume": {"decisions": [bad]}}})
        assert refused.status_code == 422 and fragment in refused.json()["detail"], refused.text
    answered = httpx.post(
        f"{runs}/wait", json={"assistant_id": "bank", "command": {"resume": "no, wrong person"}}
    ).json()  # plain text works too
    assert answered["messages"][-1]["content"].endswith("They said: wrong person")
    assert not SENT
