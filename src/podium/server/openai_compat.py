"""The OpenAI-compatible endpoint: every app is a "model" of ``/v1/models``; ``/v1/chat/completions`` runs it.

Any OpenAI client talks to a Podium app this way (``docs/server.md``, "OpenAI-compatible endpoint"):

- **Conversations.** ``X-Conversation-Id`` (or ``metadata.conversation_id``) names a conversation the server keeps:
  only the last user message of the request is new input. Without one the request is stateless: the history it
  sends is the conversation, stored in a fresh thread. Each conversation is a thread of the caller (the thread API
  shows it; its id comes back in ``X-Podium-Thread-Id``, which a later request may send back to continue that
  thread, a stateless one too) and belongs to the user of the credentials, never to the request's ``user`` field.
- **Tool calls stay inside.** The agent's own tool calls run on the server and are never sent as
  ``tool_calls``/``delta.tool_calls`` (a client would try to run them): only what a person reads is, the reply,
  then the artifacts in brief (:mod:`podium.server._reply`).
- **Questions are text.** A run that waits for the human answers with the question (its choices, or how to
  answer, in brackets); the next user message of the conversation answers it and the run continues.
- Runs go through the server's executor like every other run: a client that disconnects mid-stream leaves a run
  that completes, and a restart finishes it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.routing import APIRoute
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from podium.errors import StoreError, SubscriberLagged
from podium.events import Event, MessageAdded, RunEnded
from podium.messages import AIMessage, HumanMessage, Message, Usage
from podium.models.openai_format import from_openai
from podium.runtime.bus import Subscription
from podium.server._executor import STOP_WAIT, STOPPING, Job
from podium.server._records import create_thread, existing_thread, owned_thread, run_extra
from podium.server._reply import Reply
from podium.server._schema import errors
from podium.server._state import ServerState
from podium.server._wire import storable, unreadable_body
from podium.server.auth import Principal, require

__all__ = ["ChatCompletionRequest", "router"]


class _OpenAIRoute(APIRoute):
    """Errors answer ``{"detail": ...}`` like every route, plus the ``error`` object OpenAI clients read."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except StarletteHTTPException as exc:  # (FastAPI raises Starlette's for a body it cannot read)
                unreadable = unreadable_body(exc)
                if unreadable is not None:
                    return _error(422, unreadable)
                return _error(exc.status_code, str(exc.detail), exc.headers)
            except RequestValidationError as exc:
                detail = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
                return _error(422, detail)

        return handle


def _error(status: int, detail: Any, headers: Mapping[str, str] | None = None) -> JSONResponse:
    kind = {401: "authentication_error", 403: "permission_error", 404: "not_found_error"}.get(status)
    kind = kind or ("invalid_request_error" if status < 500 else "server_error")
    message = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False)
    body = {"detail": detail, "error": {"message": message, "type": kind, "code": status}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


router = APIRouter(prefix="/v1", tags=["openai"], route_class=_OpenAIRoute)


class ChatMessageIn(BaseModel):
    """One message of a chat-completions request (extra fields are accepted and ignored)."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Annotated[str | list[dict[str, Any]], AfterValidator(storable)] | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None


MAX_CONVERSATION_ID = 200
"""The longest conversation id accepted (``X-Conversation-Id`` or ``metadata.conversation_id``)."""


class StreamOptions(BaseModel):
    """``stream_options``: ``include_usage`` adds a last chunk with the token usage."""

    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """The body of ``POST /v1/chat/completions``; sampling options are accepted and left to the app."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, description="The app to run")
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int = Field(1, description="Replies to give: only 1 (an app gives one reply per turn)")
    metadata: Annotated[dict[str, str], AfterValidator(storable)] | None = None
    user: str | None = Field(None, description="Ignored: the user is the one of the credentials")

    @field_validator("metadata")
    @classmethod
    def _conversation_id_length(cls, metadata: dict[str, str] | None) -> dict[str, str] | None:
        conversation = (metadata or {}).get("conversation_id", "")
        if len(conversation) > MAX_CONVERSATION_ID:
            raise ValueError(
                f"metadata.conversation_id is longer than {MAX_CONVERSATION_ID} characters (as X-Conversation-Id)"
            )
        return metadata

    @field_validator("n")
    @classmethod
    def _one_reply(cls, n: int) -> int:
        if n != 1:
            raise ValueError(f"n must be 1: an app gives one reply per turn (asked for {n})")
        return n


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.podium
    return state


class Model(BaseModel):
    """A served app as an OpenAI model."""

    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelList(BaseModel):
    """Every served app as an OpenAI model."""

    object: Literal["list"]
    data: list[Model]


class ChatCompletion(BaseModel):
    """A chat completion (``stream: false``): the app's reply as the one choice, and the run's token usage."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[dict[str, Any]]
    usage: dict[str, Any]


def _model(name: str, created: float) -> Model:
    return Model(id=name, object="model", created=int(created), owned_by="podium")


@router.get("/models", summary="The apps, as models", responses=errors(openai=True))
async def list_models(request: Request, _: Annotated[Principal, Depends(require("read"))]) -> ModelList:
    """Every served app as an OpenAI model (``id`` = the app's name)."""
    state = _state(request)
    return ModelList(object="list", data=[_model(name, state.started) for name in sorted(state.apps)])


@router.get("/models/{model}", summary="One app, as a model", responses=errors(404, 422, openai=True))
async def get_model(model: str, request: Request, _: Annotated[Principal, Depends(require("read"))]) -> Model:
    """The app named ``model``, or 404."""
    state = _state(request)
    return _model(state.app(model).name, state.started)


def _conversation_thread(user: str, conversation: str) -> str:
    """The thread of a user's conversation: a digest, so two users' conversation ids never meet."""
    return "oai-" + hashlib.sha256(f"{user}\0{conversation}".encode()).hexdigest()[:32]


def _messages(body: ChatCompletionRequest) -> tuple[list[Message], str]:
    """The earlier user/assistant messages (text only) and the new user text.

    Raises:
        HTTPException: 422, the last message is not a user message with text.
    """
    parsed = [from_openai(m.model_dump(exclude_none=True)) for m in body.messages]
    last = parsed[-1]
    if not isinstance(last, HumanMessage) or not last.content.strip():
        raise HTTPException(422, "the last message must be a user message with text")
    history: list[Message] = []
    for message in parsed[:-1]:  # the agent has its own instructions and tools: keep the conversation's text
        if isinstance(message, HumanMessage) and message.content:
            history.append(HumanMessage(content=message.content))
        elif isinstance(message, AIMessage) and message.content:
            history.append(AIMessage(content=message.content))
    return history, last.content


async def _start(
    state: ServerState,
    principal: Principal,
    body: ChatCompletionRequest,
    conversation: str | None,
    thread: str | None = None,
) -> tuple[Job, Subscription]:
    """Find or make the conversation's thread, then submit the run (new input, or the answer to its question).

    ``thread`` (the ``X-Podium-Thread-Id`` a response sent) continues that thread of the caller, as a conversation.
    """
    store = state.store
    app = state.app(body.model)
    history, text = _messages(body)
    job = Job(run_id=str(uuid.uuid4()), thread_id="", assistant_id=app.name, text=text)
    if conversation is None and thread is not None:
        job.thread_id = thread
        await owned_thread(store, thread, principal.user)  # 404 for an unknown thread or another user's
        await _answer_or_add(state, app.name, job, text)
    elif conversation is None:
        job.thread_id = f"oai-{uuid.uuid4().hex}"
        await create_thread(store, job.thread_id, principal.user, {"source": "openai"})
        if history:  # the sent history is the conversation so far
            seeded = [
                MessageAdded(message=m, run_id=f"{job.thread_id}-history", seq=i) for i, m in enumerate(history, 1)
            ]
            await store.append_events(job.thread_id, list[Event](seeded))
    else:
        job.thread_id = _conversation_thread(principal.user, conversation)
        if await existing_thread(store, job.thread_id) is None:
            metadata = {"source": "openai", "conversation_id": conversation}
            await create_thread(store, job.thread_id, principal.user, metadata)
        await owned_thread(store, job.thread_id, principal.user)
        await _answer_or_add(state, app.name, job, text)
    extra = {"assistant_id": app.name, "metadata": {"source": "openai"}, "created_at": time.time()}
    return job, await state.executor.submit_watched(job, "reject", extra)


async def _answer_or_add(state: ServerState, app: str, job: Job, text: str) -> None:
    """Make ``job`` the answer to the question the thread waits on, if it waits on one (else it is new input)."""
    store = state.store
    status, pending = await state.runtime.pending(job.thread_id)
    if status == "interrupted" and pending:
        if len(pending) > 1:
            asked = "; ".join(f"{p.id}: {p.prompt}" for p in pending)
            raise HTTPException(409, f"the conversation waits for several answers ({asked}); use the thread API")
        last = await store.last_run(job.thread_id)
        assert last is not None  # a question waits, so a run asked it
        started = await run_extra(store, job.thread_id, last.id) or {}
        if started.get("assistant_id", app) != app:
            raise HTTPException(422, f"the conversation waits for an answer to model {started['assistant_id']!r}")
        job.run_id, job.resume, job.answer, job.text = last.id, True, {pending[0].id: text}, None  # the one seen


@dataclass(slots=True)
class _Answer:
    """What a run said (its text as a person reads it, :class:`~podium.server._reply.Reply`), its usage, how it
    ended."""

    job: Job
    usage: Usage = field(default_factory=Usage)
    reply: Reply = field(init=False)

    def __post_init__(self) -> None:
        self.reply = Reply(self.job.run_id)

    @property
    def ended(self) -> RunEnded | None:
        """How the run ended, once it has."""
        return self.reply.ended

    @property
    def text(self) -> str:
        """The reply so far."""
        return "".join(self.reply.text)

    def feed(self, event: Event) -> str:
        """Take one event; the text it adds to the answer (``""`` for none)."""
        if isinstance(event, MessageAdded) and event.usage is not None and event.run_id == self.job.run_id:
            self.usage = self.usage + event.usage
        return self.reply.feed(event)

    def failure(self, stopping: bool = False) -> str | None:
        """Why the run did not answer, or ``None`` when it completed or asked a question (``stopping``: the server
        stopped the run, which goes on later)."""
        if stopping:
            return (
                f"{STOPPING}: the run goes on at its next start (or in another process) and its reply is kept in the "
                f"conversation (thread {self.job.thread_id})"
            )
        if self.ended is None:
            return "the run ended without a result"
        if self.ended.status in ("completed", "interrupted"):
            return None
        return f"the run ended {self.ended.status}: {self.ended.reason or 'no reason given'}"

    def usage_json(self) -> dict[str, int]:
        """The usage in the wire form."""
        u = self.usage
        return {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens, "total_tokens": u.total_tokens}


async def _events(state: ServerState, job: Job, subscription: Subscription) -> AsyncIterator[Event]:
    """The job's events as they are published; what the bus could not deliver is read back from the store."""
    seen = job.after
    iterator = subscription.__aiter__()
    done = asyncio.ensure_future(job.done.wait())
    try:
        while True:
            following = asyncio.ensure_future(iterator.__anext__())
            finished, _ = await asyncio.wait({following, done}, return_when=asyncio.FIRST_COMPLETED)
            if following not in finished:
                following.cancel()
                break
            try:
                event = following.result()
            except (SubscriberLagged, StopAsyncIteration):  # (the end: the server stopped the run)
                break
            seen = max(seen, event.seq or 0)
            yield event
            if isinstance(event, RunEnded) and event.run_id == job.run_id:
                return
        await done
        ended = False
        halted = state.executor.halted.is_set()
        try:  # once the server stops, a store that does not answer must not hold the answer past the shutdown's cut
            async with asyncio.timeout(STOP_WAIT if halted else None):
                missed = await state.store.read_events(job.thread_id, after=seen, run_id=job.run_id)
        except (TimeoutError, StoreError):
            if not halted:
                raise
            missed = []
        for event in missed:
            ended = ended or isinstance(event, RunEnded)
            yield event
        if not ended and not halted:  # refused (never started): in its API record only
            extra = await run_extra(state.store, job.thread_id, job.run_id) or {}
            status = extra.get("podium_status", "failed")
            yield RunEnded(status=status, reason=extra.get("reason", ""), run_id=job.run_id)
    finally:
        done.cancel()


def _stopped(state: ServerState, answer: _Answer) -> bool:
    """Whether the server's shutdown stopped the run before it answered (its end, if any, says ``cancelled``)."""
    return answer.job.run_id in state.executor.stopped or (answer.ended is None and state.executor.halted.is_set())


def _headers(job: Job, conversation: str | None) -> dict[str, str]:
    headers = {"X-Podium-Thread-Id": job.thread_id, "X-Podium-Run-Id": job.run_id}
    if conversation is not None:
        headers["X-Conversation-Id"] = conversation
    return headers


def _sse(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


async def _stream(
    state: ServerState, job: Job, subscription: Subscription, body: ChatCompletionRequest, completion_id: str
) -> AsyncIterator[str]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.model,
                "choices": [choice],
            }
        )

    answer = _Answer(job)
    async with subscription:
        yield chunk({"role": "assistant", "content": ""})
        async for event in _events(state, job, subscription):
            text = answer.feed(event)
            if text:
                yield chunk({"content": text})
            if answer.ended is not None:
                break
    await state.executor.wait(job.thread_id, job.run_id)  # the thread is free when the client hears the end
    stopping = _stopped(state, answer)
    failure = answer.failure(stopping)
    if failure is not None:
        code = "server_stopping" if stopping else "run_failed"
        yield _sse({"error": {"message": failure, "type": "server_error", "code": code}})
    else:
        yield chunk({}, "stop")
        if body.stream_options is not None and body.stream_options.include_usage:
            usage = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": body.model}
            yield _sse({**usage, "choices": [], "usage": answer.usage_json()})
    yield "data: [DONE]\n\n"


@router.post(
    "/chat/completions",
    summary="Run an app on a conversation (OpenAI chat completions)",
    response_model=ChatCompletion,
    responses=errors(404, 409, 413, 415, 422, 500, openai=True)
    | {200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}}},
)
async def chat_completions(
    body: ChatCompletionRequest,
    request: Request,
    principal: Annotated[Principal, Depends(require("run"))],
    x_conversation_id: Annotated[str | None, Header(max_length=MAX_CONVERSATION_ID)] = None,
    x_podium_thread_id: Annotated[str | None, Header(max_length=200)] = None,
) -> Any:
    """The app ``model`` answers the last user message, streaming (``stream: true``) or not."""
    state = _state(request)
    conversation = x_conversation_id or (body.metadata or {}).get("conversation_id") or None
    job, subscription = await _start(state, principal, body, conversation, x_podium_thread_id or None)
    completion_id = f"chatcmpl-{job.run_id}"
    headers = _headers(job, conversation)
    if body.stream:
        events = _stream(state, job, subscription, body, completion_id)
        return StreamingResponse(
            events, media_type="text/event-stream", headers={**headers, "Cache-Control": "no-cache"}
        )
    answer = _Answer(job)
    async with subscription:
        async for event in _events(state, job, subscription):
            answer.feed(event)
            if answer.ended is not None:
                break
    # Answer once the executor is done with the run: a client's next message (an answer to the question, or new
    # input) then finds the thread free, never "busy" with the run that just answered.
    await state.executor.wait(job.thread_id, job.run_id)
    stopping = _stopped(state, answer)
    failure = answer.failure(stopping)
    if failure is not None:
        status = 409 if answer.ended is not None and answer.ended.status == "cancelled" else 500
        status = 503 if stopping else status
        # the run happened (its tools ran, the message is in the conversation): a client's automatic retry would
        # run the turn again, so the OpenAI clients are told not to (they read this header before the status)
        return _error(status, failure, {**headers, "x-should-retry": "false"})
    message = {"role": "assistant", "content": answer.text}
    completion = {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": answer.usage_json(),
    }
    return JSONResponse(completion, headers=headers)
