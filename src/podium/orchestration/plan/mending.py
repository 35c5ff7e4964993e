"""A task as the offline planner matches it: its words mended to the catalogue's before they are read.

People type "ordr a new moniter", "onbaord Ada next monady", "get Sam onboarded", "have the meeting scheduled":
the planner matches words against its catalogue's tools, so each is put in the words the catalogue uses first. A
word of six letters or more one typo from one of the catalogue's words (or a weekday or month name) becomes it
(shorter ones have real words one typo away: "water" is not "cater") (:class:`podium._spelling.
Spelling`); a form of a verb the catalogue has only in another form ("scheduled", "hired", "created") becomes the
form it has; and "get X <done>" / "have X <done>" becomes "<do> X" ("get her onboarded" is "onboard her", "have
Sam set up" is "set up Sam"). People's names are never mended.
"""

from __future__ import annotations

import re

from podium._spelling import Spelling
from podium.orchestration.plan.catalogue import Catalogue, words
from podium.orchestration.plan.facts import MONTHS, WEEKDAYS, people

__all__ = ["Mending"]

_DAYS = f"{WEEKDAYS}|{MONTHS}|today|tomorrow|tonight|next|week|weeks|month|months|morning|afternoon|evening"
_COMMON = (
    "please thanks order onboard onboarding offboard offboarding starts starting start leaving leaves employee "
    "laptop monitor keyboard headset phone mobile meeting room people new starter hire"
)
"""Words people use for tasks the catalogue's tools do, mended like the catalogue's own."""
_CAUSATIVE = re.compile(
    r"\b(?:get|gets|got|getting|have|has|having)\s+((?:[\w'-]+\s+){0,5}?)"
    r"([a-z]+ed|set|done|sent|made|put|built|bought|sorted)((?:\s+(?:up|out|off))?)"
    r"(?=\s*(?:$|[,.;:!?]|\b(?:by|on|for|from|at|next|this|before|after|and|then|asap|today|tomorrow|please|in|"
    r"with|so|as|starting|who|when)\b))",
    re.IGNORECASE,
)
"""Having something done ("get Sam Ortiz onboarded", "have the laptop ordered by friday"): the doing is the verb."""
_PASSIVE = re.compile(
    r"(^|[,.;:!?]\s*)((?:[\w'-]+\s+){1,5}?)(?:(?:should|must|needs?\s+to|has\s+to|have\s+to|is\s+to|are\s+to|will|"
    r"can|could|would)\s+)?(?:be|being|is|are)\s+"
    r"(?!(?:called|named|based|located|supposed|interested|pleased|excited|married|tired|used|allowed|required|"
    r"needed|expected|scheduled|booked|done)\b)([a-z]+ed|set|sent|made|put)((?:\s+(?:up|out|off))?)\b",
    re.IGNORECASE,
)
"""Something to be done, said of what it is done to ("the contract should be reviewed", "Sam needs to be set up"):
the doing is the verb."""
_NAME_AHEAD = r"(?=[A-Z][a-z]+\s+[A-Z][a-z]+\b(?!['’]s|\s+(?:with|on|in)\s+(?:a|an|the|their|his|her)\b))"
_SET_UP_PERSON = re.compile(rf"\bset\s+up\s+(?:for\s+)?{_NAME_AHEAD}", re.IGNORECASE)
"""Setting up a person, not a thing of theirs ("set up Zoe Kim by wednesday"; not "set up Zoe Kim's laptop" or "set
up Ana Cruz with a laptop"): the person is onboarded."""
_READY_FOR = re.compile(
    r"\b(?:get|have|make)\s+(?:everything|all|things|it\s+all|stuff)\s+(?:ready|sorted|set\s+up|prepared)\s+for\b",
    re.IGNORECASE,
)
"""Getting everything ready for someone ("get everything ready for her"): onboarding them."""
_JOINS = re.compile(
    r"\b(?:joins|is\s+joining|will\s+join|joining|starts\s+with)(?:\s+(?:us|the\s+team|the\s+company))?\b",
    re.IGNORECASE,
)
"""Someone joining ("Lea Park joins us on monday"): they start."""
_INFLECTED = re.compile(r"\b[a-z]+(?:ing|ed|d|es|s)\b")


class Mending:
    """Puts a task in its catalogue's words (see the module docstring)."""

    def __init__(self, catalogue: Catalogue) -> None:
        """Index the words of ``catalogue``'s tools, with the weekday and month names."""
        self.catalogue = catalogue
        raw: set[str] = set()
        for entry in catalogue.tools:
            said = f"{entry.tool.name} {entry.tool.description}".replace("_", " ").lower()
            raw.update(re.findall(r"[a-z]+", said))
        raw.update(f"{_DAYS} {_COMMON}".replace("|", " ").split())
        stems = {s for w in raw for s in words(w)}
        self._spelling = Spelling(raw | stems, shortest=6, alike=_stem_of, endings=False)

    def mend(self, text: str) -> str:
        """``text`` in the catalogue's words: typos mended, verbs in the form the catalogue has them, and "get X
        onboarded", "set up X" (a person) and "get everything ready for X" said as "onboard X". The people it names stay
        as typed."""
        text = _CAUSATIVE.sub(lambda m: f"{m.group(2)}{m.group(3)} {m.group(1)}".rstrip() + " ", text)
        text = _PASSIVE.sub(lambda m: f"{m.group(1)}{m.group(3)}{m.group(4)} {m.group(2)}", text)
        text = _SET_UP_PERSON.sub("onboard ", text)
        text = _JOINS.sub("starts", _READY_FOR.sub("onboard", text))
        named = people(text)
        if named:
            pieces = re.split("(" + "|".join(re.escape(n) for n in named) + ")", text)
            text = "".join(piece if piece in named else self._spelling.respell(piece) for piece in pieces)
        else:
            text = self._spelling.respell(text)
        return _INFLECTED.sub(self._base, text)

    def _base(self, match: re.Match[str]) -> str:
        """A verb form the catalogue lacks, as the form it has ("scheduled" is "schedule", "hired" is "hire")."""
        typed = match.group(0)
        if self._known(typed):
            return typed
        for suffix in ("ing", "ed", "d", "es", "s"):
            if not typed.endswith(suffix) or len(typed) - len(suffix) < 3:
                continue
            base = typed[: -len(suffix)]
            candidates = [base, base + "e"]
            if len(base) > 3 and base[-1] == base[-2]:
                candidates.append(base[:-1])  # "planned" is "plan"
            if base.endswith("i"):
                candidates.append(base[:-1] + "y")  # "applied" is "apply"
            for candidate in candidates:
                if self._known(candidate):
                    return candidate
        return typed

    def _known(self, word: str) -> bool:
        found = words(word)
        return bool(found) and self.catalogue.knows(found[0])


def _stem_of(word: str) -> str:
    found = words(word)
    return found[0] if found else word
