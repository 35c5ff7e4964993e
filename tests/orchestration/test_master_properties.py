"""Property tests of the task-stack rules over random conversations and random tool outcomes.

A reference model of the rules (``specs/master_agent.md``, "The loop") runs next to the real orchestrator; after
every turn the persisted stack must equal the model's, and the bookkeeping must show that no task is lost, none is
resumed twice, and the stack is empty exactly when every started task completed or was abandoned.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.orchestration.master_support import Conversation

from podium import Expectation, MemoryStore, RunContext, Runtime, ToolMetadata
from podium.orchestration.master.agent import MasterAgent
from podium.orchestration.master.tools import MasterTool
from podium.orchestration.master.types import TaskEntry, TaskStack, ToolCallRequest, ToolContent, ToolInput

TOOLS = {
    "Flights": ("Books a flight.", ["book a flight", "I need a plane ticket"], "economy"),
    "Cars": ("Rents a car.", ["rent a car", "I need a rental car"], "sedan"),
    "Hotels": ("Reserves a hotel room.", ["reserve a hotel room", "I need a room"], "double"),
}
NAMES = list(TOOLS)


@dataclass
class Script:
    """The drawn outcomes, consumed one per tool invocation, and the log of invocations."""

    outcomes: list[bool]  # True: the tool asks (interrupt); False: it completes
    log: list[tuple[str, ToolInput, bool]] = field(default_factory=list)

    def next(self) -> bool:
        return self.outcomes.pop(0) if self.outcomes else False


class Scripted(MasterTool):
    def __init__(self, name: str, script: Script) -> None:
        description, examples, option = TOOLS[name]
        self.name = name
        self.description = description
        self.metadata = ToolMetadata(expose_to_user=True, can_generate_task=True, examples=examples)
        self.option = option
        self.script = script

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        asks = self.script.next()
        self.script.log.append((self.name, request, asks))
        if asks:
            expectation = Expectation(type="choice", options=[self.option])
            return ToolContent.ask(f"{self.name} needs: {self.option}?", expectation=expectation, state={"n": 1})
        return ToolContent(value=f"{self.name} done.")


actions = st.lists(
    st.one_of(
        st.just(("answer",)),
        st.just(("abandon",)),
        st.tuples(st.just("start"), st.sampled_from(NAMES)),
        st.tuples(st.just("start"), st.sampled_from(NAMES)),
    ),
    min_size=1,
    max_size=14,
)
outcomes = st.lists(st.sampled_from([True, True, False]), min_size=2, max_size=16)  # tools ask more than finish


async def play(moves: list[tuple[str, ...]], outcomes: list[bool]) -> None:
    script = Script(list(outcomes))
    conversation = Conversation(Runtime(MemoryStore()), MasterAgent([Scripted(n, script) for n in NAMES]))
    model: list[tuple[str, str]] = []  # (tool, call id), bottom first
    started: set[str] = set()
    completed: set[str] = set()
    abandoned: set[str] = set()
    resumed: list[tuple[str, int]] = []
    for move in moves:
        top = model[-1] if model else None
        if move[0] == "answer" and top is not None:
            text, target = TOOLS[top[0]][2], top
        elif move[0] == "abandon":
            text, target = "never mind", None
        else:
            name = move[1] if move[0] == "start" else NAMES[0]
            text = TOOLS[name][1][0]
            on_stack = next((entry for entry in reversed(model) if entry[0] == name), None)
            target = None if top is not None and top[0] == name else (on_stack or (name, ""))
        before = len(script.log)
        turn = await conversation.say(text)
        invoked = script.log[before:]
        if move[0] == "abandon":
            if model:
                abandoned.add(model.pop()[1])
            assert invoked == []
        elif target is None:  # the pending task's tool again, with text that does not fit: clarification
            assert invoked == [] and turn.decisions[0]["kind"] == "clarify"
        else:
            ((name, request, asks),) = invoked  # exactly one tool ran, the expected one
            assert name == target[0]
            if target[1]:  # a resumed task: the same call, the next invocation, its state handed back
                assert request.resumed and request.call_id == target[1] and request.state == {"n": 1}
                resumed.append((request.call_id, request.invocation))
                model.remove(target)
            else:
                assert not request.resumed and request.call_id not in started
                started.add(request.call_id)
            if asks:
                model.append((name, request.call_id))
            else:
                completed.add(request.call_id)
        assert [(e["parent_tool"], e["call_id"]) for e in await conversation.stack_entries()] == model
        assert (turn.result.status == "completed") == (not model)
        # no task lost; none resumed twice; empty exactly when every started task completed or was abandoned
        assert started == completed | abandoned | {call for _, call in model}
        assert not completed & abandoned
        assert len(resumed) == len(set(resumed))
        assert (not model) == (started == completed | abandoned)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(moves=actions, drawn=outcomes)
def test_stack_rules_hold_over_random_conversations(moves: list[tuple[str, ...]], drawn: list[bool]) -> None:
    asyncio.run(play(moves, drawn))


entries = st.builds(
    TaskEntry,
    parent_tool=st.sampled_from(NAMES),
    parent_state=st.one_of(st.none(), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2)),
    task=st.builds(ToolCallRequest, context=st.text(max_size=10), content=st.text(max_size=10)),
    call_id=st.uuids().map(str),
    invocation=st.integers(1, 5),
)


@given(st.lists(entries, max_size=6), st.data())
def test_task_stack_round_trips_and_removes_only_the_answered_task(items: list[TaskEntry], data: st.DataObject) -> None:
    stack = TaskStack(items)
    assert TaskStack.from_json(stack.to_json()).to_json() == stack.to_json()
    if items:
        gone = data.draw(st.sampled_from(items))
        before = [e.call_id for e in stack]
        assert stack.remove(gone.call_id) is gone
        after = [e.call_id for e in stack]
        assert after == [c for c in before if c != gone.call_id] or before.count(gone.call_id) > 1
        assert len(after) == len(before) - 1
