"""Operating the server: ``/health``, ``/info``, ``/metrics`` (Prometheus text) and structured (JSON) logs.

``/health`` and ``/info`` need no credentials (probes and load balancers call them; they show no user data);
``/metrics`` needs the ``admin`` scope. Metrics are kept in this process: HTTP requests by route and status with
their latency, runs by how they ended with their duration, runs executing and runs queued.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse

from podium.errors import PodiumError
from podium.events import Event, RunEnded, RunStarted
from podium.server.auth import Principal, require

if TYPE_CHECKING:
    from podium.server._state import ServerState

__all__ = ["Metrics", "configure_logging", "router", "uvicorn_log_config"]

router = APIRouter(tags=["operations"])

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


@dataclass(slots=True)
class _Histogram:
    """Cumulative Prometheus buckets, by label values."""

    counts: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    sums: dict[tuple[str, ...], float] = field(default_factory=dict)

    def observe(self, labels: tuple[str, ...], seconds: float) -> None:
        counts = self.counts.setdefault(labels, [0] * (len(_BUCKETS) + 1))
        for i, bound in enumerate(_BUCKETS):
            if seconds <= bound:
                counts[i] += 1
        counts[-1] += 1
        self.sums[labels] = self.sums.get(labels, 0.0) + seconds

    def lines(self, name: str, names: tuple[str, ...]) -> Iterable[str]:
        for labels, counts in sorted(self.counts.items()):
            base = ",".join(f'{k}="{_escape(v)}"' for k, v in zip(names, labels, strict=True))
            sep = "," if base else ""
            for bound, count in zip(_BUCKETS, counts, strict=False):
                yield f'{name}_bucket{{{base}{sep}le="{bound}"}} {count}'
            yield f'{name}_bucket{{{base}{sep}le="+Inf"}} {counts[-1]}'
            yield f"{name}_sum{{{base}}} {self.sums[labels]:.6f}"
            yield f"{name}_count{{{base}}} {counts[-1]}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    """What ``/metrics`` reports, counted in this process."""

    def __init__(self) -> None:
        """No observations yet."""
        self.requests: Counter[tuple[str, str, str]] = Counter()
        self.request_seconds = _Histogram()
        self.runs: Counter[str] = Counter()
        self.run_seconds = _Histogram()
        self._starts: dict[str, float] = {}

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one HTTP request (``route`` is the path template, so ids do not multiply the series)."""
        self.requests[(method, route, str(status))] += 1
        self.request_seconds.observe((method, route), seconds)

    def observe_event(self, event: Event) -> None:
        """Follow runs through their events: a start, then an end with its status."""
        if isinstance(event, RunStarted):
            self._starts.setdefault(event.run_id, event.ts)
        elif isinstance(event, RunEnded):
            started = self._starts.pop(event.run_id, None)
            self.runs[event.status] += 1
            if started is not None:
                self.run_seconds.observe((event.status,), max(0.0, event.ts - started))

    def render(self, *, executing: int, queued: int) -> str:
        """The Prometheus text exposition."""
        out = [
            "# HELP podium_http_requests_total HTTP requests by method, route and status.",
            "# TYPE podium_http_requests_total counter",
        ]
        for (method, route, status), count in sorted(self.requests.items()):
            out.append(
                f'podium_http_requests_total{{method="{method}",route="{_escape(route)}",status="{status}"}} {count}'
            )
        out += [
            "# HELP podium_http_request_seconds Time to the response's start.",
            "# TYPE podium_http_request_seconds histogram",
        ]
        out += self.request_seconds.lines("podium_http_request_seconds", ("method", "route"))
        out += ["# HELP podium_runs_total Runs that ended, by status.", "# TYPE podium_runs_total counter"]
        out += [f'podium_runs_total{{status="{_escape(s)}"}} {n}' for s, n in sorted(self.runs.items())]
        out += ["# HELP podium_run_seconds Duration of runs, by status.", "# TYPE podium_run_seconds histogram"]
        out += self.run_seconds.lines("podium_run_seconds", ("status",))
        out += [
            "# HELP podium_runs_executing Runs executing in this process.",
            "# TYPE podium_runs_executing gauge",
            f"podium_runs_executing {executing}",
            "# HELP podium_runs_queued Runs waiting for their thread (queue depth).",
            "# TYPE podium_runs_queued gauge",
            f"podium_runs_queued {queued}",
        ]
        return "\n".join(out) + "\n"


def timing_middleware(
    metrics: Metrics,
) -> Callable[[Request, Callable[[Request], Awaitable[Response]]], Awaitable[Response]]:
    """An HTTP middleware counting every request in ``metrics`` by its route template."""

    async def measure(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        start = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        template = getattr(route, "path", None) or "unmatched"
        metrics.observe_request(request.method, template, response.status_code, time.perf_counter() - start)
        return response

    return measure


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.podium
    return state


@router.get("/health", summary="Readiness: the store answers")
async def health(request: Request) -> JSONResponse:
    """200 ``{"status": "ok"}`` when the store answers, else 503 with the reason."""
    try:
        await _state(request).store.get_thread("__podium_health__")
    except PodiumError as exc:
        return JSONResponse({"status": "unavailable", "detail": f"the store does not answer: {exc}"}, status_code=503)
    return JSONResponse({"status": "ok"})


@router.get("/info", summary="Version and what the server offers")
async def info(request: Request) -> dict[str, Any]:
    """The version, uptime and authentication mode (no user data)."""
    from podium import __version__

    state = _state(request)
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
    """Send Podium's logs to stderr as JSON lines at ``level``; the ``podium.server`` logger.

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
    return logging.getLogger("podium.server")


def uvicorn_log_config(level: str = "info") -> dict[str, Any]:
    """A ``logging.config`` dictionary that makes uvicorn's own and access logs JSON lines too."""
    formatter = {"()": f"{__name__}._JsonFormatter"}
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    loggers = {
        name: {"handlers": ["json"], "level": level.upper(), "propagate": False}
        for name in ("uvicorn", "uvicorn.access")
    }
    loggers["uvicorn.error"] = {"level": level.upper()}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": formatter},
        "handlers": {"json": handler},
        "loggers": loggers,
    }
