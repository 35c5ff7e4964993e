"""The plan-and-execute agent: plan a task, ask the human about each step, run approved steps with their agents.

One run per task (``Runtime.run(agent, task)``): the planner makes plan version 1; a question from the planner is
asked (an interrupt) and its answer re-plans (version 2 ...); then the steps go in order: each waits for the
human's verdict (an interrupt whose ``data`` names the plan and the step), an approved step runs with its
specialist (shown the goal, the earlier steps' results in order, the human's feedback and edited action), a
rejected one is skipped. A plan with at least one step done ends ``completed`` (its reason counts the rejected
steps); one where nothing was done, every step rejected or the human stopping at a question, ends ``rejected``.
Before planning, a message that is only a verdict ("approve all" with no plan waiting), "help", "stop", small talk or
a question is answered, never planned (:mod:`~podium.orchestration.plan.reading`); at the planner's question such
answers are answered and the question asked again; at a step, a stop in other words stops, a correction re-plans
from there, a new task is planned after the plan, and help, small talk and questions are answered before the step
is asked again. A task the caution check questions (:mod:`~podium.orchestration.plan.caution`) is confirmed first
("stop" at any question of the planner ends the plan ``rejected``). A failing step is stored ``failed`` with its
error and the plan ``failed``; the human is asked whether to re-plan from there (a new version that keeps what was
done) or stop.
Every move is stored and emitted (:mod:`podium.orchestration.plan.record`) and journaled, so the plan survives a
restart at any point and runs the same in ``podium chat`` and behind the server.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from podium.agents.base import Agent, AgentResult
from podium.agents.react import ReactAgent
from podium.errors import PodiumError
from podium.events import Expectation
from podium.human import EMERGENCY_REPLY, emergency
from podium.messages import AIMessage, HumanMessage
from podium.orchestration.plan.catalogue import Catalogue, words
from podium.orchestration.plan.caution import concern, refusal
from podium.orchestration.plan.facts import facts, people, ruled_out
from podium.orchestration.plan.outcome import CANNOT_DO, cannot_do_step, not_done
from podium.orchestration.plan.planner import DoneStep, Planner, PlanRequest
from podium.orchestration.plan.reading import (
    again_for,
    corrects,
    ends,
    ends_for_a_reason,
    is_question,
    named,
    next_task,
    relation,
    small_talk,
    without_small_talk,
)
from podium.orchestration.plan.record import (
    SessionRecord,
    Verdict,
    feedback_status,
    is_stop,
    is_verdict,
    parse_verdict,
)
from podium.orchestration.plan.types import (
    AgentMessage,
    PlanDraft,
    PlanStatus,
    PlanWithSteps,
    Session,
    Step,
    StepStatus,
)
from podium.runtime.context import RunContext
from podium.tools import Tool

__all__ = ["PlanAndExecute", "asks_help"]

_VERDICT = Expectation(
    type="pattern",
    pattern=r"(?i)^\s*(\{|approve|yes|y\b|ok|sure|yep|yeah|fine|go|do it|all|reject|no|n\b|nope|skip|edit:|clarify:|"
    r"stop|cancel|abort|quit|never ?mind|forget it)",
    description="approve, approve all, reject, reject all, edit: <new action>, clarify: <information>, or stop",
)
_CAUTION = "caution check"
"""The ``planner`` of a plan version that only asks the human to confirm a questioned task."""
_REFUSAL = "refusal"
"""The ``planner`` of a plan version refused outright (:func:`~podium.orchestration.plan.caution.refusal`)."""
_HELP = re.compile(
    r"^(?:hi |hello |hey )?(?:can you |could you )?(?:please )?(?:help|help me|help please|what can you do|"
    r"what can you do for me|what do you do|what are you|who are you|what is this|what can i ask|what can i do|"
    r"what can i say|how does this work|how does it work|how do i use this|how do i use you|what are my options|"
    r"what are the options|commands|options)(?: here)?$"
)
_CONFIRM_WORDS = frozenset({"confirm", "confirmed", "yes", "y", "proceed", "go", "ok", "okay", "sure"})
_CONFIRM_FILL = frozenset({"ahead", "i", "please", "do", "it", "plan", "anyway"})


def _quoted(found: list[str]) -> str:
    """``'a'``, ``'a' or 'b'``."""
    quoted = [repr(w) for w in found]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


_NO_THEN = re.compile(r"\s*(?:no+|nope|nah)\b[\s,.!-]*(?:wait\b[\s,.!-]*)?(?=\S)", re.IGNORECASE)
"""A no followed by more ("no, he starts next wednesday"), not "reject: ..." (an explicit rejection keeps its
reason)."""
_RULES_OUT = re.compile(r"\w[,;]?\s+not\s+(?:a|an|the|for|on)?\s*\w+[\s.!]*$", re.IGNORECASE)
"""A thing said, then the one it replaces, at the end ("a tablet, not a laptop")."""


def _stops(answer: str, verbs: frozenset[str]) -> bool:
    """The human's answer to the planner's question drops the task ("stop", "no", "never mind", "ok stop here",
    "forget it, he's staying"; ``verbs``: the catalogue's tool verbs, see :func:`ends`)."""
    return is_stop(answer) or ends(answer, verbs) or " ".join(_words(answer)) in ("no", "n", "nope", "no thanks")


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _for(task: str, who: list[str], date: str | None = None) -> str:
    """``task`` for other people (and on another date, if given): the people it names are replaced by ``who``."""
    named = people(task)
    if named:
        task = task.replace(named[0], _and(who))
        for other in named[1:]:
            task = re.sub(rf"(?:\s*,\s*|\s+and\s+)?{re.escape(other)}", "", task)
    else:
        task = f"{task.rstrip(' .!')} for {_and(who)}"
    before = facts(task).get("date")
    if date and before and date not in task:
        task = task.replace(before, date)
    elif date and date not in task:
        task = f"{task.rstrip(' .!')} {date}"
    return task.strip()


def asks_help(text: str) -> bool:
    """The human asks what the service does ("help", "what can you do?", "cool. what do you do?") rather than
    giving a task."""
    return bool(_HELP.match(" ".join(_words(without_small_talk(text)))))


def _amends(answer: str, action: str) -> bool:
    """Whether a no with more after it corrects the plan rather than rejects the step: it says so ("no, he starts
    next wednesday"), rules something out ("no wait, Jon Ball, not Jon Bell", "no, a tablet, not a laptop"), or
    names a person or date the step does not ("no, Jon Ball", "no, the 15th"); "no, Jon Bell has one" rejects."""
    if corrects(answer) or ruled_out(answer) or _RULES_OUT.search(_NO_THEN.sub("", answer, count=1)):
        return True
    said = facts(answer)
    return any(said.get(key) and said[key].lower() not in action.lower() for key in ("name", "date"))


def _confirms(answer: str) -> bool:
    """The human's answer confirms a task the caution check questioned ("confirm", "yes, go ahead")."""
    found = _words(answer)
    return bool(found) and set(found) <= _CONFIRM_WORDS | _CONFIRM_FILL and bool(set(found) & _CONFIRM_WORDS)


class PlanAndExecute(Agent):
    """Plans a task with a :class:`Planner`, then runs the human-approved steps with the catalogue's specialists."""

    def __init__(self, planner: Planner, catalogue: Catalogue, *, name: str = "planner", description: str = "") -> None:
        """Build the agent.

        Args:
            planner: makes the plans (an :class:`~podium.orchestration.plan.LLMPlanner` or the offline one).
            catalogue: the specialists steps are assigned to.
            name: the agent's name.
            description: what it does, for a caller choosing among agents.
        """
        self.name = name
        self.planner = planner
        self.catalogue = catalogue
        self.description = description or "Plans a task, asks the human about each step, and runs approved ones."
        self._verbs = frozenset(  # what the tools do ("order", "book"): a message starting so asks for a task
            named[0] for entry in catalogue.tools if len(named := words(entry.tool.name)) > 1
        )
        for specialist in catalogue.specialists.values():  # how a model-driven specialist says it could not act
            agent = specialist.agent
            if isinstance(agent, ReactAgent) and CANNOT_DO not in agent.current_tools():
                agent.toolsets.append(_Outcome())

    def not_a_task(self, text: str, *, typed_verdicts: bool = True) -> str | None:
        """The answer to a message that is no task when no plan waits, or ``None`` for a task: "help", "stop" (or
        "ok stop here"), small talk ("hi there, how are you?", "thanks!") and, for a planner that cannot plan them
        (``Planner.plans_questions``), questions ("what's 2+2?") are answered, never planned. A bare verdict
        ("approve all") is told apart by :func:`is_verdict` first. ``typed_verdicts=False`` leaves out how to answer a
        step in words (for the plan page, where steps are answered with buttons)."""
        if is_stop(text) or ends(text, self._verbs):
            return f"Nothing is planned or running, so there is nothing to stop. {self.describe(typed_verdicts)}"
        if asks_help(text):
            return self.describe(typed_verdicts)
        kind = small_talk(text, self._verbs)
        if kind == "thanks":
            return f"You're welcome. {self.describe(typed_verdicts)}"
        if kind == "goodbye":
            return "Goodbye. Come back when there is a task to plan."
        if kind is not None:
            return f"Hello! {self.describe(typed_verdicts)}"
        if is_question(text) and not self.planner.plans_questions:
            return f"{text.strip()!r} is a question, and I do not answer questions: {self.describe(typed_verdicts)}"
        return None

    async def _who(self, ctx: RunContext[Any], text: str, someone: str) -> str:
        """The answer to a task for a person named only by a relation ("and the same for his manager"): who that
        is, with the task to say again with their name (the task before it, for "the same")."""
        example = "order a monitor for Ada Lovelace"
        if re.search(r"\b(?:same|again|too|also|as\s+well|likewise)\b", text, re.IGNORECASE):
            last = await self._last_task(ctx)
            if last is not None:
                example = _for(last, ["Ada Lovelace"])
        else:
            example = re.sub(re.escape(someone), "Ada Lovelace", text, flags=re.IGNORECASE).strip()
        whom = re.sub(r"^(?:my|our)\b", "your", someone)  # "my boss": who is your boss?
        return (
            f"Who is {whom}? I plan for people by name, and {text.strip()!r} names nobody I can plan for. Say the "
            f"task again with their name (for example {example!r})."
        )

    async def _last_task(self, ctx: RunContext[Any]) -> str | None:
        """The task this conversation asked for last (a message that was no verdict, no small talk, no question and
        no follow-up), or ``None``."""
        for message in reversed(await ctx.history()):
            said = message.content if isinstance(message, HumanMessage) else ""
            if not said or is_verdict(said) or self.not_a_task(said) is not None or relation(said) is not None:
                continue
            if not again_for(said, people(said), self._verbs):
                return said.strip()
        return None

    def describe(self, typed_verdicts: bool = True) -> str:
        """What the service does and how to answer it (the reply to "help" or "what can you do?"); without
        ``typed_verdicts``, not how to answer a step in words (the plan page answers with buttons)."""
        fallback = self.catalogue.fallback
        roles = [s.description.partition(":")[0] for s in self.catalogue.specialists.values() if s.name != fallback]
        team = ", ".join(roles) or fallback
        said = (
            f"I plan tasks for a team of agents ({team}, and a general one for the rest) and ask you about each "
            "step before it runs. Type a task: what should be done, for whom and by when (for example 'Onboard Ada "
            "Lovelace, who starts next week')."
        )
        if not typed_verdicts:
            return said
        return (
            f"{said} At each step answer approve (or yes, ok, sure), approve all, reject (or no, skip), reject all, "
            "edit: <new action>, clarify: <information>, or stop to end the plan."
        )

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        record = SessionRecord(Session(id=ctx.thread_id), [])  # this run's plans; the log holds the session's
        added = [await ctx.add_message(input)]
        if emergency(input.content):  # no task for a plan: the person is sent to emergency services first
            added.append(await ctx.add_message(AIMessage(content=EMERGENCY_REPLY, name=self.name)))
            return AgentResult(output=EMERGENCY_REPLY, messages=added, data={"plan_id": None, "status": "no_plan"})
        reply = None
        if is_verdict(input.content):  # no plan waits for a verdict here (it would have resumed that run)
            reply = (
                "No plan is waiting for approval, so there is nothing to approve or reject, and "
                f"{input.content.strip()!r} was not taken as a new task. Type a task to plan it (what should be done, "
                "for whom and by when); each step will then ask for your verdict."
            )
        reply = reply or self.not_a_task(input.content)  # help, stop, small talk, a question: nothing to plan
        if reply is None and (someone := relation(input.content)) and "name" not in facts(input.content):
            reply = await self._who(ctx, input.content, someone)  # "the same for his manager": whose name?
        task, lead = input.content, ""
        if reply is None and again_for(task, who := people(task), self._verbs):  # "same for Joe Park"
            last = await self._last_task(ctx)
            if last is None:
                reply = f"Which task should I plan for {_and(who)}? Say it with what should be done and by when."
            else:
                task = _for(last, who, facts(input.content).get("date"))
                lead = f"The same task for {_and(who)}: {task!r}.\n\n"
        if reply is not None:
            added.append(await ctx.add_message(AIMessage(content=reply, name=self.name)))
            return AgentResult(output=reply, messages=added, data={"plan_id": None, "status": "no_plan"})
        later: list[str] = []  # tasks the human added while a plan waited: planned, in order, after it ends
        while True:
            plan = await self._task(ctx, record, PlanRequest(task=task), later, lead)
            reply = self._closing(plan)
            if not later:
                break
            added.append(await ctx.add_message(AIMessage(content=reply, name=self.name)))
            task = later.pop(0)
            lead = f"Now the task you added: {task!r}.\n\n"  # the outcome above is said as a message of its own
        added.append(await ctx.add_message(AIMessage(content=reply, name=self.name)))
        return AgentResult(output=reply, messages=added, data={"plan_id": plan.id, "status": plan.overall_status})

    async def _task(
        self, ctx: RunContext[Any], record: SessionRecord, request: PlanRequest, later: list[str], lead: str
    ) -> PlanWithSteps:
        """Plan one task and see it through: the planner's questions, then each step; the plan as it ended.
        ``lead`` goes before the first question asked (what ended before this task started)."""
        notes: list[str] = []  # what the planner left out, said before the first step
        plan = await self._plan(ctx, record, request, None, notes)
        while True:
            if plan.overall_status != PlanStatus.in_progress:  # failed, or refused
                break
            if plan.human_clarification_request:
                kind = "confirmation" if plan.planner == _CAUTION else "clarification"
                question = plan.human_clarification_request
                answer = await ctx.ask(lead + question, data={"plan_id": plan.id, "kind": kind})
                lead = ""
                while (aside := self._not_information(answer, kind)) is not None:  # answered; the question again
                    await self._human(ctx, record, plan, None, answer)
                    await self._planner_says(ctx, record, plan, None, aside)
                    answer = await ctx.ask(f"{aside}\n\n{question}", data={"plan_id": plan.id, "kind": kind})
                await self._human(ctx, record, plan, None, answer)
                request.questions.append(question)
                if _stops(answer, self._verbs):
                    reason = "stopped by the human at the planner's question; nothing was done"
                    await record.set_plan(ctx, plan, PlanStatus.rejected, reason)
                    break
                if kind == "confirmation" and _confirms(answer):
                    request.confirmed = True
                else:
                    request.clarifications.append(answer)
                plan = await self._plan(ctx, record, request, plan, notes)
                continue
            replanned = await self._run_steps(ctx, record, plan, request, later, "".join(notes) + lead)
            notes.clear()
            lead = ""
            if replanned is None:
                break
            plan, lead = replanned
        return plan

    def _not_information(self, answer: str, kind: str) -> str | None:
        """What to say to an answer to the planner's question that is neither information for the plan nor a stop
        (nor, for a caution check, a confirmation): help, a verdict with nothing to approve yet, small talk, a
        question. ``None``: the answer is taken."""
        if _stops(answer, self._verbs) or (kind == "confirmation" and _confirms(answer)):
            return None
        if emergency(answer):  # no information for the plan: the person is sent to emergency services first
            return EMERGENCY_REPLY
        if asks_help(answer):
            return self.describe()
        if is_verdict(answer):
            return (
                f"Nothing is planned yet, so {answer.strip()!r} has nothing to approve or reject: the plan needs "
                "an answer to this question first (or say 'stop')."
            )
        kind_of_talk = small_talk(answer, self._verbs)
        if kind_of_talk is not None:
            said = "You're welcome." if kind_of_talk == "thanks" else "Hello!"
            return f"{said} The plan still needs an answer to this question (or say 'stop')."
        if is_question(answer):
            return "I cannot answer questions here; the plan needs an answer to this question (or say 'stop')."
        return None

    async def _plan(
        self,
        ctx: RunContext[Any],
        record: SessionRecord,
        request: PlanRequest,
        previous: PlanWithSteps | None,
        notes: list[str] | None = None,
    ) -> PlanWithSteps:
        """Plan version ``previous.version + 1`` (1 with none) and store it; ``notes`` gathers what to tell the
        human about the parts of the task no agent can do."""
        version = previous.version + 1 if previous else 1
        planner_ctx = ctx.child(f"planner-v{version}", namespace=f"{ctx.namespace}/planner/{ctx.run_id}/{version}")
        failure = ""
        refused = refusal(request.text())
        question = None if request.confirmed or refused else concern(request.text())
        draft: PlanDraft | None
        if refused is not None:  # concealment is refused outright: no confirm path, no plan
            draft = PlanDraft(initial_goal=request.task, steps=[], summary="")
            shown = 0
        elif question is not None:  # nothing is planned until the human confirms
            draft = PlanDraft(initial_goal=request.task, steps=[], summary="", human_clarification_request=question)
            shown = 0
        else:
            try:
                draft, shown = await self.planner.plan(planner_ctx, request)
            except PodiumError as exc:
                draft, shown, failure = None, 0, getattr(exc, "reason", str(exc))
        made = await ctx.step(lambda: _ids(1 + (len(draft.steps) if draft else 0)))
        ids, ts = made["ids"], made["ts"]
        plan = PlanWithSteps(
            id=ids[0],
            ts=ts,
            session_id=record.session.id,
            version=version,
            supersedes=previous.id if previous else None,
            initial_goal=draft.initial_goal if draft else request.task,
            summary=draft.summary if draft else "",
            human_clarification_request=draft.human_clarification_request if draft else None,
            planner=_REFUSAL if refused is not None else _CAUTION if question is not None else self.planner.name,
            tools_shown=shown,
        )
        if draft:
            plan.steps = [
                Step(
                    id=ids[n],
                    ts=ts,
                    plan_id=plan.id,
                    session_id=plan.session_id,
                    order=n,
                    action=s.action,
                    agent=s.agent,
                    tool=s.tool,
                )
                for n, s in enumerate(draft.steps, 1)
            ]
        if notes is not None and draft is not None and draft.unplanned and plan.steps:
            notes[:] = [
                f"No agent can do {_quoted(draft.unplanned)}: none of their tools does that, so it is not in the "
                "plan. The rest is planned.\n\n"
            ]
        if previous is not None and previous.overall_status == PlanStatus.in_progress:
            await record.set_plan(ctx, previous, PlanStatus.superseded, f"replaced by version {version}")
            for step in previous.steps:  # none of them waits or runs any more
                if step.status in (StepStatus.planned, StepStatus.awaiting_feedback):
                    await record.move(ctx, step, StepStatus.cancelled)
        if draft is None:  # stored failed at once: a reader never sees it "in progress" first
            plan.overall_status, plan.reason = PlanStatus.failed, failure
        elif refused is not None:
            plan.overall_status, plan.reason = PlanStatus.rejected, refused
        await record.add_plan(ctx, plan)
        if draft is None:
            content = f"Planning failed: {failure}"
        elif refused is not None:
            content = refused
        elif question is not None:
            content = question
        else:
            steps = "; ".join(f"{s.order}. {s.agent}: {s.action.rstrip('. ')}" for s in plan.steps)
            content = f"Plan v{version}: {plan.summary} {steps}".strip()
        await record.say(
            ctx,
            AgentMessage(session_id=plan.session_id, plan_id=plan.id, content=content, source="PlannerAgent", ts=ts),
        )
        return plan

    async def _run_steps(
        self,
        ctx: RunContext[Any],
        record: SessionRecord,
        plan: PlanWithSteps,
        request: PlanRequest,
        later: list[str],
        lead: str = "",
    ) -> tuple[PlanWithSteps, str] | None:
        """Run the plan's steps; return a new version when the human re-plans (and what to say before its first
        question), else ``None``. ``later`` gathers the new tasks the human asks for meanwhile."""
        standing: Verdict | None = None
        for step in plan.steps:
            await record.move(ctx, step, StepStatus.awaiting_feedback)
            verdict = standing or await self._verdict(ctx, record, plan, step, later, lead)
            lead = ""
            if verdict.clarification is not None:  # re-planned from here: what was done is not planned again
                request.clarifications.append(verdict.clarification)
                request.done = self._done(record, plan)
                before = [s.action for s in plan.steps if s.status != StepStatus.completed]
                replanned = await self._plan(ctx, record, request, plan)
                if not verdict.read:
                    return replanned, ""
                unknown = self._unknown(verdict.clarification)
                if replanned.steps and [s.action for s in replanned.steps] == before and unknown:
                    said = (
                        f"No agent can do that: none of their tools handles {_quoted(unknown)}, so the plan stays as "
                        "it was. To change a step otherwise, answer 'edit: <new action>'."
                    )
                elif replanned.steps and [s.action for s in replanned.steps] == before:
                    said = (
                        f"The plan stays as it was with {verdict.clarification!r}: the planner found nothing in it "
                        "to change. To change a step, answer 'edit: <new action>'."
                    )
                else:
                    said = f"Planned again with what you said ({verdict.clarification!r})."
                return replanned, said + "\n\n"
            if verdict.stop:  # this step is rejected; the ones after it are never asked about
                await record.move(ctx, step, StepStatus.rejected, human_feedback="stopped by the human")
                for after in plan.steps[step.order :]:
                    await record.move(ctx, after, StepStatus.cancelled)
                await self._finish(ctx, record, plan, stopped=step)
                return None
            if verdict.all:
                standing = Verdict(approved=verdict.approved, all=True)
            feedback = {"human_feedback": verdict.feedback, "human_approval_status": feedback_status(verdict.approved)}
            if not verdict.approved:
                await record.move(ctx, step, StepStatus.rejected, **feedback)
                continue
            await record.move(ctx, step, StepStatus.approved, updated_action=verdict.updated_action, **feedback)
            if not await self._execute(ctx, record, plan, step):
                renewed = await self._after_failure(ctx, record, plan, step, request)
                return None if renewed is None else (renewed, "")
        await self._finish(ctx, record, plan)
        return None

    async def _finish(
        self, ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps, *, stopped: Step | None = None
    ) -> None:
        """Store the outcome of a plan whose every step was decided: ``completed``, or ``rejected`` if nothing ran
        (``stopped``: the step at which the human stopped the plan)."""
        done = sum(1 for s in plan.steps if s.status == StepStatus.completed)
        rejected = sum(1 for s in plan.steps if s.status == StepStatus.rejected)
        if stopped is not None:
            left = sum(1 for s in plan.steps if s.status == StepStatus.cancelled)
            reason = f"stopped by the human at step {stopped.order} of {len(plan.steps)}: "
            reason += f"{done} done" if done else "nothing done"
            reason += f", {rejected} rejected" + (f", {left} not run" if left else "")
            await record.set_plan(ctx, plan, PlanStatus.completed if done else PlanStatus.rejected, reason)
            return
        if done:
            reason = f"{done} of {len(plan.steps)} steps done, {rejected} rejected" if rejected else ""
            await record.set_plan(ctx, plan, PlanStatus.completed, reason)
            return
        earlier = len(self._done(record, plan))
        if earlier:
            reason = f"every remaining step was rejected ({rejected}); {earlier} done by earlier versions"
        else:
            reason = (
                f"nothing was done (all {rejected} steps rejected)"
                if rejected > 1
                else "nothing was done (step rejected)"
            )
        await record.set_plan(ctx, plan, PlanStatus.rejected, reason)

    async def _verdict(
        self,
        ctx: RunContext[Any],
        record: SessionRecord,
        plan: PlanWithSteps,
        step: Step,
        later: list[str],
        lead: str = "",
    ) -> Verdict:
        action = step.action.rstrip(". ")
        question = f"Step {step.order} of {len(plan.steps)} ({step.agent}): {action}. Approve?"
        prompt = lead + question
        while True:
            answer = await ctx.ask(
                prompt, expectation=_VERDICT, data={"plan_id": plan.id, "step_id": step.id, "kind": "approval"}
            )
            # a stop with its reason ("no forget it, she changed her mind") ends the plan, not only this step
            stop = ends_for_a_reason(answer, self._verbs)
            verdict = Verdict(approved=False, all=True, stop=True) if stop else parse_verdict(answer)
            if verdict is not None and not verdict.approved and _NO_THEN.match(answer) and _amends(answer, action):
                verdict = None  # "no, he starts next wednesday": the plan corrected, not this step rejected
            if verdict is not None and verdict.step_id not in (None, step.id):  # sent for a step decided meanwhile
                prompt = f"That verdict was for another step. Step {step.order} of {len(plan.steps)}: {action}."
                continue
            if verdict is None:
                verdict, aside = self._other_answer(answer, plan, step, later)
                if verdict is None:
                    await self._human(ctx, record, plan, step, answer)
                    await self._planner_says(ctx, record, plan, step, aside)
                    prompt = f"{aside}\n\n{question}"
                    continue
            if said := verdict.said():
                await self._human(ctx, record, plan, step, said)
            return verdict

    def _other_answer(
        self, answer: str, plan: PlanWithSteps, step: Step, later: list[str]
    ) -> tuple[Verdict | None, str]:
        """An answer at a step that is no verdict in the usual words: a verdict it amounts to (a stop in other
        words, a correction of the plan: a clarification), or what to say before asking again (help, small talk, a
        question, a new task noted for after this plan, or how to answer)."""
        if emergency(answer):
            return None, EMERGENCY_REPLY
        if ends(answer, self._verbs):  # "ok stop here", "that's enough for now", "scrap that, he's staying"
            return Verdict(approved=False, all=True, stop=True), ""
        if asks_help(answer):
            return None, self.describe()
        talk = small_talk(answer, self._verbs)
        if talk is not None:
            said = {"thanks": "You're welcome.", "goodbye": "Before you go:"}.get(talk, "Hello!")
            return None, f"{said} The plan waits for your verdict on this step (say 'stop' to end it)."
        if is_question(answer):
            return None, f"I cannot answer questions here, only take your verdict. {self._status(plan, step)}"
        if again_for(answer, who := people(answer), self._verbs):  # "same for Joe Park": this task for them, after
            later.append(_for(plan.initial_goal, who, facts(answer).get("date")))
            return None, f"Noted: I will plan {later[-1]!r} when this plan ends."
        task = next_task(answer)
        if task is None and (_amends(answer, step.action) or {"name", "date"} & facts(answer).keys()):
            return Verdict(clarification=answer.strip(), read=True), ""
        task = task or next_task(answer, self._verbs)
        if task is not None:
            later.append(task)
            return None, f"Noted: I will plan {task!r} when this plan ends."
        return None, (
            f"Please answer {_VERDICT.description}. To change the plan, say what is different (for example 'she "
            "starts on 1 June'); to add a task for after this plan, say 'also <task>'."
        )

    def _unknown(self, said: str) -> list[str]:
        """The words of a correction naming things no tool of the catalogue knows ("tablet" in "make it a tablet"),
        not counting the people and dates it names."""
        for value in facts(said).values():
            said = said.replace(value, " ")
        return [w for w in named(said) if not any(self.catalogue.knows(stem) for stem in words(w))]

    @staticmethod
    def _status(plan: PlanWithSteps, step: Step) -> str:
        """Where the plan stands, as a person reads it."""
        done = sum(1 for s in plan.steps if s.status == StepStatus.completed)
        after = len(plan.steps) - step.order
        return (
            f"Plan v{plan.version}: {done} step{'' if done == 1 else 's'} done; step {step.order} of "
            f"{len(plan.steps)} waits for your verdict, {after} after it."
        )

    async def _planner_says(
        self, ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps, step: Step | None, text: str
    ) -> None:
        """Record the planner's answer to something the human said while the plan waits (seen over HTTP too)."""
        await self._message(ctx, record, plan, step, text, "PlannerAgent")

    async def _human(
        self, ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps, step: Step | None, text: str
    ) -> None:
        await self._message(ctx, record, plan, step, text, "HumanAgent")

    @staticmethod
    async def _message(
        ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps, step: Step | None, text: str, source: str
    ) -> None:
        message = AgentMessage(
            session_id=plan.session_id, plan_id=plan.id, step_id=step.id if step else None, content=text, source=source
        )
        await record.say(ctx, message)

    async def _execute(self, ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps, step: Step) -> bool:
        specialist = self.catalogue.get(step.agent) or self.catalogue.specialists[self.catalogue.fallback]
        await record.move(ctx, step, StepStatus.action_requested)
        lines = [f"Goal: {plan.initial_goal}"]
        earlier = self._done(record, plan)
        if earlier:
            lines.append("Done so far, in order:")
            lines += [f"{n}. {d.agent}: {d.action.rstrip('. ')} -> {d.result}" for n, d in enumerate(earlier, 1)]
        if step.human_feedback:
            lines.append(f"The human's feedback on this step: {step.human_feedback}")
        if step.tool and not step.updated_action:  # the planner's choice; an edited action may need another tool
            lines.append(f"Tool: {step.tool}")
        lines.append(f"Action: {step.updated_action or step.action}")
        inner = ctx.child(f"step-{step.id}", namespace=f"{ctx.namespace}/steps/{step.id}")
        request = HumanMessage(content="\n".join(lines))

        async def attempt() -> dict[str, str]:
            try:
                result = await specialist.agent.invoke(inner, request)
            except Exception as exc:  # the step fails with its error; the human may re-plan from here
                return {"error": f"{type(exc).__name__}: {exc}"}
            reason = not_done(result.messages)  # the agent said it could not act: never a success
            if reason is not None:
                return {"error": reason, "output": result.output}
            return {"output": result.output}

        # journaled: a run executed again (a restart, an answer) does not retry a step that already failed
        outcome = await ctx.step(attempt)
        if "error" in outcome:
            error = outcome["error"]
            await record.move(ctx, step, StepStatus.failed, error=error, agent_reply=outcome.get("output") or None)
            await record.say(
                ctx,
                AgentMessage(
                    session_id=plan.session_id,
                    plan_id=plan.id,
                    step_id=step.id,
                    content=outcome.get("output") or f"Failed: {error}",
                    source=specialist.name,
                ),
            )
            return False
        await record.move(ctx, step, StepStatus.completed, agent_reply=outcome["output"])
        await record.say(
            ctx,
            AgentMessage(
                session_id=plan.session_id,
                plan_id=plan.id,
                step_id=step.id,
                content=outcome["output"],
                source=specialist.name,
            ),
        )
        return True

    @staticmethod
    def _done(record: SessionRecord, plan: PlanWithSteps) -> list[DoneStep]:
        """Completed steps of this plan and of the versions it replaced, oldest first."""
        chain: list[PlanWithSteps] = []
        current: PlanWithSteps | None = plan
        while current is not None:
            chain.insert(0, current)
            current = record.plan(current.supersedes) if current.supersedes else None
        return [
            DoneStep(
                action=s.updated_action or s.action,
                agent=s.agent,
                result=s.agent_reply or "",
                tool=None if s.updated_action else s.tool,
            )
            for p in chain
            for s in p.steps
            if s.status == StepStatus.completed
        ]

    async def _after_failure(
        self, ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps, step: Step, request: PlanRequest
    ) -> PlanWithSteps | None:
        await record.set_plan(ctx, plan, PlanStatus.failed, f"step {step.order} failed: {step.error}")
        answer = await ctx.ask(
            f"Step {step.order} ({step.agent}) failed: {step.error}. Re-plan from here (add any new information), "
            "or stop?",
            expectation=Expectation(type="text", description="replan [information], or stop"),
            data={"plan_id": plan.id, "step_id": step.id, "kind": "replan"},
        )
        text = answer.strip()
        if _stops(text, self._verbs):
            return None
        extra = text.partition(":")[2].strip() if text.lower().startswith("replan") else text
        if extra:
            request.clarifications.append(extra)
        request.done = self._done(record, plan)
        request.failure = f"{step.agent}: {step.updated_action or step.action} -> {step.error}"
        return await self._plan(ctx, record, request, plan)

    @staticmethod
    def _closing(plan: PlanWithSteps) -> str:
        if (plan.reason or "").startswith("stopped by the human at step"):
            return f"Plan stopped {(plan.reason or '').removeprefix('stopped by the human ')}."
        if plan.planner == _REFUSAL:
            return plan.reason or "I will not plan this."
        if plan.overall_status == PlanStatus.completed:
            done = sum(1 for s in plan.steps if s.status == StepStatus.completed)
            rejected = sum(1 for s in plan.steps if s.status == StepStatus.rejected)
            head = f"Plan completed: {done} of {len(plan.steps)} steps done"
            head += f", {rejected} rejected" if rejected else ""
            return f"{head}. {plan.summary}".strip()
        return f"Plan {plan.overall_status.value}: {plan.reason or 'stopped'}"


class _Outcome:
    """The toolset giving a model-driven specialist the ``cannot_do_step`` tool (a :class:`Toolset`)."""

    def list_tools(self) -> list[Tool]:
        return [cannot_do_step]


async def _ids(count: int) -> dict[str, Any]:
    return {"ids": [uuid.uuid4().hex for _ in range(count)], "ts": time.time()}
