"""Answers fit the question everywhere (issue 17 item 7): a ReAct tool's ``ctx.ask`` with options checks the answer,
as the master agent does, and asks again on a misfit instead of taking "And in Fahrenheit?" as the answer."""

from __future__ import annotations

import pytest

from podium import Expectation, MemoryStore, ReactAgent, RunContext, Runtime, Settings

QUESTION = "Save this note to your trip notebook: 'pack sunglasses for Lisbon'?"


async def test_a_react_tool_asks_again_when_the_answer_does_not_fit() -> None:
    from examples.trip import app

    agent = app.build(app.model(Settings()))
    runtime = Runtime(MemoryStore())
    asked = await runtime.run(agent, "Save a note: pack sunglasses for Lisbon")
    (question,) = asked.interrupts
    assert question.prompt == QUESTION
    again = await runtime.resume(agent, asked.thread_id, "And in Fahrenheit?")
    assert again.status == "interrupted"
    (repeat,) = again.interrupts
    assert repeat.prompt == f"{QUESTION} (Please answer yes or no.)"
    assert repeat.id == f"{question.id}~2" and repeat.path == question.path
    assert repeat.expectation is not None and repeat.expectation.options == ["yes", "no"]
    still = await runtime.resume(agent, asked.thread_id, "maybe")
    assert still.interrupts[0].id == f"{question.id}~3"
    done = await runtime.resume(agent, asked.thread_id, "Yes, please.")  # fits: the tool gets "yes"
    assert done.status == "completed" and done.output == "Done: Saved to the trip notebook: pack sunglasses for Lisbon"


async def test_a_question_outside_a_react_tool_takes_the_answer_as_given() -> None:
    """Orchestrators that judge answers themselves (the master agent's classifier) still get them unchanged."""
    from podium import AgentResult, HumanMessage
    from podium.agents.base import Agent

    class Asker(Agent):
        name = "asker"

        async def invoke(self, ctx: RunContext[object], input: HumanMessage) -> AgentResult:
            choice = Expectation(type="choice", options=["yes", "no"])
            return AgentResult(output=await ctx.ask("Go?", expectation=choice))

    runtime = Runtime(MemoryStore())
    asked = await runtime.run(Asker(), "hi")
    done = await runtime.resume(Asker(), asked.thread_id, "And in Fahrenheit?")
    assert done.output == "And in Fahrenheit?"


@pytest.mark.parametrize(
    ("expectation", "text", "fit"),
    [
        (Expectation(type="choice", options=["yes", "no"]), "YES", "yes"),
        (Expectation(type="choice", options=["yes", "no"]), "no, thanks.", "no"),
        (Expectation(type="choice", options=["yes", "no"]), "yes or no", None),
        (Expectation(type="choice", options=["yes", "no"]), "And in Fahrenheit?", None),
        (Expectation(type="choice", options=["Home", "Motor"]), "2", "Motor"),
        (Expectation(type="choice", options=["Home", "Motor"]), "  ", None),
        (Expectation(type="pattern", pattern=r"\d{3}"), "id 123AB", "id 123AB"),
        (Expectation(type="pattern", pattern=r"\d{3}"), "no digits", None),
        (Expectation(type="text"), "anything", "anything"),
    ],
)
def test_expectation_fit(expectation: Expectation, text: str, fit: str | None) -> None:
    assert expectation.fit(text) == fit


def test_the_hint_says_how_to_answer() -> None:
    assert Expectation(type="choice", options=["yes", "no"]).hint() == "yes or no"
    assert Expectation(type="choice", options=["a", "b c", "d"]).hint() == "a, 'b c' or d"
    assert Expectation(type="pattern", pattern="x+", description="some x").hint() == "some x"
    assert Expectation(type="pattern", pattern="x+").hint() == "text matching x+"


@pytest.mark.parametrize(
    ("text", "fit"),
    [
        ("yeah", "yes"),
        ("sure, go ahead", "yes"),
        ("ok", "yes"),
        ("y", "yes"),
        ("nope", "no"),
        ("nah", "no"),
        ("n", "no"),
        ("never mind", "no"),
        ("cancel", "no"),
        ("yes but make it 'pack warm socks'", None),  # a change asked for: no plain yes
        ("thanks", None),
    ],
)
def test_a_yes_or_no_question_takes_yes_and_no_as_people_say_them(text: str, fit: str | None) -> None:
    assert Expectation(type="choice", options=["yes", "no"]).fit(text) == fit
    assert Expectation(type="choice", options=["Yes", "No"]).fit(text) == (fit and fit.capitalize())


def _asker(question: str, options: list[str] | None, said: list[str], result: str = "{}") -> ReactAgent:
    """A ReAct agent whose one tool asks ``question`` (a choice of ``options``, or free text), records the answer it
    is given in ``said`` and returns ``result`` with it; its model reports the result as ``[ok] ...`` or
    ``[error] ...``."""
    from podium import AIMessage, ToolMessage
    from podium.testing import FunctionModel, tool_call

    async def ask_it(ctx: RunContext[object]) -> str:
        """Ask the human."""
        choice = Expectation(type="choice", options=options) if options else None
        said.append(await ctx.ask(question, expectation=choice))
        return result.format(said[-1])

    def reply(messages: list[object], request: object) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return AIMessage(content=f"[{'error' if last.is_error else 'ok'}] {last.content}")
        return AIMessage(tool_calls=[tool_call("ask_it", {})])

    return ReactAgent("asker", FunctionModel(reply), [ask_it])


def _day_planner() -> ReactAgent:
    """An agent asking museums or beaches; it answers "A day of <the choice>"."""
    return _asker("Do you prefer museums or beaches in Lisbon?", ["museums", "beaches"], [], "A day of {}")


async def test_an_answer_that_declines_ends_the_tool_call_and_the_model_hears_it() -> None:
    agent = _day_planner()
    runtime = Runtime(MemoryStore())
    asked = await runtime.run(agent, "plan my day")
    done = await runtime.resume(agent, asked.thread_id, "never mind")
    assert done.status == "completed"
    assert done.output.startswith("[error] The user declined to answer the question 'Do you prefer museums")
    assert "Do not ask it again" in done.output


async def test_an_emergency_said_while_a_question_waits_is_answered_first_and_the_question_stays() -> None:
    from podium.human import EMERGENCY_REPLY

    agent = _day_planner()
    runtime = Runtime(MemoryStore())
    asked = await runtime.run(agent, "plan my day")
    urgent = await runtime.resume(agent, asked.thread_id, "help, my friend collapsed and isn't breathing")
    assert urgent.status == "interrupted"
    (again,) = urgent.interrupts
    assert again.prompt == f"{EMERGENCY_REPLY}\n\nDo you prefer museums or beaches in Lisbon?"
    done = await runtime.resume(agent, asked.thread_id, "beaches")
    assert done.output == "[ok] A day of beaches"


@pytest.mark.parametrize(
    ("options", "text", "fit"),
    [
        (["Home", "Motor"], "not home", "Motor"),  # a choice of two: the other one is meant
        (["Home", "Motor"], "I don't want Motor", "Home"),
        (["Home", "Motor"], "Home, not motor", "Home"),
        (["Home", "Motor"], "no, motor", "Motor"),
        (["delete my data", "keep my data"], "don't delete my data", "keep my data"),
        (["delete my data", "keep my data"], "please do not keep my data", "delete my data"),
        (["red", "green", "blue"], "not red", None),  # of three, a refusal does not say which
        (["red", "green", "blue"], "not red but blue", "blue"),
    ],
)
def test_an_option_named_in_a_negated_clause_is_refused(options: list[str], text: str, fit: str | None) -> None:
    assert Expectation(type="choice", options=options).fit(text) == fit


def _confirmer(said: list[str]) -> ReactAgent:
    """An agent whose tool would keep the data only on yes (what it is told is recorded in ``said``)."""
    return _asker("Keep your data?", ["yes", "no"], said)


@pytest.mark.parametrize("text", ["never mind", "cancel", "stop", "forget it"])
async def test_a_decline_of_a_yes_or_no_question_is_no_answer_at_all(text: str) -> None:
    said: list[str] = []
    agent = _confirmer(said)
    runtime = Runtime(MemoryStore())
    asked = await runtime.run(agent, "clean up")
    done = await runtime.resume(agent, asked.thread_id, text)
    assert not said  # the tool never took it for "no" (its destructive branch)
    assert done.output.startswith("[error] The user declined to answer the question 'Keep your data?'")


@pytest.mark.parametrize(("text", "answer"), [("no thanks", "no"), ("not now", "no"), ("nope", "no"), ("yes", "yes")])
async def test_a_plain_yes_or_no_still_answers(text: str, answer: str) -> None:
    said: list[str] = []
    agent = _confirmer(said)
    runtime = Runtime(MemoryStore())
    asked = await runtime.run(agent, "clean up")
    await runtime.resume(agent, asked.thread_id, text)
    assert said == [answer]


async def test_a_decline_of_a_free_text_question_is_not_taken_as_its_answer() -> None:
    noted: list[str] = []
    agent = _asker("What should the note say?", None, noted, "saved")
    runtime = Runtime(MemoryStore())
    asked = await runtime.run(agent, "note something")
    done = await runtime.resume(agent, asked.thread_id, "never mind")
    assert not noted and "declined to answer" in done.output
