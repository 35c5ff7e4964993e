"""How the offline router scores a message against labelled examples, and how it calibrates its thresholds.

A :class:`SemanticIndex` holds documents (a tool's description, each of its examples, the router's own intents'
examples) under labels. A message's score for a label is the best, over the label's documents, of the mean of two
similarities: lexical (TF-IDF over words, word pairs and character trigrams, which catches typos and names; a word
of five letters or more that is one typo from a word of the documents is read as that word first) and,
when the embedding model is installed, the cosine of sentence embeddings (which catches paraphrases: "my login
stopped working" and "reset my password" share no word). Identifiers written the way a tool's examples write them
("INV-40213", "RX1234567") count as evidence for that tool.

:meth:`SemanticIndex.calibrate` sets an app's thresholds from its own examples, leaving each one out in turn: how
well an example scores for its own tool when that example is not indexed (a paraphrase's score), against how well
it scores for the best other tool.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from podium.orchestration.master.routing.text import TfIdfIndex

if TYPE_CHECKING:
    from podium.orchestration.master.routing.embedding import Embedder

__all__ = ["Calibration", "SemanticIndex", "identifier_prefixes"]

_CALIBRATION_SAMPLE = 40
_ID = re.compile(r"\b([A-Za-z]{1,5})[-#]?(\d{3,})\b")
_DESCRIBED_ID = re.compile(r"\b([A-Z]{1,5})(?:-\s|\s+(?:and|followed\s+by|plus|then)\s+(?:\w+\s+){0,2}digits)")


def _blend(lexical: list[float], cosines: Any) -> Any:
    """Lexical and embedding similarities averaged per document (a negative cosine counts as 0), in float64 as
    Python would compute them one by one (``0.5 * lexical + 0.5 * cosine``)."""
    import numpy as np

    blended = np.array(lexical, dtype=np.float64)
    blended *= 0.5
    half = np.maximum(cosines, 0.0, dtype=np.float64)
    half *= 0.5
    blended += half
    return blended


def _runs(groups: Iterable[list[int]]) -> tuple[Any, Any]:
    """The documents in label order and where each label's run of them starts, so that
    ``numpy.maximum.reduceat(scores[order], starts)`` is each label's best score."""
    import numpy as np

    rows = list(groups)
    starts = [0]
    for row in rows[:-1]:
        starts.append(starts[-1] + len(row))
    return np.array([doc for row in rows for doc in row], dtype=np.intp), np.array(starts, dtype=np.intp)


def _best_per_run(scores: Any, runs: tuple[Any, Any]) -> list[float]:
    """Each label's best score, from every document's ``scores`` and the label runs of :func:`_runs`."""
    import numpy as np

    order, starts = runs
    return list(np.maximum.reduceat(scores[order], starts).tolist())


def identifier_prefixes(text: str, *, described: bool = False) -> set[str]:
    """The letter prefixes of identifiers in ``text`` ("INV-40213" gives ``inv``), lowercased.

    With ``described``, prefixes a description spells out ("INV- and five digits", "RX and seven digits") count.
    """
    found = {m.group(1).lower() for m in _ID.finditer(text)}
    if described:
        found |= {m.group(1).lower() for m in _DESCRIBED_ID.finditer(text)}
    return found


@dataclass(slots=True, frozen=True)
class Calibration:
    """Thresholds of one app, from its own examples (leave-one-out)."""

    route: float
    """The score a fresh request needs to be routed to a tool."""
    switch: float
    """The score a message needs to leave a pending task for another tool."""
    margin: float
    """The lead over the second-best tool below which a decision is low-margin (unsure)."""
    typical: float
    """The median score of an example for its own tool: a score this high is a confident match."""
    examples: int
    """How many examples the calibration used."""


class SemanticIndex:
    """Labelled documents scored against messages by lexical and (optionally) embedding similarity."""

    def __init__(
        self, documents: Sequence[tuple[str, str]], embedder: Embedder | None = None, *, stopwords: bool = False
    ) -> None:
        """Index ``documents`` (``(label, text)`` pairs), embedding them with ``embedder`` when given; ``stopwords``
        keeps stopwords as lexical features."""
        self.labels = [label for label, _ in documents]
        self.texts = [text for _, text in documents]
        self.lexical = TfIdfIndex(documents, stopwords=stopwords)
        self.embedder = embedder
        self._vectors: Any = embedder.embed(self.texts) if embedder is not None else None
        self.prefixes: dict[str, set[str]] = {}
        for label, text in documents:
            self.prefixes.setdefault(label, set()).update(identifier_prefixes(text, described=True))
        self._groups: dict[str, list[int]] = {}
        for doc, label in enumerate(self.labels):
            self._groups.setdefault(label, []).append(doc)
        numbers = {label: number for number, label in enumerate(self._groups)}
        self._label_of = [numbers[label] for label in self.labels]
        """Each document's label, as its place in :attr:`_groups`."""
        self._runs: tuple[Any, Any] | None = _runs(self._groups.values()) if embedder is not None else None

    def _label_scores(self, text: str) -> list[float]:
        """Each label's best document score for ``text``, labels in the order of their first document.

        Lexically, only the documents sharing a feature with ``text`` score above 0, so only those are visited.
        """
        if not self._groups:
            return []
        if self.embedder is None or self._runs is None:
            best = [0.0] * len(self._groups)  # scores are positive: a label none of whose documents is hit has 0
            label_of = self._label_of
            for doc, score in self.lexical.doc_hits(text).items():
                if score > best[label_of[doc]]:
                    best[label_of[doc]] = score
            return best
        blended = _blend(self.lexical.doc_scores(text), self._vectors @ self.embedder.embed_one(text))
        return _best_per_run(blended, self._runs)

    def scores(self, text: str, labels: Iterable[str] | None = None) -> dict[str, float]:
        """Each label's best document score for ``text`` (its typos of the documents' words mended first:
        :meth:`TfIdfIndex.respelled`) plus identifier evidence, restricted to ``labels``."""
        best = dict(zip(self._groups, self._label_scores(self.lexical.respelled(text)), strict=True))
        if labels is not None:
            allowed = set(labels)
            if not allowed.issuperset(best):
                best = {label: score for label, score in best.items() if label in allowed}
        said = identifier_prefixes(text)
        if said:
            for label in best:
                if said & self.prefixes.get(label, set()):
                    best[label] = min(1.0, best[label] + 0.3)
        return best

    def calibrate(self, labels: Iterable[str]) -> Calibration:
        """Thresholds from the documents of ``labels`` (the tools), each scored with itself left out."""
        wanted = set(labels)
        own: list[float] = []
        other: list[float] = []
        cosines = self._vectors @ self._vectors.T if self.embedder is not None else None
        usable = [d for d, label in enumerate(self.labels) if label in wanted and len(self._groups[label]) >= 2]
        step = max(1, len(usable) // _CALIBRATION_SAMPLE)  # many tools: an even sample is enough for quantiles
        for doc in usable[::step]:
            label = self.labels[doc]
            scores = self.lexical.doc_scores_of(doc)
            if cosines is not None:
                scores = _blend(scores, cosines[doc]).tolist()
            own.append(max(scores[d] for d in self._groups[label] if d != doc))
            rivals = (docs for name, docs in self._groups.items() if name != label and name in wanted)
            other.append(max((max(map(scores.__getitem__, docs)) for docs in rivals), default=0.0))
        if len(own) < 4:  # too few examples to learn from: safe defaults
            return Calibration(route=0.3, switch=0.4, margin=0.08, typical=0.6, examples=len(own))
        own.sort()
        typical = statistics.median(own)
        low = own[len(own) // 5]  # a fifth of paraphrases score below this
        confusion = statistics.median(other)
        route = min(max(0.6 * low, confusion * 0.9, 0.16), 0.4)
        switch = min(max(route + 0.08, 0.75 * low), 0.5)
        gaps = sorted(o - r for o, r in zip(own, other, strict=True))
        margin = min(max(gaps[len(gaps) // 5], 0.04), 0.15)
        return Calibration(
            route=round(route, 4), switch=round(switch, 4), margin=round(margin, 4), typical=typical, examples=len(own)
        )
