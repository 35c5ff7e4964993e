"""The plan service's endpoints (docs/plan.md), also under ``/api/``: tasks, verdicts, clarifications, plans, messages.

A session is a thread owned by the caller; its plan runs as a run of the served plan app (the first app whose agent
is a :class:`~podium.orchestration.plan.PlanAndExecute`) in the server's executor, so a request never runs the
model loop: ``POST /input_task`` starts the run and answers once the plan is stored; verdicts and clarifications
answer the run's pending question and return at once while the steps run in the background. Progress is on the
thread's event stream (``plan`` and ``agent_message`` artifacts). Another user's session, plan or step answers 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from podium.events import Interrupt, InterruptAnswered
from podium.human import EMERGENCY_REPLY, emergency
from podium.orchestration.plan import (
    RECORD_KEY,
    ApprovalRequest,
    HumanClarification,
    HumanFeedback,
    InputTask,
    PlanAndExecute,
    PlanConflict,
    PlanWithSteps,
    SessionRecord,
    agent_messages,
    answer_for,
    is_verdict,
)
from podium.orchestration.plan.reading import ends
from podium.orchestration.plan.record import is_stop
from podium.server._executor import Job
from podium.server._records import create_thread, owned_thread, run_extra
from podium.server._state import ServerState
from podium.server.auth import Principal, require
from podium.server.threads import delete_thread

__all__ = ["mount", "router"]

router = APIRouter(tags=["plan"])
Read = Annotated[Principal, Depends(require("read"))]
Run = Annotated[Principal, Depends(require("run"))]
_PLAN_TIMEOUT = 120.0


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.podium
    return state


_NO_PLAN_APP = "this server serves no plan service app"


def _plan_app(state: ServerState) -> tuple[str, PlanAndExecute]:
    for name in state.apps:
        agent = state.agent(name)
        if isinstance(agent, PlanAndExecute):
            return name, agent
    raise HTTPException(404, _NO_PLAN_APP)


def mount(app: FastAPI, state: ServerState) -> None:
    """Serve the plan service on ``app`` (at the root and under ``/api``) when one of the apps is a plan app.

    Otherwise its paths answer 404 saying so, and the schema lists none of them: a client reading ``/openapi.json``
    is not offered a service the server does not have.
    """
    if any(isinstance(state.built(name), PlanAndExecute) for name in state.apps):
        app.include_router(router)
        app.include_router(router, prefix="/api")
        return

    async def no_plan_app() -> JSONResponse:
        return JSONResponse({"detail": _NO_PLAN_APP}, status_code=404)

    for route in router.routes:
        assert isinstance(route, APIRoute)
        for prefix in ("", "/api"):
            app.add_api_route(  # (a caller without a key is told so first, as on every route of the API)
                prefix + route.path,
                no_plan_app,
                methods=list(route.methods or ()),
                include_in_schema=False,
                dependencies=[Depends(require("read"))],
            )


async def _record(state: ServerState, session_id: str, user: str) -> SessionRecord:
    await owned_thread(state.store, session_id, user)
    record = SessionRecord.from_events(session_id, await state.store.read_events(session_id))
    record.session.user_id = user
    return record


def _out(plan: PlanWithSteps, user: str) -> dict[str, Any]:
    plan.user_id = user
    for step in plan.steps:
        step.user_id = user
    return plan.update_step_counts().model_dump(mode="json")


async def _sessions(state: ServerState, user: str) -> list[SessionRecord]:
    """The caller's plan sessions, oldest first."""
    found = []
    for info in reversed(await state.store.list_threads(1_000_000)):
        if info.metadata.get("owner") != user or not await state.store.get_state(info.id, RECORD_KEY):
            continue
        try:
            found.append(await _record(state, info.id, user))
        except HTTPException:  # deleted
            continue
    return found


async def _pending(state: ServerState, session_id: str) -> Interrupt | None:
    status, interrupts = await state.runtime.pending(session_id)
    return interrupts[0] if status == "interrupted" and interrupts else None


async def _answer(state: ServerState, session_id: str, pending: Interrupt, answer: str, what: str) -> None:
    """Resume the session's run with ``answer`` to ``pending``, the question it was checked against.

    The answer is keyed by the interrupt's id, so the runtime refuses it when another answer took that question
    meanwhile (the run may already wait on the next step's: a plain answer would decide that one). This returns once
    the run recorded the answer; a refused one is a 409 naming ``what`` was answered meanwhile.
    """
    name, _ = _plan_app(state)
    last = await state.store.last_run(session_id)
    assert last is not None  # a question is pending, so a run exists
    job = Job(run_id=last.id, thread_id=session_id, assistant_id=name, answer={pending.id: answer}, resume=True)
    meanwhile = f"{what} was answered meanwhile by another request; this one was not applied"
    try:
        await state.executor.submit(job, "reject", {"assistant_id": name, "created_at": time.time()})
    except HTTPException as exc:  # the run is acting on an answer sent before this one
        if exc.status_code != 409:
            raise
        raise HTTPException(409, meanwhile) from None
    deadline = time.monotonic() + _PLAN_TIMEOUT
    while (taken := await _taken(state, last.id, pending.id, job.after)) is None:
        if job.done.is_set():  # ended without recording it: refused (answered meanwhile)
            taken = await _taken(state, last.id, pending.id, job.after)
            if taken is None:
                raise HTTPException(409, meanwhile)
            break
        if time.monotonic() > deadline:
            raise HTTPException(503, "the plan did not take the answer in time; see GET /plans for the outcome")
        await asyncio.sleep(0.01)
    if taken != answer:  # another request's answer, recorded after this one was sent (two processes raced)
        raise HTTPException(409, meanwhile)


async def _taken(state: ServerState, run_id: str, interrupt_id: str, after: int) -> str | None:
    """The answer the run recorded to ``interrupt_id`` after sequence number ``after`` (this resume's), if any."""
    answered = (await state.store.journal(run_id)).get(interrupt_id + "!")
    if isinstance(answered, InterruptAnswered) and answered.seq > after:
        return answered.answer
    return None


@router.post("/input_task")
async def input_task(body: InputTask, request: Request, principal: Run) -> dict[str, Any]:
    """Plan a task in a session (created when new); answers once the plan is stored (4xx when planning failed)."""
    state, user = _state(request), principal.user
    name, plans = _plan_app(state)
    if emergency(body.description):  # never planned: the person is sent to emergency services first
        raise HTTPException(422, f"{body.description.strip()!r} is not a task: {EMERGENCY_REPLY}")
    if is_verdict(body.description):  # a stray "approve all" is not a task (verdicts go to their own endpoints)
        raise HTTPException(
            422,
            f"{body.description.strip()!r} is a verdict, not a task: send verdicts on a waiting plan to "
            "POST /human_feedback or /approve_step_or_steps, or describe a task to plan",
        )
    answered = plans.not_a_task(body.description, typed_verdicts=False)  # small talk, a question: never planned
    if answered is not None:
        raise HTTPException(422, f"{body.description.strip()!r} is not a task: {answered}")
    session_id = body.session_id or uuid.uuid4().hex
    if await state.store.get_thread(session_id) is None:
        await create_thread(state.store, session_id, user, {})
    record = await _record(state, session_id, user)
    before = len(record.plans)
    job = Job(run_id=str(uuid.uuid4()), thread_id=session_id, assistant_id=name, text=body.description)
    await state.executor.submit(job, "reject", {"assistant_id": name, "created_at": time.time()})
    deadline = time.monotonic() + _PLAN_TIMEOUT
    while True:
        ended = job.done.is_set()  # read before the record: a run that stored its plan and ended is seen with it
        record = await _record(state, session_id, user)
        if len(record.plans) > before:
            plan = record.plans[before]
            break
        if ended:
            extra = await run_extra(state.store, session_id, job.run_id) or {}
            why = extra.get("reason") or "it ended without a plan"
            raise HTTPException(503, f"the planner's run did not make a plan: {why}; see GET /plans")
        if time.monotonic() > deadline:
            raise HTTPException(503, "the planner did not answer in time; see GET /plans for the outcome")
        await asyncio.sleep(0.01)
    if plan.overall_status == "failed":
        raise HTTPException(422, f"planning failed: {plan.reason} (plan {plan.id}, session {session_id})")
    if plan.overall_status == "rejected":  # refused outright (a request to hide what is done)
        raise HTTPException(422, f"{plan.reason} (plan {plan.id}, session {session_id})")
    # the plan is stored a moment before its run pauses for the planner's question: answer once the run has paused,
    # so a clarification sent right after this reply is taken (not refused as arriving while the session acts)
    if plan.human_clarification_request:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(job.done.wait(), max(0.0, deadline - time.monotonic()))
    status = "Plan created" if not plan.human_clarification_request else "Plan needs clarification"
    return {"status": status, "session_id": session_id, "plan_id": plan.id, "description": body.description}


async def _verdict(
    request: Request, user: str, body: HumanFeedback | ApprovalRequest, step_id: str | None
) -> dict[str, Any]:
    state = _state(request)
    record = await _record(state, body.session_id, user)
    pending = await _pending(state, body.session_id)
    try:
        answer = answer_for(
            record,
            pending,
            plan_id=body.plan_id,
            step_id=step_id,
            approved=body.approved,
            human_feedback=body.human_feedback,
            updated_action=body.updated_action,
        )
    except PlanConflict as exc:
        status = 404 if str(exc).startswith("no ") else 409
        raise HTTPException(status, str(exc)) from None
    assert pending is not None  # answer_for found the step (or the plan) waiting on it
    plan = record.plan(body.plan_id)
    waiting = next((s.order for s in plan.steps if s.id == pending.data.get("step_id")), "?") if plan else "?"
    await _answer(state, body.session_id, pending, answer, f"step {waiting}")
    verdict = "approved" if body.approved else "rejected"
    return {
        "status": f"Step {verdict}" if step_id else f"Remaining steps {verdict}",
        "session_id": body.session_id,
        "step_id": step_id,
    }


@router.post("/human_feedback")
async def human_feedback(body: HumanFeedback, request: Request, principal: Run) -> dict[str, Any]:
    """Approve or reject the step waiting for a verdict (409 for any other step, or one already decided)."""
    return await _verdict(request, principal.user, body, body.step_id)


@router.post("/approve_step_or_steps")
async def approve_step_or_steps(body: ApprovalRequest, request: Request, principal: Run) -> dict[str, Any]:
    """Approve or reject one step (``step_id``) or every remaining step."""
    return await _verdict(request, principal.user, body, body.step_id)


@router.post("/human_clarification_on_plan")
async def human_clarification_on_plan(body: HumanClarification, request: Request, principal: Run) -> dict[str, Any]:
    """Answer the planner's question, or add information while the plan waits: the plan is made again; a stop said
    there ("stop", "ok stop here") stops the plan, as at the chat."""
    state = _state(request)
    record = await _record(state, body.session_id, principal.user)
    if record.plan(body.plan_id) is None:
        raise HTTPException(404, f"no plan {body.plan_id!r} in session {body.session_id!r}")
    pending = await _pending(state, body.session_id)
    data = pending.data if pending is not None and isinstance(pending.data, dict) else {}
    if data.get("plan_id") != body.plan_id:
        raise HTTPException(409, f"plan {body.plan_id!r} waits for nothing from you")
    stops = is_stop(body.human_clarification) or ends(body.human_clarification)  # "ok stop here": no information
    if data.get("kind") == "approval" and not stops:
        import json

        answer = json.dumps({"clarification": body.human_clarification})
    else:
        answer = body.human_clarification
    assert pending is not None  # it waits for this plan
    await _answer(state, body.session_id, pending, answer, f"plan {body.plan_id!r}'s question")
    if stops:
        return {"status": "Stop received; the plan stops", "session_id": body.session_id}
    return {"status": "Clarification received; re-planning", "session_id": body.session_id}


@router.get("/plans")
async def plans(
    request: Request, principal: Read, session_id: Annotated[str | None, Query()] = None
) -> list[dict[str, Any]]:
    """The caller's plans (of one session when ``session_id`` is given), each with its steps and counts."""
    state, user = _state(request), principal.user
    records = [await _record(state, session_id, user)] if session_id else await _sessions(state, user)
    return [_out(plan, user) for record in records for plan in record.plans]


@router.get("/steps/{plan_id}")
async def steps(plan_id: str, request: Request, principal: Read) -> list[dict[str, Any]]:
    """A plan's steps in order (404 for an unknown plan or another user's)."""
    for record in await _sessions(_state(request), principal.user):
        plan = record.plan(plan_id)
        if plan is not None:
            return list(_out(plan, principal.user)["steps"])
    raise HTTPException(404, f"no plan {plan_id!r}")


@router.get("/agent_messages/{session_id}")
async def messages_of_session(session_id: str, request: Request, principal: Read) -> list[dict[str, Any]]:
    """The session's agent messages in time order."""
    state = _state(request)
    await owned_thread(state.store, session_id, principal.user)
    said = agent_messages(await state.store.read_events(session_id))
    return [m.model_copy(update={"user_id": principal.user}).model_dump(mode="json") for m in said]


@router.get("/messages")
async def messages(request: Request, principal: Read) -> list[dict[str, Any]]:
    """Every record of the caller: sessions, plans, steps and agent messages."""
    state, user = _state(request), principal.user
    out: list[dict[str, Any]] = []
    for record in await _sessions(state, user):
        out.append(record.session.model_dump(mode="json"))
        for plan in record.plans:
            data = _out(plan, user)
            out.append({k: v for k, v in data.items() if k != "steps"} | {"data_type": "plan"})
            out.extend(data["steps"])
        said = agent_messages(await state.store.read_events(record.session.id))
        out.extend(m.model_copy(update={"user_id": user}).model_dump(mode="json") for m in said)
    return out


@router.delete("/messages")
async def delete_messages(request: Request, principal: Run) -> dict[str, Any]:
    """Delete the caller's plan sessions (their running plans stop); other users' records are untouched."""
    state = _state(request)
    deleted = 0
    for record in await _sessions(state, principal.user):
        await owned_thread(state.store, record.session.id, principal.user)
        await delete_thread(state, record.session.id)
        deleted += 1
    return {"status": f"Deleted {deleted} sessions with their plans, steps and messages"}


@router.get("/agent-tools")
async def agent_tools(request: Request, principal: Read) -> list[dict[str, Any]]:
    """Every specialist's tools: agent, function, description and arguments (a JSON schema)."""
    _, agent = _plan_app(_state(request))
    return agent.catalogue.to_json()
