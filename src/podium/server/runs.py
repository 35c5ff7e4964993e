"""Runs of a thread: create in the background, stream (SSE), wait, join, rejoin a stream, cancel, list and get.

A run is created with ``input`` (one user message) or ``command.resume`` (the answer to what the thread's waiting
run asked: that run continues, under its own id). The response names the run in ``Content-Location``; streams also
send ``Location``, where a client reconnects with ``Last-Event-ID`` after a cut.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from podium.errors import StoreError, UsageError
from podium.runtime.bus import Subscription
from podium.server._convert import NOTHING_WAITS, input_text, resume_answer
from podium.server._executor import STOP_WAIT, STOPPING, Job, Strategy
from podium.server._records import create_thread, existing_thread, owned_thread, run_extra, run_out, update_thread
from podium.server._schema import BODY, Cancelled, ThreadRun, errors
from podium.server._state import ServerState
from podium.server._wire import StorableDict, seq_number
from podium.server.auth import Principal, require
from podium.server.sse import STREAM_MODES, stream_run
from podium.server.threads import thread_values
from podium.store.base import check_new_thread_id

__all__ = ["router"]

router = APIRouter(tags=["runs"])

Read = Annotated[Principal, Depends(require("read"))]
Run = Annotated[Principal, Depends(require("run"))]


class RunCreate(BaseModel):
    """The body of ``POST /threads/{id}/runs`` (and ``/stream``, ``/wait``)."""

    model_config = ConfigDict(extra="allow")
    assistant_id: str = Field(min_length=1)
    input: StorableDict | None = None
    command: StorableDict | None = None
    metadata: StorableDict = Field(default_factory=dict)
    stream_mode: str | list[str] = "values"
    multitask_strategy: Strategy = "enqueue"
    if_not_exists: Literal["create", "reject"] = "reject"
    on_disconnect: Literal["cancel", "continue"] = "continue"


UNHONOURED = ("interrupt_before", "interrupt_after", "checkpoint", "checkpoint_id", "webhook", "after_seconds")
"""Run options of the Agent Protocol that would change what a run does and that Podium cannot honour: refused, not
ignored (a client that asked for a pause before the tools must not see them run unasked)."""


_STREAMED: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The run's events as server-sent events (one per stream mode chunk), until it stops",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.podium
    return state


def _modes(stream_mode: str | list[str] | None) -> list[str]:
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode or ["values"])
    unknown = [m for m in modes if m not in STREAM_MODES]
    if unknown:
        raise HTTPException(422, f"unknown stream_mode {', '.join(unknown)}; supported: {', '.join(STREAM_MODES)}")
    return modes


def _where(thread_id: str, run_id: str) -> str:
    return f"/threads/{thread_id}/runs/{run_id}"


async def _submit(state: ServerState, principal: Principal, thread_id: str, body: RunCreate) -> Job:
    store = state.store
    app = state.app(body.assistant_id)
    modes = _modes(body.stream_mode)
    # the request's own shape is checked before a thread is created for it: a refused request leaves nothing
    asked = [key for key in UNHONOURED if (body.model_extra or {}).get(key) not in (None, [], "", 0)]
    if asked:
        raise HTTPException(
            422,
            f"{', '.join(asked)}: not supported by this server; a pause for the human belongs in the app "
            "(ctx.ask, an approval), see docs/server.md",
        )
    if (body.input is None) == (body.command is None):
        raise HTTPException(422, "a run takes either input (a user message) or command (resume), not both or none")
    if body.command is not None:
        extra_keys = sorted(set(body.command) - {"resume"})
        if extra_keys or "resume" not in body.command:
            raise HTTPException(422, f"command supports only resume, not {', '.join(extra_keys) or 'nothing'}")
    text = input_text(body.input) if body.input is not None else None
    if body.if_not_exists == "create" and await existing_thread(store, thread_id) is None:
        if body.command is not None:
            raise HTTPException(409, NOTHING_WAITS)  # a new thread asks nothing
        try:
            check_new_thread_id(thread_id)  # the rule of POST /threads
        except UsageError as exc:
            raise HTTPException(422, str(exc)) from None
        _, record = await create_thread(
            store, thread_id, principal.user, {"graph_id": app.name, "assistant_id": app.name}, checked=True
        )
    else:
        _, record = await owned_thread(store, thread_id, principal.user)
    job = Job(run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id=app.name)
    if body.command is not None:
        job.answer = resume_answer(body.command["resume"], await thread_values(state, thread_id))
        last = await store.last_run(thread_id)
        assert last is not None  # an interrupt waits, so a run exists
        job.run_id, job.resume = last.id, True
        started = await run_extra(store, thread_id, last.id) or {}
        if started.get("assistant_id", app.name) != app.name:
            raise HTTPException(422, f"run {last.id!r} belongs to assistant {started['assistant_id']!r}")
    else:
        job.text = text
    extra = {
        "assistant_id": app.name,
        "metadata": body.metadata,
        "multitask_strategy": body.multitask_strategy,
        "stream_mode": modes,
        "created_at": time.time(),
    }
    await state.executor.submit(job, body.multitask_strategy, extra)
    metadata = record.get("metadata", {})
    if "graph_id" not in metadata:
        await update_thread(
            store, thread_id, record, metadata={**metadata, "graph_id": app.name, "assistant_id": app.name}
        )
    return job


async def _run_json(state: ServerState, thread_id: str, run_id: str) -> dict[str, Any]:
    record = await state.store.get_run(run_id)
    if record is not None and record.thread_id != thread_id:
        record = None
    extra = await run_extra(state.store, thread_id, run_id)
    if extra is not None and extra.get("deleted"):
        extra = None
    if record is None and extra is None:
        raise HTTPException(404, f"no run {run_id!r} in thread {thread_id!r}")
    out = run_out(thread_id, run_id, extra or {}, record)
    if (record is None or record.status != "running") and await state.executor.queued(run_id):
        out["status"] = "pending"  # queued, or a resumed run about to continue
    return out


async def _result(state: ServerState, thread_id: str, run_id: str) -> dict[str, Any]:
    """What ``wait`` and ``join`` answer: the thread's values, ``__interrupt__`` or ``__error__`` when so.

    Raises:
        HTTPException: 503 when the server stops before the run ended; ``Location`` says where to join it again.
    """
    executor = state.executor
    await executor.wait(thread_id, run_id)
    where = f"{_where(thread_id, run_id)}/join"
    stopping = HTTPException(
        503,
        f"{STOPPING}: run {run_id!r} goes on at its next start (or in another process); join it at {where}",
        {"Location": where, "Retry-After": "5"},
    )
    if run_id in executor.stopped:
        raise stopping
    try:  # once the server stops, a store that does not answer must not hold the answer past the shutdown's cut
        async with asyncio.timeout(STOP_WAIT if executor.halted.is_set() else None):
            values = (await thread_values(state, thread_id)).to_dict(with_interrupts=True)
            run = await _run_json(state, thread_id, run_id)
    except (TimeoutError, StoreError):
        if not executor.halted.is_set():
            raise
        raise stopping from None
    if executor.halted.is_set() and run["status"] in ("pending", "running"):
        raise stopping
    if run["status"] == "error":
        values["__error__"] = {"error": run["podium_status"], "message": run["reason"]}
    return values


@router.post("/threads/{thread_id}/runs", response_model=ThreadRun, responses=errors(404, 409, *BODY))
async def create(thread_id: str, body: RunCreate, request: Request, principal: Run) -> JSONResponse:
    """Start a run in the background (or queue it); answers at once with the run."""
    state = _state(request)
    job = await _submit(state, principal, thread_id, body)
    where = _where(thread_id, job.run_id)
    run = await _run_json(state, thread_id, job.run_id)
    return JSONResponse(run, headers={"Content-Location": where})


async def _streaming(
    state: ServerState,
    thread_id: str,
    run_id: str,
    modes: list[str],
    after: int,
    cancel_on_disconnect: bool,
    subscription: Subscription | None = None,
) -> StreamingResponse:
    async def frames() -> AsyncIterator[bytes]:
        finished = False
        try:
            async for chunk in stream_run(state, thread_id, run_id, modes, after=after, subscription=subscription):
                yield chunk
            finished = True
        finally:
            if not finished and cancel_on_disconnect:
                state.executor.later(state.executor.cancel(thread_id, run_id, rollback=False))

    where = _where(thread_id, run_id)
    headers = {"Content-Location": where, "Location": f"{where}/stream", "Cache-Control": "no-store"}
    return StreamingResponse(frames(), media_type="text/event-stream", headers=headers)


@router.post(
    "/threads/{thread_id}/runs/stream", response_class=StreamingResponse, responses=_STREAMED | errors(404, 409, *BODY)
)
async def create_and_stream(thread_id: str, body: RunCreate, request: Request, principal: Run) -> StreamingResponse:
    """Start a run and stream it (SSE); the run goes on if the client leaves (unless ``on_disconnect=cancel``)."""
    state = _state(request)
    subscription = state.executor.watch(thread_id)  # before the run starts, so its first tokens are seen
    try:
        job = await _submit(state, principal, thread_id, body)
    except BaseException:
        subscription.close()
        raise
    modes = _modes(body.stream_mode)
    cancel = body.on_disconnect == "cancel"
    return await _streaming(state, thread_id, job.run_id, modes, job.after, cancel, subscription)


@router.post("/threads/{thread_id}/runs/wait", response_model=dict[str, Any], responses=errors(404, 409, *BODY))
async def create_and_wait(thread_id: str, body: RunCreate, request: Request, principal: Run) -> JSONResponse:
    """Start a run and answer when it stops: the thread's values (with ``__interrupt__`` when it asks)."""
    state = _state(request)
    job = await _submit(state, principal, thread_id, body)
    where = _where(thread_id, job.run_id)
    result = await _result(state, thread_id, job.run_id)
    return JSONResponse(result, headers={"Content-Location": where, "Location": f"{where}/join"})


@router.post("/runs/stream", response_class=StreamingResponse, responses=_STREAMED | errors(404, 409, *BODY))
async def stream_on_a_new_thread(body: RunCreate, request: Request, principal: Run) -> StreamingResponse:
    """A run without a thread, streamed (SSE): it gets a new thread of its own, kept (``Content-Location``)."""
    return await create_and_stream(str(uuid.uuid4()), _on_a_new_thread(body), request, principal)


@router.post("/runs/wait", response_model=dict[str, Any], responses=errors(404, 409, *BODY))
async def wait_on_a_new_thread(body: RunCreate, request: Request, principal: Run) -> JSONResponse:
    """A run without a thread, answered when it stops: it gets a new thread of its own, kept (``Content-Location``)."""
    return await create_and_wait(str(uuid.uuid4()), _on_a_new_thread(body), request, principal)


def _on_a_new_thread(body: RunCreate) -> RunCreate:
    return body.model_copy(update={"if_not_exists": "create"})


@router.get("/threads/{thread_id}/runs", response_model=list[ThreadRun], responses=errors(404, 422))
async def list_runs(
    thread_id: str,
    request: Request,
    principal: Read,
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
    offset: Annotated[int, Query(ge=0)] = 0,
    status: str | None = None,
) -> list[dict[str, Any]]:
    """The thread's runs, newest first (queued ones first of all)."""
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    ids = list(reversed(await state.executor.queued_ids(thread_id)))
    ids += [r.id for r in reversed(await state.store.list_runs(thread_id))]
    runs = [await _run_json(state, thread_id, run_id) for run_id in ids]
    runs = [r for r in runs if status is None or r["status"] == status]
    return runs[offset : offset + limit]


@router.get("/threads/{thread_id}/runs/{run_id}", response_model=ThreadRun, responses=errors(404))
async def get(thread_id: str, run_id: str, request: Request, principal: Read) -> dict[str, Any]:
    """One run."""
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    return await _run_json(state, thread_id, run_id)


@router.get("/threads/{thread_id}/runs/{run_id}/join", response_model=dict[str, Any], responses=errors(404))
async def join(thread_id: str, run_id: str, request: Request, principal: Read) -> dict[str, Any]:
    """Wait for the run to stop; the thread's values as ``wait`` gives them."""
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    await _run_json(state, thread_id, run_id)
    return await _result(state, thread_id, run_id)


@router.get(
    "/threads/{thread_id}/runs/{run_id}/stream",
    response_class=StreamingResponse,
    responses=_STREAMED | errors(404, 422),
)
async def rejoin(
    thread_id: str,
    run_id: str,
    request: Request,
    principal: Read,
    stream_mode: Annotated[list[str] | None, Query()] = None,
    cancel_on_disconnect: bool = False,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    """Stream a run again: from ``Last-Event-ID`` (a stored event's ``seq``), or the run's first event (also when the
    id is past the thread's last event: a client's id from before a rollback, whose numbers the thread reused)."""
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    run = await _run_json(state, thread_id, run_id)
    extra = await run_extra(state.store, thread_id, run_id) or {}
    try:
        after = seq_number(last_event_id, "Last-Event-ID") or 0
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    if after and after > await state.store.last_seq(thread_id):
        after = 0
    modes = _modes([m for m in stream_mode or [] if m] or extra.get("stream_mode") or ["values"])
    return await _streaming(state, thread_id, run["run_id"], modes, after, cancel_on_disconnect)


@router.post(
    "/threads/{thread_id}/runs/{run_id}/cancel",
    response_model=Cancelled,
    responses=errors(404, 422) | {202: {"model": Cancelled, "description": "Cancelling (without wait=true)"}},
)
async def cancel(
    thread_id: str,
    run_id: str,
    request: Request,
    principal: Run,
    wait: bool = False,
    action: Literal["interrupt", "rollback"] = "interrupt",
) -> Response:
    """Cancel a run: it ends ``cancelled`` with a recorded end event; ``rollback`` also drops what it stored.

    Answered once the run ended (``cancelled``, or ``already_ended``); 503 when its end cannot be stored within 10 s
    (its store refuses writes): the cancel is kept, the run executes nothing more and ends once the store takes
    writes again.
    """
    state = _state(request)
    await owned_thread(state.store, thread_id, principal.user)
    await _run_json(state, thread_id, run_id)
    status = await state.executor.cancel(thread_id, run_id, rollback=action == "rollback")
    return JSONResponse({"run_id": run_id, "status": status}, status_code=200 if wait else 202)
