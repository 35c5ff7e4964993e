"""Operating the server: ``/health``, ``/info``, ``/metrics`` (Prometheus text) and structured (JSON) logs.

``/health`` and ``/info`` need no credentials (probes and load balancers call them; they show no user data);
``/metrics`` needs the ``admin`` scope. Metrics are kept in this process: HTTP requests by route and status with
their latency, runs by how they ended with their duration, runs executing and runs queued.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from podium.errors import PodiumError, SubscriberLagged
from podium.server._metrics import Metrics
from podium.server.auth import Principal, dev_principal, require

if TYPE_CHECKING:
    from podium.server._state import ServerState

__all__ = ["Metrics", "configure_logging", "follow_runs", "router", "uvicorn_log_config"]

router = APIRouter(tags=["operations"])

HEALTH_SECONDS = 5.0
"""How long ``/health`` waits for the store (a database that is down may hold a request far longer: a probe needs
its answer sooner)."""


async def follow_runs(state: ServerState) -> None:
    """Count every run's start and end in ``state.metrics`` (runs until cancelled at shutdown)."""
    while True:
        try:
            async with state.bus.subscribe() as subscription:
                async for event in subscription:
                    state.metrics.observe_event(event)
        except SubscriberLagged:  # some events were dropped: counting goes on from the next ones
            continue


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.podium
    return state


@router.get("/health", summary="Readiness: the store answers")
async def health(request: Request) -> JSONResponse:
    """200 ``{"status": "ok"}`` when the store answers within :data:`HEALTH_SECONDS`, else 503 with the reason."""
    try:
        await asyncio.wait_for(_state(request).store.ping(), HEALTH_SECONDS)
    except TimeoutError:
        detail = f"the store did not answer within {HEALTH_SECONDS:g} s"
        return JSONResponse({"status": "unavailable", "detail": detail}, status_code=503)
    except PodiumError as exc:
        return JSONResponse({"status": "unavailable", "detail": f"the store does not answer: {exc}"}, status_code=503)
    return JSONResponse({"status": "ok"})


@router.get("/info", summary="Version and what the server offers")
async def info(request: Request) -> dict[str, Any]:
    """The version, uptime and authentication mode (no user data)."""
    from podium import __version__

    state = _state(request)
    await dev_principal(state)  # dev mode may have ended (a key was created): say what holds now
    auth = state.auth
    mode = (
        "dev"
        if auth.dev_user is not None
        else "+".join(m for m, on in (("api_keys", auth.api_keys), ("jwt", auth.jwt)) if on)
    )
    return {
        "version": __version__,
        "uptime_s": round(time.time() - state.started, 3),
        "auth": mode,
        "flags": {"assistants": True, "openai": True, "metrics": True},
    }


@router.get("/metrics", summary="Prometheus metrics", response_class=PlainTextResponse)
async def metrics(request: Request, _: Annotated[Principal, Depends(require("admin"))]) -> PlainTextResponse:
    """Requests, runs by status with latencies, runs executing and queue depth, in Prometheus text format."""
    state = _state(request)
    executor: Any = getattr(state, "executor", None)
    executing = len(getattr(executor, "active", {}))
    queued = sum(len(q) for q in getattr(executor, "queues", {}).values())
    text = state.metrics.render(executing=executing, queued=queued)
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")


class _JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and any ``extra`` fields."""

    _standard = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "color_message"}

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in self._standard and not key.startswith("_"):
                data[key] = value
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, default=str)


def configure_logging(level: str = "info") -> logging.Logger:
    """Send Podium's logs to stderr as JSON lines at ``level``, and every other library's warnings and errors too;
    the ``podium.server`` logger.

    The root logger's handlers are replaced by the JSON one: a handler another library installed there (``mcp``'s
    FastMCP sets up rich text with ``logging.basicConfig``) would write multi-line text among the JSON lines, and
    one installed later by ``basicConfig`` is not (it does nothing once the root logger has a handler).

    Raises:
        PodiumError: an unknown level.
    """
    number = logging.getLevelName(level.upper())
    if not isinstance(number, int):
        raise PodiumError(f"unknown log level {level!r}: choose debug, info, warning or error")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonFormatter())
    logger = logging.getLogger("podium")
    logger.handlers[:] = [handler]
    logger.setLevel(number)
    logger.propagate = False
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(number, logging.WARNING))
    return logging.getLogger("podium.server")


def uvicorn_log_config(level: str = "info") -> dict[str, Any]:
    """A ``logging.config`` dictionary that makes uvicorn's own and access logs JSON lines too, and other libraries'
    warnings (the root logger), in every worker process as well."""
    formatter = {"()": f"{__name__}._JsonFormatter"}
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    loggers = {
        name: {"handlers": ["json"], "level": level.upper(), "propagate": False}
        for name in ("uvicorn", "uvicorn.access")
    }
    loggers["uvicorn.error"] = {"level": level.upper()}
    others = max(logging.getLevelName(level.upper()), logging.WARNING)  # (the level is checked before this)
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": formatter},
        "handlers": {"json": handler},
        "loggers": loggers,
        "root": {"handlers": ["json"], "level": logging.getLevelName(others)},  # other libraries (see above)
    }
