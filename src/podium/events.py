"""The typed event stream every run emits (see docs/architecture.md, "The journal is the event log").

Each event carries the run it belongs to, a per-thread sequence number and the *path* of the agent that emitted it
(outermost first). The same events are stored, for history and audit, and streamed to clients; a few that only
make sense live (model tokens, tool starts: :class:`TokenDelta`, :class:`ToolStarted`) are streamed and not stored.

Events that carry a ``key`` are also the run's journal: on a re-execution after a crash or an interrupt, a step
whose key is already recorded returns the recorded result instead of running again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from podium.errors import InvalidData
from podium.messages import Message, Usage, message_from_dict, message_to_dict

__all__ = [
    "Artifact",
    "ErrorEvent",
    "Event",
    "Expectation",
    "Interrupt",
    "InterruptAnswered",
    "InterruptRaised",
    "MessageAdded",
    "RunEnded",
    "RunStarted",
    "SideChannel",
    "StepRecorded",
    "TaskStackChanged",
    "TokenDelta",
    "ToolStarted",
    "event_from_dict",
    "event_to_dict",
]


@dataclass(slots=True, kw_only=True)
class Expectation:
    """What answer a pending request expects, so classifiers can check fit and a UI can render choices."""

    type: Literal["choice", "pattern", "text"] = "text"
    """``choice``: one of ``options``; ``pattern``: text matching ``pattern``; ``text``: anything."""
    options: list[str] = field(default_factory=list)
    """The allowed answers of a ``choice``."""
    pattern: str | None = None
    """A regular expression the answer must contain, for ``pattern``."""
    description: str = ""
    """How the expectation reads to a person ("letters and digits")."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        data: dict[str, Any] = {"type": self.type}
        if self.options:
            data["options"] = list(self.options)
        if self.pattern is not None:
            data["pattern"] = self.pattern
        if self.description:
            data["description"] = self.description
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Expectation:
        """Read the JSON form."""
        return cls(
            type=data.get("type", "text"),
            options=list(data.get("options", ())),
            pattern=data.get("pattern"),
            description=data.get("description", ""),
        )


@dataclass(slots=True, kw_only=True)
class Interrupt:
    """A question to the human raised somewhere in a run; the run waits until it is answered."""

    id: str
    """Stable identifier (the journal key of the question); answers name it."""
    path: tuple[str, ...]
    """Which agent, tool call and task asked, outermost first."""
    prompt: str
    """What to show the human."""
    expectation: Expectation | None = None
    """The answer expected, if the asker declared one."""
    data: Any = None
    """Extra JSON data for the client (an artifact to show with the question, a form)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out: dict[str, Any] = {"id": self.id, "path": list(self.path), "prompt": self.prompt}
        if self.expectation is not None:
            out["expectation"] = self.expectation.to_dict()
        if self.data is not None:
            out["data"] = self.data
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interrupt:
        """Read the JSON form."""
        exp = data.get("expectation")
        return cls(
            id=data["id"],
            path=tuple(data.get("path", ())),
            prompt=data.get("prompt", ""),
            expectation=Expectation.from_dict(exp) if exp else None,
            data=data.get("data"),
        )


@dataclass(slots=True, kw_only=True)
class Event:
    """Fields every event has."""

    run_id: str = ""
    """The run that emitted it."""
    path: tuple[str, ...] = ()
    """The emitting agent's path, outermost first."""
    seq: int = 0
    """Position in the thread's stored log (0 for events that are only streamed)."""
    key: str | None = None
    """Journal key when this event records the result of a step."""
    ts: float = field(default_factory=time.time)
    """Wall-clock time of emission (seconds since the epoch)."""

    kind: ClassVar[str] = "event"

    def body(self) -> dict[str, Any]:
        """The fields particular to this event type, JSON-ready."""
        return {}


@dataclass(slots=True, kw_only=True)
class RunStarted(Event):
    """A run began, or was re-executed to resume (``attempt`` > 1)."""

    input: Message | None = None
    """The message that started the run."""
    attempt: int = 1
    """1 for the first execution; higher when resumed after an interrupt or a crash."""
    kind: ClassVar[str] = "run_started"

    def body(self) -> dict[str, Any]:
        return {"input": message_to_dict(self.input) if self.input else None, "attempt": self.attempt}


@dataclass(slots=True, kw_only=True)
class RunEnded(Event):
    """A run stopped: completed, interrupted, failed or stopped by a limit."""

    status: str = "completed"
    """One of the :class:`podium.RunResult` statuses."""
    reason: str = ""
    """Why it stopped, for anything but ``completed``."""
    output: str | None = None
    """The final answer's text, when completed."""
    kind: ClassVar[str] = "run_ended"

    def body(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "output": self.output}


@dataclass(slots=True, kw_only=True)
class MessageAdded(Event):
    """A message entered a conversation history (``namespace`` "" is the thread's main history)."""

    message: Message
    """The message."""
    namespace: str = ""
    """Which history: "" for the thread's, an agent's own namespace for agents that keep their own."""
    usage: Usage | None = None
    """Token usage, when the message is a model reply."""
    kind: ClassVar[str] = "message"

    def body(self) -> dict[str, Any]:
        data: dict[str, Any] = {"message": message_to_dict(self.message), "namespace": self.namespace}
        if self.usage is not None:
            data["usage"] = self.usage.to_dict()
        return data


@dataclass(slots=True, kw_only=True)
class StepRecorded(Event):
    """The JSON result of a journaled step that is not a message."""

    value: Any = None
    """The step's result."""
    kind: ClassVar[str] = "step"

    def body(self) -> dict[str, Any]:
        return {"value": self.value}


@dataclass(slots=True, kw_only=True)
class TokenDelta(Event):
    """A piece of a model reply as it streams (streamed, not stored)."""

    text: str
    """The new text."""
    kind: ClassVar[str] = "token"

    def body(self) -> dict[str, Any]:
        return {"text": self.text}


@dataclass(slots=True, kw_only=True)
class ToolStarted(Event):
    """A tool call began (streamed, not stored: the call is in the model reply, the result in a message)."""

    tool_call_id: str
    """The call's id."""
    name: str
    """The tool's name."""
    kind: ClassVar[str] = "tool_started"

    def body(self) -> dict[str, Any]:
        return {"tool_call_id": self.tool_call_id, "name": self.name}


@dataclass(slots=True, kw_only=True)
class SideChannel(Event):
    """Progress or rationale for the user, outside the chat and never fed to a model."""

    text: str
    """What to show."""
    channel: Literal["progress", "rationale"] = "progress"
    """``rationale``: why something was chosen; ``progress``: what is happening."""
    kind: ClassVar[str] = "side"

    def body(self) -> dict[str, Any]:
        return {"text": self.text, "channel": self.channel}


@dataclass(slots=True, kw_only=True)
class Artifact(Event):
    """A result for a side panel (a letter, a table), kept out of the chat."""

    content: Any
    """The artifact (text or JSON data)."""
    title: str = ""
    """A short label."""
    kind: ClassVar[str] = "artifact"

    def body(self) -> dict[str, Any]:
        return {"content": self.content, "title": self.title}


@dataclass(slots=True, kw_only=True)
class InterruptRaised(Event):
    """A question to the human; the run suspends until it is answered."""

    interrupt: Interrupt
    """The question."""
    kind: ClassVar[str] = "interrupt"

    def body(self) -> dict[str, Any]:
        return {"interrupt": self.interrupt.to_dict()}


@dataclass(slots=True, kw_only=True)
class InterruptAnswered(Event):
    """The human's answer to an interrupt (its ``key`` is the interrupt's id)."""

    answer: str
    """The answer text."""
    kind: ClassVar[str] = "answer"

    def body(self) -> dict[str, Any]:
        return {"answer": self.answer}


@dataclass(slots=True, kw_only=True)
class TaskStackChanged(Event):
    """An orchestrator's task stack changed (pushed, popped or dropped)."""

    stack: list[Any] = field(default_factory=list)
    """The stack after the change, bottom first, as JSON."""
    kind: ClassVar[str] = "task_stack"

    def body(self) -> dict[str, Any]:
        return {"stack": self.stack}


@dataclass(slots=True, kw_only=True)
class ErrorEvent(Event):
    """An error reported during a run (a tool failure fed back to the model, or the one that ended the run)."""

    error: str
    """The exception type or error code."""
    message: str
    """What went wrong."""
    kind: ClassVar[str] = "error"

    def body(self) -> dict[str, Any]:
        return {"error": self.error, "message": self.message}


def event_to_dict(event: Event) -> dict[str, Any]:
    """The JSON form of ``event``, one flat object (as ``podium chat --jsonl`` prints it)."""
    data: dict[str, Any] = {"kind": event.kind, "run_id": event.run_id, "path": list(event.path), "seq": event.seq}
    if event.key is not None:
        data["key"] = event.key
    data["ts"] = round(event.ts, 6)
    data.update(event.body())
    return data


def _read(kind: str, data: dict[str, Any], common: dict[str, Any]) -> Event:
    if kind == "message":
        usage = data.get("usage")
        return MessageAdded(
            message=message_from_dict(data["message"]),
            namespace=data.get("namespace", ""),
            usage=Usage.from_dict(usage) if usage else None,
            **common,
        )
    if kind == "step":
        return StepRecorded(value=data.get("value"), **common)
    if kind == "run_started":
        raw = data.get("input")
        return RunStarted(input=message_from_dict(raw) if raw else None, attempt=int(data.get("attempt", 1)), **common)
    if kind == "run_ended":
        return RunEnded(status=data["status"], reason=data.get("reason", ""), output=data.get("output"), **common)
    if kind == "token":
        return TokenDelta(text=data["text"], **common)
    if kind == "tool_started":
        return ToolStarted(tool_call_id=data["tool_call_id"], name=data["name"], **common)
    if kind == "side":
        return SideChannel(text=data["text"], channel=data.get("channel", "progress"), **common)
    if kind == "artifact":
        return Artifact(content=data.get("content"), title=data.get("title", ""), **common)
    if kind == "interrupt":
        return InterruptRaised(interrupt=Interrupt.from_dict(data["interrupt"]), **common)
    if kind == "answer":
        return InterruptAnswered(answer=data["answer"], **common)
    if kind == "task_stack":
        return TaskStackChanged(stack=list(data.get("stack", ())), **common)
    if kind == "error":
        return ErrorEvent(error=data["error"], message=data.get("message", ""), **common)
    raise InvalidData(f"unknown event kind {kind!r}")


def event_from_dict(data: dict[str, Any]) -> Event:
    """Read an event from :func:`event_to_dict`'s form.

    Raises:
        ValueError: the data is not an event.
    """
    try:
        common = {
            "run_id": data.get("run_id", ""),
            "path": tuple(data.get("path", ())),
            "seq": int(data.get("seq", 0)),
            "key": data.get("key"),
            "ts": float(data.get("ts", 0.0)),
        }
        return _read(data["kind"], data, common)
    except (KeyError, TypeError) as exc:
        raise InvalidData(f"not an event: {data!r:.200}") from exc
