"""Values of the Task orchestration: the pending message, results with typed outcomes, and signals.

A :class:`TaskMessage` is the *current pending message* of a task: what the last responder said, who said it,
whom it is addressed to, and the tool calls it carries (parsed once, when the message is made). A task ends with
a :class:`TaskResult` whose ``outcome`` says which way it ended and ``reason`` says why; there is no bare ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from podium.errors import AgentError, UsageError
from podium.events import Interrupt
from podium.messages import ToolCall, ToolMessage, Usage
from podium.tools import Injectable

__all__ = [
    "AGENT",
    "DONE",
    "LLM",
    "TASK",
    "USER",
    "NO_ANSWER",
    "PASS",
    "PASS_TO",
    "USER_QUIT_STRINGS",
    "AgentState",
    "FinalResult",
    "KillSwitch",
    "Outcome",
    "TaskDone",
    "TaskFailed",
    "TaskLimits",
    "TaskMessage",
    "TaskPass",
    "TaskResult",
    "is_no_answer",
    "parse_address",
    "parse_done",
    "parse_pass",
]

LLM = "llm"
"""The agent's model responder."""
AGENT = "agent"
"""The agent's tool-handling responder."""
USER = "user"
"""The human responder (also the sender of a task's input, as a sub-task sees it)."""
TASK = "task"
"""The task itself, as the sender of routing errors (unknown recipient, a tool nobody handles)."""
DONE = "DONE"
"""A response starting with it ends the task with the rest of its text."""
USER_QUIT_STRINGS = frozenset({"q", "x", "quit", "exit", "bye"})
"""Answers of the human that end the task."""
PASS = "__PASS__"
"""A response containing it passes the pending message on: another responder answers it (a text signal)."""
PASS_TO = PASS + ":"
"""``__PASS__:name`` passes the pending message on to ``name``."""
NO_ANSWER = "DO-NOT-KNOW"
"""A response that is only this says "I do not know": it counts only when nobody else answers."""

Outcome: TypeAlias = Literal[
    "done", "stalled", "max_turns", "fixed_turns", "budget", "timeout", "infinite_loop", "killed", "interrupted"
]
"""How a task ended. ``interrupted`` is only reported by :meth:`Task.run` while the run waits for the human."""


@dataclass(slots=True, kw_only=True)
class TaskMessage:
    """A message between responders: the current pending message of a task."""

    content: str = ""
    """The text (an address prefix and a ``DONE`` signal already taken off)."""
    sender: str = USER
    """The responder that produced it: ``llm``, ``agent``, ``user``, ``task`` or a sub-task's name."""
    recipient: str | None = None
    """The only responder allowed to answer it, when set (structured field or ``TO[name]:`` / ``@name`` text)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """Tools the model asked for in this message."""
    namespace: str = ""
    """The history holding the model turn that made ``tool_calls`` (where their results are recorded)."""
    tool_results: list[ToolMessage] = field(default_factory=list)
    """Results of tool calls this message answers."""
    value: Any = None
    """A structured value (a handler's result of any type, a final result)."""
    done: bool = False
    """The message ends its task (a Done tool, a ``DONE`` text, a done reaction)."""
    final: bool = False
    """The message ends its task and every ancestor (a final-result tool)."""
    is_error: bool = False
    """The message reports a mistake the model should correct (counted against the retry bound)."""
    passed: bool = False
    """The responder passed the message it answered on (``__PASS__`` or a pass tool): the task keeps that one."""
    pass_input: bool = False
    """With ``passed``: a pass tool passed its caller's input on (not the message that called the tool)."""
    block: str | None = None
    """A responder that may not answer this message (the one that passed it on)."""
    outcome: Outcome | None = None
    """For a sub-task's result: how the sub-task ended."""
    kind: Literal["task_message"] = "task_message"
    """Tag for the JSON form."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (content, routing, tool names, flags)."""
        data: dict[str, Any] = {"kind": self.kind, "content": self.content, "sender": self.sender}
        if self.recipient is not None:
            data["recipient"] = self.recipient
        if self.tool_calls:
            data["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls]
        for flag in ("done", "final", "is_error"):
            if getattr(self, flag):
                data[flag] = True
        if self.outcome is not None:
            data["outcome"] = self.outcome
        return data


@dataclass(slots=True, kw_only=True)
class TaskResult:
    """How a task ended: always an outcome and a reason, and the last pending message."""

    outcome: Outcome
    """Which way it ended."""
    reason: str
    """Why, in words."""
    message: TaskMessage
    """The message the task ended with (its result when ``done``)."""
    task: str
    """The task's name."""
    turns: int = 0
    """Steps taken."""
    usage: Usage = field(default_factory=Usage)
    """Tokens of the model calls made while the task ran (its sub-tasks included)."""
    interrupts: list[Interrupt] = field(default_factory=list)
    """The questions waiting for the human, when ``interrupted``."""
    thread_id: str | None = None
    """The conversation, when run through :meth:`Task.run`."""
    kind: Literal["task_result"] = "task_result"
    """Tag for the JSON form."""

    @property
    def ok(self) -> bool:
        """True when the task is done."""
        return self.outcome == "done"

    @property
    def content(self) -> str:
        """The result's text."""
        return self.message.content

    @property
    def value(self) -> Any:
        """The result's structured value, if any."""
        return self.message.value

    @property
    def final(self) -> bool:
        """True when a final-result tool ended the task (and its ancestors)."""
        return self.message.final

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the value is left out: it may not be JSON)."""
        return {
            "kind": self.kind,
            "task": self.task,
            "outcome": self.outcome,
            "reason": self.reason,
            "turns": self.turns,
            "message": self.message.to_dict(),
            "usage": self.usage.to_dict(),
            "interrupts": [i.to_dict() for i in self.interrupts],
            "thread_id": self.thread_id,
        }


@dataclass(slots=True)
class TaskDone:
    """Returned by a tool handler to end the task with ``content`` (and ``value``): the Done signal."""

    content: str = ""
    """The task's result text."""
    value: Any = None
    """A structured result (JSON-able)."""


@dataclass(slots=True)
class FinalResult:
    """Returned by a tool handler to end the task *and every ancestor* with ``value``."""

    value: Any
    """The result (JSON-able: text, data, a pydantic object)."""
    content: str | None = None
    """The result's text (default: ``value`` as text)."""


@dataclass(slots=True)
class TaskPass:
    """Returned by a tool handler to pass the message the model was answering on (the pass tools)."""

    recipient: str | None = None
    """Who should answer it (default: the next responder that can)."""
    done: bool = False
    """End the task with that message as its result instead."""
    of_input: bool = False
    """Pass on what the model was answering when it called this tool (the pass tools), rather than the model's
    message calling it (a handler of another tool passing that call on to whoever else handles it)."""


class KillSwitch:
    """Stops the tasks that hold it (and their sub-tasks) at their next step, with outcome ``killed``.

    Share one switch between tasks, or give each its own. It is an ordinary object: keep it as long as you need
    it; nothing registers it globally.
    """

    __slots__ = ("_reason",)

    def __init__(self) -> None:
        """An unset switch."""
        self._reason: str | None = None

    def kill(self, reason: str = "killed") -> None:
        """Stop the tasks holding this switch at their next step."""
        self._reason = reason or "killed"

    def reset(self) -> None:
        """Let the tasks run again."""
        self._reason = None

    @property
    def killed(self) -> bool:
        """Whether :meth:`kill` was called (and not reset)."""
        return self._reason is not None

    @property
    def reason(self) -> str:
        """What :meth:`kill` was told ("" when not killed)."""
        return self._reason or ""


class AgentState(Injectable):
    """An agent's own JSON state for one conversation, handed to handlers that declare a parameter of this type.

    It lives in the store (per thread, per task name) when the task keeps its history, and starts afresh on every
    invocation when the task restarts. Changes made by handlers are journaled, so a resumed run sees the same state.
    """

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        """Wrap ``data`` (a JSON object)."""
        self.data: dict[str, Any] = data if data is not None else {}
        """The values, JSON only."""

    @classmethod
    def when_missing(cls) -> AgentState:
        """A fresh, empty state: a handler called outside a task agent keeps nothing."""
        return cls()

    def get(self, key: str, default: Any = None) -> Any:
        """The value under ``key``, or ``default``."""
        return self.data.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self.data

    def __repr__(self) -> str:
        return f"AgentState({self.data!r})"


@dataclass(slots=True, kw_only=True)
class TaskLimits:
    """Bounds of one task invocation; each ends the task with its own outcome."""

    max_turns: int = 50
    """Steps before outcome ``max_turns``."""
    turns: int | None = None
    """Run exactly this many steps and stop with outcome ``fixed_turns`` (unless done earlier)."""
    max_stalled_steps: int = 3
    """Consecutive steps without a valid response before outcome ``stalled``."""
    max_retries: int = 3
    """Consecutive error answers to the model (bad tool calls, unknown recipients, nudges) allowed; one more ends
    the task with outcome ``stalled``."""
    max_tokens: int | None = None
    """Tokens (its sub-tasks included) before outcome ``budget``."""
    max_cost: float | None = None
    """Cost before outcome ``budget``, priced with ``price_per_million``."""
    price_per_million: tuple[float, float] = (0.0, 0.0)
    """Price of a million input and a million output tokens."""
    timeout: float | None = None
    """Seconds of running time (time spent waiting for the human excluded) before outcome ``timeout``."""
    loop_cycle: int = 8
    """Longest repeating cycle of responses the infinite-loop detector looks for (0 turns it off)."""
    loop_repeats: int = 4
    """How many times a cycle must repeat back to back to count as an infinite loop."""

    def __post_init__(self) -> None:
        if self.max_turns < 1 or self.max_stalled_steps < 1 or self.max_retries < 0 or self.loop_cycle < 0:
            raise UsageError(
                "max_turns and max_stalled_steps must be at least 1, max_retries and loop_cycle at least 0"
            )
        if self.turns is not None and self.turns < 1:
            raise UsageError("turns must be at least 1 (or None to run until done)")
        if self.loop_cycle and self.loop_repeats < 2:
            raise UsageError("loop_repeats must be at least 2 (a cycle seen once is not a loop)")


class TaskFailed(AgentError):
    """A task did not produce the result asked for (see ``result`` for its outcome and reason)."""

    def __init__(self, result: TaskResult, message: str | None = None) -> None:
        super().__init__(message or f"task {result.task!r} ended with outcome {result.outcome!r}: {result.reason}")
        self.result = result


_ADDRESS = re.compile(r"^\s*(?:TO\[\s*(?P<to>[A-Za-z0-9_-]{1,64})\s*\]|@(?P<at>[A-Za-z0-9_-]{1,64})\b)\s*:?\s*")
_DONE = re.compile(r"^\s*DONE\b(?:[\s:]|[.\-](?!\d))*")
"""``DONE`` and the spaces, colons, dots and dashes after it; a dash or dot before a digit is the result's own
("DONE -5 + 12 = 7." is "-5 + 12 = 7.")."""


def parse_address(text: str) -> tuple[str | None, str]:
    """The recipient named by a leading ``TO[name]:`` or ``@name`` in ``text``, and the text without it."""
    match = _ADDRESS.match(text)
    if match is None:
        return None, text
    return match.group("to") or match.group("at"), text[match.end() :]


def parse_pass(text: str) -> tuple[bool, str | None]:
    """Whether ``text`` passes the pending message on (``__PASS__``), and to whom (``__PASS__:name``)."""
    if PASS not in text:
        return False, None
    match = re.search(re.escape(PASS_TO) + r"\s*([A-Za-z0-9_-]{1,64})", text)
    return True, match.group(1) if match else None


_ASIDE = r"[,.!?:\s]*"
_NO_ANSWER = re.compile(_ASIDE + _ASIDE.join(map(re.escape, NO_ANSWER)) + _ASIDE)
"""``DO-NOT-KNOW`` with punctuation and spaces anywhere around or between its letters."""


def is_no_answer(text: str) -> bool:
    """Whether ``text`` is only the ``DO-NOT-KNOW`` signal (punctuation aside, as models add it)."""
    return _NO_ANSWER.fullmatch(text) is not None


def parse_done(text: str) -> str | None:
    """The result text after a leading ``DONE`` signal, or ``None`` when ``text`` does not signal done."""
    match = _DONE.match(text)
    return None if match is None else text[match.end() :].strip()
