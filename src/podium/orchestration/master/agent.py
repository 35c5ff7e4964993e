"""The Master Agent: one orchestrator over agents exposed as tools, with a stack of suspended tasks.

The loop reacts to the last message:

- a **human message** (the run's input, or an answer to a question) goes through the intent classifier, which
  routes it to a tool (resuming that tool's task if one is on the stack; a follow-up such as "and on sunday?" to
  the tool that answered last), asks the human to clarify, refuses it (guardrail: an emergency is a reply of its
  own, the waiting question asked again apart), answers "what can you do?", abandons the top task, keeps a request
  for "one more" until the waiting question is answered, or takes leave ("thanks, bye": the task waits for the
  answer, sent any time later);
- a **tool result** first takes the tool's resumed task off the stack. If the tool is not done
  (``interrupt = true``) its task is pushed with its state and its request is carried out: an explicit tool call,
  the classifier with the request's context, or by default a question to the human. If it is done, ``next_tool``
  chains to another tool; otherwise the top task gets the answer: the human is asked the top task's question again
  with the result prepended, or, when the top task waits for a tool, that task is resumed with the result. An
  empty stack ends the run with the result, the repeat prompt and the artifact.

Questions to the human are durable interrupts (``ctx.ask``) with the pending task's typed expectation; the answer
resumes the run and is classified like any human message. The stack is saved with the conversation after each
change and announced with :class:`podium.TaskStackChanged`; every decision is journaled, so a run re-executed
after a restart replays to the same point. Rationale and progress go to the side channel, never to a model.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from podium.agents.base import Agent, AgentResult
from podium.errors import StepLimitExceeded, UsageError
from podium.events import TaskStackChanged
from podium.human import elided, requests_in
from podium.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from podium.orchestration.master.routing.base import Classifier, Decision, PendingTask, Query, ToolCatalog
from podium.orchestration.master.routing.llm import CONTROL_TOOLS
from podium.orchestration.master.routing.router import Router, guardrail
from podium.orchestration.master.routing.rules import is_abandon
from podium.orchestration.master.routing.text import spoken
from podium.orchestration.master.tools import ASK_STATE, MasterTool, as_master_tool, run_tool
from podium.orchestration.master.types import (
    HUMAN,
    TaskEntry,
    TaskStack,
    ToolArgument,
    ToolCallRequest,
    ToolContent,
    ToolInput,
)
from podium.runtime.context import RunContext
from podium.tools import Tool

__all__ = ["MasterAgent"]


class MasterAgent(Agent):
    """The master orchestrator. Run it with :class:`podium.Runtime` like any agent."""

    def __init__(
        self,
        tools: Sequence[MasterTool | Agent | Tool | Callable[..., Any]],
        *,
        name: str = "master",
        title: str | None = None,
        description: str = "",
        classifier: Classifier | None = None,
        max_message_chars: int = 20_000,
        max_tool_calls: int = 25,
    ) -> None:
        """Build the orchestrator.

        Args:
            tools: its tools: :class:`MasterTool` objects, agents, :class:`podium.Tool` objects or functions.
            name: the agent's name (in paths, on its messages, in its state key).
            title: how it introduces itself ("Hello, I am {title}"); default: ``name``.
            description: what it does, when it is itself a tool of another agent.
            classifier: the intent classifier (default: the offline :class:`~podium.orchestration.master.Router`).
            max_message_chars: longer human messages are answered with a request to shorten them.
            max_tool_calls: tool calls allowed between two human messages (stops tools chaining forever).

        Raises:
            UsageError: two tools share a name, a tool uses a reserved name, or a limit is not positive.
        """
        if max_message_chars < 1 or max_tool_calls < 1:
            raise UsageError("max_message_chars and max_tool_calls must be at least 1")
        self.name = name
        self.title = title or name
        self.description = description
        self.classifier = classifier or Router()
        self.max_message_chars = max_message_chars
        self.max_tool_calls = max_tool_calls
        self.tools: dict[str, MasterTool] = {}
        for item in tools:
            made = as_master_tool(item)
            if made.name in self.tools:
                raise UsageError(f"master agent {name!r} has two tools named {made.name!r}")
            if made.name == HUMAN or made.name in CONTROL_TOOLS:
                raise UsageError(f"the tool name {made.name!r} is reserved by the master agent; rename the tool")
            self.tools[made.name] = made
        self.catalog = ToolCatalog.of(tool.profile() for tool in self.tools.values())

    @property
    def state_key(self) -> str:
        """Where the task stack is kept in the conversation's state."""
        return f"master:{self.name}"

    @property
    def task_list(self) -> str:
        """One line per tool exposed to users: its name and introduction."""
        return "\n".join(
            f"- {t.name}: {t.metadata.introduction or t.description}"
            for t in self.tools.values()
            if t.metadata.expose_to_user
        )

    @property
    def welcome(self) -> str:
        """The welcome prompt, built from the exposed tools' introductions."""
        return f"Hello, I am {self.title}. I can help you with the following tasks:\n{self.task_list}\n" + _HOW

    @property
    def repeat_prompt(self) -> str:
        """The prompt that follows a completed task."""
        return f"What else can I help you with? I can help you with the following tasks:\n{self.task_list}\n" + _HOW

    @property
    def capabilities(self) -> str:
        """The answer to "what can you do?"."""
        return f"I can help you with the following tasks:\n{self.task_list}"

    async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
        return await _Session(self, ctx).run(input)


_HOW = "How can I help you today?"
_CONDITIONAL = re.compile(r"\s*(?:and\s+|but\s+)?(?:if|only\s+if|in\s+that\s+case|if\s+so)\b", re.IGNORECASE)
"""A request that depends on the answer to the one before ("... ? if so, book me in")."""


def _join(first: str, second: str, sep: str = " ") -> str:
    """``first`` then ``second`` (left out when ``first`` already says it)."""
    first, second = first.strip(), second.strip()
    if not second or second in first:
        return first
    return f"{first}{sep}{second}" if first else second


@dataclass(slots=True)
class _Human:
    text: str


@dataclass(slots=True)
class _Result:
    tool: MasterTool
    request: ToolInput
    content: ToolContent
    resumed: TaskEntry | None


@dataclass(slots=True)
class _Finish:
    text: str
    said: str = ""
    """The answer alone, without the closing prompt (what an answer to an earlier request of the message keeps)."""


_Next = _Human | _Result | _Finish


class _Session:
    """One execution of the loop for one run. All conversation state lives in the run context, never on the agent,
    so one agent serves any number of conversations at once."""

    def __init__(self, agent: MasterAgent, ctx: RunContext[Any]) -> None:
        self.agent = agent
        self.ctx = ctx
        self.stack = TaskStack()
        self.serial = 0  # numbers the questions, classifications and calls of this run (same on every re-execution)
        self.hops = 0
        self.later: list[str] = []
        """Requests of an earlier message that wait for the one before them to be done (saved with the stack)."""
        self.previous: str | None = None
        """The tool that answered the last request (a follow-up with no tool of its own goes back to it)."""
        self.earlier: list[str] = []
        """Answers given in this run to requests of the message before the one under way, shown with the last."""

    def _next_serial(self) -> int:
        self.serial += 1
        return self.serial

    async def run(self, input: HumanMessage) -> AgentResult:
        saved = await self.ctx.load_state(self.agent.state_key, None)
        self.stack = TaskStack.from_json((saved or {}).get("stack"))
        self.later = list((saved or {}).get("later", ()))
        self.previous = (saved or {}).get("previous")
        await self.ctx.add_message(self._human_message(input.content))
        step: _Next = _Human(input.content)
        while True:
            if isinstance(step, _Finish):
                if not self.later or self.stack.top is not None:
                    break
                self.earlier.append(step.said or step.text)  # done: the message's next request now
                step = _Human(self.later.pop(0))
                await self.save()
                await self.ctx.progress(f"Now your other request: {step.text}")
            step = await (self.on_human(step.text) if isinstance(step, _Human) else self.on_result(step))
        said = _join("\n\n".join(self.earlier), step.text, "\n\n")
        await self.ctx.add_message(AIMessage(content=said, name=self.agent.name))
        return AgentResult(output=said)

    # --- a human message ------------------------------------------------------------------------------------------
    async def on_human(self, text: str) -> _Next:
        self.hops = 0
        top = self.stack.top
        checked = self._check_input(text)
        if checked is None and top is not None and top.target == HUMAN and top.task.bypass_classifier:
            checked = self._bypass(text, top)
        if checked is not None:
            decision = await self._record("human", checked)
        else:
            decision = await self._classify("human", lambda: self._human_query(text, top))
        routed = decision.kind == "route" and decision.tool in self.agent.tools and decision.reason != "return"
        if routed and (top is None or top.target != HUMAN):  # (a message while a question waits answers it)
            decision, text = await self._first_request(text, decision, top)
        if decision.kind == "route" and decision.tool in self.agent.tools:
            tool = decision.tool
            await self.ctx.rationale(f"Choosing {tool} due to: {decision.rationale}")
            entry = self.stack.find(tool)
            if decision.reason == "return" and entry is not None and entry.target == HUMAN:
                self.stack.raise_to_top(entry)  # back to a task left waiting: its question, asked again
                await self.save()
                return await self.say(f"Back to {spoken(tool)}.")
            restated = decision.text if decision.text.strip() != text.strip() else ""
            if entry is not None:  # the human's own words answer the task; a restatement rides apart
                expected = entry.task.expectation
                if expected is not None and expected.type == "choice" and decision.text in expected.options:
                    text = decision.text  # a choice answered in other words ("I'm staff"): the option it means
                correction = decision.reason == "correction"
                return await self.resume(entry, text, decision.rationale, restated, correction=correction)
            return await self.call(tool, text, decision.rationale, decision.arguments, restated)
        menu = f"{self.agent.capabilities}\n{_HOW}"
        if decision.kind == "abandon":
            names: list[str] = []  # the top task, or every task for "cancel everything"
            while (dropped := self.stack.pop()) is not None:
                names.append(dropped.parent_tool)
                if decision.reason != "all":
                    break
            # "cancel everything": the requests of a message that wait their turn go too
            waiting, self.later = (self.later, []) if decision.reason == "all" else ([], self.later)
            if not names:
                return await self.say("There is no task in progress to stop.", menu)
            await self.save()
            what = spoken(names[0]) if len(names) == 1 else "every task (" + ", ".join(map(spoken, names)) + ")"
            if waiting:
                what += f", and dropped what waited its turn ({'; '.join(waiting)})"
            if decision.reason == "then" and decision.text:  # what the message asks after dropping the task
                await self.ctx.add_message(AIMessage(content=f"OK, I stopped {what}.", name=self.agent.name))
                return _Human(decision.text)
            return await self.say(f"OK, I stopped {what}.", self.agent.repeat_prompt)
        if decision.kind == "capabilities":
            return await self.say(self.agent.capabilities, _HOW, sep="\n")
        if decision.kind == "route":  # a tool the orchestrator does not have
            return await self.say(f"I cannot use {decision.tool!r} here.", menu)
        if decision.kind == "ask":  # the classifier's own question
            return await self.say(decision.text or "Could you rephrase that?")
        if decision.reason == "later" and top is not None:  # "one more for 3032MM": after the question waiting
            self.later.append(decision.text)
            await self.save()
            return await self.ask_human(f"I will do that next. First: {top.task.content}", top)
        if decision.reason == "goodbye":  # no menu after it; a task waiting waits, not asked again
            if top is None:
                return _Finish(decision.text, said=decision.text)
            task = spoken(top.parent_tool)
            waits = f"Goodbye! {task[:1].upper()}{task[1:]} will wait for your answer; send it any time."
            return _Finish(waits, said=decision.text)
        if decision.reason == "emergency":  # said alone: no menu after it, and a waiting question comes apart
            if top is None:
                return _Finish(decision.text, said=decision.text)
            await self.ctx.add_message(AIMessage(content=decision.text, name=self.agent.name))
            return await self.ask_human(top.task.content, top)
        return await self.say(decision.text or "I did not understand that.", menu)  # clarify, refuse

    def _human_query(self, text: str, top: TaskEntry | None) -> Query:
        """What the classifier gets for a human message: the tools it may route to, the top task and every task
        waiting on the stack."""
        candidates = tuple(
            t.name for t in self.agent.tools.values() if t.metadata.expose_to_user or self.stack.find(t.name)
        )
        waiting = tuple(p for p in map(self._pending, list(self.stack)) if p is not None)
        return Query(
            text=text,
            catalog=self.agent.catalog,
            candidates=candidates,
            pending=self._pending(top),
            waiting=waiting,
            origin="human",
            previous=self.previous if self.previous in candidates else None,
        )

    async def _first_request(self, text: str, decision: Decision, top: TaskEntry | None) -> tuple[Decision, str]:
        """The request to serve first when ``text`` holds several for different tools ("book a GP appointment and
        refill my prescription"): its decision and words; the others wait their turn in :attr:`later`. ``text``
        and ``decision`` as they are when it holds one (every part must route to a tool, two tools at least)."""
        parts = requests_in(text)
        if len(parts) < 2:
            return decision, text
        routed: list[tuple[Decision, str]] = []
        for part in parts:
            said = await self._classify("part", functools.partial(self._human_query, part, top))
            item = False  # another value for the request before ("... claims 1122AA and 3344BB"): its own request
            whole = elided(routed[-1][1], part) if routed else None
            if whole is not None and (not self._routes(said) or said.tool == routed[-1][0].tool):
                again = await self._classify("part", functools.partial(self._human_query, whole, top))
                if self._routes(again) and again.tool == routed[-1][0].tool:
                    said, part, item = again, whole, True
            if not self._routes(said):
                return decision, text
            if routed and routed[-1][0].tool == said.tool and not item:  # two parts of one request
                routed[-1] = (routed[-1][0], f"{routed[-1][1]} and {part}")
            else:
                routed.append((said, part))
        if len(routed) < 2:
            return decision, text
        held = next((i for i, (_, part) in enumerate(routed) if i and _CONDITIONAL.match(part)), len(routed))
        if held < len(routed):  # "are you open on sunday? if so book me in": it waits on the answer, not done blindly
            waits = "; ".join(part for _, part in routed[held:])
            await self.ctx.rationale(
                f"I did not act on {waits!r}: it depends on my answer; ask again if it still holds."
            )
            routed = routed[:held]
            if len(routed) < 2:
                return routed[0]
        self.later[:0] = [part for _, part in routed[1:]]
        await self.save()
        tools = [spoken(d.tool or "") for d, _ in routed]
        which = f" for {tools[0]}" if len(set(tools)) == 1 else ": " + ", then ".join(tools)
        await self.ctx.rationale(f"Your message holds {len(routed)} requests{which}, one after the other.")
        return routed[0]

    def _routes(self, decision: Decision) -> bool:
        """Whether ``decision`` sends a part of a message to a tool of its own (not back to a waiting task)."""
        return decision.kind == "route" and decision.tool in self.agent.tools and decision.reason != "return"

    def _check_input(self, text: str) -> Decision | None:
        if not text.strip():
            return Decision(
                kind="clarify", reason="empty", source="master", text="Your message is empty: please type a message."
            )
        if len(text) > self.agent.max_message_chars:
            return Decision(
                kind="clarify",
                reason="too_long",
                source="master",
                text=f"Your message is too long ({len(text):,} characters; the limit is "
                f"{self.agent.max_message_chars:,}). Please send a shorter one.",
            )
        return None

    def _bypass(self, text: str, top: TaskEntry) -> Decision:
        guarded = guardrail(text)
        if guarded is not None:
            return replace(guarded, source="bypass")
        if is_abandon(text):
            return Decision(kind="abandon", source="bypass", rationale="The message abandons the pending task.")
        why = f"{top.parent_tool} expects this reply, so the classifier is bypassed."
        return Decision(kind="route", tool=top.parent_tool, text=text, rationale=why, source="bypass")

    async def say(self, text: str, tail: str = "", *, sep: str = "\n\n") -> _Next:
        """Tell the human ``text``: with the top task's question when one waits, else with ``tail``, ending the run."""
        top = self.stack.top
        if top is not None:
            return await self.ask_human(_join(text, top.task.content), top)
        return _Finish(_join(text, tail, sep), said=text)

    # --- a tool result --------------------------------------------------------------------------------------------
    async def on_result(self, result: _Result) -> _Next:
        changed = result.resumed is not None and self.stack.remove(result.resumed.call_id) is not None
        content, name = result.content, result.tool.name
        if content.interrupt:
            request = content.next_tool or ToolCallRequest(  # by default: ask the human the tool's value
                context=f"{name} waits for the human's answer",
                content=content.value,
                tool_argument=ToolArgument(name=HUMAN),
            )
            entry = TaskEntry(
                parent_tool=name,
                parent_state=content.state,
                task=request,
                call_id=result.request.call_id,
                invocation=result.request.invocation,
            )
            self.stack.push(entry)
            return await self.carry_out(entry, content.value)
        if changed:
            await self.save()
        if content.next_tool is not None:
            return await self.chain(name, content.next_tool, content.value)
        return await self.deliver(name, content.value)

    async def deliver(self, name: str, value: str) -> _Next:
        """Hand a completed tool's answer to the top task, or end the run when no task waits."""
        top = self.stack.top
        if name != self.previous and name in self.agent.tools:  # what a follow-up goes back to
            self.previous = name
            await self.ctx.save_state(self.agent.state_key, self._saved())
        if top is None:
            return _Finish(_join(value, self.agent.repeat_prompt, "\n\n"), said=value)
        if top.target != HUMAN:
            return await self.resume(top, value, f"{top.parent_tool} waits for the answer of {name}.")
        return await self.ask_human(_join(value, top.task.content), top)

    async def carry_out(self, entry: TaskEntry, value: str) -> _Next:
        """Carry out the request of a task just pushed: explicit tool, classifier with its context, or the human."""
        request = entry.task
        argument = request.tool_argument
        if argument is None or not argument.name:
            decision = await self._classify("tool", lambda: self._tool_query(entry.parent_tool, request, value))
            if decision.kind == "route" and decision.tool in self.agent.tools:
                entry.target = decision.tool
                await self.save()
                await self.ctx.rationale(f"Choosing {decision.tool} due to: {decision.rationale}")
                return await self.call(decision.tool, decision.text or request.content or value, decision.rationale)
            entry.target = HUMAN
            await self.save()
            return await self.ask_human(decision.text or request.content or value, entry)
        if argument.name in self.agent.tools:
            entry.target = argument.name
            await self.save()
            text, extra = self._request_text(request, value)
            return await self.call(argument.name, text, f"{entry.parent_tool} asked for {argument.name}.", extra)
        entry.target = HUMAN
        await self.save()
        return await self.ask_human(request.content or value, entry)

    async def chain(self, name: str, request: ToolCallRequest, value: str) -> _Next:
        """``next_tool`` on a completed tool: call it next with the tool's value (Decision in the spec).

        The next tool gets the value (or the explicit text of ``tool_argument``); ``context`` and ``content`` only
        help the classifier choose when no tool is named.
        """
        argument = request.tool_argument
        if argument is not None and argument.name in self.agent.tools:
            explicit, extra = argument.split()
            text = explicit if explicit is not None else value
            return await self.call(argument.name, text, f"{name} chains to {argument.name}.", extra)
        if argument is not None and argument.name:  # the human, or an unknown tool: tell the human
            return await self.deliver(name, _join(value, request.content))
        decision = await self._classify("tool", lambda: self._tool_query(name, request, value))
        if decision.kind == "route" and decision.tool in self.agent.tools:
            await self.ctx.rationale(f"Choosing {decision.tool} due to: {decision.rationale}")
            return await self.call(decision.tool, value, decision.rationale, decision.arguments)
        return await self.deliver(name, _join(value, decision.text if decision.text != request.content else ""))

    def _request_text(self, request: ToolCallRequest, value: str) -> tuple[str, dict[str, Any]]:
        explicit, extra = request.tool_argument.split() if request.tool_argument else (None, {})
        return (explicit if explicit is not None else request.content or value), extra

    def _tool_query(self, name: str, request: ToolCallRequest, value: str) -> Query:
        pending = PendingTask(
            tool=name, content=request.content, context=request.context, expectation=request.expectation
        )
        text = request.content or value
        return Query(
            text=text, catalog=self.agent.catalog, candidates=self.agent.catalog.names, pending=pending, origin="tool"
        )

    # --- effects --------------------------------------------------------------------------------------------------
    async def call(
        self, name: str, text: str, rationale: str, arguments: dict[str, Any] | None = None, restated: str = ""
    ) -> _Next:
        """Start a new call of tool ``name`` with ``text``; ``restated`` is the classifier's own wording, if any."""
        call_id = f"{self.ctx.run_id[:8]}-{self._next_serial()}"
        request = ToolInput(
            text=text,
            rationale=rationale,
            tool=name,
            call_id=call_id,
            arguments=dict(arguments or {}),
            classifier_text=restated,
        )
        return await self.invoke(self.agent.tools[name], request, {}, None)

    async def resume(
        self, entry: TaskEntry, text: str, rationale: str, restated: str = "", *, correction: bool = False
    ) -> _Next:
        """Resume the task ``entry`` with ``text``: its tool gets its state back (or replays up to its question);
        ``correction``: ``text`` corrects what the tool was told rather than answering its question."""
        tool = self.agent.tools[entry.parent_tool]
        state = entry.parent_state
        if isinstance(state, dict) and ASK_STATE in state:
            asked = state[ASK_STATE]
            request = ToolInput.from_dict(asked["request"])
            return await self.invoke(tool, request, {**asked["answers"], asked["pending"]: text}, entry)
        request = ToolInput(
            text=text,
            rationale=rationale,
            tool=tool.name,
            call_id=entry.call_id,
            invocation=entry.invocation + 1,
            resumed=True,
            state=state,
            classifier_text=restated,
            correction=correction,
        )
        return await self.invoke(tool, request, {}, entry)

    async def invoke(
        self, tool: MasterTool, request: ToolInput, answers: dict[str, str], resumed: TaskEntry | None
    ) -> _Next:
        self.hops += 1
        if self.hops > self.agent.max_tool_calls:
            raise StepLimitExceeded(self.agent.name, self.agent.max_tool_calls)
        call = ToolCall(
            id=f"{self.ctx.run_id[:8]}-{self._next_serial()}",
            name=tool.name,
            arguments=json.dumps({"text": request.text}),
        )
        await self.ctx.add_message(AIMessage(tool_calls=[call], name=self.agent.name))

        async def execute() -> dict[str, Any]:
            # the tool gets its own copy: state it mutates must not change what the journal recorded
            content, error = await run_tool(self.ctx, tool, copy.deepcopy(request), answers)
            if content.interrupt and not tool.metadata.can_generate_task:
                error = "TaskNotAllowed"
                content = ToolContent(
                    value=f"{tool.name} asked for help but may not leave a task pending "
                    f"(set ToolMetadata(can_generate_task=True) on it). It said: {content.value}"
                )
            return {"tool": tool.name, "call_id": request.call_id, "content": content.to_dict(), "error": error}

        done = await self.ctx.step(execute)
        content = ToolContent.from_dict(done["content"])
        await self.ctx.add_message(
            ToolMessage(
                content=content.value,
                tool_call_id=call.id,
                name=tool.name,
                is_error=done.get("error") is not None,
                artifact=content.artifact,
                metadata={"call_id": request.call_id, "interrupt": content.interrupt},
            )
        )
        if content.artifact is not None:
            await self.ctx.artifact(content.artifact, title=tool.name)
        return _Result(tool, request, content, resumed)

    async def ask_human(self, prompt: str, entry: TaskEntry | None) -> _Next:
        """Put ``prompt`` to the human (a durable interrupt carrying the task's expectation); the answer comes back."""
        where = (entry.parent_tool, entry.call_id) if entry is not None else ()
        if self.later:  # the message's other requests wait for this one
            prompt = f"{prompt}\n\n(After this, I will turn to: {'; '.join(self.later)}.)"
        if self.earlier:  # answers given in this run before this question: shown with it
            prompt, self.earlier = _join("\n\n".join(self.earlier), prompt, "\n\n"), []
        asking = self.ctx.child(*where, f"ask{self._next_serial()}")
        answer = await asking.ask(
            prompt,
            expectation=entry.task.expectation if entry is not None else None,
            data={"tool": entry.parent_tool, "call_id": entry.call_id} if entry is not None else None,
        )
        await self.ctx.add_message(self._human_message(answer))
        return _Human(answer)

    async def save(self) -> None:
        """Persist the stack with the conversation and announce it."""
        await self.ctx.save_state(self.agent.state_key, self._saved())
        await self.ctx.emit(TaskStackChanged(stack=self.stack.to_json()))

    def _saved(self) -> dict[str, Any]:
        return {"stack": self.stack.to_json(), "later": self.later, "previous": self.previous}

    async def _classify(self, origin: str, query: Callable[[], Query]) -> Decision:
        """The classifier's decision on ``query()``: the query is only built when the decision is not journaled yet
        (a re-executed run replays the decisions of its earlier messages)."""
        inner = self.ctx.child("classify", str(self._next_serial()), namespace=f"{self.agent.name}/classifier")
        return await self._record(origin, lambda: self.agent.classifier.classify(inner, query()))

    async def _record(self, origin: str, decide: Decision | Callable[[], Awaitable[Decision]]) -> Decision:
        """Journal a decision (computed once per run) so it is in the event log and replays on re-execution."""

        async def step() -> dict[str, Any]:
            decision = decide if isinstance(decide, Decision) else await decide()
            return {"routing": decision.to_dict(), "origin": origin}

        return Decision.from_dict((await self.ctx.step(step))["routing"])

    def _pending(self, top: TaskEntry | None) -> PendingTask | None:
        if top is None:
            return None
        task = top.task
        tool = self.agent.tools.get(top.parent_tool)
        return PendingTask(
            tool=top.parent_tool,
            content=task.content,
            context=task.context,
            expectation=task.expectation,
            takes_corrections=tool is not None and tool.metadata.takes_corrections,
        )

    def _human_message(self, text: str) -> HumanMessage:
        limit = self.agent.max_message_chars
        if len(text) <= limit:
            return HumanMessage(content=text)
        return HumanMessage(content=text[:limit] + "…", metadata={"truncated_from": len(text)})
