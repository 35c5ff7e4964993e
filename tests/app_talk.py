"""Talking to an example app offline, as a person would in one conversation."""

from __future__ import annotations

from podium import Runtime, Settings
from podium.app import load_app


async def talk(lines: list[str], app_name: str = "trip") -> list[str | None]:
    """What an offline app says to ``lines``, sent one by one in one conversation (a question's prompt when a turn
    ends waiting for an answer); a failed run fails the test."""
    app = load_app(app_name)
    agent = app.build(app.model(Settings.load(env={})))
    runtime, thread, said = Runtime(), None, []
    for line in lines:
        result = await runtime.send(agent, line, thread_id=thread)
        assert result.status in ("completed", "interrupted"), (line, result.reason)
        thread = result.thread_id
        said.append(result.output if result.status == "completed" else result.interrupts[0].prompt)
    return said
