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
from podium.errors import PodiumError
from podium.events import Expectation
from podium.messages import AIMessage, HumanMessage
from podium.orchestration.plan.catalogue import Catalogue
from podium.orchestration.plan.caution import concern
from podium.orchestration.plan.planner import DoneStep, Planner, PlanRequest
from podium.orchestration.plan.record import SessionRecord, Verdict, feedback_status, is_verdict, parse_verdict
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

__all__ = ["PlanAndExecute"]

_VERDICT = Expectation(
    type="pattern",
    pattern=r"(?i)^\s*(\{|approve|yes|y\b|ok|go|all|reject|no|n\b|skip|edit:|clarify:)",
    description="approve, approve all, reject, reject all, edit: <new action>, or clarify: <information>",
)
_CAUTION = "caution check"
"""The ``planner`` of a plan version that only asks the human to confirm a questioned task."""
_STOP = frozenset({"stop", "cancel", "no", "n", "abort", "quit", "drop it", "stop it", "cancel it", "never mind"})
_CONFIRM_WORDS = frozenset({"confirm", "confirmed", "yes", "y", "proceed", "go", "ok", "okay", "sure"})
_CONFIRM_FILL = frozenset({"ahead", "i", "please", "do", "it", "plan", "anyway"})


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _stops(answer: str) -> bool:
    """The human's answer to the planner's question drops the task."""
    return " ".join(_words(answer)) in _STOP


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

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        record = SessionRecord(Session(id=ctx.thread_id), [])  # this run's plans; the log holds the session's
        added = [await ctx.add_message(input)]
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
            if plan.overall_status == PlanStatus.failed:
                break
            if plan.human_clarification_request:
                kind = "confirmation" if plan.planner == _CAUTION else "clarification"
                answer = await ctx.ask(plan.human_clarification_request, data={"plan_id": plan.id, "kind": kind})
                await self._human(ctx, record, plan, None, answer)
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
        question = None if request.confirmed else concern(request.text())
        draft: PlanDraft | None
        if question is not None:  # nothing is planned until the human confirms
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
            planner=_CAUTION if question is not None else self.planner.name,
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
        await record.add_plan(ctx, plan)
        if draft is None:
            content = f"Planning failed: {failure}"
        elif question is not None:
            content = question
        else:
            steps = "; ".join(f"{s.order}. {s.agent}: {s.action}" for s in plan.steps)
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

    async def _finish(self, ctx: RunContext[Any], record: SessionRecord, plan: PlanWithSteps) -> None:
        """Store the outcome of a plan whose every step was decided: ``completed``, or ``rejected`` if nothing ran."""
        done = sum(1 for s in plan.steps if s.status == StepStatus.completed)
        rejected = sum(1 for s in plan.steps if s.status == StepStatus.rejected)
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
        prompt = f"Step {step.order} of {len(plan.steps)} ({step.agent}): {step.action}. Approve?"
        while True:
            answer = await ctx.ask(
                prompt, expectation=_VERDICT, data={"plan_id": plan.id, "step_id": step.id, "kind": "approval"}
            )
            verdict = parse_verdict(answer)
            if verdict is not None and verdict.step_id not in (None, step.id):  # sent for a step decided meanwhile
                prompt = f"That verdict was for another step. Step {step.order} of {len(plan.steps)}: {step.action}."
                continue
            if verdict is not None:
                if said := verdict.said():
                    await self._human(ctx, record, plan, step, said)
                return verdict
            prompt = f"Please answer {_VERDICT.description}. Step {step.order}: {step.action}."

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
            lines += [f"{n}. {d.agent}: {d.action} -> {d.result}" for n, d in enumerate(earlier, 1)]
        if step.human_feedback:
            lines.append(f"The human's feedback on this step: {step.human_feedback}")
        lines.append(f"Action: {step.updated_action or step.action}")
        inner = ctx.child(f"step-{step.id}", namespace=f"{ctx.namespace}/steps/{step.id}")
        request = HumanMessage(content="\n".join(lines))

        async def attempt() -> dict[str, str]:
            try:
                return {"output": (await specialist.agent.invoke(inner, request)).output}
            except Exception as exc:  # the step fails with its error; the human may re-plan from here
                return {"error": f"{type(exc).__name__}: {exc}"}

        # journaled: a run executed again (a restart, an answer) does not retry a step that already failed
        outcome = await ctx.step(attempt)
        if "error" in outcome:
            error = outcome["error"]
            await record.move(ctx, step, StepStatus.failed, error=error)
            await record.say(
                ctx,
                AgentMessage(
                    session_id=plan.session_id,
                    plan_id=plan.id,
                    step_id=step.id,
                    content=f"Failed: {error}",
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
            DoneStep(action=s.updated_action or s.action, agent=s.agent, result=s.agent_reply or "")
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
        if text.lower() in ("stop", "no", "n", "cancel"):
            return None
        extra = text.partition(":")[2].strip() if text.lower().startswith("replan") else text
        if extra:
            request.clarifications.append(extra)
        request.done = self._done(record, plan)
        request.failure = f"{step.agent}: {step.updated_action or step.action} -> {step.error}"
        return await self._plan(ctx, record, request, plan)

    @staticmethod
    def _closing(plan: PlanWithSteps) -> str:
        if plan.overall_status == PlanStatus.completed:
            done = sum(1 for s in plan.steps if s.status == StepStatus.completed)
            rejected = sum(1 for s in plan.steps if s.status == StepStatus.rejected)
            head = f"Plan completed: {done} of {len(plan.steps)} steps done"
            head += f", {rejected} rejected" if rejected else ""
            return f"{head}. {plan.summary}".strip()
        return f"Plan {plan.overall_status.value}: {plan.reason or 'stopped'}"


async def _ids(count: int) -> dict[str, Any]:
    return {"ids": [uuid.uuid4().hex for _ in range(count)], "ts": time.time()}
