"""A check on tasks that would destroy things in bulk or behind people's backs, made before any planner sees them.

:func:`concern` reads a task's words. It finds a concern when a *destructive verb* (delete, remove, erase, wipe,
purge, destroy, shred, fire, terminate, dismiss, sack, lay off, revoke, deactivate, in any of their usual forms)
comes with a *bulk target* (all, every, everyone, everybody, everything, entire, whole, each) or with a *covert*
qualifier ("without telling / informing / notifying / asking / warning / consulting", "secretly", "behind their
backs", "without their knowledge / consent"). The plan agent then asks the human to confirm before planning
(docs/plan.md); nothing runs until they do, and every step still needs its own approval afterwards.

It is a check on words, not on meaning: it errs towards asking ("remove the printer from every room" asks too) and
misses what it has no word for ("get rid of the whole team"). It is a floor under the planner, not a policy.
"""

from __future__ import annotations

import re

__all__ = ["concern", "destructive_verbs", "refusal"]

_VERBS = (
    r"delet(?:e|es|ed|ing|ion)",
    r"remov(?:e|es|ed|ing|al)",
    r"eras(?:e|es|ed|ing)",
    r"wip(?:e|es|ed|ing)",
    r"purg(?:e|es|ed|ing)",
    r"destroy(?:s|ed|ing)?",
    r"shred(?:s|ded|ding)?",
    r"fir(?:e|es|ed|ing)",
    r"terminat(?:e|es|ed|ing)",
    r"dismiss(?:es|ed|ing)?",
    r"sack(?:s|ed|ing)?",
    r"(?:lay|lays|laying|laid)\s+off",
    r"revok(?:e|es|ed|ing)",
    r"deactivat(?:e|es|ed|ing)",
)
_DESTRUCTIVE = re.compile(rf"\b(?:{'|'.join(_VERBS)})\b", re.IGNORECASE)
_BULK = re.compile(r"\b(?:all|every|everyone|everybody|everything|entire|whole|each)\b", re.IGNORECASE)
_COVERT = re.compile(
    r"\bwithout\s+(?:telling|informing|notifying|asking|warning|consulting|letting)\b|\bsecretly\b|"
    r"\bbehind\s+(?:\w+\s+)?backs?\b|\bwithout\s+(?:\w+\s+)?(?:knowledge|consent)\b",
    re.IGNORECASE,
)


def concern(task: str) -> str | None:
    """Why ``task`` needs the human's confirmation before planning (see the module docstring), or ``None``."""
    verb = _DESTRUCTIVE.search(task)
    if verb is None:
        return None
    bulk, covert = _BULK.search(task), _COVERT.search(task)
    if bulk is None and covert is None:
        return None
    found = [m.group(0) for m in (verb, bulk, covert) if m is not None]
    return (
        f"Please confirm first: this task looks destructive ({', '.join(repr(f) for f in found)}) and may not be "
        "undone. Reply 'confirm' to plan it anyway (each step will still need your approval), or 'stop' to drop it."
    )


_CONCEALED = re.compile(
    r"\bso\s+(?:that\s+)?(?:nobody|no\s*one|no-one|none\s+of\s+them)\s+(?:will\s+|would\s+|can\s+|could\s+|ever\s+)?"
    r"(?:notices?|finds?\s+out|knows?|sees?|realises?|realizes?|can\s+tell)\b|"
    r"\bso\s+(?:that\s+)?(?:\w+\s+){1,2}(?:won't|will\s+not|doesn't|does\s+not|don't|do\s+not|can't|cannot|never)\s+"
    r"(?:ever\s+)?(?:notice|know|find\s+out|see|realise|realize|trace\s+it)\b|"
    r"\bcover(?:s|ed|ing)?\s+(?:it\s+|this\s+|that\s+|everything\s+|them\s+)?up\b|"
    r"\bcover(?:ing)?\s+(?:up\s+)?(?:my|our|his|her|their|the)\s+tracks\b|"
    r"\b(?:hide|hiding|hid|destroy|destroying|bury|burying|get\s+rid\s+of|tamper\s+with)\s+(?:all\s+)?(?:the\s+|any\s+)?"
    r"(?:evidence|traces?|paper\s+trail|audit\s+trail)\b|"
    r"\bwithout\s+(?:leaving\s+)?(?:a\s+|any\s+)?traces?\b|"
    r"\bwithout\s+(?:anyone|anybody|someone)\s+(?:noticing|knowing|finding\s+out)\b|\bunder\s+the\s+radar\b",
    re.IGNORECASE,
)
"""Asking that what is done stay hidden: "so nobody notices", "so HR won't find out", "cover it up", "hide the
evidence", "without a trace"."""


def destructive_verbs(task: str) -> list[str]:
    """The destructive verbs ``task`` uses ("delete", "wiping"), lower-cased, in order."""
    return [m.group(0).lower() for m in _DESTRUCTIVE.finditer(task)]


def refusal(task: str) -> str | None:
    """Why ``task`` is refused outright, or ``None``: it asks to hide what is done ("so nobody notices", "cover it
    up", "hide the evidence"). Such a request gets no confirm path: the concealment is the harm, whatever the steps."""
    found = _CONCEALED.search(task)
    if found is None:
        return None
    return (
        f"I will not plan this: it asks to do something so that it stays hidden ({found.group(0).strip()!r}). "
        "Work done here is recorded and visible to the people it concerns. If something needs doing openly, "
        "describe it without hiding it."
    )
