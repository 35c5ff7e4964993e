"""The hybrid classifier: the offline router when it is confident, the LLM classifier otherwise.

The router is certain about expectation fits and clear similarity matches. It hands the model what it cannot judge
well: weak or low-margin matches, task switches, requests that contradict the closest tool, and anything its
keyword-and-phrase guardrail flags (so with a model configured, harm screening is the model's). Most turns cost no
model call (``bench/master.py`` measures the LLM calls per human turn on the eval set).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podium.errors import UsageError
from podium.orchestration.master.routing.base import Classifier, Decision, Query
from podium.orchestration.master.routing.router import Router

if TYPE_CHECKING:
    from podium.models.base import Model
    from podium.runtime.context import RunContext

__all__ = ["CLASSIFIERS", "HybridClassifier", "classifier_for"]

CLASSIFIERS = ("router", "llm", "hybrid")
"""The classifiers a setting can name (``PODIUM_CLASSIFIER``)."""


_UNSURE = frozenset({"switch", "low_margin", "harmful", "contradiction"})


class HybridClassifier(Classifier):
    """Router first; the LLM classifier decides below ``min_confidence``, on task switches, on low-margin routes and
    on anything the guardrail flags (harm screening goes through the model when one is configured)."""

    name = "hybrid"

    def __init__(self, llm: Classifier, *, router: Router | None = None, min_confidence: float = 0.75) -> None:
        """Combine ``llm`` with ``router`` (default: a :class:`Router` with calibrated thresholds).

        Args:
            llm: the classifier used when the router is unsure (usually an
                :class:`~podium.orchestration.master.LLMClassifier`).
            router: the offline router.
            min_confidence: the router's decisions at or above this confidence are taken without the LLM, unless
                they switch tasks, route by a small margin, or carry a harm or contradiction flag.
        """
        self.llm = llm
        self.router = router or Router()
        self.min_confidence = min_confidence

    async def classify(self, ctx: RunContext[Any], query: Query) -> Decision:
        decision = self.router.decide(query)
        if decision.confidence >= self.min_confidence and decision.reason not in _UNSURE:
            return decision
        return await self.llm.classify(ctx, query)


def classifier_for(model: Model | None, kind: str | None = None, *, title: str = "the assistant") -> Classifier:
    """The classifier named by ``kind`` (the ``classifier`` setting: ``router``, ``llm`` or ``hybrid``).

    Without one: the offline router when there is no real model (``None``, or the replay of a cassette), else the
    hybrid. ``title`` names the assistant to the LLM classifier.

    Raises:
        UsageError: an unknown kind, or ``llm``/``hybrid`` without a real model.
    """
    from podium.models.replay import ReplayModel

    offline = model is None or isinstance(model, ReplayModel)
    kind = kind or ("router" if offline else "hybrid")
    if kind not in CLASSIFIERS:
        raise UsageError(f"unknown classifier {kind!r}; choose one of {', '.join(CLASSIFIERS)}")
    if kind == "router":
        return Router()
    if model is None or offline:
        raise UsageError(f"the {kind} classifier needs a model: set PODIUM_MODEL (or choose the router classifier)")
    from podium.orchestration.master.routing.llm import LLMClassifier

    llm = LLMClassifier(model, title=title)
    return llm if kind == "llm" else HybridClassifier(llm)
