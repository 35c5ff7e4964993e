"""The hybrid classifier: the offline router when it is confident, the LLM classifier otherwise.

The router is certain about expectation fits, the guardrail and strong similarity matches; it is unsure about
answers that fit nothing and weak matches. Only those go to the model, so most turns cost no model call
(``bench/master.py`` measures the LLM calls per turn on the SmartInvestigator demo).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podium.orchestration.master.routing.base import Classifier, Decision, Query
from podium.orchestration.master.routing.router import Router

if TYPE_CHECKING:
    from podium.runtime.context import RunContext

__all__ = ["HybridClassifier"]


class HybridClassifier(Classifier):
    """Router first; below ``min_confidence`` the LLM classifier decides."""

    name = "hybrid"

    def __init__(self, llm: Classifier, *, router: Router | None = None, min_confidence: float = 0.75) -> None:
        """Combine ``llm`` with ``router`` (default: a :class:`Router` with its default thresholds).

        Args:
            llm: the classifier used when the router is unsure (usually an
                :class:`~podium.orchestration.master.LLMClassifier`).
            router: the offline router.
            min_confidence: the router's decisions at or above this confidence are taken without the LLM.
        """
        self.llm = llm
        self.router = router or Router()
        self.min_confidence = min_confidence

    async def classify(self, ctx: RunContext[Any], query: Query) -> Decision:
        decision = self.router.decide(query)
        if decision.confidence >= self.min_confidence:
            return decision
        return await self.llm.classify(ctx, query)
