"""Tools that wait for the human's approval: approve, reject with a reason, or edit the arguments (re-asked when the
edit does not fit); each decision is taken once, and the tool runs at most once, across resumes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.approval_support import transfer_agent

from podium import Expectation, Runtime, Store, Tool, tool
from podium.human import approval


async def test_an_approved_call_runs_once_with_the_model_s_arguments(store: Store) -> None:
    ran: list[dict[str, Any]] = []
    runtime, agent = Runtime(store), transfer_agent(ran)
    first = await runtime.run(agent, "pay Ada", thread_id="t")
    assert first.status == "interrupted" and not ran
    (asked,) = first.interrupts
    assert asked.prompt == 'May I call transfer with {"amount": 100, "to": "Ada"}?'
    assert asked.expectation is not None and asked.expectation.type == "approval"
    assert asked.data == {"approval": {"name": "transfer", "arguments": {"amount": 100, "to": "Ada"}}}
    done = await runtime.resume(agent, "t", "yes, go ahead")
    assert done.status == "completed" and done.output == "done: sent 100 to Ada"
    assert ran == [{"amount": 100, "to": "Ada"}]


async def test_a_rejected_call_is_not_run_and_the_model_hears_why(store: Store) -> None:
    ran: list[dict[str, Any]] = []
    runtime, agent = Runtime(store), transfer_agent(ran)
    await runtime.run(agent, "pay Ada", thread_id="t")
    done = await runtime.resume(agent, "t", "No, she was paid already.")
    assert not ran
    assert (
        done.output == "done: The user rejected this call of transfer; it was not run. They said: she was paid already"
    )


async def test_edited_arguments_are_checked_then_run_and_the_model_is_told(store: Store) -> None:
    ran: list[dict[str, Any]] = []
    runtime, agent = Runtime(store), transfer_agent(ran)
    await runtime.run(agent, "pay Ada", thread_id="t")
    again = await runtime.resume(agent, "t", 'edit: {"amount": "lots", "to": "Ada"}')  # not a number: asked again
    assert again.status == "interrupted" and not ran
    (asked,) = again.interrupts
    assert asked.prompt.startswith('May I call transfer with {"amount": 100, "to": "Ada"}? (Invalid arguments')
    assert "Edit them again, approve the call as it was, or reject it." in asked.prompt
    unclear = await runtime.resume(agent, "t", "hmm, let me think")  # fits no decision: asked again, saying how
    assert unclear.status == "interrupted" and "'edit: <the arguments as JSON>'" in unclear.interrupts[0].prompt
    done = await runtime.resume(agent, "t", '{"amount": 40, "to": "Ada"}')
    assert ran == [{"amount": 40, "to": "Ada"}]
    assert done.output == (
        'done: (The user changed the arguments to {"amount":40,"to":"Ada"}; this is the result of that call.)\n'
        "sent 40 to Ada"
    )


def test_a_tool_s_approval_is_an_option_of_tool_and_tool_s_constructor() -> None:
    def noop() -> str:
        """Do nothing."""
        return ""

    assert Tool(noop, approval=True).approval and tool(approval=True)(noop).approval
    assert not Tool(noop).approval and not tool(noop).approval


@pytest.mark.parametrize(
    ("said", "decision"),
    [
        ("approve", "approve"),
        ("Yes please", "approve"),
        ("Approved!", "approve"),
        ("no", "reject"),
        ("never mind", "reject"),
        ("no thanks", "reject"),
        ("don't do that", "reject"),
        ("No, too expensive.", "reject: too expensive"),
        ("reject: over budget", "reject: over budget"),
        ("Reject because it is late", "reject: it is late"),
        ('edit: {"city": "Paris", "nights": 2}', 'edit: {"city":"Paris","nights":2}'),
        ('{"city": "Paris"}', 'edit: {"city":"Paris"}'),
        ("edit: {broken", None),
        ("edit: [1, 2]", None),
        ("maybe", None),
        ("change it to Paris", None),
        ("nothing", None),
        ("", None),
    ],
)
def test_an_approval_reads_approve_reject_with_a_reason_and_edits(said: str, decision: str | None) -> None:
    assert approval(said) == decision
    assert Expectation.approval().fit(said) == decision


def test_an_approval_expectation_round_trips_and_says_how_to_answer() -> None:
    expectation = Expectation.approval()
    assert Expectation.from_dict(json.loads(json.dumps(expectation.to_dict()))) == expectation
    assert expectation.options == ["approve", "reject"]  # clients that only render buttons show these two
    assert "edit: <the arguments as JSON>" in expectation.hint()


async def test_an_edit_names_only_the_arguments_it_changes(store: Store) -> None:
    ran: list[dict[str, Any]] = []
    runtime, agent = Runtime(store), transfer_agent(ran)
    await runtime.run(agent, "pay Ada", thread_id="t")
    done = await runtime.resume(agent, "t", 'edit: {"amount": 40}')  # "to" keeps the model's value
    assert ran == [{"amount": 40, "to": "Ada"}]
    assert done.output.startswith('done: (The user changed the arguments to {"amount":40,"to":"Ada"};')


async def test_a_re_asked_approval_says_what_does_not_fit_without_the_schema(store: Store) -> None:
    runtime, agent = Runtime(store), transfer_agent([])
    await runtime.run(agent, "pay Ada", thread_id="t")
    again = await runtime.resume(agent, "t", 'edit: {"amount": "lots"}')
    (asked,) = again.interrupts
    assert "amount: Input should be a valid integer" in asked.prompt
    assert "schema" not in asked.prompt  # the schema is for a model; a person is told what does not fit
