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

__all__ = ["concern"]

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
