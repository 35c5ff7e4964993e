"""The plan service over real HTTP (SQLite and PostgreSQL): the demo end to end, verdicts in and out of order,
planner failures, clarifications and failed steps. Isolation, keys and restarts are in ``test_plan_isolation.py``.

The faults of the seed's original implementation, and the tests that catch each (all on both stores):

- per-session objects never freed: ``test_sessions_leave_nothing_behind_in_the_server``;
- the LLM loop inside the request: ``test_approving_answers_at_once_and_a_server_stopped_mid_step_resumes_it``
  (the approval answers while its step is blocked);
- a spoofable identity, a shared fallback user, ``GET /messages`` returning others' data:
  ``test_two_users_with_their_own_keys_never_see_each_others_records``;
- rejections not stored, steps without an order: ``test_verdicts_out_of_order_or_repeated_...`` and the demo;
- failed steps stuck, clarifications that never re-plan: ``test_a_clarification_re_plans_and_a_failed_step_...``,
  and after a SIGKILL ``test_a_server_killed_mid_step_resumes_the_step_after_restart``;
- planner failures returned as success: ``test_a_failed_plan_is_an_error_with_its_reason``;
- the whole catalogue in one prompt: the demo (``tools_shown``) and ``tests/orchestration/test_plan_cassettes.py``
  (the LLM planner's recorded prompts list at most 10 of the 152 tools).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.orchestration.plan_support import MARKER
from tests.server.conftest import example_apps, live_server
from tests.server.plan_apps import failing, make_store, small
from tests.server.plan_apps import last_plan as _plan
from tests.server.plan_apps import steps_of as _steps
from tests.server.plan_apps import until as _until
from tests.server.plan_apps import waiting as _waiting

from podium.store.base import Store

__all__ = ["make_store"]  # the fixture, imported for pytest

JESSICA = "Onboard Jessica Smith, who starts next week as a data analyst"


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


def test_verdicts_out_of_order_or_repeated_are_conflicts_and_rejections_are_stored(
    make_store: Callable[[], Store],
) -> None:
    with (
        live_server({"plans": small}, make_store()) as url,
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


def test_a_failed_plan_is_an_error_with_its_reason(make_store: Callable[[], Store]) -> None:
    with (
        live_server({"plans": failing}, make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        response = client.post("/input_task", json={"description": "Onboard Ada Lovelace", "session_id": "s1"})
        assert response.status_code == 422
        assert "planning failed: the model gave no valid plan in 3 tries" in response.json()["detail"]
        assert _plan(client, "s1")["overall_status"] == "failed"


def test_a_clarification_re_plans_and_a_failed_step_is_failed_then_re_planned(
    make_store: Callable[[], Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    marker.write_text("fail")
    monkeypatch.setenv(MARKER, str(marker))
    with (
        live_server({"plans": small}, make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        helped = client.post("/input_task", json={"description": "help", "session_id": "s1"})
        assert helped.status_code == 422 and "I plan tasks for a team of agents" in helped.json()["detail"]
        urgent = client.post("/input_task", json={"description": "my colleague collapsed", "session_id": "s1"})
        assert urgent.status_code == 422 and "This sounds like an emergency" in urgent.json()["detail"]
        vague = client.post("/input_task", json={"description": "asap", "session_id": "s1"}).json()
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
        tools = [s["tool"] for s in third["steps"]]
        assert tools[0] == "order_laptop" and "create_account" not in tools


def test_the_demo_cassette_plans_with_the_llm_planner_behind_the_server(
    make_store: Callable[[], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    from examples.plan_service import REPLAY

    monkeypatch.setenv(REPLAY, "1")
    with (
        live_server(example_apps("plan-service"), make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        task = client.post(
            "/input_task", json={"description": "Order hardware for a new starter: a laptop and a monitor"}
        )
        assert task.status_code == 200, task.text
        session, plan_id = task.json()["session_id"], task.json()["plan_id"]
        _until(lambda: _waiting(client, plan_id))
        body = {"plan_id": plan_id, "session_id": session, "approved": True}
        assert client.post("/approve_step_or_steps", json=body).status_code == 200
        plan = _until(lambda: (p := _plan(client, session))["overall_status"] == "completed" and p)
        assert plan["planner"] == "replay:plan_service.json" and plan["tools_shown"] <= 10
        assert [s["agent"] for s in plan["steps"]] == ["ProcurementAgent"] * 2
        assert "Would order a monitor" in plan["steps"][1]["agent_reply"]
        unknown = client.post("/input_task", json={"description": "Book a meeting room for Friday"})
        assert unknown.status_code == 422 and "has no recorded reply" in unknown.json()["detail"]


def test_a_rejected_plan_a_stray_verdict_and_a_new_name_over_http(make_store: Callable[[], Store]) -> None:
    with (
        live_server(example_apps("plan-service"), make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        stray = client.post("/input_task", json={"description": "approve all", "session_id": "s1"})
        assert stray.status_code == 422 and "is a verdict, not a task" in stray.json()["detail"]
        assert client.get("/plans").json() == []
        task = client.post("/input_task", json={"description": JESSICA, "session_id": "s1"}).json()
        _until(lambda: _waiting(client, task["plan_id"]))
        body = {"plan_id": task["plan_id"], "session_id": "s1", "approved": False}
        assert client.post("/approve_step_or_steps", json=body).status_code == 200
        plan = _until(lambda: (p := _plan(client, "s1"))["overall_status"] != "in_progress" and p)
        assert (plan["overall_status"], plan["reason"]) == ("rejected", "nothing was done (all 6 steps rejected)")
        assert (plan["completed_steps"], plan["rejected"]) == (0, 6)

        leaving = client.post("/input_task", json={"description": "Offboard Tom Baker, whose last day is Friday"})
        session, first = leaving.json()["session_id"], leaving.json()["plan_id"]
        _until(lambda: _waiting(client, first))
        news = "His name is actually Thomas Becker and his last day is 30 June"
        body = {"plan_id": first, "session_id": session, "human_clarification": news}
        assert client.post("/human_clarification_on_plan", json=body).status_code == 200
        second = _until(lambda: (p := _plan(client, session))["version"] == 2 and p)
        assert [s["action"] for s in second["steps"]] == [
            "Start offboarding for a leaving employee: exit interview, equipment return, final pay for Thomas Becker, "
            "30 June."
        ]


def _first_step(client: httpx.Client) -> tuple[str, dict[str, Any]]:
    """Plan "Onboard Ada Lovelace" in session s1 and wait for its first step: the plan's id, and the body of a
    verdict approving that step."""
    plan_id = client.post("/input_task", json={"description": "Onboard Ada Lovelace", "session_id": "s1"}).json()[
        "plan_id"
    ]
    first = _until(lambda: _waiting(client, plan_id))
    return plan_id, {"plan_id": plan_id, "session_id": "s1", "step_id": first["id"], "approved": True}


def test_two_verdicts_racing_for_one_step_one_is_taken_the_other_is_a_conflict(
    make_store: Callable[[], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.server import plan as service

    real, reads = service._pending, []

    async def stale(state: Any, session_id: str) -> Any:
        """Both requests read step 1's question; the second acts only once the first's verdict moved the plan on."""
        found = await real(state, session_id)
        reads.append(found)
        if len(reads) > 2:
            return found
        while len(reads) < 2:  # noqa: ASYNC110 - the other request's read, on the same loop
            await asyncio.sleep(0.005)
        while len(reads) == 2 and found is reads[1]:
            status, pending = await state.runtime.pending(session_id)
            if status == "interrupted" and pending[0].id != found.id and not await state.executor.is_busy(session_id):
                break
            await asyncio.sleep(0.005)
        return found

    monkeypatch.setattr(service, "_pending", stale)
    with (
        live_server({"plans": small}, make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        plan_id, base = _first_step(client)
        edits = ["Create the account of Ada Lovelace", "Create the account of Ada King"]  # a person: the step can run
        with ThreadPoolExecutor(2) as pool:
            sent = list(
                pool.map(lambda edit: client.post("/human_feedback", json={**base, "updated_action": edit}), edits)
            )
        assert sorted(r.status_code for r in sent) == [200, 409], [r.text for r in sent]
        taken, refused = sorted(sent, key=lambda r: r.status_code)
        assert refused.json()["detail"] == "step 1 was answered meanwhile by another request; this one was not applied"
        second = _until(lambda: _waiting(client, plan_id, 2))
        assert second["updated_action"] is None and second["human_approval_status"] == "requested"
        step1 = _steps(client, plan_id)[0]
        assert step1["status"] == "completed" and step1["updated_action"] in edits
        assert json.loads(taken.request.content)["updated_action"] == step1["updated_action"]  # the winner's


def test_a_verdict_sent_before_another_was_recorded_is_not_reported_as_taken(
    make_store: Callable[[], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's verdict on the same step recorded after this request read the thread (so after the point
    it watches from): the run refuses this one, and the request says so instead of taking the other's for its own."""
    from podium.server import plan as service

    mode, snapshot = ["live"], {}

    def as_read_first(real: Any) -> Any:
        """``real``, except that the late request sees what the first one read (the plan with step 1 waiting)."""

        async def read(state: Any, session_id: str, *args: Any) -> Any:
            if mode[0] == "late":
                return snapshot[real]
            found = await real(state, session_id, *args)
            if mode[0] == "first":
                snapshot[real] = found
            return found

        return read

    class Stale(service.Job):  # type: ignore[misc, name-defined]
        """A job that read the thread before the other verdict was recorded."""

        def __setattr__(self, name: str, value: Any) -> None:
            object.__setattr__(self, name, 0 if name == "after" else value)

    monkeypatch.setattr(service, "_pending", as_read_first(service._pending))
    monkeypatch.setattr(service, "_record", as_read_first(service._record))
    with (
        live_server({"plans": small}, make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        plan_id, base = _first_step(client)
        edit = "Create the account of Ada Lovelace"
        mode[0] = "first"
        assert client.post("/human_feedback", json={**base, "updated_action": edit}).status_code == 200
        mode[0] = "live"
        _until(lambda: _waiting(client, plan_id, 2))
        mode[0] = "late"
        monkeypatch.setattr(service, "Job", Stale)
        late = client.post("/human_feedback", json={**base, "updated_action": "Create the account of Ada King"})
        assert late.status_code == 409, late.text
        assert late.json()["detail"] == "step 1 was answered meanwhile by another request; this one was not applied"
        mode[0] = "live"
        assert _steps(client, plan_id)[0]["updated_action"] == edit


def test_a_cancelled_run_ends_its_plan_cancelled_and_verdicts_on_it_are_conflicts(
    make_store: Callable[[], Store],
) -> None:
    with (
        live_server({"plans": small}, make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        plan_id, body = _first_step(client)
        (run,) = client.get("/threads/s1/runs").json()
        assert client.post(f"/threads/s1/runs/{run['run_id']}/cancel").status_code == 202
        plan = _plan(client, "s1")
        assert (plan["overall_status"], plan["reason"]) == ("cancelled", "its run was cancelled")
        assert [s["status"] for s in plan["steps"]] == ["cancelled"] * 3 and plan["pending_steps"] == 0
        refused = client.post("/human_feedback", json=body)
        assert refused.status_code == 409
        assert refused.json()["detail"] == (
            f"step 1 is cancelled: plan {plan_id!r} is cancelled (its run was cancelled) and waits for no verdict"
        )
        assert (
            client.post("/input_task", json={"description": "Onboard Bob Stone", "session_id": "s1"}).status_code == 200
        )


def test_a_blank_task_is_refused_with_its_reason_and_creates_nothing(make_store: Callable[[], Store]) -> None:
    with (
        live_server({"plans": small}, make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        for blank in (" ", "\t\n  "):
            refused = client.post("/input_task", json={"description": blank, "session_id": "ws1"})
            assert refused.status_code == 422
            assert "the description is empty" in refused.text
        assert client.get("/plans", params={"session_id": "ws1"}).status_code == 404
        assert client.get("/threads/ws1").status_code == 404
        assert client.get("/plans").json() == []


def test_small_talk_and_questions_are_not_tasks_and_a_verdict_does_not_answer_the_planner_over_http(
    make_store: Callable[[], Store],
) -> None:
    with (
        live_server({"plans": small}, make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        for said in ("good morning!", "what's the weather like in Oslo?", "thanks, that's all"):
            answered = client.post("/input_task", json={"description": said, "session_id": "s1"})
            assert answered.status_code == 422 and "is not a task" in answered.json()["detail"], said
            assert "At each step answer" not in answered.json()["detail"]  # the page answers steps with buttons
        assert client.get("/plans").json() == []
        vague = client.post("/input_task", json={"description": "asap", "session_id": "s1"}).json()
        body = {"plan_id": vague["plan_id"], "session_id": "s1", "human_clarification": "approve all"}
        assert client.post("/human_clarification_on_plan", json=body).status_code == 200
        said = _until(
            lambda: [m["content"] for m in client.get("/agent_messages/s1").json() if m["source"] == "PlannerAgent"][1:]
        )
        assert said[0].startswith("Nothing is planned yet, so 'approve all' has nothing to approve or reject")
        assert [p["version"] for p in client.get("/plans", params={"session_id": "s1"}).json()] == [1]
        _until(
            lambda: (
                client.post(
                    "/human_clarification_on_plan", json=body | {"human_clarification": "Onboard Ada Lovelace"}
                ).status_code
                == 200
            )
        )
        plan = _until(lambda: (p := _plan(client, "s1"))["version"] == 2 and p)
        assert plan["steps"][0]["action"] == "Create the account of a new employee for Ada Lovelace."


def test_a_stop_said_as_information_stops_the_plan(make_store: Callable[[], Store]) -> None:
    with (
        live_server({"plans": small}, make_store()) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        task = client.post("/input_task", json={"description": "Onboard Ada Lovelace", "session_id": "s1"}).json()
        plan_id = task["plan_id"]
        _until(lambda: _waiting(client, plan_id))
        body = {"plan_id": plan_id, "session_id": "s1", "human_clarification": "ok stop here"}
        stopped = client.post("/human_clarification_on_plan", json=body)
        assert stopped.status_code == 200 and stopped.json()["status"] == "Stop received; the plan stops"
        plan = _until(lambda: (p := _plan(client, "s1"))["overall_status"] != "in_progress" and p)
        assert plan["version"] == 1 and plan["overall_status"] == "rejected"  # not planned again
        assert [s["status"] for s in plan["steps"]] == ["rejected", "cancelled", "cancelled"]
