"""Functions given to the master agent: a decorated tool is listed and routed like a plain function, and the
arguments the classifier does not fill are asked of the human, one at a time, in their type."""

from __future__ import annotations

from podium import Runtime, Tool, ToolMetadata, tool
from podium.orchestration.master import MasterAgent


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
