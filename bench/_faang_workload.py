"""The FAANG workload of ``bench/faang.py``: the scripted model, the supervisor it drives, and prompt accounting.

The model is stateless: each reply depends only on the tools offered and the messages shown, so concurrent runs
share one instance. Prompt characters are counted the way the baseline counts them (``len(json.dumps(messages))``
with the messages in the layout of langchain's ``convert_to_openai_messages``).
"""

from __future__ import annotations

import asyncio
import json
import resource
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT.parent / "shared" / "bench" / "langgraph_supervisor_faang.py"

QUESTION = "what's the combined headcount of the FAANG companies in 2024?"
FINAL_MATH = "The combined headcount of the FAANG companies in 2024 is 1,977,586."
FINAL_SUPERVISOR = (
    "The combined headcount of the FAANG companies (Meta, Apple, Amazon, Netflix, "
    "Alphabet) in 2024 is 1,977,586 employees."
)
RESEARCH_TEXT = (
    "FAANG headcounts for 2024:\n"
    "- Meta (Facebook): 67,317\n"
    "- Apple: 164,000\n"
    "- Amazon: 1,551,000\n"
    "- Netflix: 14,000\n"
    "- Alphabet (Google): 181,269\n"
    "Summing them is a job for the math expert."
)
SEARCH_RESULT = (
    "2024 employee headcounts of the FAANG companies:\n"
    "1. Meta (Facebook): 67,317 employees.\n"
    "2. Apple: 164,000 employees.\n"
    "3. Amazon: 1,551,000 employees.\n"
    "4. Netflix: 14,000 employees.\n"
    "5. Alphabet (Google): 181,269 employees."
)
ADD_STEPS = [(67317, 164000), (231317, 1551000), (1782317, 14000), (1796317, 181269)]
SUPERVISOR_PROMPT = (
    "You supervise two experts: research_expert (current events, web search) and "
    "math_expert (arithmetic). Delegate research to research_expert and any "
    "calculation to math_expert, then answer the user."
)
RESEARCH_PROMPT = "You are an expert researcher with a web search tool. Never do arithmetic yourself."
MATH_PROMPT = "You are a math expert. Use exactly one tool call at a time."
# Scoped policy: the tasks the scripted supervisor writes. As the handoff tool's ``task`` description asks, a task
# quotes the user's question and carries the facts the agent needs (the math task: the research result's figures).
RESEARCH_TASK = QUESTION + " Find each company's 2024 headcount."

# --------------------------------------------------------------------------------------------------------------------
# Prompt accounting: the baseline's measure (messages as langchain's convert_to_openai_messages lays them out).
# --------------------------------------------------------------------------------------------------------------------


class Stats:
    """Model calls and prompt characters of one run, per agent."""

    def __init__(self) -> None:
        self.calls = 0
        self.prompt_chars = 0
        self.prompt_messages = 0
        self.tool_schema_chars = 0
        self.wire_chars = 0
        self.per_agent: dict[str, list[int]] = {}

    def as_dict(self) -> dict[str, Any]:
        return {
            "model_calls": self.calls,
            "prompt_chars": self.prompt_chars,
            "prompt_messages": self.prompt_messages,
            "tool_schema_chars": self.tool_schema_chars,
            "wire_chars": self.wire_chars,
            "per_agent": {
                k: {"calls": v[0], "prompt_chars": v[1], "prompt_messages": v[2]} for k, v in self.per_agent.items()
            },
        }


ACCOUNT: list[Stats | None] = [None]


def lc_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """``messages`` in the layout of langchain_core's ``convert_to_openai_messages`` (the baseline's measure)."""
    from podium import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            out.append({"role": "system", "content": m.content})
            continue
        d: dict[str, Any] = {"role": {HumanMessage: "user", AIMessage: "assistant", ToolMessage: "tool"}[type(m)]}
        if getattr(m, "name", None):
            d["name"] = m.name
        if isinstance(m, AIMessage) and m.tool_calls:
            d["tool_calls"] = [
                {"type": "function", "id": c.id, "function": {"name": c.name, "arguments": c.arguments}}
                for c in m.tool_calls
            ]
        if isinstance(m, ToolMessage):
            d["tool_call_id"] = m.tool_call_id
        d["content"] = m.content
        out.append(d)
    return out


def _account(messages: list[Any], request: Any, agent: str) -> None:
    stats = ACCOUNT[0]
    if stats is None:  # (the timed runs: nothing to import or count)
        return
    from podium.models.openai_format import request_to_openai, tool_to_openai

    chars = len(json.dumps(lc_messages(messages), ensure_ascii=False))
    stats.calls += 1
    stats.prompt_chars += chars
    stats.prompt_messages += len(messages)
    stats.wire_chars += len(json.dumps(request_to_openai(request)["messages"], ensure_ascii=False))
    stats.tool_schema_chars += len(json.dumps([tool_to_openai(t) for t in request.tools], ensure_ascii=False))
    row = stats.per_agent.setdefault(agent, [0, 0, 0])
    row[0] += 1
    row[1] += chars
    row[2] += len(messages)


# --------------------------------------------------------------------------------------------------------------------
# The workload
# --------------------------------------------------------------------------------------------------------------------


def scripted_reply(messages: list[Any], request: Any) -> Any:
    """The scripted model: the reply depends only on the offered tools and the messages shown."""
    from podium import AIMessage, HumanMessage, ModelResponse, ToolCall, ToolMessage, Usage

    def call(name: str, arguments: dict[str, Any], tag: str) -> ModelResponse:
        message = AIMessage(tool_calls=[ToolCall(id=f"call_{tag}", name=name, arguments=json.dumps(arguments))])
        return ModelResponse(message=message, usage=Usage(0, 0, 1), finish_reason="tool_calls")

    def text(content: str) -> ModelResponse:
        return ModelResponse(message=AIMessage(content=content), usage=Usage(0, 0, 1), finish_reason="stop")

    tools = request.tools
    names = {t.name for t in tools}
    if "transfer_to_research_expert" in names:
        _account(messages, request, "supervisor")
        scoped = bool(tools[0].parameters.get("required"))
        answered = {m.name for m in messages if isinstance(m, AIMessage) and not m.tool_calls and m.name}
        results = [m for m in messages if isinstance(m, ToolMessage) and m.name.startswith("transfer_to_")]
        answered |= {m.name[len("transfer_to_") :] for m in results if not m.content.startswith("Successfully")}
        notes = "\n".join(m.content for m in messages if isinstance(m, HumanMessage) and "Done so far:" in m.content)
        answered |= {
            line.split("(")[0][len("transfer_to_") :] for line in notes.splitlines() if line.startswith("transfer_to_")
        }
        if "research_expert" not in answered:
            return call("transfer_to_research_expert", {"task": RESEARCH_TASK} if scoped else {}, "sup_1")
        if "math_expert" not in answered:
            if not scoped:
                return call("transfer_to_math_expert", {}, "sup_2")
            research = next(
                (
                    m.content
                    for m in messages
                    if (isinstance(m, ToolMessage) and m.name == "transfer_to_research_expert")
                    or (isinstance(m, AIMessage) and m.name == "research_expert" and not m.tool_calls)
                ),
                notes,  # folded into a "Done so far" note
            )
            figures = "; ".join(line[2:] for line in research.splitlines() if line.startswith("- "))
            return call("transfer_to_math_expert", {"task": f"{QUESTION} Add up: {figures}."}, "sup_2")
        return text(FINAL_SUPERVISOR)
    if "web_search" in names:
        _account(messages, request, "research_expert")
        seen = sum(1 for m in messages if isinstance(m, ToolMessage) and m.name == "web_search")
        seen += sum(m.content.count("web_search(") for m in messages if isinstance(m, HumanMessage))  # folded
        return call("web_search", {"query": "FAANG headcount 2024"}, "res_1") if seen == 0 else text(RESEARCH_TEXT)
    if "add" in names:
        _account(messages, request, "math_expert")
        # results it is shown: tool messages, and the lines of a "Done so far" note (scoped workers' folded rounds)
        seen = sum(1 for m in messages if isinstance(m, ToolMessage) and m.name in names)
        seen += sum(
            m.content.count(") -> ") for m in messages if isinstance(m, HumanMessage) and "Done so far:" in m.content
        )
        if seen < len(ADD_STEPS):
            a, b = ADD_STEPS[seen]
            return call("add", {"a": a, "b": b}, f"math_{seen + 1}")
        return text(FINAL_MATH)
    raise RuntimeError(f"unknown caller with tools {sorted(names)}")


def build(latency_s: float = 0.0, *, declared: bool = True, **options: Any) -> Any:
    """The FAANG supervisor around the scripted model (``options`` go to ``create_supervisor``). Its three tools
    change nothing and never wait (a canned search and two sums), and say so: ``read_only`` (their calls are not
    written ahead of them) and ``inline`` (they run on the event loop's thread, not a tool thread);
    ``declared=False`` leaves them undeclared, as any tool is by default."""
    from podium import ReactAgent, tool
    from podium.orchestration.supervisor import create_supervisor
    from podium.testing import FunctionModel

    if latency_s:

        async def slow(messages: list[Any], request: Any) -> Any:
            await asyncio.sleep(latency_s)
            return scripted_reply(messages, request)

        model = FunctionModel(slow, name="scripted-faang")
    else:
        model = FunctionModel(scripted_reply, name="scripted-faang")

    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    def multiply(a: float, b: float) -> float:
        """Multiply two numbers."""
        return a * b

    def web_search(query: str) -> str:
        """Search the web for information."""
        return SEARCH_RESULT

    as_tool = tool(read_only=declared, inline=declared)
    math_agent = ReactAgent("math_expert", model, [as_tool(add), as_tool(multiply)], prompt=MATH_PROMPT)
    research_agent = ReactAgent("research_expert", model, [as_tool(web_search)], prompt=RESEARCH_PROMPT)
    return create_supervisor([research_agent, math_agent], model=model, prompt=SUPERVISOR_PROMPT, **options)


def _model_of(agent: Any) -> Any:
    return agent.model


async def run_one(runtime: Any, agent: Any) -> Any:
    result = await runtime.run(agent, QUESTION)
    if result.output != FINAL_SUPERVISOR:
        raise AssertionError(f"unexpected outcome {result.status}: {result.output or result.reason}")
    model = _model_of(agent)
    if len(model.requests) > 10_000:  # FunctionModel keeps every request; forget them between runs
        model.requests.clear()
    return result


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def accounting() -> list[dict[str, Any]]:
    """Prompt characters of one run for each policy / option."""
    from podium import Runtime

    variants: list[tuple[str, dict[str, Any]]] = [
        ("context=scoped (default)", {}),
        ("context=scoped, no handoff msgs", {"add_handoff_messages": False}),
        ("context=shared, last_message", {"context": "shared"}),
        ("context=shared, full_history", {"context": "shared", "output_mode": "full_history"}),
        ("context=shared, no handoff msgs", {"context": "shared", "add_handoff_messages": False}),
    ]
    rows = []
    for label, options in variants:
        ACCOUNT[0] = stats = Stats()
        asyncio.run(run_one(Runtime(), build(**options)))
        ACCOUNT[0] = None
        rows.append({"variant": label, **stats.as_dict()})
    return rows
