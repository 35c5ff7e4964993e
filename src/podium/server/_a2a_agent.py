"""The A2A side of the server that needs the ``a2a-sdk``: the executor of app turns, the cards, the dispatchers.

Imported on the first A2A request (``podium.server.a2a`` mounts the routes), so the server starts without it.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from typing import TYPE_CHECKING, Any

from a2a.auth.user import User
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import ServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from fastapi import HTTPException

from podium.errors import UsageError
from podium.events import InterruptRaised, MessageAdded, RunEnded, answers_from_text
from podium.server._executor import STOPPING, Job
from podium.server._records import create_thread, owned_thread
from podium.server._reply import question_text
from podium.server.auth import Principal
from podium.server.openai_compat import _events

if TYPE_CHECKING:
    from starlette.requests import Request as StarletteRequest

    from podium.events import Interrupt
    from podium.server._state import ServerState

__all__ = ["agent_card", "card_json", "dispatchers"]

_PRINCIPAL = "podium.principal"


class _User(User):
    """A Podium principal as the SDK's user (its task records are kept per user name)."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


class _Caller(ServerCallContextBuilder):
    """The call context of a request the route has authenticated."""

    def build(self, request: StarletteRequest) -> ServerCallContext:
        principal: Principal = request.scope[_PRINCIPAL]
        state = {_PRINCIPAL: principal, "headers": dict(request.headers)}  # the SDK reads the protocol version there
        return ServerCallContext(user=_User(principal.user), state=state)


def _thread(user: str, app: str, context_id: str) -> str:
    return "a2a-" + hashlib.sha256(f"{user}\0{app}\0{context_id}".encode()).hexdigest()[:32]


def _text_parts(text: str) -> list[pb.Part]:
    return [pb.Part(text=text)]


def _answer(text: str, pending: list[Interrupt]) -> str | dict[str, str]:
    """The message as the answer to ``pending`` (a 409 when several wait and it is not a JSON object by id)."""
    try:
        return answers_from_text(text, pending)
    except UsageError as exc:
        raise HTTPException(409, str(exc)) from None


def _question(interrupt: Interrupt) -> dict[str, Any]:
    expectation = interrupt.expectation
    return {"id": interrupt.id, "prompt": interrupt.prompt, "options": list(expectation.options) if expectation else []}


class _AppExecutor(AgentExecutor):
    """Runs one app's turns for the SDK's request handler."""

    def __init__(self, state: ServerState, name: str) -> None:
        self.state, self.name = state, name
        self._runs: dict[str, tuple[str, str]] = {}

    async def _start(self, principal: Principal, context_id: str, task_id: str, text: str) -> tuple[Job, Any]:
        state, store = self.state, self.state.store
        thread_id = _thread(principal.user, self.name, context_id)
        job = Job(run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id=self.name, text=text)
        if await store.get_thread(job.thread_id) is None:
            metadata = {"source": "a2a", "context_id": context_id}
            await create_thread(store, job.thread_id, principal.user, metadata)
        await owned_thread(store, job.thread_id, principal.user)
        status, pending = await state.runtime.pending(job.thread_id)
        if status == "interrupted" and pending:
            last = await store.last_run(job.thread_id)
            assert last is not None  # a question waits, so a run asked it
            job.run_id, job.resume, job.answer, job.text = last.id, True, _answer(text, pending), None
        extra = {
            "assistant_id": self.name,
            "metadata": {"source": "a2a", "a2a_task_id": task_id},
            "created_at": time.time(),
        }
        return job, await state.executor.submit_watched(job, "reject", extra)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run the turn the message starts (or the answer it gives), publishing the task's updates."""
        principal: Principal = context.call_context.state[_PRINCIPAL]
        task_id, context_id = context.task_id or "", context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            history = [context.message] if context.message is not None else []
            status = pb.TaskStatus(state=pb.TaskState.TASK_STATE_SUBMITTED)
            await event_queue.enqueue_event(pb.Task(id=task_id, context_id=context_id, status=status, history=history))
        text = context.get_user_input().strip()
        if not text:
            why = _no_text(context.message)
            await updater.reject(updater.new_agent_message(_text_parts(why)))
            return
        try:
            job, subscription = await self._start(principal, context_id, task_id, text)
        except HTTPException as exc:
            await updater.reject(updater.new_agent_message(_text_parts(str(exc.detail))))
            return
        self._runs[task_id] = (job.thread_id, job.run_id)
        try:
            await updater.start_work()
            await self._follow(job, subscription, updater)
        finally:
            self._runs.pop(task_id, None)
            subscription.close()

    async def _follow(self, job: Job, subscription: Any, updater: TaskUpdater) -> None:
        questions: list[Interrupt] = []
        ended: RunEnded | None = None
        said = ""  # the app's latest message, sent as progress once it is known not to be the final answer

        async def progress() -> None:
            if said:
                await updater.update_status(
                    pb.TaskState.TASK_STATE_WORKING, updater.new_agent_message(_text_parts(said))
                )

        async for event in _events(self.state, job, subscription):
            if event.run_id != job.run_id:
                continue
            if isinstance(event, MessageAdded) and event.is_reply:  # what a person reads (:mod:`._reply`)
                await progress()
                said = event.message.content
            elif isinstance(event, InterruptRaised):
                questions.append(event.interrupt)
            elif isinstance(event, RunEnded):
                ended = event
        if ended is None or ended.output != said:
            await progress()
        executor = self.state.executor
        status = ended.status if ended is not None else "failed"
        if job.run_id in executor.stopped or (ended is None and executor.halted.is_set()):
            reason = f"{STOPPING}: the run goes on at its next start (or in another process)"
            await updater.failed(updater.new_agent_message(_text_parts(reason)))
        elif status == "completed":
            assert ended is not None
            await updater.add_artifact(_text_parts(ended.output or ""), name="answer")
            await updater.complete()
        elif status == "interrupted":
            asked = [_question(q) for q in questions]
            text = "\n".join(question_text(q) for q in questions)
            message = updater.new_agent_message(_text_parts(text), metadata={"podium.questions": asked})
            await updater.requires_input(message)
        elif status == "cancelled":
            await updater.cancel()
        else:
            reason = f"the run ended {status}: {ended.reason if ended else 'without a result'}"
            await updater.failed(updater.new_agent_message(_text_parts(reason)))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancel the task's run (the thread keeps what it did)."""
        running = self._runs.get(context.task_id or "")
        if running is not None:
            await self.state.executor.cancel(*running, rollback=False)
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


def _no_text(message: pb.Message | None) -> str:
    """Why a message without text is refused: it is empty, or what it carries is not text (a file, data)."""
    kinds = {part.WhichOneof("content") for part in message.parts} if message is not None else set()
    if kinds - {"text", None}:
        return "send the message as text: this agent reads text parts only, not files or data"
    return "the message is empty: send the user's message as text"


def agent_card(state: ServerState, name: str, base_url: str) -> pb.AgentCard:
    """The A2A card of the app ``name`` served at ``base_url`` (the server's address)."""
    from podium import __version__

    url = f"{base_url.rstrip('/')}/a2a/{name}"
    description = state.description(name) or f"The Podium app {name}."
    card = pb.AgentCard(
        name=name,
        description=description,
        version=__version__,
        supported_interfaces=[pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id=name, name=name, description=description, tags=["podium"])],
    )
    if state.auth.dev_user is None:
        scheme = pb.HTTPAuthSecurityScheme(scheme="Bearer", description="a Podium API key or a JWT")
        card.security_schemes["bearer"].CopyFrom(pb.SecurityScheme(http_auth_security_scheme=scheme))
        card.security_requirements.append(pb.SecurityRequirement(schemes={"bearer": pb.StringList(list=[])}))
    return card


def card_json(state: ServerState, name: str, base_url: str) -> dict[str, Any]:
    """The card of the app ``name`` as JSON."""
    result: dict[str, Any] = agent_card_to_dict(agent_card(state, name, base_url))
    return result


def dispatchers(state: ServerState) -> dict[str, JsonRpcDispatcher]:
    """A JSON-RPC dispatcher per app of ``state``, each with its request handler and per-user task records."""
    out: dict[str, JsonRpcDispatcher] = {}
    for name in state.apps:
        handler = DefaultRequestHandlerV2(
            agent_executor=_AppExecutor(state, name),
            task_store=InMemoryTaskStore(),
            agent_card=agent_card(state, name, "http://localhost"),
        )
        out[name] = JsonRpcDispatcher(request_handler=handler, context_builder=_Caller())
    return out
