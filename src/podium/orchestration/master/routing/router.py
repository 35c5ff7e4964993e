"""The offline router: the embedded default intent classifier (no network, no model, deterministic, fast).

Order of checks for a human's message (``specs/master_agent.md``, "Classifiers"):

1. guardrail: harmful requests are refused; "never mind" abandons the pending task; "what can you do?" is
   answered from the tool metadata;
2. expectation fit: an answer that fits what the pending task expects (a choice, a pattern) goes back to it;
3. similarity: TF-IDF over words, word pairs and character trigrams between the text and each tool's description,
   introduction and example utterances (:mod:`podium.orchestration.master.routing.text`);
4. thresholds: a task switch needs a stronger match than a fresh request; below them the router asks the human to
   clarify (an answer that does not fit) or refuses the request as out of scope.

Every decision carries a confidence, so :class:`~podium.orchestration.master.HybridClassifier` can ask an LLM only when
the router is unsure.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from podium.events import Expectation
from podium.orchestration.master.routing.base import Classifier, Decision, Query, ToolCatalog
from podium.orchestration.master.routing.rules import (
    fit_expectation,
    harmful_term,
    is_abandon,
    is_capability_question,
    looks_like_request,
)
from podium.orchestration.master.routing.text import TfIdfIndex, words

if TYPE_CHECKING:
    from podium.runtime.context import RunContext

__all__ = ["Router", "describe_expectation"]


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


class Router(Classifier):
    """Routes by expectation fit and text similarity, with a guardrail and clarification thresholds."""

    name = "router"

    def __init__(
        self,
        *,
        route_threshold: float = 0.3,
        switch_threshold: float = 0.45,
        max_chars: int = 2000,
    ) -> None:
        """Configure the thresholds.

        Args:
            route_threshold: the similarity a fresh request needs to be routed to a tool.
            switch_threshold: the similarity a message needs to leave a pending task for another tool (a task
                switch) when it does not fit what the pending task expects.
            max_chars: only the first ``max_chars`` characters of a message are read.
        """
        self.route_threshold = route_threshold
        self.switch_threshold = switch_threshold
        self.max_chars = max_chars
        self._indexes: weakref.WeakKeyDictionary[ToolCatalog, TfIdfIndex] = weakref.WeakKeyDictionary()

    async def classify(self, ctx: RunContext[Any], query: Query) -> Decision:
        return self.decide(query)

    def index(self, catalog: ToolCatalog) -> TfIdfIndex:
        """The similarity index of ``catalog`` (built once per catalog)."""
        index = self._indexes.get(catalog)
        if index is None:
            documents: list[tuple[str, str]] = []
            for profile in catalog.profiles:
                head = " ".join(words(profile.name))
                documents.append((profile.name, f"{head}. {profile.description} {profile.introduction}"))
                documents.extend((profile.name, example) for example in profile.examples)
            index = TfIdfIndex(documents)
            self._indexes[catalog] = index
        return index

    def scores(self, query: Query) -> list[tuple[str, float]]:
        """The candidate tools ranked by similarity to the query's text, best first."""
        found = self.index(query.catalog).scores(query.text[: self.max_chars], query.candidates)
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))

    def decide(self, query: Query) -> Decision:
        """The decision for ``query`` (synchronous: the router never waits on anything)."""
        decision = self._tool_query(query) if query.origin == "tool" else self._human_query(query)
        decision.source = self.name
        return decision

    # --------------------------------------------------------------------------------------------------------------
    def _confidence(self, best: float, second: float) -> float:
        return round(min(1.0, 0.4 + 0.6 * best + (best - second)), 4)

    def _route(self, tool: str, text: str, score: float, second: float, why: str) -> Decision:
        return Decision(
            kind="route",
            tool=tool,
            text=text,
            rationale=f"{why} (similarity {score:.2f}).",
            confidence=self._confidence(score, second),
        )

    def _human_query(self, query: Query) -> Decision:
        text = query.text[: self.max_chars]
        pending = query.pending
        term = harmful_term(text)
        if term is not None:
            return Decision(
                kind="refuse",
                reason="harmful",
                text=f"I can't help with {_quote(text)}: it asks for something harmful or illegal ({term!r}).",
                rationale=f"The message asks for a harmful or illegal act ({term!r}).",
            )
        if is_abandon(text):
            return Decision(kind="abandon", rationale="The message abandons the pending task.")
        if is_capability_question(text):
            return Decision(kind="capabilities", rationale="The message asks what the assistant can do.")
        strict = pending is not None and pending.expectation is not None and pending.expectation.type != "text"
        if pending is not None and strict and pending.tool in query.candidates:
            fit = fit_expectation(pending.expectation, text)
            if fit is not None:
                return Decision(
                    kind="route",
                    tool=pending.tool,
                    text=text,
                    rationale=f"The answer {fit!r} fits what {pending.tool} asked for "
                    f"({describe_expectation(pending.expectation)}).",
                )
        ranked = self.scores(query)
        best, score = ranked[0] if ranked else ("", 0.0)
        second = ranked[1][1] if len(ranked) > 1 else 0.0
        if pending is not None:
            if best and best != pending.tool and score >= self.switch_threshold:
                why = f"The message starts another task: it is closest to the description and examples of {best}"
                return self._route(best, text, score, second, why)
            if not strict and pending.tool in query.candidates:
                unsure = looks_like_request(text) and score < self.route_threshold
                return Decision(
                    kind="route",
                    tool=pending.tool,
                    text=text,
                    confidence=0.6 if unsure else 0.85,
                    rationale=f"The message answers the question {pending.tool} asked.",
                )
            if looks_like_request(text) and score < self.route_threshold:
                return Decision(
                    kind="refuse",
                    reason="out_of_scope",
                    confidence=0.6,
                    text=f"I can't help with {_quote(text)}: it is outside what I can do here.",
                    rationale="The message is a request no tool serves, and it does not answer the pending task.",
                )
            return Decision(
                kind="clarify",
                reason="no_fit",
                confidence=0.4,
                text=f"{_quote(text)} does not fit what {pending.tool} needs: "
                f"{describe_expectation(pending.expectation)}.",
                rationale=f"The answer does not fit what {pending.tool} expects, and no other tool matches it.",
            )
        if best and score >= self.route_threshold:
            why = f"The request is closest to the description and examples of {best}"
            return self._route(best, text, score, second, why)
        if looks_like_request(text) or score == 0.0:
            return Decision(
                kind="refuse",
                reason="out_of_scope",
                confidence=0.7 if score < 0.1 else 0.45,
                text=f"I can't help with {_quote(text)}: it is outside what I can do here.",
                rationale="No tool serves this request.",
            )
        return Decision(
            kind="clarify",
            reason="unclear",
            confidence=0.4,
            text=f"I am not sure what you mean by {_quote(text)}.",
            rationale="The message matches no tool well enough.",
        )

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
        ranked = [(name, s) for name, s in self.scores(query) if name != requester]
        if ranked and ranked[0][1] >= self.route_threshold:
            second = ranked[1][1] if len(ranked) > 1 else 0.0
            why = f"The request of {requester or 'the tool'} is closest to the description of {ranked[0][0]}"
            return self._route(ranked[0][0], query.text, ranked[0][1], second, why)
        return Decision(
            kind="ask",
            text=query.text,
            confidence=0.6,
            rationale="No tool matches the request: the human is asked.",
        )
