"""A small plan service for the tests: three specialists, one of whose tools can fail or kill its process."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from podium import ReactAgent
from podium.models.base import Model
from podium.orchestration.plan import Catalogue, OfflineAgentModel, OfflinePlanner, PlanAndExecute, Planner, Specialist

MARKER = "PODIUM_TEST_PLAN_MARKER"
GATE = "PODIUM_TEST_PLAN_GATE"


async def create_account(user_name: str) -> str:
    """Create the account of a new employee when onboarding.

    Args:
        user_name: who.
    """
    gate = os.environ.get(GATE)  # with a gate file named, the step waits until the file exists
    while gate and not Path(gate).exists():  # noqa: ASYNC110, ASYNC240 - a file another process writes
        await asyncio.sleep(0.02)
    return f"account created for {user_name}"


def order_laptop(user_name: str) -> str:
    """Order a laptop for a new employee when onboarding.

    Args:
        user_name: who.
    """
    marker = os.environ.get(MARKER)  # the marker file makes it fail, or kill its process
    if marker and Path(marker).exists():
        mode = Path(marker).read_text()
        if mode == "crash":
            Path(marker).write_text("crashed")
            os._exit(3)  # the process dies mid-step
        if mode == "fail":
            raise RuntimeError("the supplier is out of laptops")
    return f"laptop ordered for {user_name}"


def welcome(user_name: str) -> str:
    """Send a welcome message to a new employee when onboarding.

    Args:
        user_name: who.
    """
    return f"welcomed {user_name}"


def catalogue(model: Model | None = None) -> Catalogue:
    """Three specialists (HR first, then Procurement, then the fallback)."""
    model = model or OfflineAgentModel()
    made = [
        ("Hr", "Accounts and people.", 10, [create_account]),
        ("Procurement", "Orders equipment.", 20, [order_laptop]),
        ("Generic", "Anything else.", 90, [welcome]),
    ]
    specialists = []
    for name, description, rank, functions in made:
        agent = ReactAgent(name, model, functions, max_steps=3, handle_tool_errors=False)
        specialists.append(
            Specialist(name=name, description=description, agent=agent, tools=list(agent.tools.values()), rank=rank)
        )
    return Catalogue(specialists)


def agent(planner: Planner | None = None, model: Model | None = None) -> PlanAndExecute:
    """The plan agent over :func:`catalogue`."""
    found = catalogue(model)
    return PlanAndExecute(planner or OfflinePlanner(found), found, name="plans")


def main() -> None:
    """``python plan_support.py DB THREAD``: start onboarding on the SQLite file and answer 'approve all'."""
    from podium import Runtime, SQLiteStore

    async def go() -> None:
        store = SQLiteStore(sys.argv[1])
        runtime = Runtime(store)
        waiting = await runtime.run(agent(), "Onboard Ada Lovelace", thread_id=sys.argv[2])
        assert waiting.status == "interrupted"
        await runtime.resume(agent(), sys.argv[2], "approve all")

    asyncio.run(go())


if __name__ == "__main__":
    main()
