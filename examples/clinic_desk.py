"""Clinic Desk: a second Master Agent app, a clinic's front desk over three task tools and one direct answer.

Run it with ``podium chat clinic-desk``. Offline the embedded router classifies every message; with
``PODIUM_MODEL`` set the hybrid classifier asks the model when the router is unsure. Its conversations for
``podium eval clinic-desk evals/clinic_desk`` were written after these tools and their examples.

- ``AppointmentBooking`` asks for the patient number (``P-`` and six digits), then the department; it keeps its
  slots in its own persisted state and produces a booking confirmation (an artifact). A later booking in the same
  conversation is for the same patient (unless it is "for my son"), and one asked "instead" replaces the last.
- ``PrescriptionRefill`` asks for the prescription number (``RX`` and seven digits), then pickup or delivery; its
  state travels in the task stack.
- ``BillingEnquiry`` asks for an invoice number (``INV-`` and five digits) and tells what is due.
- ``clinic_hours`` answers opening hours and the address at once (a plain function: no task is left).

The clinic systems are stand-ins: they say what a real service would answer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from podium import Expectation, Model, RunContext, Settings, ToolMetadata
from podium.app import App
from podium.orchestration.master import (
    Classifier,
    FunctionTool,
    MasterAgent,
    MasterTool,
    Router,
    ToolContent,
    ToolInput,
    classifier_for,
    corrections,
    fit_expectation,
)

CASSETTE = Path(__file__).parent / "cassettes" / "clinic_desk.json"  # empty: offline, nothing to replay
TITLE = "Clinic Desk"

PATIENT = Expectation(type="pattern", pattern=r"\b[Pp][- ]?\d{6}\b", description="a patient number: P- and six digits")
DEPARTMENT = Expectation(
    type="choice",
    options=["General practice", "Physiotherapy", "Dental"],
    description="the department",
    synonyms={
        "General practice": ["family doctor"],
        "Physiotherapy": ["physical therapy", "physical therapist"],
        "Dental": ["dentist", "teeth", "tooth", "toothache", "gums"],
    },
)
"""The departments, and the words people name them by ("the teeth one", "my toothache": Dental)."""
PRESCRIPTION = Expectation(
    type="pattern", pattern=r"\b[Rr][Xx][- ]?\d{7}\b", description="a prescription number: RX and seven digits"
)
PICKUP = Expectation(type="choice", options=["pharmacy pickup", "home delivery"], description="pickup or delivery")
INVOICE = Expectation(
    type="pattern", pattern=r"\b[Ii][Nn][Vv][- ]?\d{5}\b", description="an invoice number: INV- and five digits"
)

LAST_BOOKING = "clinic:last_booking"
"""The conversation's last booking (patient and department): a later one is for the same patient unless told."""
_INSTEAD = re.compile(r"\b(?:instead|rather|change\s+(?:it|that|the\s+booking)|switch|move\s+(?:it|my))\b", re.I)
"""A booking that replaces the last one ("can we do dental instead", "switch it to the GP")."""

_SOMEONE_ELSE = re.compile(
    r"\b(?:for\s+(?:my|our|his|her|their)\s+(?:son|daughter|child|kid|kids|baby|wife|husband|partner|mum|mom|"
    r"mother|dad|father|brother|sister|friend|grandma|grandpa|grandmother|grandfather|parents?|family)|"
    r"someone\s+else|somebody\s+else|another\s+(?:person|patient))\b",
    re.IGNORECASE,
)
"""A booking for another person ("a check-up for my daughter"): the patient number told before is not theirs."""

CONFIRMATION = (
    "Appointment booked for patient {patient} in {department}: Tuesday at 10:30, room 4. "
    "Please arrive ten minutes early and bring your Medicare card."
)


class AppointmentBooking(MasterTool):
    """Books an appointment: patient number, then department; keeps its own persisted state."""

    name = "AppointmentBooking"
    description = (
        "Books, moves or schedules an appointment with a doctor, physiotherapist or dentist at the clinic. "
        "It needs the patient number (P- and six digits) and the department."
    )
    metadata = ToolMetadata(
        expose_to_user=True,
        introduction="Book an appointment with a GP, a physiotherapist or a dentist.",
        can_generate_task=True,
        takes_corrections=True,
        examples=[
            "I'd like to book an appointment",
            "Can I see a doctor next week?",
            "I need to schedule a visit with the physio",
            "Make me a dental appointment",
            "I want to reschedule my appointment",
            "Book a consultation for patient P-123456",
        ],
    )

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        slots: dict[str, Any] = dict(await ctx.load_state(request.state_key, {}) or {})
        asking = slots.get("asking") if request.resumed else None
        earlier: dict[str, Any] = dict(await ctx.load_state(LAST_BOOKING, {}) or {})  # this conversation's last one
        retry = ""
        if request.correction:  # "sorry, wrong one: P-111223": what it names replaces what was said
            corrected = corrections(request.text, {"patient": PATIENT, "department": DEPARTMENT})
            if corrected.get("patient"):
                corrected["patient"] = "P-" + re.sub(r"\D", "", corrected["patient"])
            slots.update(corrected)
            asking = None  # and a slot still missing may be in it too
            if corrected:
                await ctx.progress("Corrected: " + ", ".join(f"{k} {v}" for k, v in corrected.items()))
            else:
                retry = 'I could not tell what to change: say the new value ("I meant P-111223"). '
        if asking in (None, "patient") and not slots.get("patient"):
            found = fit_expectation(PATIENT, request.text)
            slots["patient"] = "P-" + re.sub(r"\D", "", found) if found else None
        if asking in (None, "department") and not slots.get("department"):
            slots["department"] = fit_expectation(DEPARTMENT, request.text)
        for_another = _SOMEONE_ELSE.search(request.text) is not None  # "for my son": not the patient of before
        if not slots.get("patient") and earlier.get("patient") and not for_another:  # told before: not asked again
            slots["patient"] = earlier["patient"]
            await ctx.progress(f"Booking for patient {earlier['patient']}, as before (say 'I meant P-...' if not).")
        if not request.resumed and _INSTEAD.search(request.text) and earlier.get("department"):
            slots["replaces"] = earlier["department"]  # "dental instead": the last booking is moved, not doubled
        if not slots.get("patient"):
            await ctx.progress("Looking up the patient...")
            slots["asking"] = "patient"
            await ctx.save_state(request.state_key, slots)
            return ToolContent.ask(
                retry + "What is your patient number? It starts with P- and has six digits, e.g. P-204118.",
                expectation=PATIENT,
                context="AppointmentBooking needs the patient number: P- and six digits.",
            )
        if not slots.get("department"):
            slots["asking"] = "department"
            await ctx.save_state(request.state_key, slots)
            return ToolContent.ask(
                retry + "Which department: General practice, Physiotherapy or Dental?",
                expectation=DEPARTMENT,
                context="AppointmentBooking needs the department: General practice, Physiotherapy or Dental.",
            )
        slots["asking"] = None
        await ctx.save_state(request.state_key, slots)
        await ctx.save_state(LAST_BOOKING, {"patient": slots["patient"], "department": slots["department"]})
        moved = slots.get("replaces")
        if moved and moved != slots["department"]:
            said = f"Your {moved} appointment is cancelled and replaced by this one in {slots['department']}."
            return ToolContent(value=said, artifact=f"{CONFIRMATION.format(**slots)} It replaces the {moved} one.")
        return ToolContent(value="Your appointment is booked.", artifact=CONFIRMATION.format(**slots))


class PrescriptionRefill(MasterTool):
    """Reorders a repeat prescription: prescription number, then pickup or delivery; state travels in the stack."""

    name = "PrescriptionRefill"
    description = (
        "Reorders a repeat prescription (a refill of a medication already prescribed). It needs the prescription "
        "number (RX and seven digits) and whether to collect it at the pharmacy or have it delivered."
    )
    metadata = ToolMetadata(
        expose_to_user=True,
        introduction="Refill a repeat prescription.",
        can_generate_task=True,
        takes_corrections=True,
        examples=[
            "I need a refill of my prescription",
            "Can you renew my repeat script?",
            "I'm running out of my blood pressure tablets",
            "Reorder my medication",
            "Refill RX1234567 please",
        ],
    )

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        state: dict[str, Any] = dict(request.state or {}) if request.resumed else {}
        if request.correction:  # "sorry wrong one, RX2000010": what it names replaces what was said
            state.update(corrections(request.text, {"rx": PRESCRIPTION, "pickup": PICKUP}))
        if not state.get("rx"):
            state["rx"] = fit_expectation(PRESCRIPTION, request.text)
        if not state.get("pickup"):
            state["pickup"] = fit_expectation(PICKUP, request.text)
        if not state["rx"]:
            return ToolContent.ask(
                "What is the prescription number? It is on the label: RX and seven digits.",
                expectation=PRESCRIPTION,
                context="PrescriptionRefill needs the prescription number: RX and seven digits.",
                state=state,
            )
        if not state["pickup"]:
            return ToolContent.ask(
                "Would you like pharmacy pickup or home delivery?",
                expectation=PICKUP,
                context="PrescriptionRefill needs to know: pharmacy pickup or home delivery.",
                state=state,
            )
        rx = "RX" + re.sub(r"\D", "", state["rx"])
        when = (
            "ready at the pharmacy tomorrow after 2 pm"
            if state["pickup"] == "pharmacy pickup"
            else "delivered in two days"
        )
        return ToolContent(value=f"Refill of {rx} ordered: it will be {when}.")


class BillingEnquiry(MasterTool):
    """Tells what an invoice says: asks for the invoice number first."""

    name = "BillingEnquiry"
    description = (
        "Answers questions about bills and invoices: the amount due, what was charged, payment status and the "
        "Medicare rebate. It needs the invoice number (INV- and five digits)."
    )
    metadata = ToolMetadata(
        expose_to_user=True,
        introduction="Explain a bill or an invoice and what you owe.",
        can_generate_task=True,
        examples=[
            "How much do I owe?",
            "I have a question about my bill",
            "Why was I charged twice?",
            "Has my invoice been paid?",
            "What is the gap fee on INV-40213?",
        ],
    )

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        invoices = re.findall(INVOICE.pattern or "", request.text)
        if not invoices:
            return ToolContent.ask(
                "What is the invoice number? It starts with INV- and has five digits.",
                expectation=INVOICE,
                context="BillingEnquiry needs the invoice number: INV- and five digits.",
            )
        numbers = dict.fromkeys("INV-" + re.sub(r"\D", "", found) for found in invoices)  # each once, in order
        # a stand-in for the billing system: every invoice reads the same
        lines = [f"Invoice {n}: $85.00 charged, $41.20 Medicare rebate, $43.80 due by the 30th." for n in numbers]
        return ToolContent(value="\n".join(lines))


def clinic_hours(text: str) -> str:
    """Tells the clinic's opening hours, address, parking and phone number."""
    return (
        "We are open 8 am to 6 pm on weekdays and 9 am to 1 pm on Saturdays, closed on Sundays and public holidays, "
        "at 12 Harbour Street (parking behind). Phone: (02) 5550 1234."
    )


HOURS = FunctionTool(
    clinic_hours,
    metadata=ToolMetadata(
        expose_to_user=True,
        introduction="Tell you our opening hours and where to find us.",
        examples=[
            "When are you open?",
            "What are your opening hours on Saturday?",
            "Where is the clinic?",
            "What is the clinic's phone number?",
        ],
    ),
)


def desk(classifier: Classifier) -> MasterAgent:
    """The Clinic Desk's master agent, routing with ``classifier``."""
    return MasterAgent(
        [AppointmentBooking(), PrescriptionRefill(), BillingEnquiry(), HOURS],
        name="clinic_desk",
        title=TITLE,
        description="Books appointments, refills prescriptions and explains bills.",
        classifier=classifier,
    )


def build(model: Model | None = None) -> MasterAgent:
    """The Clinic Desk: the offline router without a model (or with an empty replay), else the hybrid.

    ``PODIUM_CLASSIFIER`` (``router``, ``llm``, ``hybrid``) chooses another.
    """
    return desk(classifier_for(model, Settings.load().classifier, title=TITLE))


app = App(name="clinic-desk", build=build, cassette=CASSETTE, welcome=desk(Router()).welcome)
