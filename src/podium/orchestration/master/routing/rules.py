"""Deterministic checks every classifier path can rely on: does an answer fit a typed expectation, is a message
harmful, does it abandon the pending task, does it ask what the assistant can do.

They are small on purpose: the offline router uses them first (they are certain when they fire), the orchestrator
runs the guardrail even when a tool bypasses the classifier, and the LLM classifier does not need them.
"""

from __future__ import annotations

import re

from podium.events import Expectation
from podium.orchestration.master.routing.text import STOPWORDS, stem, words

__all__ = [
    "fit_expectation",
    "harmful_term",
    "is_abandon",
    "is_capability_question",
    "looks_like_request",
]

_HARMFUL = re.compile(
    r"\b(fraud\w*|scam\w*|launder\w*|embezzl\w*|brib\w*|forg(e|ed|ery|ing)|counterfeit\w*|steal\w*|stole|"
    r"kill\w*|murder\w*|bomb\w*|explosive\w*|weapon\w*|terror\w*|poison\w*|hack(ing|s)?|malware|ransomware|"
    r"phish\w*|extort\w*|blackmail\w*|arson)\b",
    re.IGNORECASE,
)
# Talking *about* a harmful act to fight it is fine for an insurance investigator.
_PROTECTIVE = re.compile(
    r"\b(report\w*|investigat\w*|detect\w*|prevent\w*|suspect\w*|suspicious|flag\w*|identify\w*|spot\w*|"
    r"victim\w*|protect\w*|avoid\w*)\b",
    re.IGNORECASE,
)

_FILLER = r"(?:oh|ok|okay|well|actually|please|sorry|no|just|so|hmm|um|then|,)"
_ABANDON = re.compile(
    rf"^\s*(?:{_FILLER}\s*)*(?:never\s*mind|forget\s+(?:it|that|this|about\s+(?:it|that|this))|"
    r"cancel(?:\s+(?:it|that|this|the\s+task))?|stop(?:\s+(?:it|that|this))?|abort|quit|"
    r"drop\s+(?:it|that|this)|skip\s+(?:it|that|this)|i\s+changed\s+my\s+mind|"
    r"i\s+(?:do\s+not|don'?t)\s+want\s+(?:it|that|this)(?:\s+any\s*more)?)"
    rf"(?:\s*{_FILLER})*[\s.!]*$",
    re.IGNORECASE,
)
_CAPABILITIES = re.compile(
    r"^\s*(?:(?:hi|hello|hey)[\s,!.]*)?(?:so\s+)?(?:what\s+(?:can|do|could)\s+you\s+(?:do|help(?:\s+me)?\s+with|offer)|"
    r"what\s+are\s+your\s+(?:capabilities|skills|features|options)|"
    r"how\s+can\s+you\s+help(?:\s+me)?|what\s+(?:tasks|things)\s+can\s+you\s+(?:do|help\s+with)|"
    r"who\s+are\s+you|help|menu|options|hi|hello|hey)[\s?.!]*$",
    re.IGNORECASE,
)
_REQUEST_START = re.compile(
    r"^\s*(?:i\s+(?:want|would\s+like|'d\s+like|need|wish)|i'd\s+like|can\s+you|could\s+you|would\s+you|"
    r"please|help\s+me|tell\s+me|show\s+me|give\s+me|how|what|where|why|when|who|which|let'?s)\b",
    re.IGNORECASE,
)


def harmful_term(text: str) -> str | None:
    """The harmful word in ``text`` when it asks for a harmful or illegal act, else ``None``.

    Mentions in a protective sense ("report fraud", "investigate a suspected scam") are allowed.
    """
    found = _HARMFUL.search(text)
    if found is None or _PROTECTIVE.search(text):
        return None
    return found.group(0)


def is_abandon(text: str) -> bool:
    """True when the whole message abandons the pending task ("never mind", "cancel that", "forget it")."""
    return len(text) < 120 and _ABANDON.match(text) is not None


def is_capability_question(text: str) -> bool:
    """True when the message asks what the assistant can do (or only greets)."""
    return len(text) < 120 and _CAPABILITIES.match(text) is not None


def looks_like_request(text: str) -> bool:
    """True when the message reads as a new request or question rather than an answer to one."""
    return "?" in text or (_REQUEST_START.match(text) is not None and len(words(text)) >= 3)


def _stems(text: str) -> list[str]:
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def _choice(options: list[str], text: str) -> str | None:
    stripped = text.strip().rstrip(".!").strip()
    if stripped.isdigit() and 1 <= int(stripped) <= len(options):
        return options[int(stripped) - 1]
    said = set(_stems(text))
    lowered = " ".join(words(text))
    scored: list[tuple[float, str]] = []
    for option in options:
        phrase = " ".join(words(option))
        if phrase and re.search(rf"\b{re.escape(phrase)}\b", lowered):
            scored.append((1.0, option))
            continue
        parts = _stems(option)
        if parts:
            share = sum(1 for p in parts if p in said) / len(parts)
            if share >= 0.5:
                scored.append((share, option))
    if not scored:
        return None
    scored.sort(key=lambda item: -item[0])
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        return None  # both options named: ambiguous
    return scored[0][1]


def fit_expectation(expectation: Expectation | None, text: str) -> str | None:
    """What in ``text`` answers ``expectation``: the chosen option, the matched pattern, or the text itself.

    ``None`` when the text does not fit (an empty text never fits).
    """
    if not text.strip():
        return None
    if expectation is None or expectation.type == "text":
        return text.strip()
    if expectation.type == "choice":
        return _choice(list(expectation.options), text)
    if expectation.pattern is None:
        return text.strip()
    try:
        found = re.search(expectation.pattern, text)
    except re.error:
        return None
    return found.group(0) if found else None
