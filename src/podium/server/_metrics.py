"""What ``/metrics`` counts in this process: HTTP requests and runs, with Prometheus histograms of their latency."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from podium.events import Event, RunEnded, RunStarted

__all__ = ["Metrics"]

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
