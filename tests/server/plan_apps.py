"""Plan apps for the server tests: the small plan service of the orchestration tests, and a planner that fails."""

from __future__ import annotations

from pathlib import Path

from tests.orchestration import plan_support

from podium.app import App
from podium.orchestration.plan import LLMPlanner
from podium.testing import ScriptedModel

CASSETTE = Path(__file__).parent / "cassettes" / "empty.json"

small = App(name="plans", build=lambda model: plan_support.agent(), cassette=CASSETTE)
"""Three steps (Hr, Procurement, Generic) for "Onboard <name>"; the Procurement tool obeys the marker file."""

failing = App(
    name="plans",
    build=lambda model: plan_support.agent(LLMPlanner(plan_support.catalogue(), ScriptedModel(["{}"] * 3))),
    cassette=CASSETTE,
)
"""A planner whose model never answers with a valid plan."""
