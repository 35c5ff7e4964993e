"""The specialists a plan can assign steps to, their tools, and retrieval over that catalogue.

A planner shown hundreds of tools in one prompt pays for all of them on every request and chooses worse; the
catalogue's :meth:`Catalogue.relevant` ranks tools by a task's words (BM25 over each tool's name, description,
argument names and agent) so a planner is shown the few that matter. The index is built once per catalogue; a
query costs a few microseconds per matching tool.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from podium.errors import UsageError
from podium.tools import Tool

if TYPE_CHECKING:
    from podium.agents.base import Agent

__all__ = ["Catalogue", "CatalogueTool", "Specialist", "words"]

_STOP_TEXT = (
    "a an and are as at be by can do does for from has have i in into is it its me my need needs of on or "
    "our please so some that the their them then there this to up us we will with would you your"
)
_STOP = frozenset(_STOP_TEXT.split(" "))
_SUFFIXES = ("ations", "ation", "ings", "ing", "ed")


def _stem(word: str) -> str:
    """A light stemmer: plurals and the common verb endings, so "employees" meets "employee"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """The content words of ``text``, lower-cased and lightly stemmed (the retrieval's and offline planner's view)."""
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", text.replace("_", " ").lower()) if w not in _STOP]


@dataclass(slots=True, kw_only=True)
class Specialist:
    """An agent steps can be assigned to, with the tools it works with."""

    name: str
    """The name plans use for it (``HrAgent``)."""
    description: str
    """What it is for, as a planner is told."""
    agent: Agent
    """What runs its steps (a tool-calling agent over ``tools``)."""
    tools: Sequence[Tool] = ()
    """Its tools, listed in the catalogue (in the order a process would use them)."""
    rank: int = 50
    """Where its steps go in a plan: lower ranks run first (an offline planner orders steps by role)."""


@dataclass(slots=True, frozen=True)
class CatalogueTool:
    """One tool of one specialist."""

    agent: str
    """The specialist's name."""
    tool: Tool
    """The tool."""
    position: int
    """Its index in the specialist's tools."""

    def to_json(self) -> dict[str, Any]:
        """The ``GET /api/agent-tools`` form: agent, function, description, arguments (a JSON schema)."""
        return {
            "agent": self.agent,
            "function": self.tool.name,
            "description": self.tool.description,
            "arguments": self.tool.parameters,
        }


@dataclass(slots=True)
class _Index:
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    lengths: list[int] = field(default_factory=list)
    average: float = 1.0


class Catalogue:
    """The specialists of a plan service and every tool they have."""

    def __init__(self, specialists: Iterable[Specialist], *, fallback: str | None = None) -> None:
        """Index ``specialists``.

        Args:
            specialists: the agents steps can go to.
            fallback: the specialist for steps no other fits (default: the last one).

        Raises:
            UsageError: no specialists, two with one name, or an unknown fallback.
        """
        self.specialists: dict[str, Specialist] = {}
        for specialist in specialists:
            if specialist.name in self.specialists:
                raise UsageError(f"two specialists are named {specialist.name!r}")
            self.specialists[specialist.name] = specialist
        if not self.specialists:
            raise UsageError("a catalogue needs at least one specialist")
        self.fallback = fallback or list(self.specialists)[-1]
        if self.fallback not in self.specialists:
            raise UsageError(f"the fallback {self.fallback!r} is not one of the specialists")
        self.tools: list[CatalogueTool] = [
            CatalogueTool(s.name, t, i) for s in self.specialists.values() for i, t in enumerate(s.tools)
        ]
        self._index = self._build([self._document(entry) for entry in self.tools])

    def _document(self, entry: CatalogueTool) -> list[str]:
        specialist = self.specialists[entry.agent]
        # the tool's name and description say what it does; the agent's name places it (argument names would make
        # every tool taking ``employee_name`` match "employee")
        return words(f"{entry.tool.name} {entry.tool.description} {specialist.name}")

    @staticmethod
    def _build(documents: list[list[str]]) -> _Index:
        index = _Index()
        for position, document in enumerate(documents):
            counts: dict[str, int] = {}
            for word in document:
                counts[word] = counts.get(word, 0) + 1
            for word, count in counts.items():
                index.postings.setdefault(word, []).append((position, count))
            index.lengths.append(len(document))
        index.average = max(1.0, sum(index.lengths) / max(1, len(index.lengths)))
        return index

    @staticmethod
    def _scores(index: _Index, query: Iterable[str]) -> dict[int, dict[str, float]]:
        """Each matching tool's score from each query word."""
        total = len(index.lengths)
        scores: dict[int, dict[str, float]] = {}
        for word in sorted(set(query)):
            postings = index.postings.get(word)
            if not postings:
                continue
            idf = math.log(1 + (total - len(postings) + 0.5) / (len(postings) + 0.5))
            for position, count in postings:
                norm = count * 2.2 / (count + 1.2 * (0.25 + 0.75 * index.lengths[position] / index.average))
                scores.setdefault(position, {})[word] = idf * norm
        return scores

    def get(self, name: str) -> Specialist | None:
        """The specialist called ``name`` (case and spaces ignored), or ``None``."""
        found = self.specialists.get(name)
        if found is not None:
            return found
        key = re.sub(r"[^a-z0-9]", "", name.lower())
        for candidate in self.specialists.values():
            if re.sub(r"[^a-z0-9]", "", candidate.name.lower()) == key:
                return candidate
        return None

    def scored(self, text: str) -> list[tuple[float, CatalogueTool]]:
        """Every tool that shares a word with ``text``, best first, with its score."""
        return [(sum(by_word.values()), entry) for entry, by_word in self.matches(text)]

    def matches(self, text: str) -> list[tuple[CatalogueTool, dict[str, float]]]:
        """Every tool that shares a word with ``text``, best first, with what each shared word adds to its score."""
        scores = self._scores(self._index, words(text))
        ranked = sorted(scores.items(), key=lambda item: (-sum(item[1].values()), item[0]))
        return [(self.tools[position], by_word) for position, by_word in ranked]

    def knows(self, word: str) -> bool:
        """Whether some tool's name or description has ``word`` (a content word as :func:`words` gives it)."""
        return word in self._index.postings

    def relevant(self, text: str, limit: int = 12) -> list[CatalogueTool]:
        """The ``limit`` tools that fit ``text`` best (retrieval for a planner's prompt)."""
        return [entry for _, entry in self.scored(text)[:limit]]

    def to_json(self) -> list[dict[str, Any]]:
        """Every tool of every specialist (``GET /api/agent-tools``)."""
        return [entry.to_json() for entry in self.tools]
