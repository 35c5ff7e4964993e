"""A session's stored record, its transitions, and the human's verdicts.

The record (the session, its plans with their steps) is stored as the changes that made it: every transition is
one :class:`~podium.events.Artifact` titled ``plan`` in the thread's event log, holding only what changed (a new
plan version whole; a plan's new status; a step's new status and the fields that changed with it), so a transition
costs one stored event. :meth:`SessionRecord.from_events` rebuilds the record from the log. Agent messages are
artifacts titled ``agent_message``. Both are journaled, so a run executed again after a crash or an interrupt
neither repeats nor loses one. The thread state key :data:`RECORD_KEY` marks a thread as a plan session; it holds
the newest plan's id and version.

A run that ends cancelled (or failed, or stopped by a limit) while a plan is ``in_progress`` leaves a ``run_ended``
event and no ``plan`` artifact (a run cancelled while it waits for the human never executes again): the rebuild
applies it, so that plan ends ``cancelled`` (or ``failed``) with the run's reason and its undecided or unfinished
steps ``cancelled``.

A verdict reaches the plan as the answer to its pending interrupt: JSON (``{"approved": true, "all": false,
"human_feedback": ..., "updated_action": ..., "step_id": ...}`` or ``{"clarification": ...}``) or, typed in a
chat, words: ``approve`` / ``yes`` (``approve all``), ``reject`` / ``no`` (``reject all``), ``edit: <new action>``,
``clarify: <information>``, each optionally followed by ``: <comment>``. A JSON verdict naming another step than the
one waiting is not taken (it was sent for a step decided meanwhile).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from podium.events import Artifact, Event, Interrupt, RunEnded
from podium.human import yes_or_no
from podium.orchestration.plan.types import (
    AgentMessage,
    HumanFeedbackStatus,
    PlanConflict,
    PlanStatus,
    PlanWithSteps,
    Session,
    Step,
    StepStatus,
)

if TYPE_CHECKING:
    from podium.runtime.context import RunContext

__all__ = [
    "RECORD_KEY",
    "SessionRecord",
    "Verdict",
    "agent_messages",
    "answer_for",
    "describe",
    "is_stop",
    "is_verdict",
    "parse_verdict",
]

RECORD_KEY = "plan.session"
"""The thread state key marking a plan session (the newest plan's id and version)."""

_MOVES: dict[StepStatus, frozenset[StepStatus]] = {
    StepStatus.planned: frozenset({StepStatus.awaiting_feedback, StepStatus.cancelled}),
    StepStatus.awaiting_feedback: frozenset({StepStatus.approved, StepStatus.rejected, StepStatus.cancelled}),
    StepStatus.approved: frozenset({StepStatus.action_requested, StepStatus.cancelled}),
    StepStatus.action_requested: frozenset({StepStatus.completed, StepStatus.failed, StepStatus.cancelled}),
    StepStatus.completed: frozenset(),
    StepStatus.failed: frozenset(),
    StepStatus.rejected: frozenset(),
    StepStatus.cancelled: frozenset(),
}
_RUN_ENDS = {
    "cancelled": (PlanStatus.cancelled, "its run was cancelled"),
    "failed": (PlanStatus.failed, "its run failed"),
    "limit_exceeded": (PlanStatus.failed, "its run stopped at a limit"),
}
"""What a run's end makes of a plan still ``in_progress`` (the plan's own code recorded no outcome)."""


class SessionRecord:
    """A session and its plans; changed only through methods that store and emit each change."""

    def __init__(self, session: Session, plans: list[PlanWithSteps]) -> None:
        """Wrap a loaded record."""
        self.session = session
        self.plans = plans

    @classmethod
    def from_json(cls, data: Any, session_id: str) -> SessionRecord:
        """Read a record in its :meth:`to_json` form, or start a new one for ``session_id``."""
        if not data:
            return cls(Session(id=session_id), [])
        return cls(Session.model_validate(data["session"]), [PlanWithSteps.model_validate(p) for p in data["plans"]])

    @classmethod
    def from_events(cls, session_id: str, events: list[Event]) -> SessionRecord:
        """The record the ``plan`` artifacts among a thread's stored events make, applied in order."""
        record = cls(Session(id=session_id), [])
        for event in events:
            if isinstance(event, RunEnded) and event.status in _RUN_ENDS:
                record.end_run(*_RUN_ENDS[event.status], "" if event.reason == event.status else event.reason)
            if not isinstance(event, Artifact) or not isinstance(event.content, dict):
                continue
            if event.title == "plan" and "kind" in event.content:
                if not record.plans:
                    record.session.ts = event.ts
                record.apply(event.content)
            elif event.title == "agent_message":
                record.session.message_to_user = event.content.get("content")
        for plan in record.plans:
            plan.update_step_counts()
        return record

    def to_json(self) -> dict[str, Any]:
        """The stored form."""
        return {
            "session": self.session.model_dump(mode="json"),
            "plans": [p.model_dump(mode="json") for p in self.plans],
        }

    def plan(self, plan_id: str) -> PlanWithSteps | None:
        """The plan with this id, or ``None``."""
        return next((p for p in self.plans if p.id == plan_id), None)

    def apply(self, change: dict[str, Any]) -> None:
        """Apply one stored change (the content of a ``plan`` artifact) to the record."""
        kind = change["kind"]
        if kind == "plan":
            plan = PlanWithSteps.model_validate(change["plan"])
            self.plans = [p for p in self.plans if p.id != plan.id] + [plan]
            self.session.current_status = "active" if plan.overall_status == PlanStatus.in_progress else "idle"
            return
        found = self.plan(change["plan_id"])
        if found is None:
            return
        if kind == "plan_status":
            found.overall_status = PlanStatus(change["status"])
            found.reason = change.get("reason") or found.reason
            if found.overall_status != PlanStatus.in_progress:
                self.session.current_status = "idle"
            return
        step = next((s for s in found.steps if s.id == change["step_id"]), None)
        if step is not None:
            step.status = StepStatus(change["status"])
            for name, value in change.get("fields", {}).items():
                setattr(step, name, HumanFeedbackStatus(value) if name == "human_approval_status" else value)

    def end_run(self, status: PlanStatus, what: str, reason: str) -> None:
        """A run ended (``cancelled``, ``failed``) without its plan's outcome: end the plans still in progress."""
        for plan in self.plans:
            if plan.overall_status != PlanStatus.in_progress:
                continue
            plan.overall_status = status
            plan.reason = what + (f" ({reason})" if reason else "")
            for step in plan.steps:
                if StepStatus.cancelled in _MOVES[step.status]:
                    step.status = StepStatus.cancelled
            self.session.current_status = "idle"

    async def _emit(self, ctx: RunContext[Any], change: dict[str, Any]) -> None:
        await ctx.emit(Artifact(content=change, title="plan"))

    async def add_plan(self, ctx: RunContext[Any], plan: PlanWithSteps) -> None:
        """Store a new plan (version), whole, and mark the thread as a plan session (:data:`RECORD_KEY`)."""
        self.plans.append(plan)
        self.session.current_status = "active" if plan.overall_status == PlanStatus.in_progress else "idle"
        plan.update_step_counts()
        change = {"kind": "plan", "plan_id": plan.id, "version": plan.version, "status": plan.overall_status.value}
        change |= {"reason": plan.reason} if plan.reason else {}
        await self._emit(ctx, change | {"plan": plan.model_dump(mode="json")})
        await ctx.save_state(RECORD_KEY, {"plan_id": plan.id, "version": plan.version})

    async def set_plan(self, ctx: RunContext[Any], plan: PlanWithSteps, status: PlanStatus, reason: str = "") -> None:
        """Store a plan's new status (and why)."""
        change = {"kind": "plan_status", "plan_id": plan.id, "version": plan.version, "status": status.value}
        change["reason"] = reason
        self.apply(change)
        await self._emit(ctx, change)

    async def move(self, ctx: RunContext[Any], step: Step, status: StepStatus, **fields: Any) -> None:
        """Store a step's transition to ``status`` with changed ``fields``.

        Raises:
            PlanConflict: the lifecycle does not allow the move.
        """
        if status not in _MOVES[step.status]:
            raise PlanConflict(f"step {step.order} cannot go from {step.status.value} to {status.value}")
        change: dict[str, Any] = {"kind": "step", "plan_id": step.plan_id, "step_id": step.id, "order": step.order}
        change |= {"status": status.value, "previous": step.status.value}
        change["fields"] = {k: v.value if isinstance(v, Enum) else v for k, v in fields.items() if v is not None}
        if fields.get("error"):
            change["error"] = fields["error"]
        self.apply(change)
        await self._emit(ctx, change)

    async def say(self, ctx: RunContext[Any], message: AgentMessage) -> None:
        """Record an agent message (and tell the user)."""
        self.session.message_to_user = message.content
        await ctx.emit(Artifact(content=message.model_dump(mode="json"), title="agent_message"))


def describe(title: str, content: Any) -> str | None:
    """A plan artifact (``plan`` or ``agent_message``) as a line of prose for a person, or ``None`` for another.

    The terminal chat prints this instead of the stored dict; the stored and ``--jsonl`` forms stay data.
    """
    if not isinstance(content, dict):
        return None
    if title == "agent_message":
        return f"{content.get('source') or 'agent'}: {content.get('content', '')}"
    if title != "plan" or "kind" not in content:
        return None
    kind = content["kind"]
    if kind == "plan":
        plan = content.get("plan") or {}
        steps = plan.get("steps") or []
        head = f"plan v{content.get('version')} ({content.get('status', '').replace('_', ' ')})"
        if not steps:
            return f"{head}: {content.get('reason') or plan.get('human_clarification_request') or 'no steps'}"
        listed = "; ".join(
            f"{s.get('order')}. {s.get('agent')}: {str(s.get('action', '')).rstrip('. ')}" for s in steps
        )
        return f"{head}, {len(steps)} step{'s' if len(steps) > 1 else ''}: {listed}"
    if kind == "plan_status":
        reason = content.get("reason")
        return f"plan v{content.get('version')} {content.get('status', '').replace('_', ' ')}" + (
            f": {reason}" if reason else ""
        )
    if kind == "step":
        status = str(content.get("status", "")).replace("_", " ")
        said = {"awaiting feedback": "waits for your verdict", "action requested": "is running"}.get(status, status)
        line = f"step {content.get('order')} {said}"
        fields = content.get("fields") or {}
        if content.get("error"):
            line += f": {content['error']}"
        elif fields.get("human_feedback"):
            line += f" ({fields['human_feedback']})"
        return line
    return None


def agent_messages(events: list[Event]) -> list[AgentMessage]:
    """The agent messages among a thread's stored events, in time order."""
    return [
        AgentMessage.model_validate(e.content) for e in events if isinstance(e, Artifact) and e.title == "agent_message"
    ]


@dataclass(slots=True, kw_only=True)
class Verdict:
    """What the human said about the step (or the plan) waiting for them."""

    approved: bool = True
    all: bool = False
    """The verdict holds for every remaining step."""
    feedback: str | None = None
    updated_action: str | None = None
    clarification: str | None = None
    """New information: re-plan with it."""
    step_id: str | None = None
    """The step the verdict was sent for (a verdict the server sends names it); ``None``: whichever waits."""
    stop: bool = False
    """The human stopped the plan ("stop", "cancel", "never mind"): no remaining step runs."""
    read: bool = False
    """Taken from words that are no verdict ("oh she actually starts on the 15th" read as a clarification): the
    plan says how it took them."""

    def said(self) -> str:
        """What the human said with the verdict, as readable text (the human's agent message)."""
        lines = [self.clarification] if self.clarification else []
        lines += [self.feedback] if self.feedback else []
        lines += [f"Edited action: {self.updated_action}"] if self.updated_action else []
        return "\n".join(lines)


_YES = frozenset({"approve", "approved", "yes", "y", "ok", "okay", "go", "sure", "yep", "yeah", "yup", "fine"})
_YES_FILL = frozenset({"ahead", "please", "do", "it", "that", "this", "one", "step", "for", "sounds", "good", "lgtm"})
_NO = frozenset({"reject", "rejected", "no", "n", "skip", "nope", "nah", "decline", "declined"})
_NO_FILL = frozenset(
    {"thanks", "thank", "you", "please", "that", "this", "one", "step", "it", "don", "dont", "t", "do"}
)
_STOP_WORDS = (
    "stop",
    "cancel",
    "abort",
    "quit",
    "halt",
    "end",
    "never mind",
    "nevermind",
    "forget it",
    "forget about it",
    "drop it",
    "stop it",
    "cancel it",
    "stop the plan",
    "cancel the plan",
    "stop everything",
    "cancel everything",
    "stop all",
    "cancel all",
    "no stop",
    "no cancel",
)
_STOP = frozenset(_STOP_WORDS)
"""Whole answers that end the plan (at a step's question, the planner's question, or after a failure)."""


def is_stop(answer: str) -> bool:
    """Whether ``answer`` asks to stop the plan as a whole ("stop", "cancel", "never mind", "forget it")."""
    return " ".join(re.findall(r"[a-z]+", answer.lower())) in _STOP


def parse_verdict(answer: str) -> Verdict | None:
    """Read an answer (JSON or words, see the module docstring); ``None`` when it is neither."""
    text = answer.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
        if not isinstance(data, dict):
            return None
        if data.get("clarification"):
            return Verdict(clarification=str(data["clarification"]))
        step_id = data.get("step_id")
        return Verdict(
            approved=bool(data.get("approved", True)),
            all=bool(data.get("all", False)),
            feedback=data.get("human_feedback") or None,
            updated_action=data.get("updated_action") or None,
            step_id=step_id if isinstance(step_id, str) else None,
        )
    if is_stop(text):
        return Verdict(approved=False, all=True, stop=True)
    head, _, rest = text.partition(":")
    head_words = re.findall(r"[a-z]+", head.lower())
    comment = rest.strip() or None
    if not head_words:
        return None
    if head_words[0] == "edit" and comment:
        return Verdict(updated_action=comment)
    if head_words[0] in ("clarify", "clarification") and comment:
        return Verdict(clarification=comment)
    every = _every(head_words)
    rest_words = set(head_words[1:]) - _ALL
    if every and _APPROVES & set(head_words) and _REJECTS & set(head_words):
        return None  # "approve this one, skip the rest": two verdicts, asked again rather than half taken
    if head_words[0] in _YES or head_words == ["all"]:
        if head_words[0] in ("approve", "approved") or rest_words <= _YES | _YES_FILL:  # not "ok but change it"
            return Verdict(all=every, feedback=comment)
        return _by_words(head_words, comment)
    if head_words[0] in _NO and (head_words[0] in ("reject", "rejected") or rest_words <= _NO | _NO_FILL):
        return Verdict(approved=False, all=every, feedback=comment)
    by_words = _by_words(head_words, comment)
    if by_words is not None:
        return by_words
    if head_words in (["go", "ahead"], ["do", "it"], ["looks", "good"], ["sounds", "good"], ["lgtm"]):
        return Verdict(feedback=comment)
    if _REFUSED.match(text):  # "don't approve that", "please do not run it"
        return Verdict(approved=False, feedback=comment)
    typed = difflib.get_close_matches(head_words[0], ("approve", "reject"), n=1, cutoff=0.8)
    if typed and rest_words <= _YES_FILL | _NO_FILL:  # "aprove", "rejct all"
        return Verdict(approved=typed[0] == "approve", all=every, feedback=comment)
    said = yes_or_no(text)  # yes and no as people say them ("of course", "no thank you")
    return None if said is None else Verdict(approved=said)


_ALL = frozenset({"all", "rest", "remaining", "remainder", "everything", "every", "each", "others", "whole"})
"""Words that make a verdict hold for every remaining step ("approve the rest", "skip everything else")."""
_APPROVES = frozenset(
    {*_YES, "accept", "accepted", "confirm", "confirmed", "proceed", "agreed", "agree", "lgtm", "good", "great"}
    | {"perfect", "fine"}
)
_REJECTS = frozenset({*_NO, "deny", "denied", "refuse", "refused"})
_AROUND = frozenset(
    {*_YES_FILL, *_NO_FILL, *_ALL, "else", "ones", "them", "those", "these", "the", "of", "to", "with", "and", "me"}
    | {"looks", "look", "sounds", "steps", "plan", "then", "just", "i", "is", "are", "so", "now", "too", "other"}
    | {"left", "that"}
) - {"don", "dont", "t"}
"""Words a verdict said in words of its own may hold besides the verdict ("all good, approve all")."""


def _every(found: list[str]) -> bool:
    """Whether a verdict's words make it hold for every remaining step ("approve the rest", "yes to all"); "all
    good" and "all fine" praise this step, they do not reach the others."""
    said = " ".join(found)
    said = re.sub(r"\ball (?:good|fine|set|ok|okay|right)\b", " ", said)
    return bool(set(said.split()) & _ALL)


def _by_words(found: list[str], comment: str | None) -> Verdict | None:
    """A verdict said in a few words of its own, in any order ("all good, approve all", "skip the rest", "no to
    all", "looks great, accept everything"), or ``None``: some word is no verdict's, or it says both yes and no."""
    if not found or len(found) > 10 or any(w not in _APPROVES | _REJECTS | _AROUND for w in found):
        return None
    approves, rejects = bool(_APPROVES & set(found)), bool(_REJECTS & set(found))
    if approves == rejects:
        return None
    return Verdict(approved=approves, all=_every(found), feedback=comment)


_REFUSED = re.compile(
    r"^\s*(?:no[,\s]+)?(?:please\s+)?(?:don'?t|do\s+not|never)\s+(?:approve|do|run|go|proceed|execute)\b",
    re.IGNORECASE,
)

# a message made only of these words is a verdict, never a task ("approve all", "looks good", "yes please"); it needs
# one of _VERDICT_CORE, so "all" alone or "do it" count too, but "approve the purchase of 3 laptops" is a task
_VERDICT_CORE = frozenset(
    {*_YES, *_NO, "all", "lgtm", "good", "fine", "sure", "yep", "yeah", "nope", "accept", "accepted", "decline"}
    | {"declined", "deny", "denied", "confirm", "confirmed", "proceed", "agreed", "agree", "everything", "do"}
)
_VERDICT_FILL = frozenset(
    {"ahead", "it", "them", "that", "this", "these", "those", "the", "steps", "step", "plan", "please", "looks"}
    | {"look", "sounds", "great", "i", "and", "is", "are", "to", "thanks", "thank", "you", "with", "me", "of"}
)


def is_verdict(text: str) -> bool:
    """Whether ``text`` is a verdict (an approval, a rejection, an edit or a clarification) rather than a task.

    Used when no plan waits for one: a stray "approve all" or "looks good" must not be planned as a new task.
    """
    stripped = text.strip()
    if stripped.startswith("{"):
        return parse_verdict(stripped) is not None
    head = stripped.partition(":")[0].strip().lower()
    if head in ("edit", "clarify", "clarification") and stripped.partition(":")[2].strip():
        return True
    found = re.findall(r"[a-z]+", stripped.lower())
    if not found or len(found) > 10:
        return False
    if _about_steps(found):
        return True
    return all(w in _VERDICT_CORE or w in _VERDICT_FILL for w in found) and any(w in _VERDICT_CORE for w in found)


_STEPS = frozenset(
    {"step", "steps", "rest", "remaining", "remainder", "else", "others", "ones", "them", "those", "left"}
)
"""Words that point at a plan's steps rather than at anything a task could be about."""
_LEADS = frozenset({"ok", "okay", "so", "then", "now", "just", "please", "and", "well", "great", "good", "fine"})


def _about_steps(found: list[str]) -> bool:
    """Whether words are a verdict on steps ("approve the rest", "skip the laptop step", "decline those"): the
    first word after a lead ("ok", "so", "please") gives a verdict and another points at steps, not at a thing."""
    lead = next((i for i, w in enumerate(found) if w not in _LEADS), None)
    if lead is None or found[lead] not in _APPROVES | _REJECTS | {"skip", "decline", "declined"}:
        return False
    return bool(_STEPS & set(found[lead + 1 :]))


def answer_for(
    record: SessionRecord,
    pending: Interrupt | None,
    *,
    plan_id: str,
    step_id: str | None,
    approved: bool,
    human_feedback: str | None = None,
    updated_action: str | None = None,
) -> str:
    """The answer to resume a plan with, for a verdict on ``step_id`` (every remaining step when ``None``).

    The answer names the step that waits, so the plan takes it for that step only (a verdict racing another one must
    not decide the next step); the caller resumes with it keyed by ``pending``'s id for the same reason.

    Raises:
        PlanConflict: the plan is unknown, has ended (completed, cancelled, superseded ...), does not wait for a
            verdict, or waits for another step (out of order), or the step was already decided (a repeated approval).
    """
    plan = record.plan(plan_id)
    if plan is None:
        raise PlanConflict(f"no plan {plan_id!r} in this session")
    data = pending.data if pending is not None else None
    waiting = data.get("step_id") if isinstance(data, dict) and data.get("plan_id") == plan_id else None
    ended = f"plan {plan_id!r} is {plan.overall_status.value}" + (f" ({plan.reason})" if plan.reason else "")
    if step_id is not None:
        step = next((s for s in plan.steps if s.id == step_id), None)
        if step is None:
            raise PlanConflict(f"no step {step_id!r} in plan {plan_id!r}")
        if plan.overall_status != PlanStatus.in_progress:
            raise PlanConflict(f"step {step.order} is {step.status.value}: {ended} and waits for no verdict")
        if step.status != StepStatus.awaiting_feedback or waiting != step_id:
            if step.status == StepStatus.planned and waiting is not None:
                current = next((s.order for s in plan.steps if s.id == waiting), "?")
                raise PlanConflict(f"step {step.order} is not next: step {current} waits for a verdict first")
            raise PlanConflict(f"step {step.order} is {step.status.value}; it does not wait for a verdict")
    elif waiting is None:
        raise PlanConflict(f"{ended} and waits for no verdict")
    return json.dumps(
        {
            "approved": approved,
            "all": step_id is None,
            "human_feedback": human_feedback,
            "updated_action": updated_action,
            "step_id": waiting,
        }
    )


def feedback_status(approved: bool) -> HumanFeedbackStatus:
    """The stored feedback status of a verdict."""
    return HumanFeedbackStatus.accepted if approved else HumanFeedbackStatus.rejected
