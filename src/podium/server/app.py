"""The app factory: :func:`create_app` puts Podium apps behind the thread and run API.

The server owns one :class:`~podium.runtime.runtime.Runtime` on the given store. Errors always answer JSON
``{"detail": ...}`` with a fitting status: a Podium error maps to 400/404/409/503, a bad body to 422.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import logging
import re
import signal
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from podium.errors import PodiumError, RunNotFound, StoreError, ThreadBusy, ThreadNotFound, ThreadWaiting
from podium.server import assistants, openai_compat, ops, pages, plan, runs, threads
from podium.server._guard import RequestGuard
from podium.server._state import ServerState
from podium.server._wire import parse_body, unreadable_body
from podium.server.auth import AuthConfig, dev_principal

if TYPE_CHECKING:
    from types import FrameType

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from podium.app import App
    from podium.runtime.bus import EventBus
    from podium.store.base import Store

__all__ = ["create_app"]


def _status(error: PodiumError) -> int:
    if isinstance(error, ThreadNotFound | RunNotFound):
        return 404
    if isinstance(error, ThreadBusy | ThreadWaiting):
        return 409
    if isinstance(error, StoreError):
        return 503
    return 400


async def _client_left(request: Request, exc: Exception) -> Response:
    """A route reading a body the client stopped sending (it left, or :class:`RequestGuard` refused the body as too
    large and answered 413 already): nothing to answer, nothing to log."""
    return Response(status_code=400)


async def _podium_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PodiumError)
    return JSONResponse({"detail": str(exc)}, status_code=_status(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    unreadable = unreadable_body(exc)
    if unreadable is not None:
        return JSONResponse({"detail": unreadable}, status_code=422)
    if exc.status_code == 405:
        allowed = _allowed(request)
        if allowed is not None:
            exc.headers = {**(exc.headers or {}), "Allow": allowed}
    return await http_exception_handler(request, exc)


def _allowed(request: Request) -> str | None:
    """The methods the schema gives the request's path, for a 405's ``Allow`` (None: a path it does not list).

    The router names only the methods of the first route the path matched: ``/threads/count`` matched
    ``/threads/{thread_id}`` first, so it said ``GET`` where the schema (and the server) take ``POST``. The schema's
    most literal template that matches the path is the one that answers it.
    """
    paths: dict[str, dict[str, Any]] = request.app.openapi()["paths"]
    path = request.url.path
    matching = [t for t in paths if re.fullmatch(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(t)), path)]
    if not matching:
        return None
    literal = min(matching, key=lambda template: (template.count("{"), -len(template)))
    return ", ".join(sorted(method.upper() for method in paths[literal]))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    detail = [{k: v for k, v in error.items() if k in ("loc", "msg", "type")} for error in exc.errors()]
    return JSONResponse({"detail": detail}, status_code=422)


def create_app(
    apps: Mapping[str, App],
    *,
    store: Store,
    auth: AuthConfig | None = None,
    close_store: bool = False,
    bus: EventBus | None = None,
    grace: float = 5.0,
    max_body: int = 1_000_000,
    lease_ttl: float = 10.0,
    max_runs: int = 100,
    freeze_start_up: bool = False,
    stop_on_signals: bool = False,
) -> FastAPI:
    """A FastAPI application serving ``apps`` (by name) as assistants, keeping everything in ``store``.

    Args:
        apps: the apps to serve, by assistant id.
        store: where threads, runs and events live.
        auth: how callers authenticate (default: dev mode, one local user with every scope; ``podium serve``
            decides with :func:`~podium.server.auth.startup_auth`).
        close_store: close ``store`` when the server stops (otherwise the caller does).
        bus: where runs publish their events (default: the runtime's in-process bus).
        grace: seconds executing runs get to finish at shutdown; the rest are stopped at their next step and
            finished by the next start.
        max_body: the largest request body accepted, in bytes (larger ones get 413).
        lease_ttl: on a PostgreSQL store shared by several servers, seconds a process keeps its runs without
            renewing its claim: a process that dies has its runs taken over by another after about this long.
        max_runs: on a shared PostgreSQL store, the most runs this process executes at once (the rest wait in the
            queue for any process with room).
        freeze_start_up: once started, collect garbage and move every object then alive (modules, schemas, the
            apps) out of the garbage collector's reach (``gc.freeze``), so its full collections scan only what
            requests created since: they pause the event loop a few milliseconds instead of tens. For a process
            that only serves (``podium serve`` sets it).
        stop_on_signals: begin the shutdown as soon as SIGTERM or SIGINT arrives (then the signal goes on to the web
            server's handler): runs get their ``grace`` while the web server waits for its connections, and every
            stream ends once they stopped, instead of when the web server's own timeout cuts it. For a process that
            only serves, in its main thread (``podium serve`` sets it).
    """
    from podium.runtime.runtime import Runtime

    queue = _shared_queue(store)
    if queue is not None and bus is None:
        from podium.server._tail import SharedBus

        bus = SharedBus(store, queue)
    runtime = Runtime(store, bus=bus) if queue is None else Runtime(store, bus=bus, lease_ttl=lease_ttl)
    state = ServerState(
        apps=dict(apps),
        store=store,
        runtime=runtime,
        bus=runtime.bus,
        auth=auth or AuthConfig.dev(),
        metrics=ops.Metrics(),
    )
    if queue is not None:
        from podium.server._shared import SharedExecutor

        executor = SharedExecutor(
            queue=queue,
            ttl=lease_ttl,
            max_runs=max_runs,
            store=store,
            runtime=runtime,
            bus=state.bus,
            agent=state.agent,
            apps=state.apps.keys(),
        )
        on_events = getattr(state.bus, "on_notify", None)
        executor.on_events = on_events
        state.executor = executor
    # /mcp has no per-user records yet (its conversations are not scoped to a principal), so it is served only in dev
    # mode, where there is one user; with API keys or JWT configured it is not mounted at all.
    mcp = _mcp_endpoint(state) if state.auth.dev_user is not None else None
    mcp_missing = _mcp_missing(state) if mcp is None else None

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        from podium.events import prepare_codec

        prepare_codec()  # before the first request, which would otherwise wait for it
        watcher = asyncio.create_task(ops.follow_runs(state), name="podium-metrics")
        await state.executor.recover()
        if freeze_start_up:
            gc.collect()
            gc.freeze()
        halting: list[asyncio.Task[None]] = []

        def begin() -> None:  # (its task is kept referenced while it runs)
            halting.append(asyncio.create_task(state.executor.halt(grace)))

        restore = _on_stop_signals(begin) if stop_on_signals else _nothing
        try:
            async with mcp.run() if mcp is not None else nullcontext():
                yield
        finally:
            restore()
            watcher.cancel()
            await state.executor.shutdown(grace)
            await state.close()
            if close_store:
                await store.close()

    from podium import __version__

    # FastAPI's /docs and /redoc load their scripts from a CDN (blank offline): /docs is a page of the package's own
    app = FastAPI(
        title="Podium",
        version=__version__,
        description=_SCHEMA_COVERS,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.podium = state
    app.add_exception_handler(PodiumError, _podium_error)
    app.add_exception_handler(ClientDisconnect, _client_left)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_middleware(RequestGuard, max_body=max_body, metrics=state.metrics)
    app.include_router(ops.router)
    app.include_router(openai_compat.router)
    app.include_router(assistants.router)
    app.include_router(threads.router)
    app.include_router(runs.router)
    plan.mount(app, state)
    pages.mount(app)
    if mcp is not None:
        for route in mcp.routes:
            route.app = _while_dev_mode(state, route.app)
        app.router.routes.extend(mcp.routes)
    elif mcp_missing is not None:
        status, detail = mcp_missing

        async def no_mcp(request: Request) -> JSONResponse:  # says why, instead of a bare 404
            return JSONResponse({"detail": detail}, status_code=status)

        for path in ("/mcp", "/mcp/"):
            app.add_api_route(path, no_mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False)
    _mount_a2a(app, state)
    return app


_SCHEMA_COVERS = (
    "The thread and run API, the OpenAI-compatible /v1, the operations routes, the plan service (when a plan app is "
    "served) and A2A's agent cards and endpoint (whose JSON-RPC bodies the A2A specification describes). Not here: "
    "/mcp, MCP's streamable HTTP transport (its tools are listed by MCP's tools/list), and the web pages. Every "
    'error answers JSON {"detail": ...}; see docs/server.md.'
)


def _nothing() -> None:
    pass


def _on_stop_signals(begin: Callable[[], None]) -> Callable[[], None]:
    """Call ``begin`` in the running event loop when SIGTERM or SIGINT arrives, then the handler that was there (the
    web server's, which starts its graceful shutdown); returns what puts the handlers back.

    The web server waits for open connections before it tells the application to shut down: without this, a stream
    that follows a run would hold its connection until the web server's timeout cancels it. Only the main thread
    can set handlers: elsewhere nothing is done.
    """
    if threading.current_thread() is not threading.main_thread():
        return _nothing
    loop = asyncio.get_running_loop()
    before: dict[int, Any] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(begin)
        previous = before[signum]
        if callable(previous):
            previous(signum, frame)
        else:  # the default action (or none): as if this handler had never been set
            signal.signal(signum, previous)
            signal.raise_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        before[signum] = signal.getsignal(signum)
        signal.signal(signum, handler)

    def restore() -> None:
        for signum, previous in before.items():
            if signal.getsignal(signum) is handler:  # (unless someone set another since)
                signal.signal(signum, previous)

    return restore


def _mount_a2a(app: FastAPI, state: ServerState) -> None:
    """Every app as an A2A agent (``podium.server.a2a``), when the ``a2a`` extra is installed."""
    from podium.server import a2a

    if a2a.available():
        a2a.mount(app, state)


def _shared_queue(store: Store) -> Any:
    """The run queue of a store several servers can share (PostgreSQL), or ``None`` (one process: SQLite, memory)."""
    queue = getattr(store, "run_queue", None)
    return queue() if callable(queue) else None


def _while_dev_mode(state: ServerState, endpoint: ASGIApp) -> ASGIApp:
    """``endpoint``, answering only while the server is in dev mode (which ends once an API key is created)."""

    async def gated(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and await dev_principal(state) is None:
            status, detail = _mcp_missing(state)
            await JSONResponse({"detail": detail}, status_code=status)(scope, receive, send)
            return
        if scope["type"] == "http" and scope["method"] == "POST":
            replay = await _read_json_rpc(scope, receive, send)
            if replay is None:
                return
            receive = replay
        await endpoint(scope, receive, send)

    return gated


async def _read_json_rpc(scope: Scope, receive: Receive, send: Send) -> Receive | None:
    """Read a JSON-RPC request's body; ``None`` once a body that is not JSON was answered with a parse error (the
    MCP SDK answers a body that is not UTF-8, or nests too deep, with a bare 500), else what hands the body on."""
    body, more = b"", True
    while more:
        message = await receive()
        if message["type"] != "http.request":  # the client left
            return None
        body += message.get("body", b"")
        more = message.get("more_body", False)
    try:
        parse_body(body)
    except ValueError as exc:
        error = {"code": -32700, "message": f"Parse error: {exc}"}
        await JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=400)(scope, receive, send)
        return None
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _mcp_missing(state: ServerState) -> tuple[int, str]:
    """Why ``/mcp`` is not served, as the status and text its requests get."""
    if state.auth.dev_user is None:
        return 404, (
            "/mcp is served only without API keys or JWT (podium serve's dev mode): its conversations are not yet "
            "kept per user"
        )
    if importlib.util.find_spec("mcp") is None:
        return 501, "/mcp needs the mcp extra: pip install 'podium[mcp]'"
    return 501, "/mcp needs the mcp version podium's mcp extra pins: pip install 'podium[mcp]'"


def _mcp_endpoint(state: ServerState) -> Any:
    """The apps as MCP tools at ``/mcp`` (see docs/integrations.md), when the ``mcp`` extra is installed."""
    from podium.mcp.server import HTTPEndpoint

    if HTTPEndpoint.available():
        return HTTPEndpoint(state.apps, state.runtime, state.agent, state.description)
    if importlib.util.find_spec("mcp") is not None:  # installed, but not the version the extra pins
        logging.getLogger("podium.server").warning(
            "/mcp is not served: the installed mcp package is not the version podium's mcp extra pins "
            "(pip install 'podium[mcp]')"
        )
    return None
