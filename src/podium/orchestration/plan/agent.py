"""The plan-and-execute agent: plan a task, ask the human about each step, run approved steps with their agents.

One run per task (``Runtime.run(agent, task)``): the planner makes plan version 1; a question from the planner is
asked (an interrupt) and its answer re-plans (version 2 ...); then the steps go in order: each waits for the
human's verdict (an interrupt whose ``data`` names the plan and the step), an approved step runs with its
specialist (shown the goal, the earlier steps' results in order, the human's feedback and edited action), a
rejected one is skipped. A plan with at least one step done ends ``completed`` (its reason counts the rejected
steps); one where nothing was done, every step rejected or the human stopping at a question, ends ``rejected``.
Before planning, a message that is only a verdict ("approve all" with no plan waiting) is answered, never planned,
and a task the caution check questions (:mod:`~podium.orchestration.plan.caution`) is confirmed first ("stop" at any
question of the planner ends the plan ``rejected``). A failing step is stored ``failed`` with its error and the plan
``failed``; the human is asked whether to re-plan from there (a new version that keeps what was done) or stop.
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
from podium.orchestration.plan.catalogue import Catalogue
from podium.orchestration.plan.caution import concern, refusal
from podium.orchestration.plan.outcome import CANNOT_DO, cannot_do_step, not_done
from podium.orchestration.plan.planner import DoneStep, Planner, PlanRequest
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


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _stops(answer: str) -> bool:
    """The human's answer to the planner's question drops the task ("stop", "no", "never mind")."""
    return is_stop(answer) or " ".join(_words(answer)) in ("no", "n", "nope", "no thanks")


def asks_help(text: str) -> bool:
    """The human asks what the service does ("help", "what can you do?") rather than giving a task."""
    return bool(_HELP.match(" ".join(_words(text))))


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
        for specialist in catalogue.specialists.values():  # how a model-driven specialist says it could not act
            agent = specialist.agent
            if isinstance(agent, ReactAgent) and CANNOT_DO not in agent.current_tools():
                agent.toolsets.append(_Outcome())

    def not_a_task(self, text: str) -> str:
        """The answer to "help" or "stop" when no plan waits (neither is planned as a task)."""
        if is_stop(text):
            return f"Nothing is planned or running, so there is nothing to stop. {self.describe()}"
        return self.describe()

    def describe(self) -> str:
        """What the service does and how to answer it (the reply to "help" or "what can you do?")."""
        fallback = self.catalogue.fallback
        roles = [s.description.partition(":")[0] for s in self.catalogue.specialists.values() if s.name != fallback]
        team = ", ".join(roles) or fallback
        return (
            f"I plan tasks for a team of agents ({team}, and a general one for the rest) and ask you about each "
            "step before it runs. Type a task: what should be done, for whom and by when (for example 'Onboard Ada "
            "Lovelace, who starts next week'). At each step answer approve (or yes, ok, sure), approve all, reject "
            "(or no, skip), reject all, edit: <new action>, clarify: <information>, or stop to end the plan."
        )

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        record = SessionRecord(Session(id=ctx.thread_id), [])  # this run's plans; the log holds the session's
        added = [await ctx.add_message(input)]
        if emergency(input.content):  # no task for a plan: the person is sent to emergency services first
            added.append(await ctx.add_message(AIMessage(content=EMERGENCY_REPLY, name=self.name)))
            return AgentResult(output=EMERGENCY_REPLY, messages=added, data={"plan_id": None, "status": "no_plan"})
        if asks_help(input.content) or is_stop(input.content):  # no plan waits here: nothing to plan or stop
            reply = self.not_a_task(input.content)
            added.append(await ctx.add_message(AIMessage(content=reply, name=self.name)))
            return AgentResult(output=reply, messages=added, data={"plan_id": None, "status": "no_plan"})
        if is_verdict(input.content):  # no plan waits for a verdict here (it would have resumed that run)
            reply = (
                "No plan is waiting for approval, so there is nothing to approve or reject, and "
                f"{input.content.strip()!r} was not taken as a new task. Type a task to plan it (what should be done, "
                "for whom and by when); each step will then ask for your verdict."
            )
            added.append(await ctx.add_message(AIMessage(content=reply, name=self.name)))
            return AgentResult(output=reply, messages=added, data={"plan_id": None, "status": "no_plan"})
        request = PlanRequest(task=input.content)
        plan = await self._plan(ctx, record, request, None)
        while True:
            if plan.overall_status != PlanStatus.in_progress:  # failed, or refused
                break
            if plan.human_clarification_request:
                kind = "confirmation" if plan.planner == _CAUTION else "clarification"
                question = plan.human_clarification_request
                answer = await ctx.ask(question, data={"plan_id": plan.id, "kind": kind})
                while asks_help(answer):  # "what can you do?" is not information for the plan: answer, ask again
                    await self._human(ctx, record, plan, None, answer)
                    answer = await ctx.ask(f"{self.describe()}\n\n{question}", data={"plan_id": plan.id, "kind": kind})
                await self._human(ctx, record, plan, None, answer)
                request.questions.append(question)
                if _stops(answer):
                    reason = "stopped by the human at the planner's question; nothing was done"
                    await record.set_plan(ctx, plan, PlanStatus.rejected, reason)
                    break
                if kind == "confirmation" and _confirms(answer):
                    request.confirmed = True
                else:
                    request.clarifications.append(answer)
                plan = await self._plan(ctx, record, request, plan)
                continue
            replanned = await self._run_steps(ctx, record, plan, request)
            if replanned is None:
                break
            plan = replanned
        reply = self._closing(plan)
        added.append(await ctx.add_message(AIMessage(content=reply, name=self.name)))
        return AgentResult(output=reply, messages=added, data={"plan_id": plan.id, "status": plan.overall_status})

    async def _plan(
        self, ctx: RunContext[Any], record: SessionRecord, request: PlanRequest, previous: PlanWithSteps | None
    ) -> PlanWithSteps:
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
        self, ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps, request: PlanRequest
    ) -> PlanWithSteps | None:
        """Run the plan's steps; return a new version when the human re-plans, else ``None``."""
        standing: Verdict | None = None
        for step in plan.steps:
            await record.move(ctx, step, StepStatus.awaiting_feedback)
            verdict = standing or await self._verdict(ctx, record, plan, step)
            if verdict.clarification is not None:
                request.clarifications.append(verdict.clarification)
                return await self._plan(ctx, record, request, plan)
            if verdict.stop:  # this step is rejected; the ones after it are never asked about
                await record.move(ctx, step, StepStatus.rejected, human_feedback="stopped by the human")
                for later in plan.steps[step.order :]:
                    await record.move(ctx, later, StepStatus.cancelled)
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
                return await self._after_failure(ctx, record, plan, step, request)
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

    async def _verdict(self, ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps, step: Step) -> Verdict:
        action = step.action.rstrip(". ")
        prompt = f"Step {step.order} of {len(plan.steps)} ({step.agent}): {action}. Approve?"
        while True:
            answer = await ctx.ask(
                prompt, expectation=_VERDICT, data={"plan_id": plan.id, "step_id": step.id, "kind": "approval"}
            )
            verdict = parse_verdict(answer)
            if verdict is not None and verdict.step_id not in (None, step.id):  # sent for a step decided meanwhile
                prompt = f"That verdict was for another step. Step {step.order} of {len(plan.steps)}: {action}."
                continue
            if verdict is not None:
                if said := verdict.said():
                    await self._human(ctx, record, plan, step, said)
                return verdict
            prompt = f"Please answer {_VERDICT.description}. Step {step.order}: {action}."

    async def _human(
        self, ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps, step: Step | None, text: str
    ) -> None:
        message = AgentMessage(
            session_id=plan.session_id,
            plan_id=plan.id,
            step_id=step.id if step else None,
            content=text,
            source="HumanAgent",
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
        if _stops(text):
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
