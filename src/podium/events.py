"""The typed event stream every run emits (see docs/architecture.md, "The journal is the event log").

Each event carries the run it belongs to, a per-thread sequence number and the *path* of the agent that emitted it
(outermost first). The same events are stored, for history and audit, and streamed to clients; a few that only
make sense live (model tokens, tool starts: :class:`TokenDelta`, :class:`ToolStarted`) are streamed and not stored.

Events that carry a ``key`` are also the run's journal: on a re-execution after a crash or an interrupt, a step
whose key is already recorded returns the recorded result instead of running again.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from podium import _codec
from podium.errors import UsageError
from podium.human import approval, clauses, corrected, joined_codes, negated, ordinal, yes_or_no
from podium.messages import MESSAGE_TYPES, Message, Usage

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = [
    "answers_from_text",
    "EVENT_TYPES",
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
    "prepare_codec",
]


@dataclass(slots=True, kw_only=True)
class Expectation:
    """What answer a pending request expects, so classifiers can check fit and a UI can render choices."""

    type: Literal["approval", "choice", "pattern", "text"] = "text"
    """``choice``: one of ``options``; ``pattern``: text matching ``pattern``; ``text``: anything; ``approval``: a
    decision on a proposed tool call (approve it, reject it with a reason, or edit its arguments:
    :meth:`approval`)."""
    options: list[str] = field(default_factory=list)
    """The allowed answers of a ``choice``."""
    pattern: str | None = None
    """A regular expression the answer must contain, for ``pattern``."""
    description: str = ""
    """How the expectation reads to a person ("letters and digits")."""
    synonyms: dict[str, list[str]] = field(default_factory=dict)
    """Other words that name an option of a ``choice``, by option (``{"Dental": ["teeth", "tooth", "dentist"]}``):
    an answer in them ("the teeth one") chooses that option (:meth:`in_option_words`)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        data: dict[str, Any] = {"type": self.type}
        if self.options:
            data["options"] = list(self.options)
        if self.synonyms:
            data["synonyms"] = {option: list(words) for option, words in self.synonyms.items()}
        if self.pattern is not None:
            data["pattern"] = self.pattern
        if self.description:
            data["description"] = self.description
        return data

    def fit(self, text: str) -> str | None:
        """What in ``text`` answers this expectation, or ``None`` when it does not fit (an empty text never fits).

        A ``choice`` takes an option given alone (case and end punctuation aside), its number or place ("the second
        one", "option 2", "the last one": :func:`podium.human.ordinal`), or the one option the text names as a word
        ("Yes, please" is ``yes``; "yes or no" names two and fits neither), and answers with the option as written.
        An option named in a negated clause is refused ("I don't want Motor"), and in a choice of two the other one
        is meant ("not home"). A choice of yes or no also takes yes and no as people say them ("yeah", "sure, go
        ahead", "nope", and "never mind" for no: :func:`podium.human.yes_or_no`); an answer that begins with no
        is never yes ("no, make it 7pm"). A
        ``pattern`` needs a match of ``pattern`` in the text, or in the text with the gaps people type inside codes
        taken out ("P 123 456": :func:`podium.human.joined_codes`, then the answer); ``text`` takes anything. The
        text itself is the answer of a pattern or a text. An ``approval`` answers ``"approve"``, ``"reject"``,
        ``"reject: <why>"`` or ``"edit: <arguments as JSON>"`` (:func:`podium.human.approval`).
        """
        said = text.strip()
        if not said:
            return None
        if self.type == "approval":
            return approval(said)
        last = corrected(said) if self.type in ("choice", "pattern") else None
        if last is not None and last != said and not said.lower().startswith(("no", "nope", "nah")):
            found = self.fit(last)  # "dentist. no wait, physio": what it changed to, first
            if found is not None:
                return found
        if self.type == "choice" and self.options:
            said = self.in_option_words(said)
            bare = said.rstrip(".!").strip().lower()
            for option in self.options:
                if option.strip().lower() == bare:
                    return option
            if bare.isdigit() and 1 <= int(bare) <= len(self.options):
                return self.options[int(bare) - 1]
            place = ordinal(bare, len(self.options))
            if place is not None:
                return self.options[place]
            sides = {o.strip().lower(): o for o in self.options}
            if "yes" in sides and "no" in sides:  # a yes-or-no question: "yeah", "sure", "nope", "never mind" too
                verdict = yes_or_no(said)
                if verdict is not None:
                    return sides["yes" if verdict else "no"]
                if re.match(r"(?:yes|yeah|yep|ok(?:ay)?|sure)\b.*\b(?:but|except|instead|rather|change)\b", bare):
                    return None  # "yes, but make it Tuesday" is no plain yes: asked again, not taken as one
                return _named(self.options, bare, other=False)  # a refused "no" is no yes ("no worries")
            return _named(self.options, bare)
        if self.type == "pattern" and self.pattern:
            try:
                if re.search(self.pattern, text):
                    return text
                joined = joined_codes(text)  # "P 123 456" for P123456: the code as written, gaps taken out
                return joined if joined != text and re.search(self.pattern, joined) else None
            except re.error:
                return text  # a pattern that does not compile checks nothing
        return text

    def in_option_words(self, text: str) -> str:
        """``text`` with each of the :attr:`synonyms` it says (whole words, case aside, a plural or a possessive
        too) written as the option it names: "the teeth one" is "the Dental one", so an option is read in the words
        people use for what it is about. The text as it is without synonyms."""
        named = {
            word.strip().lower(): option
            for option, words in self.synonyms.items()
            if option in self.options
            for word in words
            if word.strip()
        }
        if not named:
            return text
        alternatives = "|".join(re.escape(w) for w in sorted(named, key=len, reverse=True))
        pattern = rf"(?<!\w)(?:{alternatives})(?:e?s|'s)?(?!\w)"
        return re.sub(pattern, lambda m: named.get(_synonym_of(m[0].lower(), named), m[0]), text, flags=re.IGNORECASE)

    def hint(self) -> str:
        """How to answer, for a question asked again ("yes or no", or the description)."""
        if self.description:
            return self.description
        if self.type == "approval":
            return "approve, reject (or 'reject: <why>') or 'edit: <the arguments as JSON>'"
        if self.type == "choice" and self.options:
            quoted = [repr(o) if " " in o else o for o in self.options]
            return ", ".join(quoted[:-1]) + f" or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
        return f"text matching {self.pattern}" if self.type == "pattern" and self.pattern else "some text"

    @classmethod
    def approval(cls) -> Expectation:
        """The expectation of a tool call's approval: approve, reject or edit (``options`` name the first two, for
        clients that only show buttons)."""
        return cls(type="approval", options=["approve", "reject"])

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Expectation:
        """Read the JSON form."""
        return cls(
            type=data.get("type", "text"),
            options=list(data.get("options", ())),
            pattern=data.get("pattern"),
            description=data.get("description", ""),
            synonyms={str(k): [str(w) for w in v] for k, v in (data.get("synonyms") or {}).items()},
        )


def _synonym_of(said: str, named: dict[str, str]) -> str:
    """The synonym ``said`` is (itself, or with its plural or possessive ending taken off)."""
    for ending in ("", "'s", "es", "s"):
        if said.endswith(ending) and said[: len(said) - len(ending)] in named:
            return said[: len(said) - len(ending)]
    return said


def _named(options: list[str], said: str, *, other: bool = True) -> str | None:
    """The one option ``said`` (lowercase) names as a word outside a negated clause; in a choice of two (unless
    ``other`` is false), the other option when the one named is refused ("not home" of home or motor: motor); else
    ``None``."""

    def names(option: str, text: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(option.strip().lower())}(?!\w)", text) is not None

    parts = clauses(said)
    refused = " | ".join(c for c in parts if negated(c))
    meant = " | ".join(c for c in parts if not negated(c))
    named = [o for o in options if names(o, meant)]
    if len(named) == 1:
        return named[0]
    if named:
        return None  # two options named: ambiguous
    rest = [o for o in options if not names(o, refused)]
    return rest[0] if other and len(options) == 2 and len(rest) == 1 else None


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

    def how_to_answer(self) -> str:
        """What a text client shows after the prompt, in brackets: a choice's options (``yes / no``), or the
        expectation's hint (how to approve, reject or edit a tool call; a pattern's description); ``""`` when there
        is none, or when the prompt says it already (a question asked again: "(Please answer yes or no.)")."""
        expectation = self.expectation
        if expectation is None:
            return ""
        if expectation.type == "choice" and expectation.options:
            named = [
                re.search(rf"(?<!\w){re.escape(o)}(?!\w)", self.prompt, re.IGNORECASE) for o in expectation.options
            ]
            return "" if all(named) else " / ".join(expectation.options)
        if expectation.type == "approval" or expectation.description:
            how = expectation.hint()
            return "" if how.lower() in self.prompt.lower() else how
        return ""

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


def answers_from_text(text: str, pending: list[Interrupt]) -> str | dict[str, str]:
    """A client's message as the answer to the questions ``pending``: the text for one question, and for several a
    JSON object by question id (how the MCP and A2A entry points take answers).

    Raises:
        UsageError: several questions wait and the text is not a JSON object.
    """
    if len(pending) == 1:
        return text
    try:
        answers = json.loads(text)
    except json.JSONDecodeError:
        answers = None
    if not isinstance(answers, dict):
        ids = ", ".join(i.id for i in pending)
        raise UsageError(f"the conversation waits on {len(pending)} questions; answer with a JSON object by id: {ids}")
    return {str(k): str(v) for k, v in answers.items()}


@dataclass(slots=True, kw_only=True)
class Event(_codec.Tagged):
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

    kind: str = "event"
    """Tag of the variant (each event type narrows it to its own literal)."""


@dataclass(slots=True, kw_only=True)
class RunStarted(Event):
    """A run began, or was re-executed to resume (``attempt`` > 1)."""

    input: Message | None = None
    """The message that started the run."""
    attempt: int = 1
    """1 for the first execution; higher when resumed after an interrupt or a crash."""
    kind: Literal["run_started"] = "run_started"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class RunEnded(Event):
    """A run stopped: completed, interrupted, failed or stopped by a limit."""

    status: str = "completed"
    """One of the :class:`podium.RunResult` statuses."""
    reason: str = ""
    """Why it stopped, for anything but ``completed``."""
    output: str | None = None
    """The final answer's text, when completed."""
    kind: Literal["run_ended"] = "run_ended"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class MessageAdded(Event):
    """A message entered a conversation history (``namespace`` "" is the thread's main history)."""

    message: Message
    """The message."""
    namespace: str = ""
    """Which history: "" for the thread's, an agent's own namespace for agents that keep their own."""
    usage: Usage | None = None
    """Token usage, when the message is a model reply."""
    kind: Literal["message"] = "message"
    """Tag of the variant."""

    @property
    def is_reply(self) -> bool:
        """Whether this is an agent's reply to the person: an AI message with text in the thread's history, said by
        the agent whose path it is under (the top agent, or the swarm agent the conversation was handed to). A
        worker's answer that its supervisor's shared history also holds is the worker reporting to the agent above
        it, and hand-back bookkeeping (marked ``handoff_back``) is control going back up: neither is a reply."""
        message = self.message
        if self.namespace != "" or message.kind != "ai" or not message.content:
            return False
        if message.metadata.get("handoff_back"):
            return False
        return message.name is None or not self.path or message.name == self.path[-1]


@dataclass(slots=True, kw_only=True)
class StepRecorded(Event):
    """The JSON result of a journaled step that is not a message."""

    value: Any = None
    """The step's result."""
    kind: Literal["step"] = "step"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class TokenDelta(Event):
    """A piece of a model reply as it streams (streamed, not stored)."""

    text: str
    """The new text."""
    namespace: str = ""
    """The history the reply goes to, as :attr:`MessageAdded.namespace`: "" is the thread's, what a person reads;
    another is an agent's own (a task's messages to another task, a plan step's work)."""
    kind: Literal["token"] = "token"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class ToolStarted(Event):
    """A tool call began (streamed, not stored: the call is in the model reply, the result in a message)."""

    tool_call_id: str
    """The call's id."""
    name: str
    """The tool's name."""
    kind: Literal["tool_started"] = "tool_started"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class SideChannel(Event):
    """Progress or rationale for the user, outside the chat and never fed to a model."""

    text: str
    """What to show."""
    channel: Literal["progress", "rationale"] = "progress"
    """``rationale``: why something was chosen; ``progress``: what is happening."""
    kind: Literal["side"] = "side"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class Artifact(Event):
    """A result for a side panel (a letter, a table), kept out of the chat."""

    content: Any
    """The artifact (text or JSON data)."""
    title: str = ""
    """A short label."""
    kind: Literal["artifact"] = "artifact"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class InterruptRaised(Event):
    """A question to the human; the run suspends until it is answered."""

    interrupt: Interrupt
    """The question."""
    kind: Literal["interrupt"] = "interrupt"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class InterruptAnswered(Event):
    """The human's answer to an interrupt (its ``key`` is the interrupt's id)."""

    answer: str
    """The answer text."""
    kind: Literal["answer"] = "answer"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class TaskStackChanged(Event):
    """An orchestrator's task stack changed (pushed, popped or dropped)."""

    stack: list[Any] = field(default_factory=list)
    """The stack after the change, bottom first, as JSON."""
    kind: Literal["task_stack"] = "task_stack"
    """Tag of the variant."""


@dataclass(slots=True, kw_only=True)
class ErrorEvent(Event):
    """An error reported during a run (a tool failure fed back to the model, or the one that ended the run)."""

    error: str
    """The exception type or error code."""
    message: str
    """What went wrong."""
    kind: Literal["error"] = "error"
    """Tag of the variant."""


EVENT_TYPES: tuple[type[Event], ...] = (
    RunStarted,
    RunEnded,
    MessageAdded,
    StepRecorded,
    TokenDelta,
    ToolStarted,
    SideChannel,
    Artifact,
    InterruptRaised,
    InterruptAnswered,
    TaskStackChanged,
    ErrorEvent,
)
"""The event variants, told apart by ``kind``: a new event type is a class above and its name here."""


def event_to_dict(event: Event, *, compact: bool = False, exclude: set[str] | None = None) -> dict[str, Any]:
    """The JSON form of ``event``, one flat object (as ``podium chat --jsonl`` prints it).

    Free-form data (a message's metadata, a step's value, an artifact's content, an interrupt's data) is written by
    the rule of :func:`podium.message_to_dict`: what JSON cannot hold exactly becomes what JSON reads back, without a
    warning.

    Args:
        event: the event.
        compact: leave fields at their default out, as stored rows do.
        exclude: names of fields to leave out (a store keeps some in columns of their own).

    Raises:
        InvalidData: a field of a fixed type holds a value of another, or bytes are not UTF-8 text (so no stored row
            is written that could not be read back); the message says which field.
    """
    return _codec.dump(event, _events(), compact=compact, exclude=exclude)


def event_from_dict(data: dict[str, Any]) -> Event:
    """Read an event from :func:`event_to_dict`'s form.

    Raises:
        InvalidData: the data is not an event.
    """
    event: Event = _codec.load(data, _events(), "event")
    return event


def prepare_codec() -> None:
    """Build the reader and writer of events (and of the messages they carry) now rather than at first use.

    Building them imports pydantic and compiles every variant's schema, a few hundred milliseconds: a server does it
    at start-up, so its first request does not wait for it.
    """
    _events()
    _codec.union_adapter(MESSAGE_TYPES)


def _events() -> TypeAdapter[Event]:
    return _codec.union_adapter(EVENT_TYPES)
