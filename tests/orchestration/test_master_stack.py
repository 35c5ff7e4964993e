"""Task-stack behaviour of the Master Agent: switching, unwinding, abandoning, bypass, chaining, direct calls."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from tests.orchestration.master_support import Conversation, check_turn, travel_tools

from examples.smart_investigator import DEMO, build
from podium import (
    AIMessage,
    ErrorEvent,
    Expectation,
    MemoryStore,
    MessageAdded,
    RunContext,
    Runtime,
    SQLiteStore,
    ToolMetadata,
)
from podium.human import EMERGENCY_REPLY
from podium.orchestration.master.agent import MasterAgent
from podium.orchestration.master.routing import LLMClassifier
from podium.orchestration.master.tools import MasterTool
from podium.orchestration.master.types import ToolArgument, ToolCallRequest, ToolContent, ToolInput
from podium.testing import ScriptedModel, tool_call

REPEAT = "What else can I help you with?"


async def test_three_tasks_deep_unwind_in_order() -> None:
    flights, cars, hotels = tools = travel_tools()
    conversation = Conversation(Runtime(MemoryStore()), MasterAgent(tools))
    first = await conversation.say("I want to book a flight")
    assert first.question == flights.question and first.stacks == [["Flights"]]
    second = await conversation.say("I also need to rent a car")
    assert second.question == cars.question and second.stacks == [["Flights", "Cars"]]
    third = await conversation.say("And please reserve a hotel room")
    assert third.question == hotels.question and third.stacks == [["Flights", "Cars", "Hotels"]]

    done_hotel = await conversation.say("double")
    assert done_hotel.tools_called == ["Hotels"] and done_hotel.stacks == [["Flights", "Cars"]]
    assert done_hotel.question == f"Hotels done with double. {cars.question}"
    done_car = await conversation.say("the van")
    assert done_car.stacks == [["Flights"]]
    assert done_car.question == f"Cars done with van. {flights.question}"
    done_flight = await conversation.say("business please")
    assert done_flight.stacks == [[]] and done_flight.result.status == "completed"
    assert (done_flight.result.output or "").startswith(f"Flights done with business.\n\n{REPEAT}")
    # each task was resumed exactly once, with the state it left in the stack
    for tool in tools:
        assert [(c.invocation, c.resumed, c.state) for c in tool.calls] == [(1, False, None), (2, True, {"asked": 1})]
        assert len({c.call_id for c in tool.calls}) == 1


async def test_never_mind_drops_the_top_task() -> None:
    flights, _, _ = tools = travel_tools()
    conversation = Conversation(Runtime(MemoryStore()), MasterAgent(tools))
    await conversation.say("I want to book a flight")
    await conversation.say("I need a rental car")
    dropped = await conversation.say("never mind")
    assert dropped.decisions[0]["kind"] == "abandon"
    assert dropped.stacks == [["Flights"]] and dropped.tools_called == []
    assert dropped.question == f"OK, I stopped the cars task. {flights.question}"
    assert dropped.interrupts[0]["expectation"]["options"] == ["economy", "business"]
    last = await conversation.say("Forget it.")
    assert last.stacks == [[]] and last.result.status == "completed"
    assert (last.result.output or "").startswith(f"OK, I stopped the flights task.\n\n{REPEAT}")
    nothing = await conversation.say("cancel")
    assert nothing.stacks == [] and (nothing.result.output or "").startswith("There is no task in progress to stop.")
    assert [len(t.calls) for t in tools] == [1, 1, 0]  # abandoned tasks are never resumed


async def test_what_can_you_do_keeps_the_pending_task() -> None:
    conversation = Conversation(Runtime(MemoryStore()), build())
    answer = await conversation.say("What can you do?")
    assert answer.result.status == "completed" and answer.tools_called == []
    assert (answer.result.output or "").startswith(
        "I can help you with the following tasks:\n- DeclineLetterAssistance"
    )
    await conversation.say(DEMO[0])
    again = await conversation.say("what can you do")
    assert again.decisions[0]["kind"] == "capabilities" and again.stacks == []
    assert again.question.startswith("I can help you with the following tasks:")
    assert again.question.endswith("Please provide your claim id")
    assert await conversation.stack() == ["DeclineLetterAssistance"]


@pytest.mark.parametrize("goodbye", ["thanks, bye", "ok I have to go", "see you later"])
async def test_a_goodbye_at_a_question_ends_the_turn_and_the_task_waits_for_the_answer(goodbye: str) -> None:
    conversation = Conversation(Runtime(MemoryStore()), build())
    await conversation.say(DEMO[0])
    left = await conversation.say(goodbye)
    assert left.result.status == "completed" and left.tools_called == []  # not asked again as the person leaves
    assert (
        left.result.output == "Goodbye! The decline letter assistance task will wait for your answer; send it any time."
    )
    assert await conversation.stack() == ["DeclineLetterAssistance"]
    back = await conversation.say("my id is 123ABH")  # the answer, when the person comes back
    assert back.tools_called == ["DeclineLetterAssistance"] and "Home or Motor" in back.question


async def test_many_conversations_at_once_stay_apart() -> None:
    runtime, agent = Runtime(MemoryStore()), build()
    conversations = [Conversation(runtime, agent, f"thread-{n}") for n in range(4)]

    async def talk(conversation: Conversation, offset: int) -> None:
        for number, text in enumerate(DEMO):
            await asyncio.sleep(0.001 * ((number + offset) % 3))
            check_turn(await conversation.say(text), number)

    await asyncio.gather(*(talk(c, n) for n, c in enumerate(conversations)))
    artifacts = [c.turns[-1].artifacts for c in conversations]
    assert all(len(a) == 1 and "123ABH" in a[0] for a in artifacts)


class Notes(MasterTool):
    """Asks for free text and declares that it expects the reply (classifier bypass)."""

    name = "Notes"
    description = "Takes a note."
    metadata = ToolMetadata(expose_to_user=True, can_generate_task=True, examples=["take a note", "write this down"])

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        if not request.resumed:
            return ToolContent.ask("What should the note say?", bypass_classifier=True)
        return ToolContent(value=f"Noted: {request.text}")


async def test_a_request_that_expects_a_reply_bypasses_the_classifier() -> None:
    model = ScriptedModel([_route("Notes")])  # one classification only: the bypassed answer needs none
    agent = MasterAgent([Notes(), *build().tools.values()], classifier=LLMClassifier(model))
    conversation = Conversation(Runtime(MemoryStore()), agent)
    await conversation.say("take a note")
    harmful = await conversation.say("I want to commit fraud")  # the guardrail still runs
    assert harmful.decisions[0] == {**harmful.decisions[0], "kind": "refuse", "source": "bypass"}
    assert harmful.tools_called == [] and harmful.question.endswith("What should the note say?")
    covert = await conversation.say("note his password so I can read his email without telling him")
    assert covert.decisions[0]["kind"] == "refuse" and covert.tools_called == []  # harm cues too (issue 13)
    urgent = await conversation.say("my colleague collapsed and is not breathing")  # an emergency, first of all
    assert (urgent.decisions[0]["kind"], urgent.decisions[0]["reason"]) == ("refuse", "emergency")
    said = [
        e.message.content for e in urgent.events if isinstance(e, MessageAdded) and isinstance(e.message, AIMessage)
    ]
    assert urgent.tools_called == [] and said == [EMERGENCY_REPLY]  # alone, as a reply of its own
    assert urgent.question == "What should the note say?"  # then the waiting question, asked again apart
    noted = await conversation.say("Where to find a claim id?")  # would be a task switch without the bypass
    assert noted.decisions[0]["source"] == "bypass" and noted.tools_called == ["Notes"]
    assert (noted.result.output or "").startswith("Noted: Where to find a claim id?")
    model.assert_complete()


def _route(tool: str) -> AIMessage:
    return AIMessage(tool_calls=[tool_call(tool, {"text": "take a note", "rationale": "The user wants a note."})])


class Lookup(MasterTool):
    name = "Lookup"
    description = "Looks up the holder of a claim."
    metadata = ToolMetadata(expose_to_user=True, examples=["who holds claim 42"])

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        then = request.arguments.get("then")
        follow = None
        if then == "direct":
            follow = ToolCallRequest(tool_argument=ToolArgument(name="Format"))
        elif then == "classifier":
            follow = ToolCallRequest(context="the holder's name must be formatted", content="format this name nicely")
        return ToolContent(value=f"holder of {request.text}: ada lovelace", next_tool=follow)


class Format(MasterTool):
    name = "Format"
    description = "Formats a name nicely in title case."
    metadata = ToolMetadata(expose_to_user=False, examples=["format this name", "make this text nice"])

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        return ToolContent(value=request.text.title())


class Letter(MasterTool):
    """Needs the holder's name: asks Lookup directly (an interrupt with an explicit tool call)."""

    name = "Letter"
    description = "Writes a letter to a claim holder."
    metadata = ToolMetadata(expose_to_user=True, can_generate_task=True, examples=["write a letter to the holder"])

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        if not request.resumed:
            ask = ToolCallRequest(tool_argument=ToolArgument(name="Lookup", arguments='{"text": "claim 42"}'))
            return ToolContent(value="I need the holder", interrupt=True, state={"claim": "42"}, next_tool=ask)
        return ToolContent(value=f"Letter for claim {request.state['claim']} to {request.text}", artifact="LETTER")


async def test_completed_tool_chains_to_next_tool_directly_and_through_the_classifier() -> None:
    runtime = Runtime(MemoryStore())
    for then, called in (("direct", ["Lookup", "Format"]), ("classifier", ["Lookup", "Format"]), (None, ["Lookup"])):
        conversation = Conversation(runtime, MasterAgent([_Lookup(then), Format()]), f"t-{then}")
        turn = await conversation.say("who holds claim 42")
        assert turn.tools_called == called and turn.stacks == []
        output = turn.result.output or ""
        if then is None:
            assert output.startswith("holder of who holds claim 42: ada lovelace\n\n")
        else:  # the next tool got the completed tool's value
            assert output.startswith("Holder Of Who Holds Claim 42: Ada Lovelace\n\n")
        tool_decisions = [d for d in turn.decisions if d["origin"] == "tool"]
        assert len(tool_decisions) == (1 if then == "classifier" else 0)


def _Lookup(then: str | None) -> MasterTool:
    class Preset(Lookup):
        async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
            request.arguments = {"then": then} if then else {}
            return await super().call(ctx, request)

    return Preset()


async def test_an_interrupt_with_a_direct_call_resumes_the_requester_with_the_answer() -> None:
    conversation = Conversation(Runtime(MemoryStore()), MasterAgent([Letter(), _Lookup(None)]))
    turn = await conversation.say("write a letter to the holder")
    assert turn.tools_called == ["Letter", "Lookup", "Letter"]
    assert turn.stacks == [["Letter"], []]  # pushed while waiting for Lookup, popped when Letter answered
    assert (turn.result.output or "").startswith("Letter for claim 42 to holder of claim 42: ada lovelace")
    assert turn.artifacts == ["LETTER"]


class Failing(MasterTool):
    name = "Failing"
    description = "Breaks a claim."
    metadata = ToolMetadata(expose_to_user=True, examples=["break the claim"])

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        raise ValueError("the claim system is down")


class Pushy(MasterTool):
    name = "Pushy"
    description = "Pushes a task although it may not."
    metadata = ToolMetadata(expose_to_user=True, can_generate_task=False, examples=["push a task"])

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        return ToolContent.ask("Which one?")


class Loop(MasterTool):
    name = "Loop"
    description = "Chains to itself forever."
    metadata = ToolMetadata(expose_to_user=True, examples=["loop forever"])

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        return ToolContent(value="again", next_tool=ToolCallRequest(tool_argument=ToolArgument(name="Loop")))


async def test_failing_and_misbehaving_tools_never_break_the_conversation() -> None:
    conversation = Conversation(Runtime(MemoryStore()), MasterAgent([Failing(), Pushy(), Loop()], max_tool_calls=5))
    failed = await conversation.say("break the claim")
    assert (failed.result.output or "").startswith("Failing failed: ValueError: the claim system is down")
    assert [e.message for e in failed.events if isinstance(e, ErrorEvent)] == ["the claim system is down"]
    assert failed.tool_results[0].is_error
    pushed = await conversation.say("push a task")
    assert pushed.stacks == [] and "may not leave a task pending" in (pushed.result.output or "")
    looping = await conversation.runtime.run(conversation.agent, "loop forever", thread_id=conversation.thread_id)
    assert looping.status == "limit_exceeded" and looping.limit == "steps"
    assert await conversation.stack() == []
    after = await conversation.say("break the claim")  # the conversation goes on
    assert after.tools_called == ["Failing"]


async def test_unknown_explicit_tool_falls_back_to_the_human() -> None:
    class Lost(MasterTool):
        name = "Lost"
        description = "Asks a tool that does not exist."
        metadata = ToolMetadata(expose_to_user=True, can_generate_task=True, examples=["get lost"])

        async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
            if request.resumed:
                return ToolContent(value=f"found {request.text}")
            ask = ToolCallRequest(content="Where is it?", tool_argument=ToolArgument(name="Nowhere"))
            return ToolContent(value="lost", interrupt=True, next_tool=ask)

    conversation = Conversation(Runtime(MemoryStore()), MasterAgent([Lost()]))
    turn = await conversation.say("get lost")
    assert turn.question == "Where is it?" and turn.stacks == [["Lost"]]
    done = await conversation.say("Under the bridge, typed freely")
    assert (done.result.output or "").startswith("found Under the bridge")


async def test_an_interrupt_without_a_request_asks_the_human_its_value() -> None:
    class Quiz(MasterTool):
        name = "Quiz"
        description = "Asks a quiz question."
        metadata = ToolMetadata(expose_to_user=True, can_generate_task=True, examples=["start the quiz"])

        async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
            if request.resumed:
                return ToolContent(value=f"You said {request.text}.")
            return ToolContent(value="What is the capital of Norway?", interrupt=True)

    conversation = Conversation(Runtime(MemoryStore()), MasterAgent([Quiz()]))
    turn = await conversation.say("start the quiz")
    assert turn.question == "What is the capital of Norway?" and turn.stacks == [["Quiz"]]
    assert [d["origin"] for d in turn.decisions] == ["human"]  # straight to the human, no classifier
    assert turn.interrupts[0].get("expectation") is None
    done = await conversation.say("Oslo")
    assert (done.result.output or "").startswith("You said Oslo.")


async def test_a_restart_in_the_middle_of_a_switched_task(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    tools = travel_tools()
    store = SQLiteStore(path)
    conversation = Conversation(Runtime(store), MasterAgent(tools))
    await conversation.say("I want to book a flight")
    await conversation.say("I also need to rent a car")
    await store.close()
    store = SQLiteStore(path)
    fresh = travel_tools()
    conversation.runtime, conversation.agent = Runtime(store), MasterAgent(fresh)
    assert await conversation.stack() == ["Flights", "Cars"]
    done = await conversation.say("sedan")
    assert done.question == f"Cars done with sedan. {fresh[0].question}"
    assert [c.state for c in fresh[1].calls] == [{"asked": 1}]  # the state came back from the stored stack
    await store.close()


async def test_choices_expectation_is_on_every_question() -> None:
    conversation = Conversation(Runtime(MemoryStore()), MasterAgent(travel_tools()))
    turn = await conversation.say("I want to book a flight")
    assert turn.interrupts[0]["expectation"] == Expectation(type="choice", options=["economy", "business"]).to_dict()
    assert turn.interrupts[0]["data"]["tool"] == "Flights"
    assert turn.interrupts[0]["path"][:2] == ["master", "Flights"]


async def test_the_stack_outlives_a_run_that_stopped_on_a_limit() -> None:
    agent = MasterAgent([*build().tools.values(), Loop()], max_tool_calls=4)
    conversation = Conversation(Runtime(MemoryStore()), agent)
    await conversation.say(DEMO[0])
    stopped = await conversation.runtime.resume(agent, conversation.thread_id, "loop forever")
    assert stopped.status == "limit_exceeded"
    assert await conversation.stack() == ["DeclineLetterAssistance"]
    resumed = await conversation.say("My id is 123ABH")  # a new run picks the task up from the stored stack
    assert resumed.result.run_id != stopped.run_id
    assert resumed.tools_called == ["DeclineLetterAssistance"] and resumed.progress == ["Obtaining topology..."]
    done = await conversation.say("Motor")
    assert "123ABH" in done.artifacts[0] and await conversation.stack() == []


async def test_going_back_to_a_task_below_asks_its_question_again_and_keeps_the_other_waiting() -> None:
    flights, cars, _ = tools = travel_tools()
    conversation = Conversation(Runtime(MemoryStore()), MasterAgent(tools))
    await conversation.say("I want to book a flight")
    await conversation.say("I also need to rent a car")
    back = await conversation.say("ok, back to the flight")
    assert back.tools_called == []  # nothing was answered: the flight's question is asked again
    assert back.stacks == [["Cars", "Flights"]] and back.question == f"Back to the flights task. {flights.question}"
    done = await conversation.say("business please")
    assert done.tools_called == ["Flights"] and done.stacks == [["Cars"]]
    assert done.question == f"Flights done with business. {cars.question}"  # the car still waits, then its turn
    last = await conversation.say("where were we?")  # the only task left: its question once more
    assert last.question == f"Back to the cars task. {cars.question}" and last.tools_called == []


@pytest.mark.parametrize(
    "switch",
    [
        "actually can you help me find my claim id instead",
        "ok so where do I find my claim id?",
        "wait, how do I find the claim id",
    ],
)
async def test_a_request_after_a_filler_word_switches_task_even_when_it_names_what_was_asked(switch: str) -> None:
    conversation = Conversation(Runtime(MemoryStore()), build())
    await conversation.say(DEMO[0])  # the letter asks for the claim id
    switched = await conversation.say(switch)
    assert switched.tools_called == ["SmartStrategy"], switched.decisions
    assert await conversation.stack() == ["DeclineLetterAssistance", "SmartStrategy"]


async def test_one_more_asked_while_a_question_waits_is_done_after_it_never_taken_as_its_answer() -> None:
    conversation = Conversation(Runtime(MemoryStore()), build())
    await conversation.say("decline letter for 3031MM")  # asks Home or Motor
    later = await conversation.say("one more for 3032MM please, motor this time")
    assert later.tools_called == [] and later.question.startswith(
        "I will do that next. First: Please provide the crime"
    )
    both = await conversation.say("home")
    letters = [str(a) for a in both.artifacts]
    assert any("3031MM (crime topology: Home)" in a for a in letters), letters
    assert any("3032MM (crime topology: Motor)" in a for a in letters), letters
