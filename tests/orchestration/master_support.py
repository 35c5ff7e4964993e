"""Helpers for the Master Agent tests: drive a conversation turn by turn and read each turn's events as data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from examples import smart_investigator
from podium import (
    Agent,
    Artifact,
    Event,
    Expectation,
    InterruptRaised,
    MessageAdded,
    RunContext,
    RunResult,
    Runtime,
    SideChannel,
    StepRecorded,
    TaskStackChanged,
    ToolMessage,
    ToolMetadata,
)
from podium.orchestration.master.routing import fit_expectation
from podium.orchestration.master.tools import MasterTool
from podium.orchestration.master.types import ToolContent, ToolInput


@dataclass
class Turn:
    """One human message and what the run did with it."""

    text: str
    result: RunResult
    events: list[Event] = field(default_factory=list)

    @property
    def decisions(self) -> list[dict[str, Any]]:
        """Routing decisions journaled in this turn (human and tool origin)."""
        return [
            {**e.value["routing"], "origin": e.value["origin"]}
            for e in self.events
            if isinstance(e, StepRecorded) and isinstance(e.value, dict) and "routing" in e.value
        ]

    @property
    def rationales(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, SideChannel) and e.channel == "rationale"]

    @property
    def progress(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, SideChannel) and e.channel == "progress"]

    @property
    def interrupts(self) -> list[dict[str, Any]]:
        return [e.interrupt.to_dict() for e in self.events if isinstance(e, InterruptRaised)]

    @property
    def question(self) -> str:
        """The question this turn ends on."""
        assert self.result.status == "interrupted", self.result.reason
        return self.result.interrupts[0].prompt

    @property
    def artifacts(self) -> list[Any]:
        return [e.content for e in self.events if isinstance(e, Artifact)]

    @property
    def stacks(self) -> list[list[str]]:
        """The task stack after each change in this turn, as tool names."""
        return [[entry["parent_tool"] for entry in e.stack] for e in self.events if isinstance(e, TaskStackChanged)]

    @property
    def tool_results(self) -> list[ToolMessage]:
        return [
            e.message
            for e in self.events
            if isinstance(e, MessageAdded) and isinstance(e.message, ToolMessage) and e.namespace == ""
        ]

    @property
    def tools_called(self) -> list[str]:
        return [m.name for m in self.tool_results]


class Conversation:
    """A thread driven like ``podium chat`` does: resume when a question waits, else start a run."""

    def __init__(self, runtime: Runtime, agent: Agent, thread_id: str = "thread-1") -> None:
        self.runtime = runtime
        self.agent = agent
        self.thread_id = thread_id
        self.turns: list[Turn] = []

    async def say(self, text: str) -> Turn:
        events: list[Event] = []
        result = await self.runtime.send(self.agent, text, thread_id=self.thread_id, on_event=events.append)
        assert result.status in ("completed", "interrupted"), result.reason
        turn = Turn(text, result, [e for e in events if e.seq > 0])
        self.turns.append(turn)
        return turn

    async def stack(self) -> list[str]:
        """The persisted task stack, as tool names."""
        key = getattr(self.agent, "state_key", "")
        saved = await self.runtime.store.get_state(self.thread_id, key) or {}
        return [entry["parent_tool"] for entry in saved.get("stack", [])]

    async def stack_entries(self) -> list[dict[str, Any]]:
        key = getattr(self.agent, "state_key", "")
        saved = await self.runtime.store.get_state(self.thread_id, key) or {}
        return list(saved.get("stack", []))


# --- the acceptance table of specs/master_agent.md ----------------------------------------------------------

DL, SS = "DeclineLetterAssistance", "SmartStrategy"
CLAIM_ID = {
    "type": "pattern",
    "pattern": smart_investigator.CLAIM_ID.pattern,
    "description": "a claim id: letters and digits, e.g. 123ABH",
}
TOPOLOGY = {"type": "choice", "options": ["Home", "Motor"], "description": "the crime topology: Home or Motor"}
ROLE = {
    "type": "choice",
    "options": ["internal employee", "partner"],
    "description": "internal employee or partner of Suncorp",
}
TOPOLOGY_QUESTION = "Please provide the crime topology of your letter. You can choose from either Home or Motor only."
ROLE_QUESTION = "Please tell me if you are an internal employee or a partner of Suncorp."


def check_turn(turn: Turn, number: int) -> None:
    """What the spec's acceptance table expects of turn ``number`` (0-based)."""
    decision = turn.decisions[0] if turn.decisions else {}
    if number == 0:  # I want to craft a declined letter.
        assert decision["kind"] == "route" and decision["tool"] == DL
        assert turn.rationales == [f"Choosing {DL} due to: {decision['rationale']}"]
        assert turn.progress == ["Obtaining claim_id..."]
        assert turn.question == "Please provide your claim id"
        assert turn.interrupts[0]["expectation"] == CLAIM_ID
        assert turn.stacks == [[DL]]
    elif number == 1:  # Where to find a claim id?
        assert decision["kind"] == "route" and decision["tool"] == SS
        assert turn.rationales[0].startswith(f"Choosing {SS} due to: ")
        assert turn.progress == ["Checking partner or internal..."]
        assert turn.question == ROLE_QUESTION
        assert turn.interrupts[0]["expectation"] == ROLE
        assert turn.stacks == [[DL, SS]]
    elif number == 2:  # I am a Suncorp friend.
        assert decision["kind"] == "clarify" and decision["reason"] == "no_fit"
        assert turn.tools_called == [] and turn.rationales == [] and turn.stacks == []
        assert "does not fit" in turn.question and turn.question.endswith(ROLE_QUESTION)
        assert turn.interrupts[0]["expectation"] == ROLE
    elif number == 3:  # I am a partner.
        assert decision["kind"] == "route" and decision["tool"] == SS
        assert turn.tools_called == [SS]
        assert (
            turn.question
            == 'Due to "I am a partner.", the id can be found at www.my_id.com. Please provide your claim id'
        )
        assert turn.interrupts[0]["expectation"] == CLAIM_ID
        assert turn.stacks == [[DL]]
    elif number == 4:  # My id is 123ABH
        assert decision["kind"] == "route" and decision["tool"] == DL
        assert "123ABH" in decision["rationale"]
        assert turn.progress == ["Obtaining topology..."]
        assert turn.question == TOPOLOGY_QUESTION
        assert turn.interrupts[0]["expectation"] == TOPOLOGY
        assert turn.stacks == [[DL]]
    elif number == 5:  # Personal Injury
        assert decision["kind"] == "clarify"
        assert turn.tools_called == [] and turn.stacks == []
        assert "'Home', 'Motor'" in turn.question and turn.question.endswith(TOPOLOGY_QUESTION)
    elif number == 6:  # I want to commit fraud.
        assert decision["kind"] == "refuse" and decision["reason"] == "harmful"
        assert turn.tools_called == [] and turn.stacks == []
        assert turn.question.startswith("I can't help with 'I want to commit fraud.'")
        assert turn.question.endswith(TOPOLOGY_QUESTION)  # reminds what DL still needs
    elif number == 7:  # I want to do Motor.
        assert decision["kind"] == "route" and decision["tool"] == DL
        assert turn.result.status == "completed" and turn.interrupts == []
        output = turn.result.output or ""
        assert output.startswith(
            "Letter generated!\n\nWhat else can I help you with? I can help you with the following"
        )
        assert f"- {DL}: Assist you in crafting a standardised declined letter." in output
        assert output.endswith("How can I help you today?")
        assert len(turn.artifacts) == 1 and "123ABH" in turn.artifacts[0] and "Motor" in turn.artifacts[0]
        assert "Here is the letter" not in output  # the artifact stays out of the chat
        assert turn.stacks == [[]]


# --- small tools for the stack tests -----------------------------------------------------------------------------


class Asker(MasterTool):
    """Asks one choice question, then completes with the answer; records every call it gets."""

    def __init__(self, name: str, description: str, examples: list[str], options: list[str]) -> None:
        self.name = name
        self.description = description
        self.metadata = ToolMetadata(
            expose_to_user=True, introduction=description, can_generate_task=True, examples=examples
        )
        self.expectation = Expectation(type="choice", options=options)
        self.question = f"{name} asks: which one, {' or '.join(options)}?"
        self.calls: list[ToolInput] = []

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        self.calls.append(request)
        answer = fit_expectation(self.expectation, request.text) if request.resumed else None
        if answer is None:
            return ToolContent.ask(self.question, expectation=self.expectation, state={"asked": request.invocation})
        return ToolContent(value=f"{self.name} done with {answer}.")


def travel_tools() -> list[Asker]:
    """Three unrelated tasks for task-switching tests."""
    return [
        Asker(
            "Flights",
            "Books a flight.",
            ["book a flight", "I need a plane ticket", "fly to Paris"],
            ["economy", "business"],
        ),
        Asker("Cars", "Rents a car.", ["rent a car", "I need a rental car", "hire a car"], ["sedan", "van"]),
        Asker(
            "Hotels",
            "Reserves a hotel room.",
            ["reserve a hotel room", "book a hotel", "I need a room"],
            ["single", "double"],
        ),
    ]
