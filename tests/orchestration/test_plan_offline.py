"""The offline planner and agent model, the catalogue, and the plan-service example run offline."""

from __future__ import annotations

import json

import pytest
from tests.orchestration.plan_support import agent, catalogue

from examples.plan_service import DEMO_TASKS, app, build
from examples.plan_service import catalogue as demo_catalogue
from podium import HumanMessage, Runtime, ToolMessage
from podium.errors import UsageError
from podium.models.base import ModelRequest
from podium.orchestration.plan import (
    RECORD_KEY,
    Catalogue,
    OfflineAgentModel,
    OfflinePlanner,
    PlanRequest,
    SessionRecord,
    Specialist,
    facts,
    words,
)
from podium.settings import Settings
from podium.tools import Tool


def test_facts_find_the_person_the_date_and_a_number() -> None:
    assert facts("Onboard Jessica Smith, who starts next week") == {"name": "Jessica Smith", "date": "next week"}
    assert facts("Jessica Smith leaves on Friday. Order 3 laptops") == {
        "name": "Jessica Smith",
        "date": "on Friday",
        "number": "3",
    }
    assert facts("Tech Support should call. Ask Ada Byron King.") == {"name": "Ada Byron King"}
    assert facts("nothing here") == {}
    assert words("Onboarding the new employees quickly") == ["onboard", "new", "employee", "quickly"]


def test_the_demo_tasks_get_plans_with_every_needed_tool_in_role_order() -> None:
    planner = OfflinePlanner(demo_catalogue(OfflineAgentModel()))
    ranks = {name: s.rank for name, s in planner.catalogue.specialists.items()}
    for task, needed in DEMO_TASKS.items():
        draft = planner.draft(PlanRequest(task=task))
        tools = {s.tool for s in draft.steps}
        assert tools >= needed, task
        assert [ranks[s.agent] for s in draft.steps] == sorted(ranks[s.agent] for s in draft.steps)
        assert draft.human_clarification_request is None
    onboarding = planner.draft(PlanRequest(task=next(iter(DEMO_TASKS))))
    # prose: the description's "when ..." (when to use the tool) is cut, the tool is a field, not a "[name]" suffix
    assert onboarding.steps[0].action == "Create the HR record of an employee for Jessica Smith, next week."
    assert onboarding.steps[0].tool == "create_employee_record"


def test_the_offline_planner_caps_steps_and_falls_back() -> None:
    planner = OfflinePlanner(demo_catalogue(OfflineAgentModel()), per_agent=1, max_steps=2)
    draft = planner.draft(PlanRequest(task="Onboard Jessica Smith, who starts next week"))
    assert [s.agent for s in draft.steps] == ["HrAgent", "TechSupportAgent"]
    nothing = planner.draft(PlanRequest(task="Quantum zebra xylophone"))
    assert nothing.steps == [] and (nothing.human_clarification_request or "").startswith(
        "I could not make a plan for 'Quantum zebra xylophone'"
    )


async def test_the_offline_model_fills_arguments_by_type_and_reports_the_result() -> None:
    def everything(
        employee_name: str,
        start_date: str,
        email: str,
        count: int,
        amount: float,
        urgent: bool,
        items: list[str],
        extra: dict[str, str],
        plan: str = "basic",
    ) -> str:
        """Do everything."""
        return "ok"

    tool = Tool(everything, parameters=None)
    tool.parameters["properties"]["plan"]["enum"] = ["basic", "premium"]
    tool.parameters["required"].append("plan")
    model = OfflineAgentModel()
    text = "Goal: x\nAction: Do everything premium for Ada Lovelace (next week), 3 times [everything]"
    reply = (await model.reply(ModelRequest(messages=[HumanMessage(content=text)], tools=[tool.spec]))).message
    arguments = json.loads(reply.tool_calls[0].arguments)
    assert arguments == {
        "employee_name": "Ada Lovelace",
        "start_date": "next week",
        "email": "ada.lovelace@example.com",
        "count": 3,
        "amount": 3.0,
        "urgent": True,
        "items": ["Do everything premium for Ada Lovelace (next week), 3 times"],
        "extra": {},
        "plan": "premium",
    }
    tool.validate(arguments)
    answer = ToolMessage(content="boom", tool_call_id="c", name="everything", is_error=True)
    assert (await model.reply(ModelRequest(messages=[answer]))).message.content == "I could not do it: boom"
    plain = await model.reply(ModelRequest(messages=[HumanMessage(content="Action: wave")]))
    assert plain.message.content == "Done: wave"
    unnamed = "Action: everything at once for Ada Lovelace (next week), 3 times"
    called = await model.reply(ModelRequest(messages=[HumanMessage(content=unnamed)], tools=[tool.spec]))
    assert called.message.tool_calls[0].name == "everything"


def test_catalogue_rules_and_listing() -> None:
    found = catalogue()
    with pytest.raises(UsageError, match="two specialists"):
        Catalogue([*found.specialists.values(), found.specialists["Hr"]])
    with pytest.raises(UsageError, match="at least one"):
        Catalogue([])
    with pytest.raises(UsageError, match="fallback 'Nobody'"):
        Catalogue(found.specialists.values(), fallback="Nobody")
    assert found.get("h r") is found.specialists["Hr"] and found.get("Legal") is None
    listing = demo_catalogue(OfflineAgentModel()).to_json()
    assert len(listing) == 152 and set(listing[0]) == {"agent", "function", "description", "arguments"}
    assert listing[0]["arguments"]["required"] == ["employee_name", "start_date"]


async def test_onboarding_jessica_smith_runs_end_to_end_offline_in_the_example_app() -> None:
    plans = app.build(app.model(Settings.load(env={})))
    runtime = Runtime()
    result = await runtime.run(plans, "Onboard Jessica Smith, who starts next week as a data analyst")
    while result.status == "interrupted":
        result = await runtime.resume(plans, result.thread_id, "approve")
    assert result.output == "Plan completed: 6 of 6 steps done. 6 steps by HrAgent, TechSupportAgent."
    stored = SessionRecord.from_events(result.thread_id, await runtime.store.read_events(result.thread_id))
    assert await runtime.store.get_state(result.thread_id, RECORD_KEY) == {"plan_id": stored.plans[0].id, "version": 1}
    replies = [s.agent_reply for s in stored.plans[0].steps]
    assert replies[0] == (
        "[demo stand-in, nothing was changed] Would create the HR record of an employee when onboarding someone who "
        "starts (employee_name=Jessica Smith, start_date=next week)."
    )
    assert all("Jessica Smith" in reply for reply in replies)


def test_the_example_plans_with_the_model_when_one_is_set() -> None:
    from podium.orchestration.plan import LLMPlanner
    from podium.testing import ScriptedModel

    assert isinstance(build(ScriptedModel([])).planner, LLMPlanner)  # type: ignore[attr-defined]
    assert isinstance(agent().planner, OfflinePlanner)
    assert isinstance(Specialist, type)


def test_a_re_plan_leaves_out_done_work_even_when_the_clarification_changes_the_details() -> None:
    from podium.orchestration.plan import DoneStep

    planner = OfflinePlanner(demo_catalogue(OfflineAgentModel()))
    first = planner.draft(PlanRequest(task="Onboard Ada Lovelace, who starts next week"))
    done = [DoneStep(action=s.action, agent=s.agent, result="ok", tool=s.tool) for s in first.steps[:2]]
    again = planner.draft(
        PlanRequest(
            task="Onboard Ada Lovelace, who starts next week", clarifications=["she starts 2026-12-01"], done=done
        )
    )
    assert len(again.steps) == len(first.steps) - 2
    assert not any(s.tool in ("create_employee_record", "set_up_payroll") for s in again.steps)
    assert all(", 2026-12-01." in s.action for s in again.steps)


async def test_the_offline_model_never_fills_a_person_date_or_number_with_the_action_text() -> None:
    def leave(employee_name: str, last_day: str, salary: float) -> str:
        """Let an employee go."""
        return "ok"

    spec = Tool(leave).spec
    model = OfflineAgentModel()
    text = "Goal: x\nAction: Start offboarding for a leaving employee: exit interview, final pay [leave]"
    reply = (await model.reply(ModelRequest(messages=[HumanMessage(content=text)], tools=[spec]))).message
    assert reply.tool_calls == []
    assert reply.content == (
        "I could not do this step: leave needs employee_name, last_day, salary, which the step does not say."
    )
    full = "Action: Start offboarding for Tom Baker (30 June), salary 5000 [leave]"
    called = (await model.reply(ModelRequest(messages=[HumanMessage(content=full)], tools=[spec]))).message
    assert json.loads(called.tool_calls[0].arguments) == {
        "employee_name": "Tom Baker",
        "last_day": "30 June",
        "salary": 5000.0,
    }


def _tools(planner: OfflinePlanner, task: str, *clarifications: str) -> list[str]:
    draft = planner.draft(PlanRequest(task=task, clarifications=list(clarifications)))
    return [s.tool or "" for s in draft.steps]


def test_the_offline_planner_keeps_to_the_task_s_subject() -> None:
    """Words saying when ("last day"), a verb shared with a tool ("book" a room) and negated clauses do not pull in
    steps; the demo tasks keep their plans (checked above)."""
    planner = OfflinePlanner(demo_catalogue(OfflineAgentModel()))
    assert _tools(planner, "Offboard Tom Baker, whose last day is Friday") == ["start_offboarding"]
    # the leave request needs a number of days the task does not say: asked first, then planned
    assert _tools(planner, "Book annual leave for Maria Garcia from 3 to 14 March") == []
    assert _tools(planner, "Book annual leave for Maria Garcia from 3 to 14 March", "10 days") == [
        "process_leave_request"
    ]
    # what it is for ("for the new partnership") is not a second thing to draft
    assert _tools(planner, "Draft an NDA with Acme Corp for the new partnership") == ["draft_nda"]
    assert "submit_regulatory_filing" not in _tools(planner, "Submit my travel expenses for the Berlin conference")
    onboarding = _tools(planner, "Onboard Kim Park on Monday but do not order a laptop, she brings her own")
    assert "create_employee_record" in onboarding and "order_laptop" not in onboarding
    # a thing no tool knows is not guessed to be one some tool does the same to: the closest tools are said instead
    assert _tools(planner, "Translate the brochure into German") == []
    assert _tools(planner, "Translate a text into German") == ["translate_text"]


def test_the_offline_planner_asks_about_a_task_it_cannot_map() -> None:
    planner = OfflinePlanner(demo_catalogue(OfflineAgentModel()))
    for task in ("asdf qwerty zxcv", "Intégrer Jeanne Dupont qui commence lundi", "Blorp the snargle"):
        draft = planner.draft(PlanRequest(task=task))
        assert draft.steps == [], task
        assert f"I could not make a plan for {task!r}" in (draft.human_clarification_request or "")


def test_a_clarification_s_person_and_date_replace_the_task_s() -> None:
    planner = OfflinePlanner(demo_catalogue(OfflineAgentModel()))
    task = "Onboard Jessica Smith, who starts next week as a data analyst"
    for clarification, expected in [
        ("the new starter is Ada Lovelace, starting on Monday", "for Ada Lovelace, on Monday."),
        ("she starts on 1 June", "for Jessica Smith, 1 June."),
        ("her name is Ada Lovelace", "for Ada Lovelace, next week."),
    ]:
        draft = planner.draft(PlanRequest(task=task, clarifications=[clarification]))
        assert draft.steps and all(expected in s.action for s in draft.steps), clarification
    offboard = planner.draft(
        PlanRequest(
            task="Offboard Tom Baker, whose last day is Friday",
            clarifications=["His name is actually Thomas Becker and his last day is 30 June"],
        )
    )
    assert [s.action for s in offboard.steps] == [
        "Start offboarding for a leaving employee: exit interview, equipment return, final pay for Thomas Becker, "
        "30 June."
    ]


def test_the_offline_planner_asks_for_a_date_the_tools_need() -> None:
    """A task without the date its tools require gets one question naming everything missing; the answer's date is
    in every step (a step never runs without the date its tool needs)."""
    planner = OfflinePlanner(demo_catalogue(OfflineAgentModel()))
    asked = planner.draft(PlanRequest(task="Onboard Ada Lovelace"))
    assert not asked.steps
    assert asked.human_clarification_request is not None
    assert "I need to know the date" in asked.human_clarification_request
    both = planner.draft(PlanRequest(task="Onboard a new employee as a data scientist"))
    assert both.human_clarification_request is not None
    assert "who it is for and the date" in both.human_clarification_request
    assert "for Ada Lovelace, next Monday" in both.human_clarification_request  # an example answer that says both
    answered = planner.draft(PlanRequest(task="Onboard Ada Lovelace", clarifications=["she starts on 2026-12-01"]))
    assert answered.steps and all("2026-12-01" in s.action for s in answered.steps)
    dated = planner.draft(PlanRequest(task="Onboard Ada Lovelace, who starts tomorrow"))
    assert dated.steps and dated.human_clarification_request is None


@pytest.mark.parametrize(
    ("task", "tools"),
    [
        # an extra step on the same thing ("a docking station for a laptop") is not asked for
        ("order a monitor for Grace Hopper", ["order_monitor"]),
        ("Order a laptop for Alan Turing", ["order_laptop"]),
        # a word that only describes another ("taxi", "conference") does not bring in its tools
        ("file my taxi expenses from the Lyon conference, 80 euros", ["file_expense"]),
        # the thing a participle phrase is about ("announcing our hiring drive") is not a second task
        ("write a blog post announcing our hiring drive", ["write_blog_post"]),
        # another thing done to the same kind of object ("review" for "write") is not the task
        ("write a press release about the new office", ["write_press_release"]),
        ("reset the password for Grace Hopper", ["reset_password"]),
    ],
)
def test_every_step_is_one_the_task_asks_for(task: str, tools: list[str]) -> None:
    assert _tools(OfflinePlanner(demo_catalogue(OfflineAgentModel())), task) == tools


@pytest.mark.parametrize(
    "task",
    [
        "review the partnership agreement with Initech before Monday",  # drafting one is not reviewing it
        "order a laptop bag for Grace Hopper",  # no tool orders bags: not a laptop instead
        "repair the office coffee machine",
    ],
)
def test_a_task_no_tool_does_is_told_so_with_the_closest_tools_not_planned_as_other_work(task: str) -> None:
    draft = OfflinePlanner(demo_catalogue(OfflineAgentModel())).draft(PlanRequest(task=task))
    assert draft.steps == []
    question = draft.human_clarification_request or ""
    assert question.startswith(
        (f"I cannot plan {task!r}: no agent has a tool", f"I could not make a plan for {task!r}")
    )
    assert "for example" in question or "The closest I have:" in question


def test_every_person_a_task_names_gets_the_steps() -> None:
    planner = OfflinePlanner(demo_catalogue(OfflineAgentModel()))
    draft = planner.draft(PlanRequest(task="Order a laptop for Grace Hopper and Alan Turing"))
    assert [s.action for s in draft.steps] == [
        "Order a laptop for an employee or new starter for Grace Hopper.",
        "Order a laptop for an employee or new starter for Alan Turing.",
    ]
    three = planner.draft(PlanRequest(task="Reset the passwords of Grace Hopper, Alan Turing and Ada Lovelace"))
    assert [s.action.rpartition(" for ")[2] for s in three.steps] == ["Grace Hopper.", "Alan Turing.", "Ada Lovelace."]


def test_a_day_of_the_month_alone_is_a_date() -> None:
    assert facts("oh she's actually starting on the 3rd")["date"] == "the 3rd"
    assert facts("he starts the 21st of May")["date"] == "21st of May"
