"""OpenTelemetry tracing of runs, by the GenAI semantic conventions (``spans.py``).

Off unless configured: give a :class:`RunTracer` to a run (``on_event=``), with the application's tracer provider
or the global one. :func:`configure` sets up the OpenTelemetry SDK with an OTLP exporter (the ``tracing`` extra).
"""

from __future__ import annotations

from typing import Any

from podium.errors import UsageError
from podium.tracing.spans import RunTracer

__all__ = ["RunTracer", "configure"]


def configure(endpoint: str | None = None, *, service_name: str = "podium", exporter: Any = None) -> RunTracer:
    """A tracer whose spans go to an OTLP/HTTP collector (or to ``exporter``), batched.

    Args:
        endpoint: the collector's traces URL (default: ``OTEL_EXPORTER_OTLP_ENDPOINT`` or the SDK's default).
        service_name: the ``service.name`` resource attribute.
        exporter: a span exporter to use instead of OTLP (an in-memory one in tests).

    Raises:
        UsageError: the ``tracing`` extra is not installed.
    """
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:  # pragma: no cover - the dev extra installs it
        raise UsageError("tracing needs the 'tracing' extra: pip install 'podium[tracing]'") from None
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=endpoint)
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return RunTracer(provider)
