"""The plan service (seed 002): a planner, seven specialists over 152 tools, and the human approving each step.

Offline (no ``PODIUM_MODEL``) the deterministic :class:`~podium.orchestration.plan.OfflinePlanner` plans and each
specialist's model is :class:`~podium.orchestration.plan.OfflineAgentModel` (it calls the tool its step names);
with ``PODIUM_MODEL`` set, the model plans (shown only the relevant tools) and drives every specialist. With
``PODIUM_PLAN_REPLAY=1`` (and no model) the LLM planner and the specialists run on the replay model over the
cassette of the four demo tasks (``examples/cassettes/plan_service.json``, written by ``examples/plan/cassette.py``):
the model path (structured output, validation, a retry) offline, for those tasks only.

    podium chat plan-service
    > Onboard Jessica Smith, who starts next week as a data analyst
    > approve          (or: approve all, reject, edit: <new action>, clarify: <information>)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from examples.plan.tools import TABLES, build_tools
from podium.agents.base import Agent
from podium.agents.react import ReactAgent
from podium.app import App
from podium.models.base import Model
from podium.orchestration.plan import (
    Catalogue,
    LLMPlanner,
    OfflineAgentModel,
    OfflinePlanner,
    PlanAndExecute,
    Specialist,
)
from podium.settings import Settings

__all__ = ["CASSETTE", "DEMO_TASKS", "REPLAY", "app", "build", "catalogue"]

REPLAY = "PODIUM_PLAN_REPLAY"
"""Set to ``1`` (with no ``PODIUM_MODEL``) to run the demo tasks' cassette through the LLM planner."""

CASSETTE = Path(__file__).resolve().parent / "cassettes" / "plan_service.json"
"""The demo tasks' cassette (see ``examples/plan/cassette.py``)."""

_SPECIALISTS: list[tuple[str, str, int]] = [
    ("HrAgent", "Human resources: employee records, onboarding, payroll, benefits, leave, hiring.", 10),
    ("LegalAgent", "Legal: contracts, agreements, compliance, trademarks, reviews of public statements.", 65),
    ("ProcurementAgent", "Procurement: ordering hardware, equipment and supplies, suppliers, purchase orders.", 30),
    ("TechSupportAgent", "Tech support: accounts, email, laptops set-up, phones, roaming, network, security.", 40),
    ("ProductAgent", "Product: product information, specifications, pricing, roadmap, mobile plans and add-ons.", 50),
    ("MarketingAgent", "Marketing: press releases, campaigns, social media, content, events.", 60),
    ("GenericAgent", "Anything the others do not cover: research, documents, meetings, messages.", 90),
]

DEMO_TASKS: dict[str, set[str]] = {
    "Onboard Jessica Smith, who starts next week as a data analyst": {
        "create_employee_record",
        "set_up_payroll",
        "enroll_in_benefits",
        "schedule_orientation",
        "set_up_email_account",
        "set_up_laptop",
    },
    "Enable roaming on my mobile phone for my trip next week": {"enable_mobile_roaming"},
    "Get the product information for the new product and write a press release about it": {
        "get_product_info",
        "write_press_release",
    },
    "Order hardware for a new starter: a laptop and a monitor": {"order_laptop", "order_monitor"},
}
"""The demo tasks, each with the tools its plan needs (checked by the tests and ``bench/plan.py``)."""


def _prompt(name: str, description: str) -> str:
    return (
        f"You are the {name} of a company's assistant team ({description}) You are given one step of a plan with "
        "the goal and what was done before. Do the step with your tools, then say in one or two sentences what you "
        "did. Your tools are demo stand-ins: report what they say."
    )


def catalogue(model: Model) -> Catalogue:
    """The seven specialists, each a tool-calling agent on ``model`` over its own tools."""
    specialists = []
    for name, description, rank in _SPECIALISTS:
        tools = build_tools(TABLES[name])
        agent = ReactAgent(name, model, tools, prompt=_prompt(name, description), description=description, max_steps=6)
        specialists.append(Specialist(name=name, description=description, agent=agent, tools=tools, rank=rank))
    return Catalogue(specialists, fallback="GenericAgent")


def build(model: Model) -> Agent:
    """The plan-and-execute agent: offline planner for the offline model, else the model plans."""
    found = catalogue(model)
    planner = OfflinePlanner(found) if isinstance(model, OfflineAgentModel) else LLMPlanner(found, model)
    return PlanAndExecute(planner, found, name="plan-service")


@dataclass(slots=True, kw_only=True)
class _PlanApp(App):
    """Runs offline with no cassette (the offline planner and agents need no recorded replies), or on the demo
    tasks' cassette when :data:`REPLAY` asks for it."""

    def model(self, settings: Settings) -> Model:
        real = settings.model_or_none()
        if real is not None:
            return real
        if os.environ.get(REPLAY, "").strip().lower() in ("1", "true", "yes", "on"):
            from podium.models.replay import ReplayModel

            return ReplayModel(CASSETTE)
        return OfflineAgentModel()


app = _PlanApp(
    name="plan-service",
    build=build,
    welcome="Type a task (e.g. 'Onboard Jessica Smith, who starts next week'); then approve, reject or edit each step.",
)
