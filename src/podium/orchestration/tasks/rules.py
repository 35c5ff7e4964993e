"""Pure rules of the Task loop: done sequences and the infinite-loop detector.

Both look at the *trail* of a task invocation: one :class:`Mark` per valid response, in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from podium.errors import UsageError
from podium.orchestration.tasks.types import TaskMessage

__all__ = ["Mark", "loop_period", "mark_of", "parse_sequence", "sequence_done"]


@dataclass(slots=True, frozen=True)
class Mark:
    """What a step's valid response was, for sequence matching and loop detection."""

    responder: str
    """Who answered."""
    tools: tuple[str, ...]
    """Names of the tools the response calls."""
    body: tuple[str, ...]
    """The content and each call's name and arguments (call ids left out: they differ on every repeat)."""


def mark_of(responder: str, message: TaskMessage) -> Mark:
    """The mark of ``message`` answered by ``responder``."""
    tools = tuple(c.name for c in message.tool_calls)
    body = (message.content, *(f"{c.name}{c.arguments}" for c in message.tool_calls))
    return Mark(responder, tools, body)


_SPLIT = re.compile(r"\s*(?:,|->|→)\s*")


def parse_sequence(spec: str | Sequence[str]) -> tuple[str, ...]:
    """A done sequence from ``"tool, agent, llm"`` or ``["tool", "agent", "llm"]``.

    Tokens: a responder (``llm``, ``agent``, ``user``, a sub-task's name), ``tool`` (a response calling any tool),
    ``tool:NAME`` (a response calling that tool) or ``content:REGEX`` (a response whose text the regular expression
    finds). Letter codes are read too (docs/migrating.md): ``L``, ``A``, ``U``, ``T``, ``T[NAME]`` and ``C[REGEX]``.

    Raises:
        UsageError: an empty sequence or token, or a bad regular expression.
    """
    tokens = tuple(_token(t.strip()) for t in (_SPLIT.split(spec.strip()) if isinstance(spec, str) else spec))
    if not tokens or any(not t or t in ("tool:", "content:") for t in tokens):
        raise UsageError(f"done sequence {spec!r} is empty or has an empty step")
    for token in tokens:
        if token.startswith("content:"):
            try:
                re.compile(token[8:])
            except re.error as exc:
                raise UsageError(f"done sequence {spec!r}: bad pattern {token[8:]!r}: {exc}") from None
    return tokens


_LETTERS = {"L": "llm", "A": "agent", "U": "user", "T": "tool"}
_BRACKET = re.compile(r"^([TC])\[(.+)\]$")


def _token(token: str) -> str:
    """``token`` in the long form (letter codes translated)."""
    match = _BRACKET.match(token)
    if match:
        return ("tool:" if match.group(1) == "T" else "content:") + match.group(2)
    return _LETTERS.get(token, token)


def _matches(token: str, mark: Mark) -> bool:
    if token == "tool":
        return bool(mark.tools)
    if token.startswith("tool:"):
        return token[5:] in mark.tools
    if token.startswith("content:"):
        return re.search(token[8:], mark.body[0]) is not None
    return mark.responder == token


def sequence_done(trail: Sequence[Mark], sequence: tuple[str, ...]) -> bool:
    """Whether the last responses of ``trail`` match ``sequence``."""
    size = len(sequence)
    if len(trail) < size:
        return False
    return all(_matches(token, mark) for token, mark in zip(sequence, trail[len(trail) - size :], strict=True))


def loop_period(trail: Sequence[Mark], cycle: int, repeats: int) -> int | None:
    """The length of a cycle of responses (at most ``cycle``) repeated ``repeats`` times at the end of ``trail``."""
    count = len(trail)
    for period in range(1, cycle + 1):
        span = period * repeats
        if span > count:
            return None
        start = count - span
        if all(trail[start + i] == trail[start + i % period] for i in range(period, span)):
            return period
    return None
