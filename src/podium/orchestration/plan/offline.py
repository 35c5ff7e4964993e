"""Planning and acting with no model: a deterministic planner and a model that calls the step's tool.

:class:`OfflinePlanner` matches the task's words against the catalogue (the same BM25 retrieval a model planner is
shown), keeps the tools that fit clearly (at least ``share`` of the best score), at most ``per_agent`` per
specialist and ``max_steps`` in all, and orders the steps by the specialists' ``rank`` (their role in a process:
HR before Tech Support) and then by each tool's place in its specialist's list. A step's action is the tool's
description, with the people, dates and numbers named in the task (a clarification's replace the task's), and the
tool's name.

What is matched: the task's words (and the clarifications'), without the people and dates it names, without words
that only say for whom or when ("day", "week", "name", "her", month and weekday names) and without negated clauses
("do not order a laptop", "no monitor"). A word the task shares with a tool's *verb* only (the first word of its
name or description: "book" for ``book_meeting_room``) counts for less, and such a tool is kept only when no tool
shares more with the task. Every step must be one the task asks for: the task names what the tool acts on or is for
(not only a word describing another, "travel" in "travel expenses"), and the tool does what the task's verb says
(not another thing done to the same kind of object: "draft" for "review the NDA"); a task naming several people gets
the steps for each, and one in several parts ("onboard Gina Holt and arrange a team lunch") the steps of each part.
A thing no tool knows ("order a tablet") is said to be one, with the closest tools, never planned as another thing.
A task whose words are mostly unknown to the catalogue (under a third of them: gibberish, another language) or match
no tool gets a question back, never a guessed plan; so does a task of fewer than two content words, and one whose
words match tools that do something else ("I cannot plan ...: the closest I have ...").
What it cannot do: understand synonyms the catalogue does not use, homonyms, conditions, or steps that need a tool
nobody has.

:class:`OfflineAgentModel` stands in for a specialist's model: it calls the tool the step's action names (or the
best-matching one), with the required arguments filled from the action's text by type (a person, a date, an e-mail
address, a number, a choice); when the text lacks a person, date or number the tool needs, it says so instead of
calling the tool with made-up values. Then it answers with the tool's result.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from podium.human import requests_in
from podium.messages import AIMessage, HumanMessage, ToolCall, ToolMessage, Usage
from podium.models.base import Model, ModelRequest, ModelResponse
from podium.orchestration.plan.catalogue import CatalogueTool, words
from podium.orchestration.plan.caution import destructive_verbs
from podium.orchestration.plan.facts import MONTHS, WEEKDAYS, facts, people, ruled_out
from podium.orchestration.plan.mending import Mending
from podium.orchestration.plan.outcome import CANNOT_DO
from podium.orchestration.plan.planner import Planner, PlanRequest
from podium.orchestration.plan.reading import corrects
from podium.orchestration.plan.types import PlanDraft, PlannedStep

if TYPE_CHECKING:
    from podium.orchestration.plan.catalogue import Catalogue
    from podium.runtime.context import RunContext
    from podium.tools import ToolSpec

__all__ = ["OfflineAgentModel", "OfflinePlanner", "facts"]

# words that say for whom or when, not what: the people and dates are taken out as facts, and these are not matched
# against the tools (a "last day" is not a "first-day" welcome email; "her name" is not a brand name)
_WHO_WHEN = frozenset(
    words(
        "day days week weeks month months year years today tomorrow yesterday next last morning afternoon evening "
        "name named called actually instead but he she him her his hers they their theirs whom whose own somebody "
        + f"{WEEKDAYS} {MONTHS}".replace("|", " ")
    )
)
# a negated clause ("do not order a laptop", "no monitor"), up to its punctuation or the next "and" / "but" / "then"
_NEGATED = re.compile(
    r"(?:\b(?:not|no|never|without|except|instead\s+of|rather\s+than)|n't)\b[^,.;:!?]*?(?=[,.;:!?]|\b(?:and|but|then)\b|$)",
    re.IGNORECASE,
)
_VERB_WEIGHT = 0.75
"""What a task's word counts for when it is only a tool's verb ("book" for ``book_meeting_room``)."""
_TOOL_MARK = re.compile(r"\[([A-Za-z0-9_-]+)\]\s*$")


def _verbs(entry: CatalogueTool) -> set[str]:
    """What a tool does, as its name and description start: ``book_meeting_room`` and "Book a room" give "book"."""
    name = words(entry.tool.name)
    said = words(entry.tool.description)
    return set(name[:1] if len(name) > 1 else []) | set(said[:1] if len(said) > 1 else [])


def _named_after(named: list[str], part: str) -> list[str]:
    """The people a plan is for after ``part`` (the task, or a later correction): the people it names replace
    those named before, and the ones it rules out are dropped ("for Mia Chen, not Mia Wong" puts Mia Chen where
    Mia Wong was, and keeps anyone else named before)."""
    out = ruled_out(part)
    said = [p for p in people(part) if p not in out]
    if not out or not any(p in out for p in named):
        return said or [p for p in named if p not in out]
    at = next(i for i, p in enumerate(named) if p in out)
    kept = [p for p in named if p not in out and p not in said]
    return kept[:at] + said + kept[at:]


def _sentence(description: str) -> str:
    first = description.strip().split("\n")[0]
    return first.rstrip(". ")


_SITUATION = re.compile(r"\s+(?:when|who|if)\s+")
_PREPOSITION = re.compile(r"\s+(?:for|of|with|to|on|in|from|about|by|before|after|into|at|within|between|during)\s+")
_CLAUSES = re.compile(r"[,;:.!?]|\b(?:and|then|also|but|plus)\b", re.IGNORECASE)
_LEAD = frozenset(
    words(
        "now ok okay great so just hi hello hey thanks kindly pls want like go ahead let lets oh well next first "
        "could would"
    )
)
"""Words a clause may start with before its verb ("great, now order ...", "ok let's book ...")."""
_ASKING = frozenset(words("what whats who whom whose where when why how which"))
"""Question words: they never say what to do (a tool saying "who starts" is not about "who")."""
_SUBJECTS = frozenset(re.findall(r"\w+", "he she they it who which that there this his her their its name"))
"""Words before a verb that make a clause a statement, not an instruction ("who starts", "she leaves")."""
_PARTICLES = frozenset(words("out off over away back down around"))
"""Parts of a phrasal verb ("sort out", "point out"): they name nothing."""
_PARTICIPLE = re.compile(
    r"\s+\w+ing\s+(?:a|an|the|our|its|their|his|her|my|your|this|that|these|those|some)\b.*", re.IGNORECASE
)
"""Where a thing's description starts ("a press release announcing a product"): what follows is about it."""
_IGNORED = _WHO_WHEN | _ASKING | _PARTICLES | frozenset(words("about before after within between during via per until"))


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _bare(token: str) -> str:
    """A word as typed without the punctuation around it, lower-cased ("laptop," is "laptop")."""
    return token.strip(".,;:!?()'\"").lower()


_NO_FIRST = re.compile(r"\s*(?:no+|nope|nah)\b", re.IGNORECASE)


def _stem_of(token: str) -> str | None:
    """The content word a token is, or ``None`` for a word that says no *what* (stop words, who/when, one letter)."""
    found = words(token)
    return None if len(token) < 2 or token.isdigit() or not found or found[0] in _IGNORED else found[0]


@dataclass(frozen=True, slots=True)
class _Shape:
    """What a tool does, as its name and description say it: its verb, the things it acts on, and the words of
    what it is for ("when onboarding someone who starts")."""

    verb: str | None
    objects: frozenset[str]
    """What it acts on, by its name and its description's first words ("laptop, phone, monitor" for
    ``replace_broken_device``)."""
    anchors: frozenset[str]
    """What it acts on and what it is for: a task naming one of these may ask for the tool."""


def _shape(entry: CatalogueTool) -> _Shape:
    name = words(entry.tool.name)
    verb = name[0] if len(name) > 1 else None
    parts = _SITUATION.split(_sentence(entry.tool.description), maxsplit=1)
    head, situation = parts[0], (parts[1] if len(parts) > 1 else "")
    thing_text = _PREPOSITION.split(head, maxsplit=1)[0]  # "Order a docking station" for a laptop
    rest = thing_text.partition(" ")[2]
    thing = [w for t in re.findall(r"[a-z0-9]+", _PARTICIPLE.sub("", rest).lower()) if (w := _stem_of(t))]
    objects = frozenset(name[1:] if verb else name)
    told = {w for t in re.findall(r"[a-z0-9]+", situation.lower()) if (w := _stem_of(t))}
    return _Shape(verb, frozenset(thing) | objects, objects | frozenset(thing) | told)


@dataclass(frozen=True, slots=True)
class _Reading:
    """A task as the planner reads it: the verbs its clauses start with (those some tool has), the words naming
    what it is about (not those only describing another word: "travel" in "travel expenses"), and every word."""

    verbs: frozenset[str]
    heads: frozenset[str]
    rest: frozenset[str]
    """Every word but the verbs (heads and the words describing them)."""


def _read(text: str, tool_verbs: frozenset[str]) -> _Reading:
    verbs: set[str] = set()
    heads: set[str] = set()
    rest: set[str] = set()
    for clause in _CLAUSES.split(text):
        tokens = re.findall(r"[a-z0-9]+", clause.replace("_", " ").lower())
        stems = [_stem_of(t) for t in tokens]
        lead = next((i for i, stem in enumerate(stems) if stem is not None and stem not in _LEAD), None)
        if lead is not None and _SUBJECTS & set(tokens[:lead]):
            lead = None  # "he starts on Monday" says something about someone: no instruction to "start"
        recipient = False  # after "for", once the clause named its thing: whom or what it is for, not the thing
        named = False
        for i, stem in enumerate(stems):
            recipient = recipient or (named and tokens[i] == "for")
            if stem is None or stem in _LEAD:
                continue
            if i == lead and stem in tool_verbs:
                verbs.add(stem)
                continue
            if lead is not None and i > lead + 1 and _PARTICIPLE.match(" " + " ".join(tokens[i:])):
                break  # "a blog post announcing our launch": what follows is about the post
            rest.add(stem)
            following = stems[i + 1] if i + 1 < len(stems) else None
            if recipient or (following is not None and not tokens[i + 1].endswith("ing")):
                continue  # describes the next word ("phone charger", "product launch"), not what is asked
            heads.add(stem)
            named = True
    return _Reading(frozenset(verbs), frozenset(heads), frozenset(rest))


class OfflinePlanner(Planner):
    """A deterministic planner over the catalogue (no model); see the module docstring for what it can do."""

    name = "offline"
    plans_questions = False

    def __init__(
        self,
        catalogue: Catalogue,
        *,
        share: float = 0.6,
        per_agent: int = 4,
        max_steps: int = 8,
        tool_limit: int = 12,
    ) -> None:
        """A planner over ``catalogue``.

        Args:
            catalogue: the specialists and tools.
            share: a tool becomes a step when its score is at least this share of the best tool's.
            per_agent: at most this many steps per specialist.
            max_steps: at most this many steps.
            tool_limit: how many retrieved tools it considers.
        """
        super().__init__(catalogue)
        self.share = share
        self.per_agent = per_agent
        self.max_steps = max_steps
        self.tool_limit = tool_limit
        self._shapes = {id(entry): _shape(entry) for entry in catalogue.tools}
        self._tool_verbs = frozenset(shape.verb for shape in self._shapes.values() if shape.verb)
        acts: dict[str, set[str]] = {}
        for shape in self._shapes.values():
            if shape.verb:
                acts.setdefault(shape.verb, set()).update(shape.objects)
        self._acts_on = {verb: frozenset(found) for verb, found in acts.items()}
        self._objects = frozenset(w for found in acts.values() for w in found)
        self._mending = Mending(catalogue)

    def _contrast(self, asked: str, other: str) -> bool:
        """Whether two verbs name different things done to the same kind of thing: some tool does ``asked`` and
        some does ``other`` to an object of the same name ("review" and "draft" a contract), so one is not the
        other ("book" leave and "process" a leave request are not: no tool books what one processes)."""
        return bool(self._acts_on.get(asked, frozenset()) & self._acts_on.get(other, frozenset()))

    def draft(self, request: PlanRequest) -> PlanDraft:
        """The plan for ``request`` (pure and deterministic)."""
        text = request.text()
        if len(words(text)) < 2:
            return PlanDraft(
                initial_goal=request.task,
                steps=[],
                summary="More information is needed before planning.",
                human_clarification_request="What should be done, for whom and by when?",
            )
        done = {d.tool for d in request.done if d.tool}
        done |= {m.group(1) for d in request.done if (m := _TOOL_MARK.search(d.action))}
        parts = [self._mending.mend(part) for part in [request.task, *request.clarifications]]  # typos, "get X done"
        whole = list(parts)  # who and when, as the whole task says them
        unplanned = self._unplanned(parts[0], done)
        if unplanned:  # "onboard Ivy Chen, and order a parking pass": the rest is planned, that part is said
            parts[0] = ". ".join(p for p in requests_in(parts[0]) if p not in unplanned)
        detail: dict[str, str] = {}
        named: list[str] = []
        for part in whole:  # a clarification's person or date replaces the task's
            detail |= facts(part)
            named = _named_after(named, part)
        detail.pop("name", None)
        if named:
            detail["name"] = named[0]
        replaced = self._replaced(parts)
        pieces = [piece for said in replaced[0].split(". ") for piece in requests_in(said)]  # the task's requests
        text = ". ".join(part.rstrip(". ") for part in replaced)
        for part in parts:  # names and dates say for whom and when, not what
            for value in [*facts(part).values(), *people(part)]:
                text = text.replace(value, " ")
        found = self._choose(text, done)
        if found is None:
            fallback = self.catalogue.fallback
            roles = [s.description.partition(":")[0] for s in self.catalogue.specialists.values() if s.name != fallback]
            question = (
                f"I could not make a plan for {request.text()!r}: too few of its words match what the agents can "
                f"do ({', '.join(roles) or fallback}). Try saying what should be done in other words, for whom and "
                f"by when (for example {self._example()!r}), or 'stop'."
            )
            summary = "No tool fits the task."
            return PlanDraft(initial_goal=request.task, steps=[], summary=summary, human_clarification_request=question)
        chosen, closest = found
        chosen = self._with_every_part(chosen, pieces, done)
        goal = request.task
        if chosen and request.clarifications and not self._plans(parts[0], done):
            # the task said again in other words, as the question asked: the latest answer that is a task itself
            told = [at for at, said in enumerate(parts[1:]) if self._plans(said, done)]
            goal = request.clarifications[told[-1] if told else -1]
        unable = self._unable(request, chosen) or (None if chosen or not closest else self._nothing(request, closest))
        if unable is not None:
            return PlanDraft(
                initial_goal=request.task,
                steps=[],
                summary="No tool does what the task asks.",
                human_clarification_request=unable,
            )
        missing = self._missing(chosen, detail)
        if missing:
            question = (
                f"To plan {goal.strip()!r} I need to know {_listed([said for said, _ in missing])}. Please "
                f"say it (for example '{', '.join(example for _, example in missing)}'), or 'stop'."
            )
            if question not in request.questions:  # asked once: an answer that still lacks them plans anyway
                summary = "More information is needed before planning."
                return PlanDraft(initial_goal=goal, steps=[], summary=summary, human_clarification_request=question)
        asked = frozenset(words(_NEGATED.sub(" ", text)))
        each = [detail | {"name": person} for person in named] if len(named) > 1 else [detail]
        steps = [  # one step per tool and person: "onboard Ada Lovelace and Bob Stone" plans for both
            PlannedStep(action=self._action(entry, said, asked), agent=entry.agent, tool=entry.tool.name)
            for entry in chosen
            for said in each
        ]
        if not steps:  # every fitting tool was used by a completed step: hand the rest to the fallback
            steps = [PlannedStep(action=request.text(), agent=self.catalogue.fallback)]
        agents = list(dict.fromkeys(step.agent for step in steps))
        count = f"{len(steps)} step" + ("s" if len(steps) > 1 else "")
        summary = f"{count} by {', '.join(agents)}."
        if unplanned:
            summary += f" Not planned, as no agent has a tool for it: {_and([repr(p) for p in unplanned])}."
        return PlanDraft(initial_goal=goal, steps=steps, summary=summary, unplanned=unplanned)

    def _unplanned(self, task: str, done: set[str]) -> list[str]:
        """The requests of ``task`` no tool does, when it holds several and some other one fits a tool ("order a
        laptop and a phone charger": the charger; "offboard Carl Dunn and book him a farewell cake": the cake, as
        no tool books cakes); none when every part, or none, fits. A part naming only people
        or dates ("onboard Ada Lovelace and Bob Stone") goes with the others."""
        pieces = requests_in(task)
        if len(pieces) < 2:
            return []
        unable = []
        for piece in pieces:
            bare = piece
            for value in [*facts(piece).values(), *people(piece)]:
                bare = bare.replace(value, " ")
            if self._query(_NEGATED.sub(" ", bare)) and (not self._plans(piece, done) or self._unknown_thing(bare)):
                unable.append(piece)
        return unable if len(unable) < len(pieces) else []

    def _with_every_part(self, chosen: list[CatalogueTool], pieces: list[str], done: set[str]) -> list[CatalogueTool]:
        """``chosen`` with the steps of each request among ``pieces`` (the task's, see :func:`~podium.human.
        requests_in`) that none of them is for: matched as one, the words of one part can outscore another's
        ("onboard Gina Holt and arrange a team lunch" would be lunch alone), so a part left without a step gets its
        own."""
        if len(pieces) < 2 or not chosen:
            return chosen
        added = list(chosen)
        for piece in pieces:
            bare = piece
            for value in [*facts(piece).values(), *people(piece)]:
                bare = bare.replace(value, " ")
            found = self._choose(bare, done) if self._query(_NEGATED.sub(" ", bare)) else None
            if found and found[0] and not {id(e) for e in found[0]} & {id(e) for e in chosen}:
                added += [e for e in found[0] if e not in added]
        ranks = {name: s.rank for name, s in self.catalogue.specialists.items()}
        return sorted(added, key=lambda e: (ranks[e.agent], e.position))[: self.max_steps]

    def _unknown_thing(self, piece: str) -> bool:
        """Whether ``piece`` names things and no tool knows any of them ("book him a farewell cake"): a tool's verb
        alone does not make it a part some tool does."""
        named = self._query(" ".join(_read(_NEGATED.sub(" ", piece), self._tool_verbs).rest))
        return bool(named) and not any(self.catalogue.knows(w) for w in named)

    def _replaced(self, parts: list[str]) -> list[str]:
        """``parts`` (the task, then the clarifications) with the things a later correction replaces taken out:
        after "order a laptop", "actually make it a monitor" leaves "order a" and the monitor; "a docking station
        instead of the monitor" takes out the monitor. A thing is replaced by one some tool does the same to (both
        ordered) unless the correction names what it replaces; a correction naming nothing a tool acts on replaces
        nothing."""
        kept = list(parts)
        for at, part in enumerate(parts[1:], 1):
            if not (corrects(part) or _NO_FIRST.match(part)):
                continue
            new = {w for t in _tokens(_NEGATED.sub(" ", part)) if (w := _stem_of(t)) in self._objects}
            if not new:
                continue
            negated = [t for m in _NEGATED.finditer(part) for t in _tokens(m.group(0))]
            dropped = {w for t in negated if (w := _stem_of(t)) in self._objects}
            alike = {w for verb, objects in self._acts_on.items() if objects & new for w in objects}
            old = (dropped or alike) - new  # what it names as replaced, else every thing of the same kind
            for before in range(at):
                kept[before] = " ".join(t for t in kept[before].split() if _stem_of(_bare(t)) not in old)
        return kept

    def _plans(self, task: str, done: set[str]) -> bool:
        """Whether ``task`` alone, without the people and dates it names, fits some tool."""
        for value in [*facts(task).values(), *people(task)]:
            task = task.replace(value, " ")
        found = self._choose(task, done)
        return found is not None and bool(found[0])

    def _unable(self, request: PlanRequest, chosen: list[CatalogueTool]) -> str | None:
        """A plain answer when the task asks to destroy something ("delete", "wipe") and no kept tool does that:
        the tools its other words match would do something else than what was asked."""
        verbs = destructive_verbs(request.text())
        if not verbs:
            return None
        able = {w for entry in chosen for w in words(f"{entry.tool.name} {entry.tool.description}")}
        if any(set(words(verb)) & able for verb in verbs):
            return None
        asked = _and(sorted(set(verbs)), "or")
        return (
            f"None of the agents can {asked} anything, so I did not plan {request.task.strip()!r}: the tools its "
            "other words match would do something else than you asked. Say what else should be done, or 'stop'."
        )

    @staticmethod
    def _missing(chosen: list[CatalogueTool], detail: dict[str, str]) -> list[tuple[str, str]]:
        """What the chosen tools require that the task does not say ("who it is for", "when", "the date"), each
        with an example of an answer that says it."""
        found: dict[str, str] = {}
        for entry in chosen:
            properties: dict[str, Any] = entry.tool.parameters.get("properties", {})
            for name in entry.tool.parameters.get("required", ()):
                need = _needs(name, properties.get(name, {}))
                if need is None or need in detail:
                    continue
                if need == "name":
                    found.setdefault("who it is for", "for Ada Lovelace")
                elif need == "date":  # one date answers them all ("start date", "date"): a step's text carries it
                    found.setdefault("the date", "next Monday")
                elif need == "people":
                    found.setdefault("how many people", "8 people")
                else:
                    said = name.replace("_", " ")
                    found.setdefault(f"the {said}", f"{said}: 5")
        return list(found.items())

    def _choose(self, text: str, done: set[str]) -> tuple[list[CatalogueTool], list[CatalogueTool]] | None:
        """The tools to plan as steps, in order, and the closest tools the task's words found (``done`` names the
        tools completed steps already used); ``None`` when the task's words do not fit the catalogue (under a third
        of them known, or no tool matching).

        A tool is a step only when the task names what it acts on or what it is for (its name, the thing its
        description starts with, or its "when ..." clause), not only a word describing another ("travel" in
        "travel expenses", "laptop" in a docking station "for a laptop"), and when it does what the task's verb
        says: a tool doing another thing to the same kind of object ("draft" for "review the NDA") is left out.
        What comes after "for", once the thing is named, says whom or what it is for ("order a tablet for the sales
        team" names a tablet, not a team). A task whose every named thing is unknown to the catalogue ("order a
        tablet", "translate the brochure") gets no step: no tool doing the same to another thing (a laptop, lunch) is
        guessed to be it. The steps may be none: then the task asks for what no tool does, and the closest tools say
        so.
        """
        unnegated = _NEGATED.sub(" ", text)
        query = self._query(unnegated)
        # a clarification's chatter ("oh wait, she ...") does not make a known task unknown: any part may fit
        if not query or not any(self._known(self._query(part)) for part in [unnegated, *unnegated.split(". ")]):
            return None
        reading = _read(unnegated, self._tool_verbs)
        matched = []
        for entry, by_word in self.catalogue.matches(" ".join(query))[: self.tool_limit]:
            verbs = _verbs(entry)
            what = sum(score for word, score in by_word.items() if word not in verbs)
            matched.append((what, what + _VERB_WEIGHT * (sum(by_word.values()) - what), entry))
        if not matched:
            return None
        closest = [entry for _, _, entry in sorted(matched, key=lambda i: -i[1])[:3]]
        if reading.rest and not any(self.catalogue.knows(w) for w in reading.rest):
            # it names only things no tool knows ("order a tablet"): a tool doing the same to another thing (a
            # laptop, lunch) is not what was asked, and which thing would do is not for words to guess
            fits = []
        elif not reading.rest:  # only its verb says what to do
            fits = [(score, e) for _, score, e in matched if self._shapes[id(e)].verb in reading.verbs]
        else:
            fits = [(score, e) for _, score, e in matched if self._fits(self._shapes[id(e)], reading)]
        if not fits:
            return [], closest
        scored = sorted(fits, key=lambda i: -i[0])
        best = scored[0][0]
        per_agent: dict[str, int] = {}
        chosen: list[CatalogueTool] = []
        for score, entry in scored:
            if score < best * self.share or len(chosen) >= self.max_steps:
                break
            if per_agent.get(entry.agent, 0) >= self.per_agent:
                continue
            per_agent[entry.agent] = per_agent.get(entry.agent, 0) + 1  # done work keeps its place: not replaced
            if entry.tool.name not in done:
                chosen.append(entry)
        ranks = {name: s.rank for name, s in self.catalogue.specialists.items()}
        return sorted(chosen, key=lambda e: (ranks[e.agent], e.position)), []

    @staticmethod
    def _query(text: str) -> list[str]:
        return [w for w in words(text) if w not in _IGNORED and not w.isdigit() and len(w) > 1]

    def _known(self, query: list[str]) -> bool:
        """Whether at least a third of these words are in some tool's name or description."""
        return bool(query) and 3 * sum(1 for w in query if self.catalogue.knows(w)) >= len(query)

    def _fits(self, shape: _Shape, reading: _Reading) -> bool:
        """Whether a tool is one the task asks for (see :meth:`_choose`)."""
        if not shape.anchors & reading.heads:
            return False
        if not reading.verbs or shape.verb is None or shape.verb in reading.verbs:
            return True
        return not any(self._contrast(verb, shape.verb) for verb in reading.verbs)

    def _example(self) -> str:
        """A task the catalogue can plan, to show how one is said: the first tool of the first specialist."""
        ranks = {name: s.rank for name, s in self.catalogue.specialists.items()}
        first = min(self.catalogue.tools, key=lambda e: (ranks[e.agent], e.position))
        return self._action(first, {"name": "Ada Lovelace", "date": "next Monday"}).rstrip(".")

    def _nothing(self, request: PlanRequest, closest: list[CatalogueTool]) -> str:
        """The plain answer to a task whose words the catalogue knows but no tool does: the closest tools."""
        near = "; ".join(f"{self._action(entry, {}).rstrip('.')} ({entry.agent})" for entry in closest)
        task = request.task
        for value in [*facts(task).values(), *people(task)]:
            task = task.replace(value, " ")
        unknown = [  # what it names that no tool knows ("tablet" in "order a tablet"), as typed
            t
            for t in dict.fromkeys(_tokens(_NEGATED.sub(" ", task)))
            if (w := _stem_of(t)) and w not in _LEAD and not self.catalogue.knows(w)
        ]
        lacking = f"for {_and([repr(t) for t in unknown], 'or')}" if unknown else "that does that"
        return (
            f"I cannot plan {request.task.strip()!r}: no agent has a tool {lacking}. The closest I have: "
            f"{near}. Say what should be done in other words, or 'stop'."
        )

    @staticmethod
    def _action(entry: CatalogueTool, detail: dict[str, str], asked: frozenset[str] = frozenset()) -> str:
        """The tool's description as an instruction, with the person, date and numbers the task names; of the
        things it lists ("a keyboard, mouse and headset"), only those the task asks for (``asked``, its words)."""
        text = _sentence(entry.tool.description)
        # "... when onboarding someone who starts" says when to use the tool, not what to do
        head = re.split(r"\s+(?:when|who|if)\s+", text, maxsplit=1)[0]
        if len(head.split()) >= 3:
            text = head
        text = _narrowed(text, asked)
        extra = []
        if "name" in detail:
            extra.append(f"for {detail['name']}")
        if "date" in detail:
            extra.append(detail["date"])
        properties: dict[str, Any] = entry.tool.parameters.get("properties", {})
        for name in entry.tool.parameters.get("required", ()):
            need = _needs(name, properties.get(name, {}))
            if need in ("number", "people") and need in detail:
                extra.append(f"{name.replace('_', ' ')}: {detail[need]}")
        return f"{text} {', '.join(extra)}".strip() + "."

    async def plan(self, ctx: RunContext[Any], request: PlanRequest) -> tuple[PlanDraft, int]:
        return self.draft(request), min(self.tool_limit, len(self.catalogue.tools))


_LISTED = re.compile(r"\b(?:a|an)\s+(\w+(?:\s*,\s*\w+)*\s*,?\s+(?:and|or)\s+\w+)\b")
"""Things a description lists after its article ("a keyboard, mouse and headset")."""


def _narrowed(text: str, asked: frozenset[str]) -> str:
    """``text`` with the things it lists cut to those ``asked`` names ("Order a headset" for "a keyboard, mouse
    and headset" when only a headset is asked for); as it was when the task names none or all of them."""
    after = _PREPOSITION.search(text)  # what it acts on, not for whom ("for an employee or new starter")
    listed = _LISTED.search(text, 0, after.start() if after else len(text))
    if listed is None or not asked:
        return text
    things = [t for t in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", listed.group(1)) if t]
    wanted = [t for t in things if set(words(t)) & asked]
    if not wanted or len(wanted) == len(things):
        return text
    article = "an" if wanted[0][0] in "aeiou" else "a"
    return f"{text[: listed.start()]}{article} {_and(wanted)}{text[listed.end() :]}"


_HEADCOUNTS = frozenset({"people", "attendees", "guests", "participants", "headcount", "persons"})
"""Number arguments that count people: filled only from words that say people ("8 people"), never from a time."""
_PEOPLE = frozenset({"person", "traveller", "traveler", "recipient", "assignee", "candidate", "employee", "user"})


class _Missing(Exception):
    """A required argument the step's text does not give (a person, a date, a number)."""


def _needs(name: str, schema: dict[str, Any]) -> str | None:
    """Which fact an argument needs from the text (``name``: a person, ``date``, ``people``: a number of people,
    ``number``), or ``None``."""
    kind = schema.get("type")
    if "enum" in schema or kind in ("boolean", "array", "object"):
        return None
    if kind in ("integer", "number"):
        return "people" if name in _HEADCOUNTS else "number"  # a number of people is said as one, not a time
    if "name" in name or name in _PEOPLE:
        return None if name in ("name", "product_name", "brand_name") else "name"  # a thing's name, not a person's
    if "date" in name or name.endswith(("_on", "_day")) or name in ("when", "deadline", "day"):
        return "date"
    if "email" in name:
        return "name"
    return None


def _value(name: str, schema: dict[str, Any], text: str, detail: dict[str, str]) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        lowered = text.lower()
        return next((v for v in schema["enum"] if str(v).lower() in lowered), schema["enum"][0])
    if kind == "boolean":
        return True
    if kind == "array":
        choices = schema.get("items", {}).get("enum")
        if choices:  # the choices the text names ("headset"), else all it offers
            said = set(words(text))
            return [c for c in choices if set(words(str(c))) & said] or list(choices)
        return [text]
    if kind == "object":
        return {}
    need = _needs(name, schema)
    if need is None:
        return text
    if need not in detail:
        raise _Missing(name)
    if need in ("number", "people"):
        return int(float(detail[need])) if kind == "integer" else float(detail[need])
    if "email" in name:
        return detail["name"].lower().replace(" ", ".") + "@example.com"
    return detail[need]


def _and(items: list[str], last: str = "and") -> str:
    """``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def _listed(missing: list[str]) -> str:
    return _and(missing)


def _arguments(spec: ToolSpec, text: str) -> dict[str, Any]:
    """The tool's required arguments filled from ``text``.

    Raises:
        _Missing: a person, date or number the tool needs is not in ``text`` (never filled with the action's words).
    """
    detail = facts(text)
    properties: dict[str, Any] = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", ()))
    missing = []
    found = {}
    for name, schema in properties.items():
        if name in required:
            try:
                found[name] = _value(name, schema, text, detail)
            except _Missing:
                missing.append(name)
        elif (need := _needs(name, schema)) is not None and need in detail:  # a person, date or number it names
            found[name] = _value(name, schema, text, detail)
    if missing:
        raise _Missing(", ".join(missing))
    return found


class OfflineAgentModel(Model):
    """A specialist's model with no network: call the step's tool, then report its result.

    When it cannot act (a detail the tool needs is missing, or the tool failed) and the agent has the plan's
    ``cannot_do_step`` tool (:mod:`~podium.orchestration.plan.outcome`), it calls that tool with the reason, as a
    model would, so the step ends ``failed``; without it, it answers the reason as text.
    """

    name = "offline"

    async def reply(self, request: ModelRequest) -> ModelResponse:
        """Call the tool the last request names (or fits best), or answer with the last tool's result."""
        last = request.messages[-1] if request.messages else HumanMessage(content="")
        if isinstance(last, ToolMessage):
            message = self._after(last, request.tools)
        else:
            message = self._call(last.content, request.tools)
        return ModelResponse(message=message, usage=Usage(0, 0, 1), model_name=self.name, finish_reason="stop")

    @staticmethod
    def _after(last: ToolMessage, tools: list[ToolSpec]) -> AIMessage:
        if last.name == CANNOT_DO:
            reason = last.content.partition("(")[2].rpartition(")")[0] or last.content
            return AIMessage(content=f"I could not do this step: {reason}.")
        if not last.is_error:
            return AIMessage(content=last.content)
        reason = f"{last.name} failed: {last.content}"
        if any(t.name == CANNOT_DO for t in tools):
            return _calling(CANNOT_DO, {"reason": reason}, last.tool_call_id + CANNOT_DO)
        return AIMessage(content=f"I could not do it: {last.content}")

    @staticmethod
    def _call(content: str, tools: list[ToolSpec]) -> AIMessage:
        action = content.rsplit("Action:", 1)[-1].strip()
        usable = [t for t in tools if t.name != CANNOT_DO]
        if not usable:
            return AIMessage(content=f"Done: {action}")
        planned = re.search(r"^Tool: ([A-Za-z0-9_-]+)$", content, re.MULTILINE)
        named = planned or re.search(r"\[([A-Za-z0-9_-]+)\]", action)
        spec = next((t for t in usable if named and t.name == named.group(1)), None)
        if spec is None:
            wanted = set(words(action))
            spec = max(usable, key=lambda t: len(wanted & set(words(f"{t.name} {t.description}"))))
        text = re.sub(r"\s*\[[A-Za-z0-9_-]+\]", "", action)
        try:
            arguments = _arguments(spec, text)
        except _Missing as exc:
            reason = f"{spec.name} needs {exc}, which the step does not say"
            if len(usable) < len(tools):
                return _calling(CANNOT_DO, {"reason": reason}, content + CANNOT_DO)
            return AIMessage(content=f"I could not do this step: {reason}.")
        return _calling(spec.name, arguments, content)


def _calling(name: str, arguments: dict[str, Any], seed: str) -> AIMessage:
    call_id = f"call_{uuid.uuid5(uuid.NAMESPACE_URL, seed).hex[:12]}"
    return AIMessage(tool_calls=[ToolCall(id=call_id, name=name, arguments=json.dumps(arguments))])
