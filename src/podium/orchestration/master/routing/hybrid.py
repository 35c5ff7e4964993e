"""The hybrid classifier: the offline router when it is confident, the LLM classifier otherwise.

The router is certain about expectation fits and clear similarity matches. It hands the model what it cannot judge
well: weak or low-margin matches, task switches, requests that contradict the closest tool, and anything its
keyword-and-phrase guardrail flags (so with a model configured, harm screening is the model's). Most turns cost no
model call (``bench/master.py`` measures the LLM calls per human turn on the eval set).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podium.orchestration.master.routing.base import Classifier, Decision, Query
from podium.orchestration.master.routing.router import Router

if TYPE_CHECKING:
    from podium.runtime.context import RunContext

__all__ = ["HybridClassifier"]


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
