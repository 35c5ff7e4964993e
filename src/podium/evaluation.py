"""Routing evals: conversations written as data, run against any app, checked turn by turn (``podium eval``).

A conversation file is JSON: one conversation, a list of them, or ``{"conversations": [...]}``. A conversation is
``{"name": ..., "turns": [...]}`` and each turn says what the human types and what must (or must not) happen::

    {"human": "I want to craft a declined letter.",
     "tools": ["DeclineLetterAssistance"],   # tools that must run this turn ([] = none may run)
     "not_tools": ["SmartStrategy"],          # tools that must not run
     "decision": "route",                     # the classifier's decision for the message (route, clarify, ...)
     "asks": ["claim id"],                    # the question the turn ends on contains each (case-insensitive)
     "not_asks": ["Home or Motor"],
     "says": ["Letter generated"],            # what the human is shown (reply, question, artifact) contains each
     "not_says": ["approved"],
     "stack": ["DeclineLetterAssistance"]}    # the tools whose tasks wait after the turn, bottom first

Every key but ``human`` is optional; a string is read as a one-item list. A conversation holds when every turn
does. Turns run in this process (a fresh in-memory store per conversation), or with ``isolated=True`` one
``podium chat`` process per turn over a SQLite file, as a restarted server would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podium.errors import UsageError
from podium.events import (
    Artifact,
    Event,
    InterruptRaised,
    MessageAdded,
    RunEnded,
    StepRecorded,
    TaskStackChanged,
    event_from_dict,
)
from podium.messages import AIMessage, ToolMessage

__all__ = ["Conversation", "ConversationResult", "EvalReport", "TurnSpec", "load_conversations", "run_eval"]

_LISTS = ("tools", "not_tools", "asks", "not_asks", "says", "not_says")
_KEYS = {"human", "decision", "stack", *_LISTS}


@dataclass(slots=True, kw_only=True)
class TurnSpec:
    """One human message and what must happen."""

    human: str
    """What the human types."""
    tools: list[str] | None = None
    """Tools that must run this turn (``[]``: no tool may run); ``None``: not checked."""
    not_tools: list[str] = field(default_factory=list)
    """Tools that must not run this turn."""
    decision: str | None = None
    """The kind of the classifier's decision for the message (``route``, ``clarify``, ``refuse``, ...)."""
    asks: list[str] = field(default_factory=list)
    """Texts the question the turn ends on must contain (the turn must end on a question)."""
    not_asks: list[str] = field(default_factory=list)
    """Texts the question must not contain."""
    says: list[str] = field(default_factory=list)
    """Texts what the human is shown (reply, question or artifact) must contain."""
    not_says: list[str] = field(default_factory=list)
    """Texts what the human is shown must not contain."""
    stack: list[str] | None = None
    """The tools whose tasks wait after the turn, bottom first; ``None``: not checked."""


@dataclass(slots=True, kw_only=True)
class Conversation:
    """A named list of turns."""

    name: str
    """Its name in reports."""
    turns: list[TurnSpec]
    """The turns, in order."""


@dataclass(slots=True, kw_only=True)
class _Observed:
    tools: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    question: str = ""
    shown: str = ""
    stack: list[str] | None = None
    status: str = ""


@dataclass(slots=True, kw_only=True)
class ConversationResult:
    """How one conversation went."""

    name: str
    """The conversation's name."""
    turns: int
    """How many turns it has."""
    passed_turns: int
    """How many turns met every expectation (turns after a failed one still run)."""
    failures: list[str]
    """One line per unmet expectation: turn number, the message, what was expected and seen."""

    @property
    def passed(self) -> bool:
        """Every turn held."""
        return not self.failures


@dataclass(slots=True, kw_only=True)
class EvalReport:
    """The results of an eval run."""

    app: str
    """The app evaluated."""
    results: list[ConversationResult]
    """One per conversation, in order."""

    @property
    def score(self) -> float:
        """The share of conversations that held, 0 to 1."""
        return sum(r.passed for r in self.results) / len(self.results) if self.results else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "app": self.app,
            "conversations": len(self.results),
            "passed": sum(r.passed for r in self.results),
            "score": round(self.score, 4),
            "turns": sum(r.turns for r in self.results),
            "passed_turns": sum(r.passed_turns for r in self.results),
            "results": [
                {"name": r.name, "passed": r.passed, "turns": r.turns, "passed_turns": r.passed_turns,
                 "failures": r.failures}
                for r in self.results
            ],
        }  # fmt: skip

    def table(self) -> str:
        """A plain-text table: one row per conversation, failures below it, the score last."""
        width = max([len(r.name) for r in self.results] + [12])
        lines = [f"{'conversation':<{width}}  result  turns"]
        for r in self.results:
            lines.append(f"{r.name:<{width}}  {'pass' if r.passed else 'FAIL':<6}  {r.passed_turns}/{r.turns}")
            lines.extend(f"{'':<{width}}    {failure}" for failure in r.failures)
        passed = sum(r.passed for r in self.results)
        lines.append(f"score: {passed}/{len(self.results)} conversations ({self.score:.0%})")
        return "\n".join(lines)


def _strings(value: Any, key: str, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise UsageError(f"{where}: {key!r} must be a string or a list of strings")


def _turn(data: Any, where: str) -> TurnSpec:
    if isinstance(data, str):
        return TurnSpec(human=data)
    if not isinstance(data, dict) or not isinstance(data.get("human"), str):
        raise UsageError(f"{where}: a turn is an object with a 'human' string")
    unknown = set(data) - _KEYS
    if unknown:
        raise UsageError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(_KEYS)}")
    spec = TurnSpec(human=data["human"], decision=data.get("decision"))
    for key in _LISTS:
        if key in data:
            setattr(spec, key, _strings(data[key], key, where))
    if "stack" in data:
        spec.stack = _strings(data["stack"], "stack", where)
    return spec


def load_conversations(paths: Sequence[str | Path]) -> list[Conversation]:
    """Read conversation files (a folder stands for its ``*.json`` files, sorted).

    Raises:
        UsageError: a file is missing, not JSON, or not in the conversation format.
    """
    files: list[Path] = []
    for item in map(Path, paths):
        files.extend(sorted(item.glob("*.json")) if item.is_dir() else [item])
    out: list[Conversation] = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read conversations from {path}: {exc}") from None
        if isinstance(data, dict) and "conversations" in data:
            data = data["conversations"]
        items = data if isinstance(data, list) else [data]
        for number, item in enumerate(items, 1):
            where = f"{path.name} #{number}"
            if not isinstance(item, dict) or not isinstance(item.get("turns"), list) or not item["turns"]:
                raise UsageError(f"{where}: a conversation is an object with a non-empty 'turns' list")
            name = str(item.get("name") or f"{path.stem}-{number}")
            turns = [_turn(t, f"{where} turn {i}") for i, t in enumerate(item["turns"], 1)]
            out.append(Conversation(name=name, turns=turns))
    if not out:
        raise UsageError("no conversations found")
    return out


def _observe(events: Sequence[Event], stack: list[str] | None) -> _Observed:
    seen = _Observed(stack=stack)
    shown: list[str] = []
    for event in events:
        if isinstance(event, MessageAdded) and event.namespace == "" and isinstance(event.message, AIMessage):
            if event.message.content:
                shown.append(event.message.content)
        elif isinstance(event, MessageAdded) and event.namespace == "" and isinstance(event.message, ToolMessage):
            if event.message.metadata.get("approval") != "rejected":  # a call the human rejected did not run
                seen.tools.append(event.message.name or "")
        elif isinstance(event, StepRecorded) and isinstance(event.value, dict) and "routing" in event.value:
            if event.value.get("origin") == "human":
                seen.decisions.append(str(event.value["routing"].get("kind", "")))
        elif isinstance(event, InterruptRaised):
            seen.question = event.interrupt.prompt
            shown.append(event.interrupt.prompt)
        elif isinstance(event, Artifact):
            shown.append(event.content if isinstance(event.content, str) else json.dumps(event.content))
        elif isinstance(event, TaskStackChanged):
            seen.stack = [str(entry.get("parent_tool", "")) for entry in event.stack]
        elif isinstance(event, RunEnded):
            seen.status = event.status
            if event.status != "interrupted":
                seen.question = ""
    seen.shown = "\n".join(shown)
    return seen


def _check(spec: TurnSpec, seen: _Observed) -> list[str]:
    problems: list[str] = []
    if seen.status not in ("completed", "interrupted"):
        problems.append(f"the run ended {seen.status or 'without an end'}")
    if spec.tools is not None:
        if not spec.tools and seen.tools:
            problems.append(f"no tool should run, ran {seen.tools}")
        missing = [t for t in spec.tools if t not in seen.tools]
        if missing:
            problems.append(f"expected {missing} to run, ran {seen.tools or 'none'}")
    wrong = [t for t in spec.not_tools if t in seen.tools]
    if wrong:
        problems.append(f"{wrong} should not run")
    if spec.decision is not None and spec.decision not in seen.decisions[:1]:
        problems.append(f"expected decision {spec.decision!r}, got {seen.decisions[:1] or 'none'}")
    question, shown = seen.question.lower(), seen.shown.lower()
    if spec.asks and not question:
        problems.append("expected a question, the turn ended without one")
    problems += [
        f"the question lacks {t!r}: {seen.question!r}" for t in spec.asks if question and t.lower() not in question
    ]
    problems += [f"the question should not contain {t!r}" for t in spec.not_asks if t.lower() in question]
    problems += [f"not shown: {t!r}" for t in spec.says if t.lower() not in shown]
    problems += [f"shown but should not be: {t!r}" for t in spec.not_says if t.lower() in shown]
    if spec.stack is not None and (seen.stack or []) != spec.stack:
        problems.append(f"expected the stack {spec.stack}, got {seen.stack or []}")
    return problems


async def _in_process(app_name: str, agent: Any, conversation: Conversation) -> list[_Observed]:
    from podium.runtime.runtime import Runtime
    from podium.store.memory import MemoryStore

    runtime = Runtime(MemoryStore())
    thread = f"eval-{conversation.name}"
    out: list[_Observed] = []
    stack: list[str] | None = []
    for turn in conversation.turns:
        events: list[Event] = []
        await runtime.send(agent, turn.human, thread_id=thread, on_event=events.append)
        seen = _observe(events, stack)
        stack = seen.stack
        out.append(seen)
    return out


def _isolated(app_name: str, conversation: Conversation, folder: Path) -> list[_Observed]:
    store = folder / f"{abs(hash(conversation.name))}.db"
    env = {**os.environ, "PODIUM_DATA_DIR": str(folder)}
    thread: str | None = None
    out: list[_Observed] = []
    stack: list[str] | None = []
    for turn in conversation.turns:
        command = [sys.executable, "-m", "podium", "chat", app_name, "--jsonl", "--store", str(store)]
        command += ["--thread", thread] if thread else []
        done = subprocess.run(command, input=turn.human + "\n", capture_output=True, text=True, env=env, check=False)
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        thread = thread or next((d["thread_id"] for d in lines if d.get("kind") == "thread"), None)
        events = [event_from_dict(d) for d in lines if d.get("kind") not in ("thread", "note")]
        seen = _observe(events, stack)
        if done.returncode != 0 and not seen.status:
            seen.status = f"failed (exit {done.returncode}: {done.stderr.strip()[-200:]})"
        stack = seen.stack
        out.append(seen)
    return out


async def run_eval(
    app_name: str, conversations: Sequence[Conversation], *, agent: Any = None, isolated: bool = False
) -> EvalReport:
    """Run ``conversations`` against the app ``app_name`` and check every turn.

    Args:
        app_name: an app as ``podium chat`` names it (an example, a ``.py`` file, or ``module:attribute``).
        conversations: what to run.
        agent: run this agent instead of the app's own (in process only), e.g. one with another classifier.
        isolated: one ``podium chat`` process per turn over a SQLite file, instead of this process.
    """
    from podium.app import build_agent, load_app
    from podium.settings import Settings

    results: list[ConversationResult] = []
    if agent is None and not isolated:
        app = load_app(app_name)
        agent = build_agent(app, app.model(Settings.load()))
    with tempfile.TemporaryDirectory() as folder:
        for conversation in conversations:
            if isolated:
                observed = _isolated(app_name, conversation, Path(folder))
            else:
                observed = await _in_process(app_name, agent, conversation)
            failures: list[str] = []
            passed = 0
            for number, (spec, seen) in enumerate(zip(conversation.turns, observed, strict=True), 1):
                problems = _check(spec, seen)
                passed += not problems
                failures += [f"turn {number} {spec.human[:40]!r}: {p}" for p in problems]
            results.append(
                ConversationResult(
                    name=conversation.name, turns=len(conversation.turns), passed_turns=passed, failures=failures
                )
            )
    return EvalReport(app=app_name, results=results)
