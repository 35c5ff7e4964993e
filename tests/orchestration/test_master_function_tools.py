"""Functions given to the master agent: a decorated tool is listed and routed like a plain function, and the
arguments the classifier does not fill are asked of the human, one at a time, in their type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from podium import Runtime, Tool, ToolMetadata, tool
from podium.orchestration.master import FunctionTool, MasterAgent


def book_room(nights: int, city: str, text: str = "") -> str:
    """Book a hotel room.

    Args:
        nights: how many nights.
        city: the city.
        text: what the person said.
    """
    return f"Booked {nights} nights in {city} ({text})."


@tool
def opening_hours(day: str) -> str:
    """Tell the clinic's opening hours on a day of the week.

    Args:
        day: the day of the week.
    """
    return f"On {day} we open 8:00-18:00."


async def test_missing_arguments_are_asked_one_at_a_time_in_their_type() -> None:
    runtime, master = Runtime(), MasterAgent([book_room, opening_hours])
    said = []
    for line in ["I want to book a hotel room", "a few", "3 nights", "Lisbon"]:
        result = await runtime.send(master, line, thread_id="t")
        said.append(result.interrupts[0].prompt if result.interrupts else (result.output or "").split("\n")[0])
    assert said == [
        "book_room needs how many nights: what is it?",
        "'a few' is not a whole number. book_room needs how many nights: what is it?",
        "book_room needs the city: what is it?",
        "Booked 3 nights in Lisbon (I want to book a hotel room).",  # the human's request, not an answer, is text
    ]


async def test_a_decorated_tool_is_listed_and_routed_like_a_plain_function() -> None:
    runtime, master = Runtime(), MasterAgent([book_room, opening_hours])
    assert "opening_hours" in master.capabilities
    asked = await runtime.send(master, "what are your opening hours?", thread_id="t")
    assert asked.interrupts[0].prompt == "opening_hours needs the day of the week: what is it?"
    done = await runtime.send(master, "Monday", thread_id="t")
    assert (done.output or "").startswith("On Monday we open 8:00-18:00.")


async def test_a_tool_that_may_not_ask_says_what_it_needed() -> None:
    quiet = Tool(opening_hours.function, metadata=ToolMetadata(expose_to_user=True, can_generate_task=False))
    runtime, master = Runtime(), MasterAgent([quiet])
    done = await runtime.send(master, "what are your opening hours?", thread_id="t")
    assert (done.output or "").startswith("opening_hours needs day, which I could not tell from your message.")
    assert "Expected arguments" not in (done.output or "")


def order_status(order_id: str) -> str:
    """Tell the status of a customer order.

    Args:
        order_id: the order's id.
    """
    return f"Order {order_id} shipped yesterday."


def _described(**options: Any) -> ToolMetadata:
    return ToolMetadata(expose_to_user=True, examples=["where is my order?", "has my parcel shipped"], **options)


@pytest.mark.parametrize(
    "made",
    [
        lambda: FunctionTool(order_status, metadata=_described()),
        lambda: FunctionTool(Tool(order_status, metadata=_described())),
        lambda: Tool(order_status, metadata=_described(introduction="Check an order.")),
        lambda: FunctionTool(order_status, metadata=_described(can_generate_task=True)),
    ],
)
@pytest.mark.parametrize("request_text", ["Where is my order?", "has my parcel shipped yet", "order status please"])
async def test_metadata_given_for_routing_keeps_asking_for_missing_arguments(
    made: Callable[[], Any], request_text: str
) -> None:
    runtime, master = Runtime(), MasterAgent([made()])
    asked = await runtime.send(master, request_text, thread_id="t")
    assert [i.prompt for i in asked.interrupts] == ["order_status needs the order's id: what is it?"]
    done = await runtime.send(master, "ORD-1234", thread_id="t")
    assert (done.output or "").startswith("Order ORD-1234 shipped yesterday.")


async def test_only_can_generate_task_false_keeps_a_function_tool_from_asking() -> None:
    runtime, master = Runtime(), MasterAgent([FunctionTool(order_status, metadata=_described(can_generate_task=False))])
    done = await runtime.send(master, "Where is my order?", thread_id="t")
    assert not done.interrupts
    assert (done.output or "").startswith("order_status needs order id, which I could not tell from your message.")


def test_unset_can_generate_task_reads_as_the_wrappers_default() -> None:
    assert ToolMetadata().can_generate_task is None
    assert FunctionTool(order_status, metadata=_described()).metadata.can_generate_task is True
    assert FunctionTool(order_status, metadata=_described(can_generate_task=False)).metadata.can_generate_task is False
