"""Tools of the Master Agent: the interface, adapters for agents and functions, and how a call is run.

Anything can be a tool of the orchestrator:

- a :class:`MasterTool` subclass: full control, returns :class:`ToolContent`. Two kinds of stateful agents fit it:
  *stateless* agents return their state in ``ToolContent.state`` and get it back in ``ToolInput.state`` when
  resumed (the state travels in the task stack: the seed's "graph without a checkpointer"); agents with *their own
  persistence* keep it with ``ctx.load_state`` / ``ctx.save_state`` under ``ToolInput.state_key``, which names the
  conversation's call (the seed's "graph with a separate checkpointer");
- a function taking a :class:`ToolInput` (by annotation), returning :class:`ToolContent` or text;
- any plain function or :class:`podium.Tool` taking ``text`` (and ``rationale`` if it wants it);
- any :class:`podium.Agent` (a :class:`podium.ReactAgent` too): it gets ``text`` as its input message.

An agent or function that asks the human itself (``ctx.ask``, at any depth) does not suspend the run: the question
surfaces as ``interrupt = true`` content, goes through the orchestrator (so the answer passes the classifier and
the guardrail), and the call is resumed by executing it again with the answer, its completed steps replaying from
the run's journal. No exception escapes the orchestrator: a failing tool answers with an error text.
"""

from __future__ import annotations

import dataclasses
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from podium.agents.base import Agent
from podium.errors import Suspended, UsageError
from podium.events import ErrorEvent, Interrupt
from podium.human import yes_or_no
from podium.messages import HumanMessage
from podium.orchestration.master.routing.base import ToolProfile
from podium.orchestration.master.types import HUMAN, ToolArgument, ToolCallRequest, ToolContent, ToolInput
from podium.runtime.context import RunContext
from podium.runtime.execution import approval
from podium.tools import Tool, ToolArgumentsError, ToolMetadata, ToolReturn, result_to_text

__all__ = ["ASK_STATE", "AgentTool", "FunctionTool", "MasterTool", "TaskFunctionTool", "as_master_tool", "run_tool"]

ASK_STATE = "podium.ask"
"""Key of the task state the orchestrator keeps for a tool that asked the human with ``ctx.ask``."""


def _default_metadata(description: str) -> ToolMetadata:
    return ToolMetadata(expose_to_user=True, introduction=description or None, can_generate_task=True)


def _may_ask(metadata: ToolMetadata) -> ToolMetadata:
    """``metadata`` with ``can_generate_task`` left unset read as the default of function and agent tools: they may
    leave a task (ask the human); only ``can_generate_task=False`` says they may not."""
    if metadata.can_generate_task is not None:
        return metadata
    return dataclasses.replace(metadata, can_generate_task=True)


class MasterTool(ABC):
    """A tool of the Master Agent. Subclasses set ``name``, ``description``, ``metadata`` and implement
    :meth:`call`."""

    name: str
    """The tool's name (what classifiers route to)."""
    description: str = ""
    """What it does, for the LLM classifier and the offline router."""
    metadata: ToolMetadata = ToolMetadata(expose_to_user=True, can_generate_task=True)
    """How it presents itself: listed to users, introduction, may leave tasks pending, example requests."""

    @property
    def parameters(self) -> dict[str, Any]:
        """JSON-schema properties the tool takes besides ``text`` and ``rationale`` (none by default)."""
        return {}

    def profile(self) -> ToolProfile:
        """What classifiers know about the tool."""
        meta = self.metadata
        return ToolProfile(
            name=self.name,
            description=self.description,
            introduction=meta.introduction or "",
            examples=tuple(meta.examples),
            expose_to_user=meta.expose_to_user,
            parameters=self.parameters,
        )

    @abstractmethod
    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        """Handle ``request``: answer, or return ``interrupt = true`` content to wait for help."""


def _to_content(value: Any) -> ToolContent:
    if isinstance(value, ToolContent):
        return value
    if isinstance(value, ToolReturn):
        return ToolContent(value=result_to_text(value.content), artifact=value.artifact)
    return ToolContent(value=result_to_text(value))


_GIVEN = ("text", "rationale", "classifier_text")
"""Parameters the orchestrator fills itself: never offered to the classifier."""


class FunctionTool(MasterTool):
    """A plain function (or :class:`podium.Tool`) as a tool: it gets ``text`` (the human's words), and
    ``rationale`` and ``classifier_text`` (the classifier's restatement) if it declares them.

    A required argument that neither the classifier nor the orchestrator fills (the offline router fills none) is
    asked of the human, one at a time, as the tool's task ("opening_hours needs the day: what is it?"); an answer
    that does not fit its type is asked again, saying why. Its result may be text, data (serialised),
    :class:`podium.ToolReturn` (with an artifact) or :class:`ToolContent`.
    """

    def __init__(self, function: Tool | Callable[..., Any], *, metadata: ToolMetadata | None = None) -> None:
        """Wrap ``function``; a plain function, or a :class:`podium.Tool` whose metadata was left as it is, gets
        metadata that lists it to users and lets it ask (``metadata`` overrides). Metadata that leaves
        ``can_generate_task`` unset lets it ask too: only ``can_generate_task=False`` keeps it from asking for a
        missing argument (it then answers what it needed)."""
        self.tool = function if isinstance(function, Tool) else Tool(function)
        self.name = self.tool.name
        self.description = self.tool.description
        unset = not isinstance(function, Tool) or self.tool.metadata == ToolMetadata()
        self.metadata = _may_ask(metadata or (_default_metadata(self.description) if unset else self.tool.metadata))
        self._properties: dict[str, Any] = dict(self.tool.parameters.get("properties") or {})
        self._required = [n for n in self.tool.parameters.get("required", ()) if n not in _GIVEN]

    @property
    def parameters(self) -> dict[str, Any]:
        return {k: v for k, v in self._properties.items() if k not in _GIVEN}

    def _question(self, name: str, problem: str = "") -> str:
        said = self._properties.get(name, {}).get("description") or name.replace("_", " ")
        return f"{problem}{self.name} needs {said.rstrip('.')}: what is it?"

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        # (a function taking the whole ToolInput keeps state of its own: never read as this one's)
        mine = request.resumed and isinstance(request.state, dict) and not self.tool.takes(ToolInput)
        state: dict[str, Any] = request.state if mine else {}
        if _ASKING in state:  # the human's answer to the argument asked for; the rest as they were
            asked = state[_ASKING]
            value = _typed(request.text, self._properties.get(asked, {}))
            if value is None:
                kind = _KINDS.get(self._properties.get(asked, {}).get("type"), "an answer")
                problem = f"{request.text.strip()!r} is not {kind}. "
                return ToolContent(
                    value=self._question(asked, problem), interrupt=True, state=_asking(state["arguments"], asked)
                )
            arguments = {**state["arguments"], asked: value}
        else:
            arguments = {k: v for k, v in request.arguments.items() if k in self._properties}
            if "text" in self._properties:
                arguments["text"] = request.text
            if "rationale" in self._properties:
                arguments["rationale"] = request.rationale
            if "classifier_text" in self._properties:
                arguments["classifier_text"] = request.classifier_text
        missing = [n for n in self._required if n not in arguments]
        if missing and self.metadata.can_generate_task:
            return ToolContent(value=self._question(missing[0]), interrupt=True, state=_asking(arguments, missing[0]))
        try:
            kwargs = self.tool.validate(arguments)
        except ToolArgumentsError as exc:
            if missing:  # a tool that may not ask: say what it needed
                needs = ", ".join(n.replace("_", " ") for n in missing)
                return ToolContent(value=f"{self.name} needs {needs}, which I could not tell from your message.")
            return ToolContent(value=f"{self.name} could not run: {exc.problem}")
        edited = ""
        if self.tool.approval:  # asked through the task stack, as the tool's own questions are
            shown = {k: v for k, v in arguments.items() if k not in _GIVEN}
            given = {k: v for k, v in arguments.items() if k in _GIVEN}
            decided = await approval(ctx, self.tool, shown, given)
            if isinstance(decided, str):
                return ToolContent(value=decided)
            kwargs, edited = decided
        content = _to_content(await self.tool.run(ctx, kwargs))
        content.value = edited + content.value
        return content


_KINDS = {"integer": "a whole number", "number": "a number", "boolean": "a yes or a no"}
"""How an argument's JSON type reads in a question asked again."""


def _typed(text: str, schema: dict[str, Any]) -> Any:
    """The human's answer as the argument's JSON type wants it ("3 nights" for an integer: 3), or ``None`` when it
    gives none; text for any other type."""
    kind = schema.get("type")
    if kind in ("integer", "number"):
        found = re.search(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
        if found is None:
            return None
        value = float(found.group(0))
        return int(value) if kind == "integer" and value.is_integer() else (value if kind == "number" else None)
    if kind == "boolean":
        return yes_or_no(text)
    return text.strip() or None


_ASKING = "missing_argument"
"""The key of a function tool's state naming the argument it asked the human for."""


def _asking(arguments: dict[str, Any], name: str) -> dict[str, Any]:
    """A function tool's state while it waits for the human to give argument ``name``."""
    return {"arguments": arguments, _ASKING: name}


class TaskFunctionTool(FunctionTool):
    """A function that takes the whole :class:`ToolInput` (injected by its annotation, as the
    :class:`podium.RunContext` is) instead of separate arguments; a :class:`FunctionTool` that insists on it."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: ToolMetadata | None = None,
    ) -> None:
        """Wrap ``function`` (sync or async); its docstring's first paragraph is the default description.

        Raises:
            UsageError: ``function`` has no parameter annotated :class:`ToolInput`.
        """
        made = function if isinstance(function, Tool) else Tool(function, name=name, description=description)
        if not made.takes(ToolInput):
            raise UsageError(f"{made.name!r} needs a parameter annotated ToolInput to be a TaskFunctionTool")
        super().__init__(made, metadata=metadata or _default_metadata(made.description))


class AgentTool(MasterTool):
    """A :class:`podium.Agent` as a tool: the request's text is its input message.

    The agent runs in its own message namespace per call. An agent written for the orchestrator reads the whole
    :class:`ToolInput` (its resumed state too) with ``ctx.injected(ToolInput)``, as its tools receive it by
    annotation, and returns :class:`ToolContent` as its result's ``data``. An agent that merely answers with a
    question completes; to wait for the human it asks with ``ctx.ask`` (any depth) or returns ``interrupt = true``
    content.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: ToolMetadata | None = None,
    ) -> None:
        """Wrap ``agent`` (its name and description are the defaults; ``metadata`` that leaves
        ``can_generate_task`` unset lets it ask the human, as the default does)."""
        self.agent = agent
        self.name = name or agent.name
        self.description = description if description is not None else agent.description
        self.metadata = _may_ask(metadata or _default_metadata(self.description))

    async def call(self, ctx: RunContext[Any], request: ToolInput) -> ToolContent:
        # One namespace per call and run: the agent's history never mixes two calls.
        namespace = f"{'/'.join(ctx.path)}/{self.agent.name}@{ctx.run_id[:8]}"
        inner = ctx.child(self.agent.name, namespace=namespace)
        message = HumanMessage(content=request.text)
        result = await self.agent.invoke(inner, message)
        if isinstance(result.data, ToolContent):
            return result.data
        return ToolContent(value=result.output)


def as_master_tool(item: MasterTool | Agent | Tool | Callable[..., Any]) -> MasterTool:
    """``item`` as a :class:`MasterTool`: tools as they are, agents and functions wrapped."""
    if isinstance(item, MasterTool):
        return item
    if isinstance(item, Agent):
        return AgentTool(item)
    if isinstance(item, Tool):
        return FunctionTool(item)
    if callable(item):
        return FunctionTool(item)  # a parameter annotated ToolInput receives the whole request
    raise UsageError(f"cannot make a tool of {item!r}: pass a MasterTool, an Agent, a Tool or a function")


# --- running a call --------------------------------------------------------------------------------------------


class _Asks:
    """Answers a tool's questions from the answers known for the call, and collects the questions it asks.

    Installed as the ``on_ask`` handler of the context a tool runs in: ``ask`` does not suspend the run, the question
    goes to the orchestrator, which pushes it on the task stack (the tool's content says ``interrupt``).
    """

    __slots__ = ("answers", "asked")

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.asked: list[Interrupt] = []

    async def __call__(self, question: Interrupt) -> str:
        if question.id in self.answers:
            return self.answers[question.id]
        self.asked.append(question)
        raise Suspended([question])


async def run_tool(
    ctx: RunContext[Any], tool: MasterTool, request: ToolInput, answers: dict[str, str] | None = None
) -> tuple[ToolContent, str | None]:
    """Run one call of ``tool`` in a child of ``ctx``; return its content and the error type if it failed.

    The child's path is the tool, the call id and the invocation number, so executing a call again (to give it the
    answer to its question) replays its completed steps. ``answers`` answers its earlier ``ctx.ask`` questions.
    """
    asks = _Asks(dict(answers or {}))
    inner = ctx.child(tool.name, request.call_id, f"i{request.invocation}", on_ask=asks)
    inner.provide(request)  # every tool run below this call receives it by annotation
    try:
        content = await tool.call(inner, request)
        if not isinstance(content, ToolContent):
            raise UsageError(f"{tool.name}.call() returned {type(content).__name__}, not ToolContent")
        json.dumps(content.to_dict())
        return content, None
    except Suspended as suspended:
        mine = [i for i in suspended.interrupts if any(i is a for a in asks.asked)]
        if not mine or len(mine) != len(suspended.interrupts):
            raise
        question = mine[0]
        state = {ASK_STATE: {"request": request.to_dict(), "answers": asks.answers, "pending": question.id}}
        follow = ToolCallRequest(
            context=f"{tool.name} asked the human: {question.prompt}",
            content=question.prompt,
            tool_argument=ToolArgument(name=HUMAN),
            expectation=question.expectation,
        )
        return ToolContent(value=question.prompt, interrupt=True, state=state, next_tool=follow), None
    except Exception as exc:
        await inner.emit(ErrorEvent(error=type(exc).__name__, message=str(exc)))
        return ToolContent(value=f"{tool.name} failed: {type(exc).__name__}: {exc}"), type(exc).__name__
