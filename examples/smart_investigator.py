"""SmartInvestigator: the Master Agent of seed 000 over two agent-tools, DeclineLetterAssistance and SmartStrategy.

Run it with ``podium chat smart-investigator``. Offline (no ``PODIUM_MODEL``) the embedded router classifies every
message: no model is called, and the empty cassette only tells ``podium chat`` so. With ``PODIUM_MODEL`` set, the
hybrid classifier asks the model when the router is unsure.

Try the seed's conversation, one line at a time::

    I want to craft a declined letter.
    Where to find a claim id?
    I am a Suncorp friend.
    I am a partner.
    My id is 123ABH
    Personal Injury
    I want to commit fraud.
    I want to do Motor.

The two tools show the two kinds of stateful agents: DeclineLetterAssistance keeps its slots in its own persisted
state (keyed by the conversation and the call), SmartStrategy hands its state back in the task stack. The claim
lookup and the letter store are stand-ins: they say what a real service would answer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from podium import AIMessage, Expectation, Message, Model, ModelRequest, RunContext, Settings, ToolMetadata
from podium.app import App
from podium.orchestration.master import (
    Classifier,
    MasterAgent,
    MasterTool,
    Router,
    ToolContent,
    ToolInput,
    classifier_for,
    corrections,
    fit_expectation,
    harmful_term,
)

CASSETTE = Path(__file__).parent / "cassettes" / "smart_investigator.json"
TITLE = "Smart Investigator"

CLAIM_ID = Expectation(
    type="pattern",
    pattern=r"\b(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{5,12}\b",
    description="a claim id: letters and digits, e.g. 123ABH",
)
TOPOLOGY = Expectation(type="choice", options=["Home", "Motor"], description="the crime topology: Home or Motor")
ROLE = Expectation(
    type="choice", options=["internal employee", "partner"], description="internal employee or partner of Suncorp"
)

# Stand-in for the claim systems: where each kind of user finds a claim id.
WHERE = {"partner": "www.my_id.com", "internal employee": "the Claims Hub, under My claims"}

LETTER = (
    "Here is the letter for claim {claim_id} (crime topology: {topology}). "
    "You can find it at www.dl_artifact.com.au.\n\n"
    "Dear customer,\nWe have carefully reviewed claim {claim_id} under your {topology} policy. "
    "We regret to inform you that the claim is declined under the policy's terms.\nYours sincerely,\nClaims team"
)


class DeclineLetterAssistance(MasterTool):
    """Fills two slots (claim id, then crime topology) and produces the letter; keeps its own persisted state."""

    name = "DeclineLetterAssistance"
    description = (
        "Crafts a standardised decline letter for an insurance claim. It needs the claim id (letters and digits) "
        "and the crime topology of the letter (Home or Motor)."
    )
    metadata = ToolMetadata(
        expose_to_user=True,
        introduction="Assist you in crafting a standardised declined letter.",
        can_generate_task=True,
        takes_corrections=True,
        examples=[
            "I want to write a decline letter",
            "Draft a declined letter for a claim",
            "Help me craft a letter declining a claim",
            "Generate a standardised decline letter",
            "I need to decline a claim in writing",
        ],
    )

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        slots: dict[str, Any] = dict(await ctx.load_state(request.state_key, {}) or {})
        asking = slots.get("asking") if request.resumed else None
        retry = ""
        if request.correction:  # "no wait, I meant 4411BA": what it names replaces what was said
            corrected = corrections(request.text, {"claim_id": CLAIM_ID, "topology": TOPOLOGY})
            slots.update(corrected)
            asking = None  # and a slot still missing may be in it too
            if corrected:
                await ctx.progress("Corrected: " + ", ".join(f"{k} {v}" for k, v in corrected.items()))
            else:
                retry = 'I could not tell what to change: say the new value ("I meant 4411BA"). '
        if asking in (None, "claim_id") and not slots.get("claim_id"):
            slots["claim_id"] = fit_expectation(CLAIM_ID, request.text)
        if asking in (None, "topology") and not slots.get("topology"):
            slots["topology"] = fit_expectation(TOPOLOGY, request.text)
        if asking and not slots.get(asking):
            retry = "That does not look like one. "
        if not slots.get("claim_id"):
            await ctx.progress("Obtaining claim_id...")
            slots["asking"] = "claim_id"
            await ctx.save_state(request.state_key, slots)
            return ToolContent.ask(
                retry + "Please provide your claim id",
                expectation=CLAIM_ID,
                context="DeclineLetterAssistance needs the claim id of the letter: letters and digits, e.g. 123ABH.",
            )
        if not slots.get("topology"):
            await ctx.progress("Obtaining topology...")
            slots["asking"] = "topology"
            await ctx.save_state(request.state_key, slots)
            return ToolContent.ask(
                retry
                + "Please provide the crime topology of your letter. You can choose from either Home or Motor only.",
                expectation=TOPOLOGY,
                context="DeclineLetterAssistance needs the crime topology of the letter: Home or Motor only.",
            )
        slots["asking"] = None
        await ctx.save_state(request.state_key, slots)
        return ToolContent(value="Letter generated!", artifact=LETTER.format(**slots))


class SmartStrategy(MasterTool):
    """Tells where a claim id is found, after asking who the user is; its state travels in the task stack."""

    name = "SmartStrategy"
    description = (
        "Tells the user where to find their claim id. It first asks whether they are an internal employee or a partner."
    )
    metadata = ToolMetadata(
        expose_to_user=True,
        introduction="Assist you in finding your claim id.",
        can_generate_task=True,
        examples=[
            "Where can I find my claim id?",
            "How do I look up a claim id?",
            "I don't know my claim number",
            "What is my claim id and where is it?",
            "Help me locate the claim identifier",
        ],
    )

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        role = fit_expectation(ROLE, request.text)
        if role is None:
            if not request.resumed:
                await ctx.progress("Checking partner or internal...")
            question = request.state["question"] if request.resumed and request.state else request.text
            return ToolContent.ask(
                "Please tell me if you are an internal employee or a partner of Suncorp.",
                expectation=ROLE,
                context="SmartStrategy needs to know whether the user is an internal employee or a partner of Suncorp.",
                state={"question": question},
            )
        return ToolContent(value=f'Due to "{request.text}", the id can be found at {WHERE[role]}.')


def investigator(classifier: Classifier) -> MasterAgent:
    """The SmartInvestigator's master agent, routing with ``classifier``."""
    return MasterAgent(
        [DeclineLetterAssistance(), SmartStrategy()],
        name="smart_investigator",
        title=TITLE,
        description="Crafts decline letters and finds claim ids.",
        classifier=classifier,
    )


def build(model: Model | None = None) -> MasterAgent:
    """The SmartInvestigator: the offline router without a model (or with the empty replay), else the hybrid.

    ``PODIUM_CLASSIFIER`` (``router``, ``llm``, ``hybrid``) chooses another.
    """
    return investigator(classifier_for(model, Settings.load().classifier, title=TITLE))


app = App(name="smart-investigator", build=build, cassette=CASSETTE, welcome=investigator(Router()).welcome)

# The seed's demo conversation, one human message per line.
DEMO = [
    "I want to craft a declined letter.",
    "Where to find a claim id?",
    "I am a Suncorp friend.",
    "I am a partner.",
    "My id is 123ABH",
    "Personal Injury",
    "I want to commit fraud.",
    "I want to do Motor.",
]


def stand_in(messages: list[Message], request: ModelRequest) -> AIMessage:
    """A rule-based stand-in for the LLM classifier (tests and the benchmark drive it with ``FunctionModel``).

    It reads what a real model would: the system prompt (pending task, expected answer) and the human's message.
    """
    from podium.testing import tool_call

    system, text = messages[0].content, messages[-1].content
    pending = re.search(r"Pending task: (\w+) is waiting", system)
    expected = re.search(r"Expected answer: (.*)", system)
    options = re.findall(r"'([^']+)'", expected.group(1)) if expected and "one of" in expected.group(1) else []
    lowered = text.lower()

    def call(name: str, rationale: str, **arguments: str) -> AIMessage:
        return AIMessage(tool_calls=[tool_call(name, {**arguments, "rationale": rationale})])

    if harmful_term(text):
        return call(
            "refuse_request",
            "The request is harmful.",
            text=f"The query {text!r} appears to be out of scope and does not align with the tools provided.",
        )
    if pending and any(o.lower() in lowered for o in options):
        return call(pending.group(1), "The answer matches one of the expected options.", text=text)
    if pending and expected and "claim id" in expected.group(1) and re.search(CLAIM_ID.pattern or "", text):
        return call(pending.group(1), "The answer is a claim id, which the pending task needs.", text=text)
    if "claim id" in lowered and ("where" in lowered or "find" in lowered):
        return call("SmartStrategy", "The user asks where to find a claim id.", text=text)
    if "letter" in lowered:
        return call("DeclineLetterAssistance", "The user wants a decline letter.", text=text)
    if pending and expected:
        return call(
            "ask_human",
            "The answer fits none of the expected values.",
            text=f"The user query {text!r} does not align with what is needed: {expected.group(1)}. Could you clarify?",
        )
    return call("refuse_request", "No tool serves this request.", text=f"I can't help with {text!r}.")
