"""Mending typed words one typo from a known vocabulary (a letter left out, added, changed, or two neighbours
swapped: "decilne" is "decline", "moniter" is "monitor", "onbaord" is "onboard").

Shared by the offline readers that match a person's words against a fixed vocabulary: the master agent's router
(its tools' descriptions and examples) and the plan service's offline planner (its catalogue's tools). Standard
library only and deterministic; each vocabulary word's one-letter deletions are indexed once, so a lookup costs a
few dictionary reads per letter of the typed word.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

__all__ = ["Spelling", "one_typo"]


class Spelling:
    """A vocabulary, and each of its words' variants with one letter left out (to find words one typo away).

    A typed word of ``shortest`` letters or more that the vocabulary lacks becomes the one vocabulary word one typo
    away; with none, it stays as typed. With several, the likeliest slip decides: a letter left out or two
    neighbours swapped ("ofboard" is "offboard", not "onboard" with a letter changed), then a letter added, then
    one changed; when the likeliest is still several words, it stays as typed (one typo away from a short word
    lies another word: "hope" and "home"). ``alike``: candidates it maps to one key are one word ("onboard" and
    "onboarding" when both are known), the shortest kept. ``endings``: a word that starts with a known word (or
    its ``alike`` key) and goes on is mended too; off, it stays ("charger" is made from "charge", no typo of
    "charges"), unless its last letter only doubles the one before ("laptopp").
    """

    __slots__ = ("_alike", "_deleted", "_endings", "_known", "_pattern", "_seen", "_skip")

    def __init__(
        self,
        vocabulary: Iterable[str],
        *,
        skip: Iterable[str] = (),
        shortest: int = 5,
        alike: Callable[[str], str] | None = None,
        endings: bool = True,
    ) -> None:
        """Index ``vocabulary`` (lower-case words; others are ignored); ``skip``: words never mended (stopwords)."""
        self._known = frozenset(w for w in vocabulary if w.isalpha())
        self._skip = frozenset(skip)
        self._alike = alike
        self._endings = endings
        self._pattern = re.compile(rf"[A-Za-z]{{{shortest},}}")
        self._seen: dict[str, str] = {}
        """Words looked up before, and what they became (people type the same words again)."""
        self._deleted: dict[str, set[str]] = {}
        for word in self._known:
            if len(word) >= shortest - 1:
                for variant in _deletions(word):
                    self._deleted.setdefault(variant, set()).add(word)

    def respell(self, text: str) -> str:
        """``text`` with each word it has of ``shortest`` letters or more that the vocabulary lacks replaced by the
        one vocabulary word one typo away (lower-cased), if there is exactly one."""
        return self._pattern.sub(self._looked_up, text)

    def _looked_up(self, match: re.Match[str]) -> str:
        typed = match.group(0)
        found = self._seen.get(typed)
        if found is None:
            found = self._word(typed)
            if len(self._seen) < 4096:
                self._seen[typed] = found
        return found

    def _word(self, typed: str) -> str:
        word = typed.lower()
        if word in self._known or word in self._skip:
            return typed
        found = set(self._deleted.get(word, ()))  # a letter left out of the typed word
        for variant in _deletions(word):
            if variant in self._known:  # a letter added to the typed word
                found.add(variant)
            found |= {w for w in self._deleted.get(variant, ()) if one_typo(word, w)}  # changed or swapped
        if not self._endings:
            found = {w for w in found if not _made_from(word, self._alike(w) if self._alike else w)}
        if self._alike is not None and len(found) > 1:
            keys: dict[str, str] = {}
            for candidate in sorted(found, key=lambda w: (len(w), w)):
                keys.setdefault(self._alike(candidate), candidate)
            found = set(keys.values())
        if len(found) > 1:
            likeliest = min(_slip(word, w) for w in found)
            found = {w for w in found if _slip(word, w) == likeliest}
        return found.pop() if len(found) == 1 else typed


def _slip(typed: str, word: str) -> int:
    """How unlikely the typo that makes ``word`` ``typed`` is: 0 for a letter left out or two neighbours swapped,
    1 for a letter added, 2 for a letter changed (fast typing drops and swaps letters more than it adds or
    changes them)."""
    if len(typed) < len(word):
        return 0
    if len(typed) > len(word):
        return 1
    return 0 if sorted(typed) == sorted(word) else 2


def _made_from(typed: str, word: str) -> bool:
    """Whether ``typed`` is ``word`` and more ("charger" from "charge"), not only a doubled last letter."""
    return len(typed) > len(word) and typed.startswith(word) and typed[-1] != typed[-2]


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def one_typo(typed: str, word: str, *, changes: bool = True) -> bool:
    """Whether ``typed`` is ``word`` with one slip: two neighbouring letters swapped, one letter left out or added,
    or (``changes``) one letter changed. Equal words are no typo."""
    if typed == word:
        return False
    if len(typed) == len(word):
        diff = [i for i, (a, b) in enumerate(zip(typed, word, strict=True)) if a != b]
        if len(diff) == 1:
            return changes
        first, second = diff[0], diff[-1]
        return len(diff) == 2 and second == first + 1 and typed[first] == word[second] and typed[second] == word[first]
    short, long = sorted((typed, word), key=len)
    if len(long) - len(short) != 1:
        return False
    at = next((i for i, (a, b) in enumerate(zip(short, long, strict=False)) if a != b), len(short))
    return short[at:] == long[at + 1 :]
