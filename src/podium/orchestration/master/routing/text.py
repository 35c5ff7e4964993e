"""Text features for the offline router: words, stems, word pairs and character trigrams, weighted by TF-IDF.

Standard library only, deterministic, and cheap: a query of a few words against fifty tools costs well under a
millisecond (``bench/master.py``). Word stems catch inflections ("declined" / "decline"), word pairs catch phrases
("claim id"), and character trigrams of the words catch what the stemmer misses and small typos.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Iterable, Sequence

from podium._spelling import Spelling

__all__ = ["STOPWORDS", "TfIdfIndex", "content_words", "features", "spoken", "stem", "words"]

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def spoken(name: str) -> str:
    """A tool's name as a person reads it in a reply: "AppointmentBooking" and "appointment_booking" are
    "the appointment booking task", "Cars" is "the cars task"."""
    return "the " + " ".join(_CAMEL.sub(" ", name).replace("_", " ").replace("-", " ").lower().split()) + " task"


_STOPWORD_TEXT = """
    a about above after again all also am an and any are as at be been being both but by can could did do does
    doing done for from further had has have having he her here hers him his how i i'm if in into is it its itself
    just let like me more most my myself need needs no nor not now of off on once only or other our ours out over
    own please same she should so some such than that the their theirs them then there these they this those through
    to too under until up very want wants wanna was we were what when where which while who whom why will with would
    you your yours yourself help assist assists us get got go going make ok okay lets m s t d ll ve re thanks
    thank hi hello hey"""

STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
"""Words that carry no intent here (fillers, pronouns, request verbs such as "want" and "help")."""

_SUFFIXES = (
    "ational",
    "ization",
    "isation",
    "fulness",
    "ousness",
    "iveness",
    "ations",
    "ation",
    "ments",
    "ment",
    "ness",
    "ings",
    "ing",
    "edly",
    "ied",
    "ies",
    "ers",
    "ed",
    "er",
    "es",
    "ly",
    "s",
    "e",
)


def words(text: str) -> list[str]:
    """The lowercase words and numbers of ``text`` (CamelCase names are split first)."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


@functools.lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A crude, consistent stem: the first matching suffix is removed if three letters remain."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> list[str]:
    """The words of ``text`` that are not stopwords."""
    return [w for w in words(text) if w not in STOPWORDS]


_WORD_WEIGHT = 1.0
_PAIR_WEIGHT = 0.6
_GRAM_WEIGHT = 0.25
_NUMBER_WEIGHT = 0.25  # numbers are usually slot values (an amount, an id), not intent


def features(text: str, *, stopwords: bool = False) -> dict[str, float]:
    """Weighted term counts of ``text``: ``w:`` stems, ``p:`` adjacent stem pairs, ``c:`` character trigrams.

    Numbers count a quarter of a word and get no trigrams: they are usually values, not intent. Stopwords are left
    out unless ``stopwords`` (the router's own intents, "what can you do?", are made of them).
    """
    out: dict[str, float] = {}
    kept = words(text) if stopwords else content_words(text)
    stems = [stem(w) for w in kept]
    for s in stems:
        key = "w:" + s
        out[key] = out.get(key, 0.0) + (_NUMBER_WEIGHT if s.isdigit() else _WORD_WEIGHT)
    for first, second in itertools.pairwise(stems):
        key = f"p:{first}_{second}"
        out[key] = out.get(key, 0.0) + _PAIR_WEIGHT
    for word in kept:
        if word.isdigit():
            continue
        keys, share = _trigrams(word)
        for key in keys:
            out[key] = out.get(key, 0.0) + share
    return out


@functools.lru_cache(maxsize=8192)
def _trigrams(word: str) -> tuple[tuple[str, ...], float]:
    """The ``c:`` features of a word (its character trigrams, padded with a space each side) and the weight of
    each, so that together they weigh about one word (kept for a vocabulary's worth of words, as :func:`stem`)."""
    padded = f" {word} "
    grams = len(padded) - 2
    return tuple("c:" + padded[i : i + 3] for i in range(grams)), _GRAM_WEIGHT / max(grams, 1) * 3


class TfIdfIndex:
    """Labelled documents, scored against a query by cosine similarity of TF-IDF vectors.

    A label (a tool name) may have several documents (its description, each example); its score is the best of
    its documents'. Each feature keeps the list of documents that have it with their weights (its postings), so a
    query only visits the documents that share a feature with it.
    """

    __slots__ = ("_default_idf", "_idf", "_labels", "_postings", "_spelling", "_stopwords", "_texts", "_units")

    def __init__(self, documents: Sequence[tuple[str, str]], *, stopwords: bool = False) -> None:
        """Index ``documents``, given as ``(label, text)`` pairs (``stopwords``: keep them as features)."""
        self._stopwords = stopwords
        self._texts = tuple(text for _, text in documents)
        counted = [features(text, stopwords=stopwords) for _, text in documents]
        self._labels = [label for label, _ in documents]
        frequency: dict[str, int] = {}
        for vector in counted:
            for key in vector:
                frequency[key] = frequency.get(key, 0) + 1
        total = len(counted)
        self._idf = {key: math.log((total + 1) / (df + 1)) + 1.0 for key, df in frequency.items()}
        self._default_idf = math.log(total + 1) + 1.0
        self._units = [self._unit(vector, self._idf) for vector in counted]
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for number, unit in enumerate(self._units):
            for key, weight in unit:
                self._postings.setdefault(key, []).append((number, weight))
        self._spelling: Spelling | None = None  # made when first needed

    def respelled(self, text: str) -> str:
        """``text`` with each word the documents lack, of five letters or more, replaced by the one word of theirs
        one typo away (a letter left out, added, changed, or two swapped: "decilne leter" is "decline letter");
        a word with no such neighbour, or with several, is left as typed."""
        if self._spelling is None:
            self._spelling = Spelling((w for text in self._texts for w in words(text)), skip=STOPWORDS)
        return self._spelling.respell(text)

    @staticmethod
    def _unit(vector: dict[str, float], idf: dict[str, float], default_idf: float = 0.0) -> list[tuple[str, float]]:
        """``vector`` weighted by ``idf`` (``default_idf`` for a feature it lacks), scaled to length 1."""
        weighted = [(key, value * idf.get(key, default_idf)) for key, value in vector.items()]
        norm = math.sqrt(sum([v * v for _, v in weighted])) or 1.0
        return [(key, value / norm) for key, value in weighted]

    def doc_scores(self, text: str) -> list[float]:
        """Each document's cosine similarity with ``text`` (0 to 1), by document number."""
        return self._similarities(self._unit(features(text, stopwords=self._stopwords), self._idf, self._default_idf))

    def doc_hits(self, text: str) -> dict[int, float]:
        """:meth:`doc_scores` of the documents sharing a feature with ``text`` (the others score 0), by document
        number: a query touches a few of many documents, and a reader of the best scores needs only those."""
        hits: dict[int, float] = {}
        postings = self._postings
        for key, q in self._unit(features(text, stopwords=self._stopwords), self._idf, self._default_idf):
            for doc, weight in postings.get(key, ()):
                hits[doc] = hits.get(doc, 0.0) + q * weight
        if hits and max(hits.values()) > 1.0:
            return {doc: min(score, 1.0) for doc, score in hits.items()}
        return hits

    def doc_scores_of(self, number: int) -> list[float]:
        """Each document's cosine similarity with document ``number``: :meth:`doc_scores` of its text."""
        return self._similarities(self._units[number])

    def _similarities(self, unit: list[tuple[str, float]]) -> list[float]:
        """Each document's dot product with the unit vector ``unit`` (at most 1), by document number."""
        per_doc = [0.0] * len(self._labels)
        postings = self._postings
        for key, q in unit:
            for doc, weight in postings.get(key, ()):
                per_doc[doc] += q * weight
        return per_doc if max(per_doc, default=0.0) <= 1.0 else [min(score, 1.0) for score in per_doc]

    def scores(self, text: str, labels: Iterable[str] | None = None) -> dict[str, float]:
        """Each label's best cosine similarity with ``text`` (0 to 1), restricted to ``labels`` if given; a label
        sharing no feature with ``text`` is left out."""
        allowed = None if labels is None else set(labels)
        best: dict[str, float] = {}
        for label, score in zip(self._labels, self.doc_scores(text), strict=True):
            if (allowed is None or label in allowed) and score > best.get(label, 0.0):
                best[label] = score
        return best
