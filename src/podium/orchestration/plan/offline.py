"""Planning and acting with no model: a deterministic planner and a model that calls the step's tool.

:class:`OfflinePlanner` matches the task's words against the catalogue (the same BM25 retrieval a model planner is
shown), keeps the tools that fit clearly (at least ``share`` of the best score), at most ``per_agent`` per
specialist and ``max_steps`` in all, and orders the steps by the specialists' ``rank`` (their role in a process:
HR before Tech Support) and then by each tool's place in its specialist's list. A step's action is the tool's
description, with the people, dates and numbers named in the task, and the tool's name.

What it can do: any task whose words (or their simple stems) appear in the tools' names and descriptions gets the
matching tools as steps, in a sensible order, with the names and dates of the task. A task with no matching word
goes to the fallback specialist as one step, and a task of fewer than two content words is answered with a
question. What it cannot do: understand synonyms the catalogue does not use, negation ("do not order a laptop"
still orders one), conditions, or steps that need a tool nobody has.

:class:`OfflineAgentModel` stands in for a specialist's model: it calls the tool the step's action names (or the
best-matching one), with arguments filled from the action's text by type, then answers with the tool's result.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import TYPE_CHECKING, Any

from podium.messages import AIMessage, HumanMessage, ToolCall, ToolMessage, Usage
from podium.models.base import Model, ModelRequest, ModelResponse
from podium.orchestration.plan.catalogue import CatalogueTool, words
from podium.orchestration.plan.planner import Planner, PlanRequest
from podium.orchestration.plan.types import PlanDraft, PlannedStep

if TYPE_CHECKING:
    from podium.orchestration.plan.catalogue import Catalogue
    from podium.runtime.context import RunContext
    from podium.tools import ToolSpec

__all__ = ["OfflineAgentModel", "OfflinePlanner", "facts"]

_NAME = re.compile(r"\b([A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|[A-Z]\.))+)")
_DATE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}|(?:next|this|coming)\s+(?:week|month|monday|tuesday|wednesday|thursday|friday)|"
    r"tomorrow|today|(?:on\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_NOT_NAMES = frozenset({"Tech Support", "Human Resources"})
_TOOL_MARK = re.compile(r"\[([A-Za-z0-9_-]+)\]\s*$")


def facts(text: str) -> dict[str, str]:
    """The person, date and number ``text`` names, if any (``name``, ``date``, ``number``)."""
    found: dict[str, str] = {}
    for match in _NAME.finditer(text):
        name = match.group(1)
        first = match.start() == 0 or text[: match.start()].rstrip().endswith((".", ":", "!", "?"))
        if first and name.count(" ") >= 2:
            name = name.partition(" ")[2]  # a sentence's first word is capitalised anyway ("Onboard Jessica Smith")
        if " " in name and name not in _NOT_NAMES:
            found["name"] = name
            break
    date = _DATE.search(text)
    if date:
        found["date"] = date.group(1)
    number = _NUMBER.search(text)
    if number:
        found["number"] = number.group(0)
    return found


def _sentence(description: str) -> str:
    first = description.strip().split("\n")[0]
    return first.rstrip(". ")


class OfflinePlanner(Planner):
    """A deterministic planner over the catalogue (no model); see the module docstring for what it can do."""

    name = "offline"

    def __init__(
        self,
        catalogue: Catalogue,
        *,
        share: float = 0.6,
        per_agent: int = 4,
        max_steps: int = 8,
        tool_limit: int = 12,
    ) -> None:
        """A planner over ``catalogue``.

        Args:
            catalogue: the specialists and tools.
            share: a tool becomes a step when its score is at least this share of the best tool's.
            per_agent: at most this many steps per specialist.
            max_steps: at most this many steps.
            tool_limit: how many retrieved tools it considers.
        """
        super().__init__(catalogue)
        self.share = share
        self.per_agent = per_agent
        self.max_steps = max_steps
        self.tool_limit = tool_limit

    def draft(self, request: PlanRequest) -> PlanDraft:
        """The plan for ``request`` (pure and deterministic)."""
        text = request.text()
        if len(words(text)) < 2:
            return PlanDraft(
                initial_goal=request.task,
                steps=[],
                summary="More information is needed before planning.",
                human_clarification_request="What should be done, for whom and by when?",
            )
        done = {m.group(1) for d in request.done if (m := _TOOL_MARK.search(d.action))}
        detail = facts(text)
        chosen = self._choose(text, detail, done)
        if not chosen:
            agent = self.catalogue.fallback
            steps = [PlannedStep(action=text, agent=agent)]
            return PlanDraft(initial_goal=request.task, steps=steps, summary=f"{agent} handles the task.")
        steps = [PlannedStep(action=self._action(entry, detail), agent=entry.agent) for entry in chosen]
        agents = list(dict.fromkeys(entry.agent for entry in chosen))
        summary = f"{len(steps)} steps by {', '.join(agents)}."
        return PlanDraft(initial_goal=request.task, steps=steps, summary=summary)

    def _choose(self, text: str, detail: dict[str, str], done: set[str]) -> list[CatalogueTool]:
        """The tools to plan as steps, in order; ``done`` names the tools completed steps already used."""
        for value in detail.values():  # names and dates say for whom and when, not what
            text = text.replace(value, " ")
        scored = self.catalogue.scored(text)[: self.tool_limit]
        if not scored:
            return []
        best = scored[0][0]
        per_agent: dict[str, int] = {}
        chosen: list[CatalogueTool] = []
        for score, entry in scored:
            if score < best * self.share or len(chosen) >= self.max_steps:
                break
            if per_agent.get(entry.agent, 0) >= self.per_agent:
                continue
            per_agent[entry.agent] = per_agent.get(entry.agent, 0) + 1  # done work keeps its place: not replaced
            if entry.tool.name not in done:
                chosen.append(entry)
        ranks = {name: s.rank for name, s in self.catalogue.specialists.items()}
        return sorted(chosen, key=lambda e: (ranks[e.agent], e.position))

    @staticmethod
    def _action(entry: CatalogueTool, detail: dict[str, str]) -> str:
        text = _sentence(entry.tool.description)
        if "name" in detail:
            text += f" for {detail['name']}"
        if "date" in detail:
            text += f" ({detail['date']})"
        return f"{text} [{entry.tool.name}]"

    async def plan(self, ctx: RunContext[Any], request: PlanRequest) -> tuple[PlanDraft, int]:
        return self.draft(request), min(self.tool_limit, len(self.catalogue.tools))


def _value(name: str, schema: dict[str, Any], text: str, detail: dict[str, str]) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        lowered = text.lower()
        return next((v for v in schema["enum"] if str(v).lower() in lowered), schema["enum"][0])
    if kind == "integer":
        return int(float(detail.get("number", "1")))
    if kind == "number":
        return float(detail.get("number", "1"))
    if kind == "boolean":
        return True
    if kind == "array":
        return [text]
    if kind == "object":
        return {}
    if "name" in name and "name" in detail:
        return detail["name"]
    if ("date" in name or name.endswith("_on") or "when" in name) and "date" in detail:
        return detail["date"]
    if "email" in name and "name" in detail:
        return detail["name"].lower().replace(" ", ".") + "@example.com"
    return text


def _arguments(spec: ToolSpec, text: str) -> dict[str, Any]:
    detail = facts(text)
    properties: dict[str, Any] = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", ()))
    return {name: _value(name, schema, text, detail) for name, schema in properties.items() if name in required}


class OfflineAgentModel(Model):
    """A specialist's model with no network: call the step's tool, then report its result."""

    name = "offline"

    async def reply(self, request: ModelRequest) -> ModelResponse:
        """Call the tool the last request names (or fits best), or answer with the last tool's result."""
        last = request.messages[-1] if request.messages else HumanMessage(content="")
        if isinstance(last, ToolMessage):
            message = AIMessage(content=last.content if not last.is_error else f"I could not do it: {last.content}")
        else:
            message = self._call(last.content, request.tools)
        return ModelResponse(message=message, usage=Usage(0, 0, 1), model_name=self.name, finish_reason="stop")

    @staticmethod
    def _call(content: str, tools: list[ToolSpec]) -> AIMessage:
        action = content.rsplit("Action:", 1)[-1].strip()
        if not tools:
            return AIMessage(content=f"Done: {action}")
        named = re.search(r"\[([A-Za-z0-9_-]+)\]", action)
        spec = next((t for t in tools if named and t.name == named.group(1)), None)
        if spec is None:
            wanted = set(words(action))
            spec = max(tools, key=lambda t: len(wanted & set(words(f"{t.name} {t.description}"))))
        text = re.sub(r"\s*\[[A-Za-z0-9_-]+\]", "", action)
        arguments = json.dumps(_arguments(spec, text))
        return AIMessage(
            tool_calls=[
                ToolCall(
                    id=f"call_{uuid.uuid5(uuid.NAMESPACE_URL, content).hex[:12]}", name=spec.name, arguments=arguments
                )
            ]
        )
