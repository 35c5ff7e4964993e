"""The FAANG example of seed 001: a supervisor with a research expert and a math expert.

Run it with ``podium chat faang`` and ask "what's the combined headcount of the FAANG companies in 2024?".
Offline it replays ``cassettes/faang.json``, built from the model responses of the seed's trace, and answers
1,977,586; with ``PODIUM_MODEL`` set it talks to a real model.

The app uses the ``shared`` context policy, in which the model requests are those of the seed's trace (the
langgraph-supervisor layout). With a real model, ``PODIUM_FAANG_CONTEXT=scoped`` switches to Podium's default
policy, where a handoff carries a task and each expert sees only that task (``build(model, "scoped")`` from Python;
:func:`seed_reply` answers in that policy too). Re-record the cassette with ``python examples/faang.py --record``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from podium import AIMessage, HumanMessage, Message, Model, ModelRequest, ReactAgent, Runtime, ToolCall, ToolMessage
from podium.app import App
from podium.orchestration.supervisor import ContextPolicy, Supervisor, create_supervisor

CASSETTE = Path(__file__).parent / "cassettes" / "faang.json"

QUESTION = "what's the combined headcount of the FAANG companies in 2024?"

SUPERVISOR_PROMPT = (
    "You are a team supervisor managing a research expert and a math expert. "
    "For current events, use research_agent. "
    "For math problems, use math_agent."
)
RESEARCH_PROMPT = "You are a world class researcher with access to web search. Do not do any math."
MATH_PROMPT = "You are a math expert. Always use one tool at a time."

# The seed's stand-in search result (a real search service would go here).
SEARCH_RESULT = (
    "Here are the headcounts for each of the FAANG companies in 2024:\n"
    "1. **Facebook (Meta)**: 67,317 employees.\n"
    "2. **Apple**: 164,000 employees.\n"
    "3. **Amazon**: 1,551,000 employees.\n"
    "4. **Netflix**: 14,000 employees.\n"
    "5. **Google (Alphabet)**: 181,269 employees."
)


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


def web_search(query: str) -> str:
    """Search the web for information."""
    return SEARCH_RESULT


def build(model: Model, context: ContextPolicy | None = None) -> Supervisor:
    """The FAANG supervisor around ``model`` (``context`` defaults to ``PODIUM_FAANG_CONTEXT`` or ``shared``)."""
    chosen = context or os.environ.get("PODIUM_FAANG_CONTEXT", "shared")
    if chosen not in ("shared", "scoped"):
        chosen = "shared"
    math_agent = ReactAgent("math_expert", model, [add, multiply], prompt=MATH_PROMPT)
    research_agent = ReactAgent("research_expert", model, [web_search], prompt=RESEARCH_PROMPT)
    return create_supervisor(
        [research_agent, math_agent],
        model=model,
        prompt=SUPERVISOR_PROMPT,
        context="scoped" if chosen == "scoped" else "shared",
        description="Answers questions about companies with a researcher and a mathematician.",
    )


app = App(
    name="faang",
    build=build,
    cassette=CASSETTE,
    welcome="A supervisor with a research expert and a math expert. Ask: " + QUESTION,
)

# --- the seed's model responses -----------------------------------------------------------------------------------

RESEARCH_ANSWER = (
    "The individual headcounts of FAANG companies in 2024 are as follows: Meta has 67,317 employees, Apple has "
    "164,000 employees, Amazon has 1,551,000 employees, Netflix has 14,000 employees, and Alphabet has 181,269 "
    "employees. You can sum these figures to get the combined headcount."
)
FINAL_ANSWER = "The combined headcount of the FAANG companies in 2024 is 1,977,586."
# The seed's math expert adds three numbers, then answers with the total of all five (as recorded).
SEED_ADDS = [
    ("call_jd5esfvy2qsh9tdz23361pha", ' {\n        "a": 67317, \n        "b": 164000\n    }\n'),
    ("call_owov4sx70lmdpz7zooldnue3", ' {"a": 231317, "b": 1551000}'),
    ("call_w2tp827rhg290ekal228ei1c", ' {"a": 1782317, "b": 14000}'),
]
SCOPED_MATH_TASK = (
    "Add up these 2024 headcounts: Meta 67,317; Apple 164,000; Amazon 1,551,000; Netflix 14,000; Alphabet 181,269."
)


def _call(id: str, name: str, arguments: str) -> AIMessage:
    return AIMessage(tool_calls=[ToolCall(id=id, name=name, arguments=arguments)])


def seed_reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    """The seed trace's responses, chosen from what the caller is shown (stateless, like a model).

    The supervisor's last answer is not in the seed's trace; it repeats the math expert's answer.
    """
    tools = {t.name for t in request.tools}
    own = [m for m in messages if isinstance(m, ToolMessage) and m.name in tools]
    if "transfer_to_research_expert" in tools:
        scoped = any(t.parameters.get("required") for t in request.tools)
        answered = {m.name for m in messages if isinstance(m, AIMessage) and not m.tool_calls and m.name}
        answered |= {m.name.removeprefix("transfer_to_") for m in own if not m.content.startswith("Successfully")}
        notes = [m.content for m in messages if isinstance(m, HumanMessage) and "Done so far:" in m.content]
        answered |= {
            line.split("(")[0].removeprefix("transfer_to_")
            for note in notes
            for line in note.splitlines()
            if line.startswith("transfer_to_")
        }
        if "research_expert" not in answered:
            task = json.dumps({"task": "Find the headcount of each FAANG company in 2024."}) if scoped else " {}"
            return _call("call_fyew4c06vn9ide7nhk6sijws", "transfer_to_research_expert", task)
        if "math_expert" not in answered:
            task = json.dumps({"task": SCOPED_MATH_TASK}) if scoped else " {}"
            return _call("call_z9x3nnqjvnp9hxuehejkivgn", "transfer_to_math_expert", task)
        return AIMessage(content=FINAL_ANSWER)
    if "web_search" in tools:
        if not own and not any("web_search(" in m.content for m in messages if isinstance(m, HumanMessage)):
            arguments = ' {\n        "query": "Combined headcount of FAANG companies in 2024"\n    }\n'
            return _call("call_t52sv5g0zm4x1tft5hcnwjjs", "web_search", arguments)
        return AIMessage(content=RESEARCH_ANSWER)
    # results shown: own tool messages, plus the lines of a "Done so far" note (a scoped worker's folded rounds)
    done = len(own) + sum(m.content.count(") -> ") for m in messages if isinstance(m, HumanMessage))
    if done < len(SEED_ADDS):
        call_id, arguments = SEED_ADDS[done]
        return _call(call_id, "add", arguments)
    return AIMessage(content=FINAL_ANSWER)


async def record(path: Path = CASSETTE) -> None:
    """Record the cassette from the seed's responses, or from a real model when PODIUM_MODEL is set."""
    from podium import Settings
    from podium.testing import FunctionModel, RecordingModel

    path.unlink(missing_ok=True)  # noqa: ASYNC240 - a one-off script step
    model = RecordingModel(Settings.load().model_or_none() or FunctionModel(seed_reply, name="seed-001"), path)
    result = await Runtime().run(build(model, "shared"), HumanMessage(content=QUESTION))
    print(json.dumps({"status": result.status, "output": result.output}))


if __name__ == "__main__":
    if "--record" in sys.argv:
        asyncio.run(record())
    else:
        print(__doc__)
