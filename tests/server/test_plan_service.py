"""The plan service over real HTTP (SQLite and PostgreSQL): the demo end to end, verdicts, isolation, restarts,
and each fault of the seed's original implementation as a test."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.orchestration.plan_support import MARKER
from tests.server.conftest import example_apps, live_server
from tests.server.plan_apps import failing, small

from podium.server.auth import AuthConfig
from podium.store.base import Store

JESSICA = "Onboard Jessica Smith, who starts next week as a data analyst"


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Store]:
    """A function opening the test's store (the same data each time)."""
    if request.param == "postgres":
        from podium.store.postgres import PostgresStore

        url, schema = request.getfixturevalue("postgres_schema")
        # opened lazily, on the server's own event loop: a connection pool belongs to the loop that opened it
        return lambda: PostgresStore(url, schema=schema)
    from podium.store.sqlite import SQLiteStore

    return lambda: SQLiteStore(tmp_path / "plans.db")


def _until(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError("timed out")


def _steps(client: httpx.Client, plan_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/steps/{plan_id}")
    assert response.status_code == 200, response.text
    steps: list[dict[str, Any]] = response.json()
    return steps


def _waiting(client: httpx.Client, plan_id: str, order: int = 1) -> dict[str, Any] | None:
    """The step waiting for a verdict once it is step ``order``."""
    found = next((s for s in _steps(client, plan_id) if s["status"] == "awaiting_feedback"), None)
    return found if found is not None and found["order"] == order else None


def _plan(client: httpx.Client, session_id: str) -> dict[str, Any]:
    plans: list[dict[str, Any]] = client.get("/plans", params={"session_id": session_id}).json()
    return plans[-1]


def test_onboarding_jessica_smith_runs_end_to_end_offline(make_store: Callable[[], Store]) -> None:
    with (
        live_server(example_apps("plan-service"), make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        created = client.post("/input_task", json={"description": JESSICA})
        assert created.status_code == 200, created.text
        task = created.json()
        assert task["status"] == "Plan created" and task["description"] == JESSICA
        session, plan_id = task["session_id"], task["plan_id"]
        steps = _steps(client, plan_id)
        assert [s["order"] for s in steps] == [1, 2, 3, 4, 5, 6]
        assert [s["agent"] for s in steps] == ["HrAgent"] * 4 + ["TechSupportAgent"] * 2
        for step in steps:
            waiting = _until(lambda step=step: _waiting(client, plan_id, step["order"]))
            assert waiting["id"] == step["id"]
            body = {"step_id": step["id"], "plan_id": plan_id, "session_id": session, "approved": True}
            answered = client.post("/human_feedback", json=body)
            assert answered.status_code == 200, answered.text
            assert answered.json() == {"status": "Step approved", "session_id": session, "step_id": step["id"]}
        plan = _until(lambda: (p := _plan(client, session))["overall_status"] == "completed" and p)
        assert (plan["total_steps"], plan["completed_steps"], plan["pending_steps"]) == (6, 6, 0)
        assert all("Jessica Smith" in s["agent_reply"] for s in plan["steps"])
        assert {s["user_id"] for s in plan["steps"]} == {"local"}
        said = client.get(f"/api/agent_messages/{session}").json()
        assert [m["source"] for m in said] == ["PlannerAgent"] + [s["agent"] for s in steps]
        tools = client.get("/api/agent-tools").json()
        assert len(tools) == 152 and {"agent", "function", "description", "arguments"} == set(tools[0])
        assert plan["tools_shown"] <= 12  # the planner never sees the whole catalogue
        assert client.get("/api/plans").json()[0]["id"] == plan_id


def test_verdicts_out_of_order_or_repeated_are_conflicts_and_rejections_are_stored(tmp_path: Path) -> None:
    from podium.store.sqlite import SQLiteStore

    with (
        live_server({"plans": small}, SQLiteStore(tmp_path / "p.db")) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        task = client.post("/input_task", json={"description": "Onboard Ada Lovelace", "session_id": "s1"}).json()
        plan_id = task["plan_id"]
        first, second, _ = _steps(client, plan_id)
        _until(lambda: _waiting(client, plan_id))
        base = {"plan_id": plan_id, "session_id": "s1", "approved": True}
        early = client.post("/human_feedback", json={**base, "step_id": second["id"]})
        assert early.status_code == 409 and "step 2 is not next: step 1 waits" in early.json()["detail"]
        unknown = client.post("/human_feedback", json={**base, "step_id": "nope"})
        assert unknown.status_code == 404
        assert client.post("/human_feedback", json={**base, "plan_id": "nope", "step_id": "x"}).status_code == 404
        assert client.post("/human_feedback", json={**base, "step_id": first["id"]}).status_code == 200
        _until(lambda: _waiting(client, plan_id, 2))
        again = client.post("/human_feedback", json={**base, "step_id": first["id"]})
        assert again.status_code == 409 and "step 1 is completed" in again.json()["detail"]
        reject = {**base, "step_id": second["id"], "approved": False, "human_feedback": "we have spare laptops"}
        assert client.post("/approve_step_or_steps", json=reject).json()["status"] == "Step rejected"
        _until(lambda: _waiting(client, plan_id, 3))
        everything = client.post("/approve_step_or_steps", json=base)
        assert everything.json()["status"] == "Remaining steps approved"
        plan = _until(lambda: (p := _plan(client, "s1"))["overall_status"] == "completed" and p)
        assert [(s["status"], s["human_feedback"]) for s in plan["steps"]] == [
            ("completed", None),
            ("rejected", "we have spare laptops"),
            ("completed", None),
        ]
        late = client.post("/approve_step_or_steps", json=base)
        assert late.status_code == 409 and "waits for no verdict" in late.json()["detail"]
        busy = client.post("/input_task", json={"description": "Onboard Bob Stone", "session_id": "s1"})
        assert busy.status_code == 200  # a finished session takes the next task


def test_a_failed_plan_is_an_error_with_its_reason(tmp_path: Path) -> None:
    from podium.store.sqlite import SQLiteStore

    with (
        live_server({"plans": failing}, SQLiteStore(tmp_path / "p.db")) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        response = client.post("/input_task", json={"description": "Onboard Ada Lovelace", "session_id": "s1"})
        assert response.status_code == 422
        assert "planning failed: the model gave no valid plan in 3 tries" in response.json()["detail"]
        assert _plan(client, "s1")["overall_status"] == "failed"


def test_a_clarification_re_plans_and_a_failed_step_is_failed_then_re_planned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.store.sqlite import SQLiteStore

    marker = tmp_path / "marker"
    marker.write_text("fail")
    monkeypatch.setenv(MARKER, str(marker))
    with (
        live_server({"plans": small}, SQLiteStore(tmp_path / "p.db")) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        vague = client.post("/input_task", json={"description": "help", "session_id": "s1"}).json()
        assert vague["status"] == "Plan needs clarification"
        body = {"plan_id": vague["plan_id"], "session_id": "s1", "human_clarification": "Onboard Ada Lovelace"}
        assert client.post("/human_clarification_on_plan", json=body).status_code == 200
        plan = _until(lambda: (p := _plan(client, "s1"))["version"] == 2 and p)
        old = client.get("/plans", params={"session_id": "s1"}).json()[0]
        assert (old["overall_status"], plan["supersedes"]) == ("superseded", old["id"])
        _until(lambda: _waiting(client, plan["id"]))
        client.post("/approve_step_or_steps", json={"plan_id": plan["id"], "session_id": "s1", "approved": True})
        failed = _until(lambda: (p := _plan(client, "s1"))["overall_status"] == "failed" and p)
        assert [s["status"] for s in failed["steps"]] == ["completed", "failed", "planned"]
        assert "the supplier is out of laptops" in failed["steps"][1]["error"]
        marker.unlink()
        body = {"plan_id": plan["id"], "session_id": "s1", "human_clarification": "the supplier has laptops again"}
        assert client.post("/human_clarification_on_plan", json=body).status_code == 200
        third = _until(lambda: (p := _plan(client, "s1"))["version"] == 3 and p)
        actions = [s["action"] for s in third["steps"]]
        assert actions[0].endswith("[order_laptop]") and not any("create_account" in a for a in actions)


def test_two_users_never_see_each_others_records_and_the_header_is_not_trusted(tmp_path: Path) -> None:
    from podium.store.sqlite import SQLiteStore

    db = tmp_path / "p.db"
    alice_server = live_server({"plans": small}, SQLiteStore(db), auth=AuthConfig(dev_user="alice"))
    bob_server = live_server({"plans": small}, SQLiteStore(db), auth=AuthConfig(dev_user="bob"))
    with alice_server as alice_url, bob_server as bob_url:
        alice = httpx.Client(base_url=alice_url, timeout=60)
        bob = httpx.Client(
            base_url=bob_url, timeout=60, headers={"user_principal_id": "alice"}
        )  # a spoofed header changes nothing
        task = alice.post("/input_task", json={"description": "Onboard Ada Lovelace", "session_id": "a1"}).json()
        bob.post("/input_task", json={"description": "Onboard Bob Stone", "session_id": "b1"})
        plan_id = task["plan_id"]
        step = _until(lambda: _waiting(alice, plan_id))
        assert bob.get(f"/steps/{plan_id}").status_code == 404
        assert bob.get("/plans", params={"session_id": "a1"}).status_code == 404
        assert bob.get("/agent_messages/a1").status_code == 404
        assert {p["session_id"] for p in bob.get("/plans").json()} == {"b1"}
        verdict = {"step_id": step["id"], "plan_id": plan_id, "session_id": "a1", "approved": True}
        assert bob.post("/human_feedback", json=verdict).status_code == 404
        assert bob.post("/input_task", json={"description": "x y", "session_id": "a1"}).status_code == 404
        bobs = bob.get("/messages").json()
        assert bobs and all(r.get("session_id", r.get("id")) == "b1" for r in bobs)
        assert {r["data_type"] for r in bobs} == {"session", "plan", "step", "agent_message"}
        assert bob.delete("/messages").status_code == 200 and bob.get("/messages").json() == []
        assert {p["session_id"] for p in alice.get("/plans").json()} == {"a1"}  # alice's records are untouched
        alice.close()
        bob.close()


def test_approving_answers_at_once_and_a_server_stopped_mid_step_resumes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.store.sqlite import SQLiteStore

    gate = tmp_path / "gate"
    monkeypatch.setenv("PODIUM_TEST_PLAN_GATE", str(gate))
    db = tmp_path / "p.db"
    with live_server({"plans": small}, SQLiteStore(db)) as url, httpx.Client(base_url=url, timeout=60) as client:
        task = client.post("/input_task", json={"description": "Onboard Ada Lovelace", "session_id": "s1"}).json()
        _until(lambda: _waiting(client, task["plan_id"]))
        started = time.monotonic()
        body = {"plan_id": task["plan_id"], "session_id": "s1", "approved": True}
        assert client.post("/approve_step_or_steps", json=body).status_code == 200
        assert time.monotonic() - started < 2  # the step runs in the background, not in the request
        _until(lambda: _steps(client, task["plan_id"])[0]["status"] == "action_requested")
    gate.write_text("open")
    with live_server({"plans": small}, SQLiteStore(db)) as url, httpx.Client(base_url=url, timeout=60) as client:
        plan = _until(lambda: (p := _plan(client, "s1"))["overall_status"] == "completed" and p)
        assert [s["status"] for s in plan["steps"]] == ["completed"] * 3


def test_sessions_leave_nothing_behind_in_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import podium.server
    from podium.store.sqlite import SQLiteStore

    made: list[Any] = []
    original = podium.server.create_app

    def capture(*args: Any, **kwargs: Any) -> Any:
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(podium.server, "create_app", capture)
    with (
        live_server({"plans": small}, SQLiteStore(tmp_path / "p.db")) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        for n in range(4):
            task = client.post("/input_task", json={"description": f"Onboard Ada Lovelace{n}"}).json()
            plan_id, session = task["plan_id"], task["session_id"]
            _until(lambda plan_id=plan_id: _waiting(client, plan_id))
            client.post("/approve_step_or_steps", json={"plan_id": plan_id, "session_id": session, "approved": True})
            _until(lambda session=session: _plan(client, session)["overall_status"] == "completed")
        state = made[0].state.podium
        _until(lambda: not state.executor.active and not state.executor.tasks)
        assert len(state.agents) == 1  # one agent for the app, not one runtime per session
