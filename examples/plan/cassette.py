"""Write the plan service's cassette, ``examples/cassettes/plan_service.json``: the LLM planner's and the
specialists' requests and replies on the four demo tasks, replayed offline with ``PODIUM_PLAN_REPLAY=1``.

    python -m examples.plan.cassette                      # written for the replay model (no endpoint needed)
    PODIUM_MODEL=... python -m examples.plan.cassette     # recorded from the configured model instead

The requests are the ones the code sends, captured by :class:`~podium.models.replay.RecordingModel` as each demo
task runs (every step approved). With no model configured the replies are *written*, not recorded from a model:
the planner's answers are the JSON plans below, written by hand the way a model answers (two of them wrong at first,
a fenced answer and an unknown agent, so replay also runs validation and the retry), and each specialist's replies
come from :class:`~podium.orchestration.plan.OfflineAgentModel` (it calls the tool its step fits, then reports
the tool's result). The cassette's ``model`` fields say which.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from examples.plan_service import CASSETTE, DEMO_TASKS, build
from podium import Runtime
from podium.messages import AIMessage, HumanMessage, Usage
from podium.models.base import Model, ModelRequest, ModelResponse
from podium.models.replay import RecordingModel
from podium.orchestration.plan import OfflineAgentModel
from podium.settings import Settings

__all__ = ["PLANS", "write"]

_JESSICA = "Onboard Jessica Smith, who starts next week as a data analyst"
_ROAMING = "Enable roaming on my mobile phone for my trip next week"
_PRESS = "Get the product information for the new product and write a press release about it"
_HARDWARE = "Order hardware for a new starter: a laptop and a monitor"


def _plan(goal: str, summary: str, *steps: tuple[str, str]) -> str:
    return json.dumps(
        {"initial_goal": goal, "steps": [{"action": a, "agent": n} for n, a in steps], "summary": summary}, indent=1
    )


PLANS: dict[str, list[str]] = {
    _JESSICA: [
        _plan(
            "Onboard Jessica Smith, a data analyst who starts next week.",
            "HR records, payroll, benefits and orientation, then her mailbox and laptop.",
            ("HrAgent", "Create the HR employee record for Jessica Smith, data analyst, starting next week"),
            ("HrAgent", "Set up payroll for Jessica Smith"),
            ("HrAgent", "Enroll Jessica Smith in health and pension benefits"),
            ("HrAgent", "Schedule the onboarding orientation for Jessica Smith next week"),
            ("TechSupportAgent", "Create the mailbox for Jessica Smith"),
            ("TechSupportAgent", "Set up a laptop with standard software for Jessica Smith"),
        )
    ],
    _ROAMING: [
        _plan(
            "Enable roaming on the user's phone before next week's trip.",
            "Turn on roaming from next week.",
            ("MobileAgent", "Enable international roaming on the user's mobile phone line from next week"),
        ),
        _plan(
            "Enable roaming on the user's phone before next week's trip.",
            "Turn on roaming from next week.",
            ("TechSupportAgent", "Enable international roaming on the user's mobile phone line from next week"),
        ),
    ],
    _PRESS: [
        "```json\n"
        + _plan(
            "Announce the new product with a press release based on its product information.",
            "Product facts, then the press release, then a legal review.",
            ("ProductAgent", "Get the product information of the new product"),
        )
        + "\n```",
        _plan(
            "Announce the new product with a press release based on its product information.",
            "Product facts, then the press release, then a legal review.",
            ("ProductAgent", "Get the product information of the new product: features, specifications, pricing"),
            ("MarketingAgent", "Write a press release announcing the new product"),
            ("LegalAgent", "Review the press release about the new product for legal risks before publication"),
        ),
    ],
    _HARDWARE: [
        _plan(
            "Order a laptop and a monitor for the new starter.",
            "Two orders with procurement.",
            ("ProcurementAgent", "Order a standard laptop for the new starter"),
            ("ProcurementAgent", "Order a monitor for the new starter"),
        )
    ],
}
"""The planner's answers per demo task, in order (a wrong answer first where the planner must retry)."""


class _Written(Model):
    """Answers the planner from :data:`PLANS` and each specialist as :class:`OfflineAgentModel` does."""

    name = "written-for-replay"

    def __init__(self) -> None:
        self._agents = OfflineAgentModel()

    async def reply(self, request: ModelRequest) -> ModelResponse:
        if request.settings.response_format is None:
            answer = await self._agents.reply(request)
            return ModelResponse(message=answer.message, usage=Usage(), model_name=self.name, finish_reason="stop")
        first = next(m for m in request.messages if isinstance(m, HumanMessage))
        task = first.content.splitlines()[0].removeprefix("Task: ")
        tries = sum(1 for m in request.messages if isinstance(m, AIMessage))
        message = AIMessage(content=PLANS[task][tries])
        return ModelResponse(message=message, usage=Usage(), model_name=self.name, finish_reason="stop")


def write(path: Path = CASSETTE, model: Model | None = None) -> list[dict[str, Any]]:
    """Run every demo task with each step approved, recording the model's requests and replies into ``path``.

    Returns each run's outcome (``task``, ``status``, ``output``).
    """
    path.unlink(missing_ok=True)
    return asyncio.run(_run_all(RecordingModel(model or _Written(), path)))


async def _run_all(recorder: Model) -> list[dict[str, Any]]:
    outcomes = []
    for task in DEMO_TASKS:
        agent, runtime = build(recorder), Runtime()
        result = await runtime.run(agent, task)
        while result.status == "interrupted":
            result = await runtime.resume(agent, result.thread_id, "approve all")
        outcomes.append({"task": task, "status": result.status, "output": result.output})
    return outcomes


def main() -> None:
    """Write (or, with ``PODIUM_MODEL`` set, record) the cassette and say how each task ended."""
    outcomes = write(model=Settings.load().model_or_none())
    for outcome in outcomes:
        print(f"{outcome['status']}: {outcome['task']} -> {outcome['output']}")
    print(f"wrote {CASSETTE}")
    sys.exit(0 if all(o["status"] == "completed" for o in outcomes) else 1)


if __name__ == "__main__":
    main()
