"""The master agent's tools that wait for approval: a function tool given to the orchestrator, and an agent's tool
asked through the task stack; the orchestrator's own arguments (the human's text) are neither shown nor edited."""

from __future__ import annotations

from typing import Any

from tests.approval_support import transfer_agent

from podium import Runtime, Tool, ToolMetadata
from podium.orchestration.master import MasterAgent


def _payments(paid: list[tuple[int, str]]) -> Tool:
    def pay_invoice(text: str, amount: int = 0) -> str:
        """Pay an invoice: transfer money for a bill.

        Args:
            text: what the person said.
            amount: how much to pay.
        """
        paid.append((amount, text))
        return f"paid {amount}"

    # a Tool object keeps its own metadata: this one says users may start a task with it
    return Tool(pay_invoice, approval=True, metadata=ToolMetadata(expose_to_user=True, can_generate_task=True))


async def test_a_function_tool_of_the_orchestrator_waits_for_approval() -> None:
    paid: list[tuple[int, str]] = []
    runtime, master = Runtime(), MasterAgent([_payments(paid)])
    said = "please pay 120 for my invoice bill"
    first = await runtime.run(master, said, thread_id="t")
    assert first.status == "interrupted", first.output
    (asked,) = first.interrupts
    assert asked.prompt == "May I call pay_invoice with {}?"  # the offline router fills no amount; no text shown
    assert asked.expectation is not None and asked.expectation.type == "approval"
    done = await runtime.send(master, 'edit: {"amount": 40}', thread_id="t")
    assert paid == [(40, said)]  # the human's text still reaches the tool
    assert "The user changed the arguments to" in (done.output or "") and "paid 40" in (done.output or "")

    again = await runtime.run(master, said, thread_id="t2")
    assert again.status == "interrupted"
    refused = await runtime.send(master, "no, it is paid already", thread_id="t2")
    assert paid == [(40, said)]
    assert "The user rejected this call of pay_invoice" in (refused.output or "")


async def test_an_agent_s_tool_waits_for_approval_through_the_task_stack() -> None:
    sent: list[dict[str, Any]] = []
    banker = transfer_agent(sent, name="payments", description="Make payments and transfer money to people.")
    runtime, master = Runtime(), MasterAgent([banker])
    first = await runtime.run(master, "I want to transfer money to Ada", thread_id="t")
    assert [i.prompt for i in first.interrupts] == ['May I call transfer with {"amount": 100, "to": "Ada"}?']
    unclear = await runtime.send(master, "hmm", thread_id="t")
    assert unclear.status == "interrupted" and not sent
    done = await runtime.send(master, "yes", thread_id="t")
    assert sent == [{"amount": 100, "to": "Ada"}] and "sent 100 to Ada" in (done.output or "")
