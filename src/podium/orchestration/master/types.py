"""The data shapes of the master orchestrator: what tools return, what they request, and the task stack.

========================  =====================================================================================
seed                      here
========================  =====================================================================================
``ToolContentStruct``     :class:`ToolContent` (``value``, ``interrupt``, ``state``, ``next_tool``, ``artifact``)
``ToolStruct``            :class:`ToolCallRequest` (``context``, ``content``, ``tool_argument``) with a typed
                          ``expectation`` and the classifier bypass flag
``ToolArgument``          :class:`ToolArgument` (``name``, ``arguments``); the name :data:`HUMAN` is the HITL tool
``TaskStruct``            :class:`TaskEntry` (``parent_tool``, ``parent_state``, ``task``) with the call's id
``task_stack``            :class:`TaskStack`
========================  =====================================================================================

Everything here is JSON: the stack is persisted with the conversation and journaled with each run. Only text is
stored in the stack, never artifacts, so resuming a task never re-renders a form or a letter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from podium.events import Expectation
from podium.tools import Injectable

__all__ = ["HUMAN", "TaskEntry", "TaskStack", "ToolArgument", "ToolCallRequest", "ToolContent", "ToolInput"]

HUMAN = "human"
"""The name of the human-in-the-loop tool: a request addressed to it is put to the human."""


@dataclass(slots=True, kw_only=True)
class ToolArgument:
    """An explicit tool call inside a request: which tool, with which arguments (seed: ``ToolArgument``)."""

    name: str
    """The tool to call (:data:`HUMAN` to ask the human)."""
    arguments: str = ""
    """Plain text (the ``text`` to send) or a JSON object of arguments (its ``text`` key is the text)."""

    def split(self) -> tuple[str | None, dict[str, Any]]:
        """The text these arguments carry (``None`` if none) and the other arguments."""
        raw = self.arguments.strip()
        if raw.startswith("{"):
            try:
                data = json.loads(raw)
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict):
                text = data.pop("text", None)
                return (None if text is None else str(text)), data
        return (raw or None), {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"name": self.name, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolArgument:
        """Read the JSON form."""
        return cls(name=data["name"], arguments=data.get("arguments", ""))


@dataclass(slots=True, kw_only=True)
class ToolCallRequest:
    """A request a tool leaves for the orchestrator to carry out (seed: ``ToolStruct``)."""

    context: str = ""
    """What the request is about, for the classifier (used when ``tool_argument`` is not set)."""
    content: str = ""
    """The text to send (to the human, or to the tool chosen)."""
    tool_argument: ToolArgument | None = None
    """An explicit tool to call; ``None`` lets the classifier choose."""
    expectation: Expectation | None = None
    """The answer expected when the request goes to the human (choice, pattern or free text)."""
    bypass_classifier: bool = False
    """Send the human's next answer straight back to the requesting tool (seed:
    ``llm_intent_classifier_blocking = False``); the guardrail still runs."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        data: dict[str, Any] = {"context": self.context, "content": self.content}
        if self.tool_argument is not None:
            data["tool_argument"] = self.tool_argument.to_dict()
        if self.expectation is not None:
            data["expectation"] = self.expectation.to_dict()
        if self.bypass_classifier:
            data["bypass_classifier"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCallRequest:
        """Read the JSON form."""
        argument = data.get("tool_argument")
        expectation = data.get("expectation")
        return cls(
            context=data.get("context", ""),
            content=data.get("content", ""),
            tool_argument=ToolArgument.from_dict(argument) if argument else None,
            expectation=Expectation.from_dict(expectation) if expectation else None,
            bypass_classifier=bool(data.get("bypass_classifier", False)),
        )


@dataclass(slots=True, kw_only=True)
class ToolContent:
    """What a tool of the orchestrator returns (seed: ``ToolContentStruct``)."""

    value: str = ""
    """Free text for the next reader (structured data serialised)."""
    interrupt: bool = False
    """True: the task is not complete and needs help from another tool (by default: the human)."""
    state: Any = None
    """The tool's own state (JSON), handed back when its task is resumed (kept in the task stack)."""
    next_tool: ToolCallRequest | None = None
    """With ``interrupt``: the help needed (default: ask the human ``value``). Without: a tool to chain to."""
    artifact: Any = None
    """A result for the user interface's side panel (text or JSON), never stored in the task stack."""

    @classmethod
    def ask(
        cls,
        question: str,
        *,
        expectation: Expectation | None = None,
        context: str = "",
        state: Any = None,
        artifact: Any = None,
        bypass_classifier: bool = False,
    ) -> ToolContent:
        """An interrupt that asks the human ``question`` and waits for the answer."""
        request = ToolCallRequest(
            context=context,
            content=question,
            tool_argument=ToolArgument(name=HUMAN),
            expectation=expectation,
            bypass_classifier=bypass_classifier,
        )
        return cls(value=question, interrupt=True, state=state, next_tool=request, artifact=artifact)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        data: dict[str, Any] = {"value": self.value, "interrupt": self.interrupt}
        if self.state is not None:
            data["state"] = self.state
        if self.next_tool is not None:
            data["next_tool"] = self.next_tool.to_dict()
        if self.artifact is not None:
            data["artifact"] = self.artifact
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolContent:
        """Read the JSON form."""
        request = data.get("next_tool")
        return cls(
            value=data.get("value", ""),
            interrupt=bool(data.get("interrupt", False)),
            state=data.get("state"),
            next_tool=ToolCallRequest.from_dict(request) if request else None,
            artifact=data.get("artifact"),
        )


@dataclass(slots=True, kw_only=True)
class TaskEntry:
    """A suspended task on the stack (seed: ``TaskStruct``)."""

    parent_tool: str
    """The tool whose task waits."""
    parent_state: Any
    """Its state, handed back when it is resumed (``None`` for tools that keep their own)."""
    task: ToolCallRequest
    """The pending request: what the task waits for."""
    call_id: str
    """The call this task belongs to: stable across resumptions, it keys the state of agents that keep their own."""
    invocation: int = 1
    """How many times the call has run so far."""
    target: str = HUMAN
    """Where the pending request went: :data:`HUMAN`, or the tool whose answer the task waits for."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "parent_tool": self.parent_tool,
            "parent_state": self.parent_state,
            "task": self.task.to_dict(),
            "call_id": self.call_id,
            "invocation": self.invocation,
            "target": self.target,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskEntry:
        """Read the JSON form."""
        return cls(
            parent_tool=data["parent_tool"],
            parent_state=data.get("parent_state"),
            task=ToolCallRequest.from_dict(data["task"]),
            call_id=data["call_id"],
            invocation=int(data.get("invocation", 1)),
            target=data.get("target", HUMAN),
        )


class TaskStack:
    """The orchestrator's stack of suspended tasks, bottom first."""

    __slots__ = ("_entries",)

    def __init__(self, entries: list[TaskEntry] | None = None) -> None:
        """A stack holding ``entries`` (bottom first)."""
        self._entries = list(entries or [])

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[TaskEntry]:
        return iter(self._entries)

    @property
    def top(self) -> TaskEntry | None:
        """The most recent task, if any."""
        return self._entries[-1] if self._entries else None

    def push(self, entry: TaskEntry) -> None:
        """Suspend ``entry`` on top."""
        self._entries.append(entry)

    def find(self, tool: str) -> TaskEntry | None:
        """The topmost task of ``tool``, if any."""
        return next((e for e in reversed(self._entries) if e.parent_tool == tool), None)

    def raise_to_top(self, entry: TaskEntry) -> None:
        """Move ``entry``, a task on the stack, to the top (the human went back to it)."""
        self._entries.remove(entry)
        self._entries.append(entry)

    def remove(self, call_id: str) -> TaskEntry | None:
        """Take out the task of call ``call_id`` (it was resumed and answered), wherever it is."""
        for index in range(len(self._entries) - 1, -1, -1):
            if self._entries[index].call_id == call_id:
                return self._entries.pop(index)
        return None

    def pop(self) -> TaskEntry | None:
        """Take out the top task (abandoned), if any."""
        return self._entries.pop() if self._entries else None

    def to_json(self) -> list[dict[str, Any]]:
        """The JSON form, bottom first."""
        return [entry.to_dict() for entry in self._entries]

    @classmethod
    def from_json(cls, data: list[dict[str, Any]] | None) -> TaskStack:
        """Read the JSON form."""
        return cls([TaskEntry.from_dict(item) for item in data or ()])


@dataclass(slots=True, kw_only=True)
class ToolInput(Injectable):
    """What the orchestrator hands a tool: the text, why it was chosen, and, when resumed, its state.

    Injected by annotation: a function tool, or any tool run below the orchestrator's call (an agent tool's own
    tools), receives it in a parameter annotated ``ToolInput``; an agent reads it with ``ctx.injected(ToolInput)``.
    """

    text: str
    """The request (or, when resumed, the answer to what the task asked)."""
    rationale: str = ""
    """Why the tool was chosen."""
    tool: str = ""
    """The tool's name."""
    call_id: str = ""
    """The call's id, the same for every resumption of one task."""
    invocation: int = 1
    """1 for the first run of the call, then 2, 3 ... for each resumption."""
    resumed: bool = False
    """True when the call resumes a suspended task."""
    state: Any = None
    """The state the tool returned when it suspended (stateless agents keep theirs here)."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """Extra arguments (from an explicit ``tool_argument`` or the LLM classifier)."""
    classifier_text: str = ""
    """What the classifier wrote for the tool (its restatement of the request), kept apart from ``text``: the
    human's own words always reach the tool as ``text``, never a model's paraphrase. Empty when none."""
    correction: bool = False
    """``text`` does not answer the tool's question but corrects what it was told before ("no wait, I meant
    4411BA"); only for a tool whose metadata ``takes_corrections``."""

    @property
    def state_key(self) -> str:
        """A key for agents that persist their own state (``ctx.load_state``): per conversation and call."""
        return f"agent:{self.tool}:{self.call_id}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "text": self.text,
            "rationale": self.rationale,
            "tool": self.tool,
            "call_id": self.call_id,
            "invocation": self.invocation,
            "resumed": self.resumed,
            "state": self.state,
            "arguments": dict(self.arguments),
            "classifier_text": self.classifier_text,
            "correction": self.correction,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolInput:
        """Read the JSON form."""
        return cls(
            text=data.get("text", ""),
            rationale=data.get("rationale", ""),
            tool=data.get("tool", ""),
            call_id=data.get("call_id", ""),
            invocation=int(data.get("invocation", 1)),
            resumed=bool(data.get("resumed", False)),
            state=data.get("state"),
            arguments=dict(data.get("arguments") or {}),
            classifier_text=str(data.get("classifier_text") or ""),
            correction=bool(data.get("correction", False)),
        )
