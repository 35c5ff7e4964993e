"""A desk of tasks (seed 003): a coordinator delegates to sub-tasks, which use tools and ask you questions.

The tree::

    coordinator                 (LLM; routes each request with "TO[name]:")
    ├── calculator              (LLM + tools multiply, add: a worker task that uses a tool)
    └── planner                 (LLM; asks you a question, then delegates)
        └── researcher          (LLM + tool get_weather: the third level)

Run it with ``podium chat tasks-demo``. Offline it replays ``cassettes/tasks_demo.json``, and answers requests the
cassette does not hold with the rule-based stand-in below (so any question works offline); with ``PODIUM_MODEL`` set
it talks to a real model. Try: "What is 12 times 7?", "What is 1250 plus 380?", "Plan a day in Lisbon" (the planner
asks whether you prefer museums or beaches: answer one of them), "Plan a day in Oslo".

The weather table is a stand-in for a real weather service. Re-record the cassette (from the rule-based stand-in
below, or a real model when ``PODIUM_MODEL`` is set) with ``python examples/tasks_demo.py --record``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from examples.trip import get_weather  # the same stand-in weather service
from podium import (
    AIMessage,
    Expectation,
    HumanMessage,
    Message,
    Model,
    ModelRequest,
    Runtime,
    Settings,
    ToolMessage,
)
from podium.app import App
from podium.models.replay import ReplayModel
from podium.orchestration.tasks import ResponderAgent, Task, with_guidance

CASSETTE = Path(__file__).parent / "cassettes" / "tasks_demo.json"

COORDINATOR = (
    "You are the coordinator of a small desk. Send arithmetic to the calculator by starting your reply with "
    "'TO[calculator]:', and day plans to the planner with 'TO[planner]:'. When a helper answers, give the user "
    "the final answer starting with 'DONE'. Otherwise, answer briefly yourself, also starting with 'DONE' (a reply "
    "without it is passed on to the first helper)."
)
CALCULATOR = "You are the calculator. Use the tools for every computation, then state the result in one sentence."
PLANNER = (
    "You plan a day in a city. First ask the user, starting with '@user', whether they prefer museums or beaches. "
    "Then ask the researcher for the weather with 'TO[researcher]:'. Then give the plan, starting with 'DONE'."
)
RESEARCHER = "You look up today's weather with get_weather and report it in one sentence."


# Stand-in for a weather service: today's conditions for a few cities.
def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: the first factor.
        b: the second factor.
    """
    return a * b


def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: the first term.
        b: the second term.
    """
    return a + b


def build(model: Model) -> Task:
    """The task tree around ``model`` (one model for every agent, as a chat app has)."""
    if isinstance(model, ReplayModel):
        # Only requests recorded exactly: a turn alone could send "museums" for Paris to the recording made for Oslo.
        # Anything else goes to the rule-based stand-in below, so any question works offline.
        from podium.testing import FunctionModel

        model = ReplayModel(model.path, match="exact", fallback=FunctionModel(stand_in, name="stand-in"))
    calculator = Task(
        ResponderAgent(
            "calculator",
            model,
            prompt=CALCULATOR,
            tools=[
                with_guidance(multiply, instructions="for products", examples=[{"a": 6, "b": 7}]),
                with_guidance(add, instructions="for sums", examples=[{"a": 2, "b": 3}]),
            ],
        ),
        history="restart",
        description="Does arithmetic with tools.",
    )
    researcher = Task(ResponderAgent("researcher", model, prompt=RESEARCHER, tools=[get_weather]), history="restart")
    planner = Task(
        ResponderAgent(
            "planner",
            model,
            prompt=PLANNER,
            user_expectation=Expectation(type="choice", options=["museums", "beaches"]),
        ),
        sub_tasks=[researcher],
        history="restart",
        description="Plans a day in a city.",
    )
    return Task(ResponderAgent("coordinator", model, prompt=COORDINATOR), sub_tasks=[calculator, planner])


app = App(
    name="tasks-demo",
    build=build,
    cassette=CASSETTE,
    welcome="A desk of tasks: ask 'What is 12 times 7?', 'What is 1250 plus 380?' or 'Plan a day in Lisbon'.",
)

# --- recording --------------------------------------------------------------------------------------------------

# The conversations recorded into the cassette: each a list of human lines (answers to questions included).
SCRIPT = [
    ["What is 12 times 7?", "What is 1250 plus 380?"],
    ["Plan a day in Lisbon", "beaches"],
    ["Plan a day in Oslo", "museums"],
]

_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _coordinator(messages: list[Message]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, HumanMessage) and last.name in ("calculator", "planner"):
        return AIMessage(content=f"DONE {last.content}")
    text = last.content if isinstance(last, HumanMessage) else ""
    if len(_NUMBERS.findall(text)) >= 2:
        return AIMessage(content=f"TO[calculator]: {text}")
    if "plan" in text.lower():
        return AIMessage(content=f"TO[planner]: {text}")
    return AIMessage(content="DONE I can do arithmetic ('What is 12 times 7?') or plan a day ('Plan a day in Lisbon').")


def _calculator(messages: list[Message]) -> AIMessage:
    from podium.testing import tool_call

    last = messages[-1]
    if isinstance(last, ToolMessage):
        call = next(m for m in reversed(messages) if isinstance(m, AIMessage)).tool_calls[0]
        args = json.loads(call.arguments)
        a, b = float(args["a"]), float(args["b"])
        sign = "×" if call.name == "multiply" else ("-" if b < 0 else "+")
        result = _number(float(last.content))
        return AIMessage(content=f"{_number(a)} {sign} {_number(abs(b) if sign == '-' else b)} = {result}.")
    text = last.content
    a, b = (float(n) for n in _NUMBERS.findall(text)[:2])
    if "minus" in text:
        return AIMessage(tool_calls=[tool_call("add", {"a": a, "b": -b})])
    name = "add" if "plus" in text or "+" in text else "multiply"
    return AIMessage(tool_calls=[tool_call(name, {"a": a, "b": b})])


def _planner(messages: list[Message]) -> AIMessage:
    request = next(m.content for m in messages if isinstance(m, HumanMessage))
    city = request.rstrip("?.!").split(" in ")[-1].strip()
    last = messages[-1]
    if isinstance(last, HumanMessage) and last.name == "researcher":
        choice = next(m.content for m in messages[2:] if isinstance(m, HumanMessage) and m.name is None)
        return AIMessage(
            content=f"DONE Your day in {city}: a walk through the old town in the morning, lunch by the river, "
            f"the afternoon at the {choice}. {last.content}"
        )
    if len(messages) <= 2:
        return AIMessage(content=f"@user Do you prefer museums or beaches in {city}?")
    return AIMessage(content=f"TO[researcher]: What is the weather in {city} today?")


def _researcher(messages: list[Message]) -> AIMessage:
    from podium.testing import tool_call

    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(content=f"Today in {last.content}")
    city = last.content.rstrip("?").split(" in ")[-1].replace(" today", "").strip()
    return AIMessage(tool_calls=[tool_call("get_weather", {"city": city})])


def stand_in(messages: list[Message], request: ModelRequest) -> AIMessage:
    """A rule-based stand-in for a model, used to record the shipped cassette without a network."""
    system = messages[0].content if messages and messages[0].kind == "system" else ""
    for prompt, answer in ((COORDINATOR, _coordinator), (CALCULATOR, _calculator), (PLANNER, _planner)):
        if system.startswith(prompt):
            return answer(messages)
    return _researcher(messages)


async def record(path: Path = CASSETTE) -> None:
    """Record the cassette from a real model when PODIUM_MODEL is set, else from the stand-in."""
    from podium.testing import FunctionModel, RecordingModel

    await asyncio.to_thread(path.unlink, missing_ok=True)
    model = RecordingModel(Settings.load().model_or_none() or FunctionModel(stand_in, name="stand-in"), path)
    runtime = Runtime()
    task = build(model)
    for lines in SCRIPT:
        thread = None
        for line in lines:
            result = await runtime.send(task, line, thread_id=thread)
            thread = result.thread_id
            print(json.dumps({"human": line, "status": result.status, "output": result.output}, ensure_ascii=False))


if __name__ == "__main__":
    if "--record" in sys.argv:
        asyncio.run(record())
    else:
        print(__doc__)
