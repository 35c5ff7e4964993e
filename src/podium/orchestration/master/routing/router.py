"""The offline router: the embedded default intent classifier (no network, no LLM, deterministic, fast).

Order of checks for a human's message (first match wins):

1. guardrail, a keyword and phrase screen: an emergency (someone cannot breathe, a poisoning, thoughts of suicide)
   is sent to emergency services first; harmful acts ("fraud"), harm cues in the app's own vocabulary (acting on
   someone else's account without their knowledge, faked records) and a protected trait given as the reason of a
   decision are refused;
2. expectation fit: a short message that says to stop ("nvm", "actually, cancel that") abandons the pending task
   (every task for "cancel everything"); an answer that fits what the pending task expects (a choice,
   negation-aware, or named by its initials; a pattern) goes back to it, unless it is a question that only
   mentions an option; a choice said in other words goes back as the option it means; thanks, "ok" and goodbyes
   get a polite word and the question again, a greeting the menu, "what did you ask?" the question again; an
   identifier that fits what a task lower on the stack waits for goes to that task; a short message asking to go
   back to a waiting task ("back to the letter", "where were we?") returns to it (the task its words match best,
   else the one below the top): reason ``return``, and the task's question is asked again;
3. similarity (:mod:`podium.orchestration.master.routing.scoring`): lexical features and, when installed, a small
   embedding model, between the text and each tool's description and examples, and the router's own intents
   ("what can you do?", "never mind": abandoning needs a word of cancelling too), given by example and scored the
   same way; a long message is also scored sentence by sentence; identifiers written as a tool's
   examples write them count as evidence for it; a request whose key verb contradicts the best tool's ("approve"
   for a decline-letter tool) is not routed to it;
4. thresholds calibrated per app from its own examples (leave-one-out): a task switch needs a stronger match than
   a fresh request, and a statement naming what the pending question asked about ("the claim id is ...") is an
   attempt to answer it, never a switch; below them the router asks the human to clarify or refuses the request
   as out of scope.

Every decision carries a confidence and, when the router is unsure, a reason (``low_margin``, ``switch``,
``harmful``, ``contradiction``), so :class:`~podium.orchestration.master.HybridClassifier` asks an LLM only then.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal

from podium.events import Expectation
from podium.human import EMERGENCY_REPLY, corrects, declines, leaves, unsure
from podium.orchestration.master.routing.base import Classifier, Decision, PendingTask, Query, ToolCatalog
from podium.orchestration.master.routing.intents import ABANDON, CAPABILITIES, discrimination_cue, harm_cue
from podium.orchestration.master.routing.rules import (
    affirmed,
    asks_one_more,
    asks_to_repeat,
    cancels_everything,
    cancels_then,
    echoes_question,
    emergency,
    fit_expectation,
    follows_up,
    harmful_term,
    intent_scores,
    is_abandon,
    is_question,
    leaves_choice,
    looks_like_request,
    returns_to_a_task,
    says_stop,
    small_talk,
    without_return_words,
)
from podium.orchestration.master.routing.scoring import Calibration, SemanticIndex
from podium.orchestration.master.routing.text import STOPWORDS, content_words, spoken, stem, words

if TYPE_CHECKING:
    from podium.orchestration.master.routing.embedding import Embedder
    from podium.runtime.context import RunContext

__all__ = ["EMERGENCY_REPLY", "Router", "describe_expectation", "guardrail"]

# Verbs whose opposites a bag of words cannot tell apart: "a letter approving the claim" is no decline letter.
_OPPOSITES = [
    ("approv", "declin"), ("approv", "reject"), ("approv", "deny"), ("approv", "refus"), ("accept", "declin"),
    ("accept", "reject"), ("grant", "deny"), ("grant", "revok"), ("allow", "block"), ("enabl", "disabl"),
    ("open", "clos"), ("lock", "unlock"), ("creat", "delet"), ("book", "cancel"),
    ("renew", "cancel"), ("refill", "stop"), ("reorder", "stop"), ("renew", "stop"), ("subscrib", "unsubscrib"),
    ("buy", "sell"), ("increas", "decreas"), ("rais", "lower"), ("includ", "exclud"),
    ("start", "stop"), ("continu", "stop"), ("continu", "discontinu"), ("pay", "refund"),
]  # fmt: skip
_VERBS = tuple(dict.fromkeys(verb for pair in _OPPOSITES for verb in pair))
"""The word roots of :data:`_OPPOSITES`, each once."""
_VERB_LENGTHS = frozenset(map(len, _VERBS))


def _verbs_begun(roots: Iterable[str]) -> list[str]:
    """The verbs of :data:`_VERBS` that begin one of ``roots``, in the order of :data:`_VERBS` (a verb begins a root
    when the root's first letters, as many as the verb has, are the verb: one set lookup per verb)."""
    starts = {root[:size] for root in roots for size in _VERB_LENGTHS}
    return [verb for verb in _VERBS if verb in starts]


INTENT_MIN = 0.3
"""The score an intent ("what can you do?", "never mind") needs, besides beating every tool (by 0.1 below 0.5)."""
OPTION_MIN = 0.35
"""The embedding similarity an answer needs to an option of a choice it does not name ("I'm staff")."""
LONG_WORDS = 30
"""Past this many words a message is also scored sentence by sentence (see :meth:`Router.scores`)."""
TOLD = 0.7
"""The weight of a long message's sentence that does not read as a request (see :meth:`Router.scores`)."""
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
CLEAR_LEAD = 2.5
"""A request scoring this many times the second tool's is routed even below the route threshold (not below half)."""


def _beside(text: str, fit: str) -> int:
    """How many content words ``text`` has beside those of the answer ``fit`` found in it."""
    found = {stem(w) for w in content_words(fit)}
    return sum(1 for w in content_words(text) if stem(w) not in found)


def describe_expectation(expectation: Expectation | None) -> str:
    """How an expectation reads to a person: ``one of 'Home', 'Motor'``, its description, or ``free text``."""
    if expectation is None or expectation.type == "text":
        return expectation.description if expectation and expectation.description else "free text"
    if expectation.type == "choice":
        return "one of " + ", ".join(repr(o) for o in expectation.options)
    return expectation.description or f"text matching {expectation.pattern}"


def _quote(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _opposed(texts: Iterable[str]) -> tuple[str, ...]:
    """The verbs (roots of :data:`_OPPOSITES`) that contradict a tool, in the order of :data:`_OPPOSITES`: their
    opposite begins a word root of its description and examples (``texts``) and they begin none."""
    found = set(_verbs_begun({stem(w) for text in texts for w in words(text)}))
    pairs = [pair for first, second in _OPPOSITES for pair in ((first, second), (second, first))]
    return tuple(dict.fromkeys(mine for mine, theirs in pairs if theirs in found and mine not in found))


_ASKING_INFO = re.compile(
    r"^\s*(?:(?:and|so|btw|by\s+the\s+way|also|ok(?:ay)?|oh|hey|hi|but|then|um+|sorry|quick\s+question|"
    r"one\s+more\s+thing)\b[\s,:;-]*)*"
    r"(?:what|when|where|which|how|who|whose|why|(?:do|does|are|is|was|were)\s+(?:you|we|they|it|the|your|y'?all)\b)",
    re.IGNORECASE,
)
"""A question asking for information ("what time do you close?", "btw do you close at lunch?"), not for an action
("can you cancel it?")."""


_SMALL_TALK_REPLIES = {
    "thanks": "You're welcome.",
    "goodbye": "Goodbye! Come back any time.",
    "greeting": "Hello!",
    "ack": "OK.",
}


def _no_fit(text: str, why: str, confidence: float = 0.4) -> Decision:
    """A clarification: the message does not answer what the waiting task asked (``text`` tells the human so)."""
    return Decision(kind="clarify", reason="no_fit", confidence=confidence, text=text, rationale=why)


def _refuse(text: str, reason: str, why: str, confidence: float) -> Decision:
    return Decision(
        kind="refuse",
        reason=reason,
        confidence=confidence,
        text=f"I can't help with {_quote(text)}: {why}.",
        rationale=f"The message {why}.",
    )


def guardrail(text: str) -> Decision | None:
    """The guardrail every human message meets first, whatever classifies it (a task that bypasses the classifier
    too): an emergency is sent to emergency services; a harmful act, a harm cue in the app's own vocabulary, or a
    protected trait given as the ground of a decision is refused. ``None`` when none applies."""
    urgent = emergency(text)
    if urgent is not None:
        why = f"The message describes an emergency ({urgent!r})."
        return Decision(kind="refuse", reason="emergency", confidence=0.95, text=EMERGENCY_REPLY, rationale=why)
    term = harmful_term(text)
    if term is not None:
        return _refuse(text, "harmful", f"it asks for something harmful or illegal ({term!r})", 0.9)
    cue = harm_cue(text)
    if cue is not None:
        return _refuse(text, "harmful", f"it asks to act against someone or to fake a record ({cue!r})", 0.6)
    grounds = discrimination_cue(text)
    if grounds is not None:
        return _refuse(text, "harmful", f"it gives a protected trait as the ground of a decision ({grounds!r})", 0.6)
    return None


_VALUE = re.compile(r"\d|\b[A-Z]{2,}\b|[\"“'‘][^\"”'’]+[\"”'’]")
"""What a correction carries: a number or code, a word in capitals, something quoted ("I meant 4411BA")."""


_COMPARING = re.compile(
    r"\b(?:which|difference|differ|better|best|faster|quicker|sooner|cheaper|cheapest|easier|recommend|suggest|"
    r"prefer|compare|vs|versus|pros|cons)\b",
    re.IGNORECASE,
)


def _asks_about_options(text: str, expectation: Expectation) -> bool:
    """Whether ``text`` asks about a choice's options: a question that compares ("which is faster?", "what's the
    difference?") or names one of them ("is home delivery free?")."""
    if not is_question(text):
        return False
    said = set(words(text))
    names = any(set(words(option)) & said - STOPWORDS for option in expectation.options)
    return names or _COMPARING.search(text) is not None


def _corrects(text: str) -> bool:
    """Whether ``text`` corrects an earlier answer with a new value ("no wait, I meant 4411BA"), rather than
    apologising ("sorry, I don't know it", "sorry I have to go") or asking."""
    return corrects(text) and _VALUE.search(text) is not None and not is_question(text) and not unsure(text)


def _with_opposites(text: str) -> str:
    """``text``, and when it asks for information, the opposites of its verbs (:data:`_OPPOSITES`): "what time do
    you close?" asks what opening hours tell."""
    if not _ASKING_INFO.match(text):
        return text
    found = _verbs_begun({stem(w) for w in words(text)})
    extra = [b if a == verb else a for verb in found for a, b in _OPPOSITES if verb in (a, b)]
    return f"{text} {' '.join(dict.fromkeys(extra))}" if extra else text


def _declines_choice(text: str, expectation: Expectation | None) -> bool:
    """Whether ``text`` declines a question that is no yes-or-no ("no thanks" to "pickup or delivery?": the task
    is not wanted), rather than answering it."""
    if expectation is None or expectation.type != "choice" or not declines(text):
        return False
    return {o.strip().lower() for o in expectation.options} != {"yes", "no"}


def _contradiction(text: str, opposed: tuple[str, ...]) -> str | None:
    """A word of ``text`` (as written) whose root begins with a verb that contradicts the tool (``opposed``, see
    :func:`_opposed`), the first such verb first. A question asking for information ("what time do you close?",
    "and do you close at lunch?") contradicts nothing."""
    if not opposed or _ASKING_INFO.match(text):
        return None
    said = {stem(w): w for w in words(text)}
    for mine in opposed:
        hit = next((w for root, w in said.items() if root.startswith(mine)), None)
        if hit:
            return hit
    return None


@dataclass(slots=True)
class _Prepared:
    """What a router derives from one tool set, once."""

    index: SemanticIndex
    calibration: Calibration
    opposed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The verbs that contradict each tool (see :func:`_opposed`), filled as tools are checked for contradictions."""


class Router(Classifier):
    """Routes by expectation fit and similarity to each tool's examples, with a guardrail and calibrated thresholds."""

    name = "router"

    def __init__(
        self,
        *,
        embeddings: bool | Embedder = True,
        route_threshold: float | None = None,
        switch_threshold: float | None = None,
        max_chars: int = 2000,
    ) -> None:
        """Configure the router.

        Args:
            embeddings: use the embedding model when it is installed (``True``), never (``False``: lexical
                features only), or this :class:`~podium.orchestration.master.routing.embedding.Embedder`.
            route_threshold: the score a fresh request needs to be routed to a tool; default: calibrated per
                tool set from its examples.
            switch_threshold: the score a message needs to leave a pending task for another tool when it does not
                fit what the pending task expects; default: calibrated.
            max_chars: only the first ``max_chars`` characters of a message are read.
        """
        self.embeddings = embeddings
        self.route_threshold = route_threshold
        self.switch_threshold = switch_threshold
        self.max_chars = max_chars
        self._indexes: weakref.WeakKeyDictionary[ToolCatalog, _Prepared] = weakref.WeakKeyDictionary()

    async def classify(self, ctx: RunContext[Any], query: Query) -> Decision:
        return self.decide(query)

    def _embedder(self) -> Embedder | None:
        if self.embeddings is True:
            from podium.orchestration.master.routing.embedding import default_embedder

            return default_embedder()
        return self.embeddings or None

    def index(self, catalog: ToolCatalog) -> SemanticIndex:
        """The similarity index of ``catalog`` (built, and the thresholds calibrated, once per catalog)."""
        return self._prepared(catalog).index

    def calibration(self, catalog: ToolCatalog) -> Calibration:
        """The thresholds in use for ``catalog`` (calibrated, unless given to the constructor)."""
        found = self._prepared(catalog).calibration
        return Calibration(
            route=self.route_threshold if self.route_threshold is not None else found.route,
            switch=self.switch_threshold if self.switch_threshold is not None else found.switch,
            margin=found.margin,
            typical=found.typical,
            examples=found.examples,
        )

    def _prepared(self, catalog: ToolCatalog) -> _Prepared:
        prepared = self._indexes.get(catalog)
        if prepared is None:
            documents: list[tuple[str, str]] = []
            for profile in catalog.profiles:
                head = " ".join(words(profile.name))
                documents.append((profile.name, f"{head}. {profile.description} {profile.introduction}"))
                documents.extend((profile.name, example) for example in profile.examples)
            index = SemanticIndex(documents, self._embedder())
            prepared = _Prepared(index, index.calibrate(catalog.names))
            intent_scores("hello")  # builds the intents' shared index now, not on the first message
            self._indexes[catalog] = prepared
        return prepared

    def _option_by_meaning(self, catalog: ToolCatalog, expectation: Expectation | None, text: str) -> str | None:
        """The option a choice answer means in other words ("I'm staff": "internal employee"), by embeddings."""
        embedder = self.index(catalog).embedder
        said = affirmed(text)
        if embedder is None or expectation is None or expectation.type != "choice" or not words(said):
            return None
        options = list(expectation.options)
        similarity = [float(embedder.embed_one(option) @ embedder.embed_one(said)) for option in options]
        ranked = sorted(zip(similarity, options, strict=True), reverse=True)
        second = ranked[1][0] if len(ranked) > 1 else 0.0
        return ranked[0][1] if ranked[0][0] >= OPTION_MIN and ranked[0][0] - second >= 0.2 else None

    def _opposed_to(self, catalog: ToolCatalog, tool: str) -> tuple[str, ...]:
        """The verbs that contradict a tool (see :func:`_opposed`; found once per tool)."""
        prepared = self._prepared(catalog)
        found = prepared.opposed.get(tool)
        if found is None:
            index = prepared.index
            texts = (text for label, text in zip(index.labels, index.texts, strict=True) if label == tool)
            found = prepared.opposed[tool] = _opposed(texts)
        return found

    def scores(self, query: Query) -> list[tuple[str, float]]:
        """The candidate tools ranked by similarity to the query's text, best first.

        A long message (more than :data:`LONG_WORDS` words) is also scored sentence by sentence, and each tool keeps
        its best score: the one sentence that asks ("I need the decline letter for ...") is not drowned by the story
        around it. A sentence that does not read as a request counts for :data:`TOLD` of its score (the story
        mentions things; the request asks for one).
        """
        text = query.text[: self.max_chars]
        index = self.index(query.catalog)
        found = index.scores(text, query.candidates)
        if len(words(text)) > LONG_WORDS:
            for sentence in _SENTENCE.split(text):
                if len(words(sentence)) >= 3:
                    weight = 1.0 if looks_like_request(sentence) else TOLD
                    for tool, score in index.scores(sentence, query.candidates).items():
                        found[tool] = max(found.get(tool, 0.0), score * weight)
        return sorted(sorted(found.items()), key=itemgetter(1), reverse=True)  # ties by name: the sort is stable

    def decide(self, query: Query) -> Decision:
        """The decision for ``query`` (synchronous: the router never waits on anything)."""
        decision = self._tool_query(query) if query.origin == "tool" else self._human_query(query)
        decision.source = self.name
        return decision

    # --------------------------------------------------------------------------------------------------------------
    def _route(
        self, tool: str, text: str, score: float, second: float, why: str, cal: Calibration, *, switch: bool = False
    ) -> Decision:
        strength = min(1.0, max(0.0, (score - cal.route) / max(cal.typical - cal.route, 0.05)))
        lead = min(1.0, (score - second) / max(cal.margin * 2, 0.05))
        confidence = round(0.45 + 0.25 * strength + 0.3 * lead, 4)
        reason = "switch" if switch else ("low_margin" if score - second < cal.margin else "")
        return Decision(
            kind="route",
            tool=tool,
            text=text,
            reason=reason,
            rationale=f"{why} (similarity {score:.2f}).",
            confidence=min(confidence, 0.7) if switch else confidence,
        )

    def _human_query(self, query: Query) -> Decision:
        text = query.text[: self.max_chars]
        pending = query.pending
        guarded = guardrail(text)
        if guarded is not None:
            return guarded
        strict = pending is not None and pending.expectation is not None and pending.expectation.type != "text"
        if pending is not None and leaves(text):  # "thanks, bye": the task waits for the person to come back
            why = f"The message takes leave; {spoken(pending.tool)} waits for its answer."
            return Decision(
                kind="clarify", reason="goodbye", confidence=0.8, text=_SMALL_TALK_REPLIES["goodbye"], rationale=why
            )
        then = cancels_then(text) if pending is not None else None
        if then is not None:  # "nevermind, where do I find my claim id": the task goes, and what follows is asked
            return Decision(
                kind="abandon",
                reason="then",
                text=then,
                confidence=0.8,
                rationale=f"The message abandons the pending task, then asks {then!r}.",
            )
        if pending is not None and is_abandon(text):  # "actually, cancel that" ends the task, whatever it does
            every = cancels_everything(text)
            return Decision(
                kind="abandon",
                reason="all" if every else "",
                confidence=0.9,
                rationale="The message abandons every task." if every else "The message abandons the pending task.",
            )
        if pending is not None and strict and asks_one_more(text) and _VALUE.search(text):
            why = f"The message asks for one more of {pending.tool}'s kind: it waits until the question is answered."
            return Decision(kind="clarify", reason="later", confidence=0.7, text=text, rationale=why)
        if pending is not None and strict and pending.tool in query.candidates:
            fit = fit_expectation(pending.expectation, text)
            if fit is not None and is_question(text) and (_beside(text, fit) > 1 or _COMPARING.search(text)):
                fit = None  # "what time does the pharmacy open?" names an option but asks something else
            opposed = self._opposed_to(query.catalog, pending.tool)
            opposite = _contradiction(text, opposed) if len(words(text)) >= 3 else None
            if opposite is not None:
                why = f"it asks to {opposite}, and {spoken(pending.tool)} does the opposite"
                return _refuse(text, "contradiction", why, 0.5)
            if fit is not None:
                wanted = describe_expectation(pending.expectation)
                why = f"The answer {fit!r} fits what {pending.tool} asked for ({wanted})."
                return Decision(kind="route", tool=pending.tool, text=text, rationale=why)
            meant = None if is_question(text) else self._option_by_meaning(query.catalog, pending.expectation, text)
            if meant is not None:
                wanted = describe_expectation(pending.expectation)
                why = f"The answer means {meant!r}, one of what {pending.tool} asked for ({wanted})"
                return Decision(kind="route", tool=pending.tool, text=meant, rationale=why + ".", confidence=0.7)
            if pending.expectation is not None and pending.expectation.type == "choice" and leaves_choice(text):
                return self._clarify_or_refuse(text, pending, strict, query)  # "whatever you think": no intent read
            if query.previous not in (None, pending.tool) and query.previous in query.candidates and follows_up(text):
                why = f"The message follows up on what {query.previous} answered last; {pending.tool} still waits"
                return Decision(kind="route", tool=query.previous, text=text, reason="follow_up", rationale=why + ".")
        chat = small_talk(text)
        if chat == "greeting":
            return Decision(kind="capabilities", confidence=0.9, rationale="The message greets me.")
        if chat is not None and (pending is None or strict):
            return Decision(
                kind="clarify",
                reason="goodbye" if chat == "goodbye" else "small_talk",
                confidence=0.8,
                text=_SMALL_TALK_REPLIES[chat],
                rationale="The message only greets, thanks or acknowledges.",
            )
        if pending is not None and asks_to_repeat(text):
            return Decision(
                kind="clarify",
                reason="repeat",
                confidence=0.8,
                text="Here is my question again.",
                rationale=f"The message asks what {pending.tool} asked.",
            )
        for task in query.waiting:
            if pending is not None and task.tool == pending.tool:
                continue
            if task.tool in query.candidates and task.expectation is not None and task.expectation.type == "pattern":
                fit = fit_expectation(task.expectation, text)
                if fit is not None:
                    why = f"{fit!r} is what the waiting task of {task.tool} asked for"
                    return Decision(kind="route", tool=task.tool, text=text, rationale=why + ".", confidence=0.8)
        if query.waiting and returns_to_a_task(text):
            return self._return(query, text)
        cal = self.calibration(query.catalog)
        ranked = self.scores(replace(query, text=_with_opposites(text)))
        best, score = ranked[0] if ranked else ("", 0.0)
        second = ranked[1][1] if len(ranked) > 1 else 0.0
        intents = intent_scores(text)
        intent = max(intents, key=lambda key: intents[key], default="")
        lead = intents[intent] - score if intent else 0.0
        least = 0.5 if pending is not None and not strict else INTENT_MIN  # a free-text answer may say anything
        if intent and intents[intent] >= least and (lead >= 0.1 or (intents[intent] >= 0.5 and lead >= 0)):
            sure = 0.9 if intents[intent] - score >= 0.15 else 0.6
            if intent == CAPABILITIES:
                return Decision(kind="capabilities", confidence=sure, rationale="The message asks what I can do.")
            if intent == ABANDON and says_stop(text) and (pending is not None or intents[intent] >= 0.5):
                return Decision(kind="abandon", confidence=sure, rationale="The message abandons the pending task.")
        if best:
            opposite = _contradiction(text, self._opposed_to(query.catalog, best))
            if opposite is not None and score >= cal.route * 0.75:
                why = f"it asks to {opposite}, and {spoken(best)} does the opposite"
                if pending is not None:
                    return self._clarify_or_refuse(text, pending, strict, query, why=why, reason="contradiction")
                return _refuse(text, "contradiction", why, 0.5)
        request = looks_like_request(text)
        if pending is not None:
            needed = cal.route if request else cal.switch
            answering = strict and not request and echoes_question(text, pending.content)
            if best and best != pending.tool and score >= needed and not answering:
                why = f"The message starts another task: it is closest to the description and examples of {best}"
                return self._route(best, text, score, second, why, cal, switch=True)
            if strict and _declines_choice(text, pending.expectation):  # "no thanks" to "pickup or delivery?"
                why = f"The message declines what {pending.tool} asked: its task ends."
                return Decision(kind="abandon", confidence=0.8, rationale=why)
            if strict and pending.takes_corrections and _corrects(text) and pending.tool in query.candidates:
                why = f"The message corrects what {pending.tool} was told; it reads it again."
                return Decision(kind="route", reason="correction", tool=pending.tool, text=text, rationale=why)
            if not strict and pending.tool in query.candidates:
                unsure = request and score < cal.route
                return Decision(
                    kind="route",
                    tool=pending.tool,
                    text=text,
                    confidence=0.6 if unsure else 0.85,
                    rationale=f"The message answers the question {pending.tool} asked.",
                )
            return self._clarify_or_refuse(text, pending, strict, query, score=score, cal=cal)
        clear = score >= max(0.15, cal.route * 0.5) and score >= CLEAR_LEAD * second
        if best and (score >= cal.route or clear):
            why = f"The request is closest to the description and examples of {best}"
            return self._route(best, text, score, second, why, cal)
        if query.previous in query.candidates and follows_up(text):
            why = f"The message follows up on what {query.previous} answered last"
            return Decision(kind="route", tool=query.previous, text=text, reason="follow_up", rationale=why + ".")
        if request or score < cal.route * 0.5:
            return _refuse(text, "out_of_scope", "it is outside what I can do here", 0.8 if score < 0.1 else 0.5)
        return Decision(
            kind="clarify",
            reason="unclear",
            confidence=0.4,
            text=f"I am not sure what you mean by {_quote(text)}.",
            rationale="The message matches no tool well enough.",
        )

    def _return(self, query: Query, text: str) -> Decision:
        """Back to a waiting task: the one the rest of the message names, else the one below the top."""
        waiting = [task.tool for task in query.waiting if task.tool in query.candidates]
        rest = without_return_words(text)
        named = ""
        if content_words(rest):
            found = dict(self.scores(replace(query, text=rest)))
            best = max(waiting, key=lambda tool: found.get(tool, 0.0), default="")
            if best and found.get(best, 0.0) >= self.calibration(query.catalog).route * 0.5:
                named = best
        if not named:
            named = waiting[-2] if len(waiting) >= 2 else (waiting[-1] if waiting else "")
        if not named:
            return Decision(kind="clarify", reason="unclear", confidence=0.4, text="Which task do you mean?")
        return Decision(
            kind="route",
            tool=named,
            text=text,
            reason="return",
            confidence=0.8,
            rationale=f"The message goes back to the waiting task of {named}.",
        )

    def _clarify_or_refuse(
        self,
        text: str,
        pending: PendingTask,
        strict: bool,
        query: Query,
        *,
        why: str = "",
        reason: Literal["contradiction", ""] = "",
        score: float = 0.0,
        cal: Calibration | None = None,
    ) -> Decision:
        if reason:
            return _refuse(text, reason, why, 0.5)
        expectation = pending.expectation
        tool = spoken(pending.tool)
        needed = describe_expectation(expectation)
        choice = expectation is not None and expectation.type == "choice"
        if choice and expectation and _asks_about_options(text, expectation):  # "which is faster?": yet unanswered
            said = f"I can't tell you more about the choices than the question says: please pick {needed}, or say "
            return _no_fit(f"{said}'cancel' to stop {tool}.", f"The message asks about the options of {tool}.", 0.5)
        if cal is not None and looks_like_request(text) and score < cal.route:
            return _refuse(text, "out_of_scope", "it is outside what I can do here", 0.6)
        if choice and leaves_choice(text):  # "you decide"
            return _no_fit(f"I can't choose that for you: please pick {needed}.", f"{tool} is left to me.", 0.5)
        if unsure(text):  # "I'm not sure, I'm a new patient": say what is needed, and the way out
            said = f"That's all right. {tool.capitalize()} needs {needed}. If you don't have it now, say 'cancel' to "
            return _no_fit(f"{said}stop {tool}, or ask me something else.", f"The human lacks what {tool} needs.")
        why = f"The answer does not fit what {pending.tool} expects, and no other tool matches it."
        return _no_fit(f"{_quote(text)} does not fit what {tool} needs: {needed}.", why)

    def _tool_query(self, query: Query) -> Decision:
        text = query.text[: self.max_chars]
        pending = query.pending
        if (pending is not None and pending.expectation is not None) or text.rstrip().endswith("?"):
            return Decision(
                kind="ask",
                text=query.text,
                confidence=0.9,
                rationale="The request is a question for the human.",
            )
        requester = pending.tool if pending is not None else None
        cal = self.calibration(query.catalog)
        ranked = [(name, s) for name, s in self.scores(query) if name != requester]
        if ranked and ranked[0][1] >= cal.route:
            second = ranked[1][1] if len(ranked) > 1 else 0.0
            why = f"The request of {requester or 'the tool'} is closest to the description of {ranked[0][0]}"
            return self._route(ranked[0][0], query.text, ranked[0][1], second, why, cal)
        return Decision(
            kind="ask",
            text=query.text,
            confidence=0.6,
            rationale="No tool matches the request: the human is asked.",
        )
