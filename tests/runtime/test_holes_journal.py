"""Journal guarantees found missing by fault injection: keys by position, exact steps, unserialisable results."""

from __future__ import annotations

from typing import Any

from podium import AIMessage, HumanMessage, Message, ModelRequest, ReactAgent, RunContext, Runtime, Store, ToolMessage
from podium.messages import ToolCall, valid_history
from podium.testing import FunctionModel, tool_call


async def test_an_answer_goes_to_the_question_it_answers_when_the_model_reuses_call_ids(store: Store) -> None:
    paid: list[int] = []

    async def pay(ctx: RunContext[Any], amount: int) -> str:
        """Pay an amount after the human confirms."""
        if await ctx.ask(f"Pay {amount} EUR?") != "yes":
            return "not paid"
        paid.append(amount)
        return f"paid {amount}"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if len(results) == 2:
            return AIMessage(content=" / ".join(r.content for r in results))
        amount = 10 if not results else 5000
        return AIMessage(tool_calls=[tool_call("pay", {"amount": amount}, id="call_0")])  # the same id every turn

    runtime = Runtime(store)
    agent = ReactAgent("payer", FunctionModel(model), [pay])
    first = await runtime.run(agent, "pay twice", thread_id="t")
    assert [i.prompt for i in first.interrupts] == ["Pay 10 EUR?"]
    second = await runtime.resume(agent, "t", "yes")
    assert second.status == "interrupted", "the second payment took the first one's answer"
    assert [i.prompt for i in second.interrupts] == ["Pay 5000 EUR?"]
    done = await runtime.resume(agent, "t", "no")
    assert done.output == "paid 10 / not paid" and paid == [10]


def test_two_calls_with_one_id_keep_one_result_each() -> None:
    calls = [ToolCall(id="x", name="a", arguments="{}"), ToolCall(id="x", name="b", arguments="{}")]
    history: list[Message] = [
        HumanMessage(content="go"),
        AIMessage(tool_calls=calls),
        ToolMessage(content="from a", tool_call_id="x", name="a"),
        ToolMessage(content="from b", tool_call_id="x", name="b"),
    ]
    shown = valid_history(history)
    assert [m.content for m in shown if isinstance(m, ToolMessage)] == ["from a", "from b"]
    assert shown == history
