"""Helpers of the Task tests, and the child process of the restart test.

As a script: ``python tasks_support.py start|resume DB LOG [ANSWER]`` runs (or resumes) a three-level task tree on
the SQLite file DB whose third level asks the human; LOG collects one line per model call and tool execution.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

from podium import AIMessage, HumanMessage, Message, ModelRequest, Runtime, SQLiteStore, SystemMessage, ToolMessage
from podium.models.test import Reply
from podium.orchestration.tasks.task import ResponderAgent, Task
from podium.testing import FunctionModel, tool_call

THREAD = "restart-thread"


def routed(**scripts: Callable[[list[Message]], Reply]) -> FunctionModel:
    """A model answering each agent with ``scripts[name](messages)``, where ``name`` opens the system prompt."""

    def answer(messages: list[Message], request: ModelRequest) -> Reply:
        first = messages[0]
        assert isinstance(first, SystemMessage), "every test agent has a system prompt naming it"
        return scripts[first.content.split()[0]](messages)

    return FunctionModel(answer)


def requests_of(model: FunctionModel, name: str) -> list[list[tuple[str, str]]]:
    """The messages (kind, content) of every request ``model`` got from the agent ``name``, system prompt left out."""
    return [
        [(m.kind, m.content) for m in request.messages[1:]]
        for request in model.requests
        if request.messages[0].content.split()[0] == name
    ]


def restart_tree(model: FunctionModel, log: Path) -> Task:
    """desk → planner → scout; the scout asks the human which city, then uses its weather tool."""

    def get_weather(city: str) -> str:
        """Today's weather in a city."""
        with log.open("a") as out:
            out.write(json.dumps({"what": "tool", "city": city}) + "\n")
        return f"{city}: 24 °C, sunny"

    scout = Task(ResponderAgent("scout", model, prompt="scout", tools=[get_weather]))
    planner = Task(ResponderAgent("planner", model, prompt="planner"), sub_tasks=[scout])
    return Task(ResponderAgent("desk", model, prompt="desk"), sub_tasks=[planner])


def restart_model(log: Path) -> FunctionModel:
    """The scripted model of :func:`restart_tree`, logging every call."""

    def note(name: str, messages: list[Message]) -> None:
        with log.open("a") as out:
            out.write(json.dumps({"what": "model", "agent": name, "seen": len(messages)}) + "\n")

    def desk(messages: list[Message]) -> Reply:
        note("desk", messages)
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.name == "planner":
            return f"DONE {last.content}"
        return "TO[planner]: plan my trip"

    def planner(messages: list[Message]) -> Reply:
        note("planner", messages)
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.name == "scout":
            return f"DONE Plan: go where it is {last.content}"
        return "TO[scout]: find a sunny city"

    def scout(messages: list[Message]) -> Reply:
        note("scout", messages)
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return last.content
        if len(messages) == 2:
            return "@user Which city should I check?"
        return AIMessage(tool_calls=[tool_call("get_weather", {"city": messages[-1].content}, id="call_w")])

    return routed(desk=desk, planner=planner, scout=scout)


def main(mode: str, db: str, log_path: str, answer: str = "") -> None:
    log = Path(log_path)

    async def go() -> None:
        store = SQLiteStore(db)
        runtime = Runtime(store)
        task = restart_tree(restart_model(log), log)
        if mode == "start":
            result = await task.run("Plan a sunny trip", runtime=runtime, thread_id=THREAD)
        else:
            result = await task.resume(answer, runtime=runtime, thread_id=THREAD)
        await store.close()
        report = {"outcome": result.outcome, "content": result.content, "paths": [i.path for i in result.interrupts]}
        print(json.dumps(report))

    asyncio.run(go())


if __name__ == "__main__":
    main(*sys.argv[1:5])
