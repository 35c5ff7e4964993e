"""Agents and functions as tools of the Master Agent: both kinds of stateful agents, ReAct agents that ask the human,
plain functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.orchestration.master_support import Conversation

from examples.smart_investigator import DEMO, build
from podium import (
    Agent,
    AgentResult,
    AIMessage,
    Expectation,
    HumanMessage,
    MemoryStore,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    SQLiteStore,
    ToolMessage,
    ToolMetadata,
    ToolReturn,
    UsageError,
    tool,
)
from podium.orchestration.master.agent import MasterAgent
from podium.orchestration.master.tools import TaskFunctionTool
from podium.orchestration.master.types import ToolContent, ToolInput
from podium.testing import FunctionModel, tool_call

CITY = Expectation(type="choice", options=["Lisbon", "Oslo"])


async def pick_city(ctx: RunContext[Any], question: str) -> str:
    """Ask the user to pick a city.

    Args:
        question: what to ask.
    """
    city = await ctx.ask(question, expectation=CITY)
    return f"the user picked {city}"


def planner_model(messages: list[Message], request: ModelRequest) -> AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(content=f"Trip planned: {last.content}.")
    return AIMessage(tool_calls=[tool_call("pick_city", {"question": "Which city, Lisbon or Oslo?"})])


def planner(model: FunctionModel) -> ReactAgent:
    return ReactAgent("TripPlanner", model, [pick_city], description="Plans a trip to a city.")


async def test_a_react_agent_that_asks_the_human_is_a_tool() -> None:
    model = FunctionModel(planner_model)
    agent = MasterAgent([planner(model), *build().tools.values()])
    conversation = Conversation(Runtime(MemoryStore()), agent)
    asked = await conversation.say("Plan a trip for me")
    (message,) = asked.tool_results
    assert message.metadata["interrupt"] is True and message.content == "Which city, Lisbon or Oslo?"
    assert asked.question == "Which city, Lisbon or Oslo?" and asked.stacks == [["TripPlanner"]]
    assert asked.interrupts[0]["expectation"] == CITY.to_dict()
    assert asked.interrupts[0]["path"][:2] == ["master", "TripPlanner"]  # asked by the master, not the agent
    _, pending = await conversation.runtime.pending(conversation.thread_id)
    assert len(pending) == 1

    # the human's answer goes through the classifier: a task switch in the middle works
    switched = await conversation.say("Where to find a claim id?")
    assert switched.tools_called == ["SmartStrategy"]
    back = await conversation.say("I am a partner.")
    assert back.question.endswith("Which city, Lisbon or Oslo?") and back.stacks == [["TripPlanner"]]
    done = await conversation.say("Oslo, please")
    assert done.tools_called == ["TripPlanner"] and done.stacks == [[]]
    assert (done.result.output or "").startswith("Trip planned: the user picked Oslo, please.")
    assert len(model.requests) == 2  # the agent's first model call replayed from the journal, not repeated


async def test_an_agent_question_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SQLiteStore(path)
    first_model = FunctionModel(planner_model)
    conversation = Conversation(Runtime(store), MasterAgent([planner(first_model)]))
    await conversation.say("Plan a trip for me")
    await store.close()
    store = SQLiteStore(path)
    second_model = FunctionModel(planner_model)
    conversation.runtime, conversation.agent = Runtime(store), MasterAgent([planner(second_model)])
    done = await conversation.say("Lisbon")
    assert (done.result.output or "").startswith("Trip planned: the user picked Lisbon.")
    assert len(first_model.requests) == 1 and len(second_model.requests) == 1
    await store.close()


async def test_plain_functions_are_tools() -> None:
    def weather(text: str) -> str:
        """Gives today's weather for a city."""
        return f"Sunny in {text.split()[-1]}"

    def invoice(text: str, rationale: str) -> ToolReturn:
        """Prepares an invoice document."""
        return ToolReturn(content=f"Invoice ready ({rationale})", artifact={"invoice": 7})

    async def confirm(ctx: RunContext[Any], text: str) -> str:
        """Cancels a booking after confirmation."""
        answer = await ctx.ask(
            "Really cancel the booking?", expectation=Expectation(type="choice", options=["yes", "no"])
        )
        return "Cancelled." if answer.strip().lower().startswith("y") else "Kept."

    agent = MasterAgent([weather, invoice, confirm])
    assert "- weather: Gives today's weather for a city." in agent.welcome
    conversation = Conversation(Runtime(MemoryStore()), agent)
    turn = await conversation.say("what is the weather in Paris")
    assert turn.tools_called == ["weather"] and (turn.result.output or "").startswith("Sunny in Paris")
    paper = await conversation.say("prepare an invoice document")
    assert paper.artifacts == [{"invoice": 7}] and "Invoice ready (The request is closest" in (
        paper.result.output or ""
    )
    asked = await conversation.say("cancel the booking after confirmation")
    assert asked.question == "Really cancel the booking?" and asked.stacks == [["confirm"]]
    done = await conversation.say("yes")
    assert (done.result.output or "").startswith("Cancelled.") and done.stacks == [[]]


async def test_a_function_taking_the_tool_input_keeps_state_in_the_stack() -> None:
    async def counter(request: ToolInput) -> ToolContent:
        """Counts numbers the user gives until they say stop counting."""
        total = (request.state or {}).get("total", 0)
        if request.resumed and "done" in request.text:
            return ToolContent(value=f"Total: {total}")
        total += sum(int(w) for w in request.text.split() if w.isdigit())
        return ToolContent.ask(
            f"Total so far {total}. More numbers, or 'done'?",
            state={"total": total},
            expectation=Expectation(type="text"),
        )

    conversation = Conversation(Runtime(MemoryStore()), MasterAgent([counter]))
    await conversation.say("count numbers 2 and 3")
    more = await conversation.say("4")
    assert more.question.startswith("Total so far 9.")
    assert (await conversation.stack_entries())[0]["parent_state"] == {"total": 9}
    done = await conversation.say("done")
    assert (done.result.output or "").startswith("Total: 9")


class Survey(Agent):
    """An agent written for the orchestrator: reads its task as the run provides it, returns ToolContent."""

    name = "Survey"
    description = "Runs a two-question customer survey."

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        task = ctx.injected(ToolInput)
        assert task is not None and task.text == input.content and not input.metadata
        answers = list((task.state or {}).get("answers", []))
        if task.resumed:
            answers.append(input.content)
        if len(answers) < 2:
            question = ["How was the service?", "Would you recommend us?"][len(answers)]
            return AgentResult(output=question, data=ToolContent.ask(question, state={"answers": answers}))
        return AgentResult(output="thanks", data=ToolContent(value=f"Survey done: {answers}"))


async def test_a_stateless_podium_agent_gets_its_state_back_from_the_stack() -> None:
    conversation = Conversation(Runtime(MemoryStore()), MasterAgent([Survey()]))
    await conversation.say("run a customer survey")
    await conversation.say("great service")
    done = await conversation.say("yes, I would")
    assert (done.result.output or "").startswith("Survey done: ['great service', 'yes, I would']")


async def test_own_state_is_keyed_by_the_call() -> None:
    runtime = Runtime(MemoryStore())
    conversation = Conversation(runtime, build())
    for text in DEMO:
        await conversation.say(text)
    for text in ("Draft a declined letter for claim 777XYZ", "Home"):
        await conversation.say(text)
    letters = [t.artifacts[0] for t in conversation.turns if t.artifacts]
    assert len(letters) == 2 and "123ABH" in letters[0] and "777XYZ" in letters[1] and "Home" in letters[1]
    calls = {
        m.metadata["call_id"] for t in conversation.turns for m in t.tool_results if m.name == "DeclineLetterAssistance"
    }
    assert len(calls) == 2
    for call in calls:
        state = await runtime.store.get_state(conversation.thread_id, f"agent:DeclineLetterAssistance:{call}")
        assert state["asking"] is None and state["claim_id"] in ("123ABH", "777XYZ")


def test_tool_names_must_be_unique_and_not_reserved() -> None:
    @tool(metadata=ToolMetadata(expose_to_user=True))
    def human(text: str) -> str:
        """Pretends to be the human."""
        return text

    with pytest.raises(UsageError, match="reserved"):
        MasterAgent([human])
    with pytest.raises(UsageError, match="two tools named"):
        MasterAgent([*build().tools.values(), *build().tools.values()])

    def plain(text: str) -> str:
        """Takes only text."""
        return text

    with pytest.raises(UsageError, match="annotated ToolInput"):
        TaskFunctionTool(plain)


async def test_the_request_is_injected_by_annotation_into_every_tool_below_the_call() -> None:
    """A master tool's input reaches, by annotation, a function tool and the tools of an agent run as a tool."""
    seen: list[tuple[str, str]] = []

    def lookup(request: ToolInput, query: str) -> str:
        """Looks a policy up.

        Args:
            query: what to look up.
        """
        seen.append(("lookup", request.text))
        return f"policy for {query}"

    def helper_model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"Found: {messages[-1].content}.")
        return AIMessage(tool_calls=[tool_call("lookup", {"query": "motor"})])

    helper = ReactAgent("PolicyHelper", FunctionModel(helper_model), [lookup], description="Explains car policies.")

    async def parrot(request: ToolInput) -> str:
        """Repeats a phrase back like a parrot."""
        seen.append(("parrot", request.text))
        return f"got {request.text}"

    conversation = Conversation(Runtime(MemoryStore()), MasterAgent([helper, TaskFunctionTool(parrot)]))
    explained = await conversation.say("explain my car policies")
    assert (explained.result.output or "").startswith("Found: policy for motor.")
    repeated = await conversation.say("repeat this phrase like a parrot")
    assert (repeated.result.output or "").startswith("got repeat this phrase like a parrot")
    assert seen == [("lookup", "explain my car policies"), ("parrot", "repeat this phrase like a parrot")]
