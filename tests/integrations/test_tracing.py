"""OpenTelemetry spans of real runs, exported to an in-memory exporter and asserted as data."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from examples import faang, trip
from podium import MemoryStore, Runtime
from podium.models.replay import ReplayModel
from podium.tracing import RunTracer, configure


def traced() -> tuple[RunTracer, InMemorySpanExporter, TracerProvider]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return RunTracer(provider), exporter, provider


def tree(spans: tuple[ReadableSpan, ...]) -> list[Any]:
    """The spans as nested ``[name, [children...]]``, children in start order."""
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        children.setdefault(span.parent.span_id if span.parent else None, []).append(span)

    def build(span: ReadableSpan) -> Any:
        assert span.context is not None
        kids = sorted(children.get(span.context.span_id, []), key=lambda s: s.start_time or 0)
        return [span.name, [build(k) for k in kids]] if kids else span.name

    return [build(root) for root in children[None]]


async def test_the_faang_run_is_one_trace_with_the_agent_tree_as_its_span_tree() -> None:
    tracer, exporter, _ = traced()
    app = faang.app
    assert app.cassette is not None
    result = await Runtime(MemoryStore()).run(app.build(ReplayModel(app.cassette)), faang.QUESTION, on_event=tracer)
    assert result.status == "completed"
    spans = exporter.get_finished_spans()
    assert len({s.context.trace_id for s in spans if s.context}) == 1
    assert tree(spans) == [
        [
            "invoke_workflow supervisor",
            [
                [
                    "invoke_agent supervisor",
                    [
                        "chat",
                        [
                            "execute_tool transfer_to_research_expert",
                            [["invoke_agent research_expert", ["chat", "execute_tool web_search", "chat"]]],
                        ],
                        "execute_tool transfer_back_to_supervisor",
                        "chat",
                        [
                            "execute_tool transfer_to_math_expert",
                            [
                                [
                                    "invoke_agent math_expert",
                                    [
                                        "chat",
                                        "execute_tool add",
                                        "chat",
                                        "execute_tool add",
                                        "chat",
                                        "execute_tool add",
                                        "chat",
                                        "execute_tool add",  # Alphabet's, which the seed's model skipped
                                        "chat",
                                    ],
                                ]
                            ],
                        ],
                        "execute_tool transfer_back_to_supervisor",
                        "chat",
                    ],
                ]
            ],
        ]
    ]
    by_name = {s.name: s for s in spans}
    root = by_name["invoke_workflow supervisor"]
    assert dict(root.attributes or {}) == {
        "gen_ai.operation.name": "invoke_workflow",
        "gen_ai.workflow.name": "supervisor",
        "podium.run.id": result.run_id,
        "podium.run.status": "completed",
        "podium.run.attempt": 1,
        "gen_ai.usage.input_tokens": result.usage.input_tokens,
        "gen_ai.usage.output_tokens": result.usage.output_tokens,
    }
    # the recorded usage, Alphabet's addition included
    assert (result.usage.input_tokens, result.usage.output_tokens) == (2200, 178)
    math = by_name["invoke_agent math_expert"]
    attributes = dict(math.attributes or {})
    assert str(attributes.pop("podium.path")).startswith("supervisor/call_")
    assert attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "math_expert",
        # an agent's usage: its own model calls and its agents'
        "gen_ai.usage.input_tokens": 230 + 247 + 265 + 283 + 300,
        "gen_ai.usage.output_tokens": 14 + 8 + 8 + 8 + 17,
    }
    chats = [s for s in spans if s.name == "chat"]
    assert [
        (s.attributes or {})["gen_ai.usage.input_tokens"] for s in sorted(chats, key=lambda s: s.start_time or 0)
    ] == [90, 86, 174, 223, 230, 247, 265, 283, 300, 302]
    first_chat = min(chats, key=lambda s: s.start_time or 0)
    assert dict(first_chat.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.agent.name": "supervisor",
        "gen_ai.usage.input_tokens": 90,
        "gen_ai.usage.output_tokens": 8,
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "podium.path": "supervisor",
    }
    search = by_name["execute_tool web_search"]
    assert {k: v for k, v in (search.attributes or {}).items() if k != "gen_ai.tool.call.id"} == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "web_search",
        "gen_ai.tool.type": "function",
    }
    # every span lies within its parent
    spans_by_id = {s.context.span_id: s for s in spans if s.context}
    for span in spans:
        if span.parent is not None:
            parent = spans_by_id[span.parent.span_id]
            assert parent.start_time <= span.start_time <= span.end_time <= parent.end_time, span.name  # type: ignore[operator]


async def test_interrupts_errors_content_and_an_enclosing_span() -> None:
    tracer, exporter, provider = traced()
    tracer.capture_content = True
    app = trip.app
    assert app.cassette is not None
    runtime = Runtime(MemoryStore())
    agent = app.build(ReplayModel(app.cassette))
    with provider.get_tracer("test").start_as_current_span("request") as request:
        asked = await runtime.run(agent, "Save a note: pack sunglasses for Lisbon", on_event=tracer)
    spans = exporter.get_finished_spans()
    root = next(s for s in spans if s.name.startswith("invoke_workflow"))
    assert root.parent is not None and root.parent.span_id == request.get_span_context().span_id
    assert (root.attributes or {})["podium.run.status"] == "interrupted"
    assert (root.attributes or {})["podium.run.input"] == "Save a note: pack sunglasses for Lisbon"
    tool = next(s for s in spans if s.name == "execute_tool save_trip_note")
    (event,) = tool.events
    assert event.name == "podium.interrupt"
    assert dict(event.attributes or {}) == {
        "podium.interrupt.prompt": "Save this note to your trip notebook: 'pack sunglasses for Lisbon'?"
    }
    exporter.clear()
    done = await runtime.resume(agent, asked.thread_id, "yes", on_event=tracer)
    spans = exporter.get_finished_spans()
    root = next(s for s in spans if s.name.startswith("invoke_workflow"))
    assert root.parent is None and (root.attributes or {})["podium.run.output"] == done.output
    assert (root.attributes or {})["podium.run.attempt"] == 2


async def test_a_failing_tool_and_a_failed_run_are_errors() -> None:
    from podium import AIMessage, ReactAgent
    from podium.testing import ScriptedModel, tool_call

    def explode() -> str:
        """Always fails."""
        raise RuntimeError("boom")

    tracer, exporter, _ = traced()
    model = ScriptedModel([AIMessage(tool_calls=[tool_call("explode", {})])])  # then the script runs out: the run fails
    result = await Runtime(MemoryStore()).run(ReactAgent("a", model, [explode]), "go", on_event=tracer)
    assert result.status == "failed"
    spans = {s.name: s for s in exporter.get_finished_spans()}
    tool = spans["execute_tool explode"]
    assert tool.status.status_code == trace.StatusCode.ERROR and "boom" in (tool.status.description or "")
    assert (tool.attributes or {})["error.type"] == "tool_error"
    root = spans["invoke_workflow a"]
    assert root.status.status_code == trace.StatusCode.ERROR


def test_configure_sends_spans_to_the_given_exporter() -> None:
    exporter = InMemorySpanExporter()
    tracer = configure(exporter=exporter, service_name="desk")
    provider = tracer._tracer  # the SDK tracer carries its provider's resource
    assert provider.resource.attributes["service.name"] == "desk"  # type: ignore[attr-defined]
    otlp = configure("http://127.0.0.1:9/v1/traces")
    assert isinstance(otlp, RunTracer)
