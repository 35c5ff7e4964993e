"""Deterministic checks every classifier path can rely on: does an answer fit a typed expectation, is a message
harmful, does it abandon the pending task, does it ask what the assistant can do.

They are small on purpose: the offline router uses them first (they are certain when they fire), the orchestrator
runs the guardrail even when a tool bypasses the classifier, and the LLM classifier does not need them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from podium.events import Expectation
from podium.human import (
    Caseless,
    cancels,
    clauses,
    corrected,
    emergency,
    is_question,
    joined_codes,
    leaves,
    leaves_choice,
    negated,
    one_typo,
    ordinal,
    straight,
)
from podium.orchestration.master.routing.intents import ABANDON, CAPABILITIES, INTENTS
from podium.orchestration.master.routing.scoring import SemanticIndex
from podium.orchestration.master.routing.text import STOPWORDS, stem, words

__all__ = [
    "affirmed",
    "asks_one_more",
    "asks_to_repeat",
    "cancels",
    "cancels_everything",
    "cancels_then",
    "corrections",
    "emergency",
    "fit_expectation",
    "follows_up",
    "harmful_term",
    "is_abandon",
    "is_capability_question",
    "is_question",
    "leaves_choice",
    "looks_like_request",
    "says_stop",
    "small_talk",
]

_HARMFUL = Caseless(
    r"\b(fraud\w*|scam\w*|launder\w*|embezzl\w*|brib\w*|forg(e|ed|ery|ing)|counterfeit\w*|steal\w*|stole|"
    r"kill\w*|murder\w*|bomb\w*|explosive\w*|weapon\w*|terror\w*|poison\w*|hack(ing|s)?|malware|ransomware|"
    r"phish\w*|extort\w*|blackmail\w*|arson|keylogger\w*|spyware|stalk\w*|dox\w*|exfiltrat\w*|unauthori[sz]ed|"
    r"brute[\s-]?forc\w*)\b"
)
# Talking *about* a harmful act to fight it is fine for an insurance investigator.
_PROTECTIVE = Caseless(
    r"\b(report\w*|investigat\w*|detect\w*|prevent\w*|suspect\w*|suspicious|flag\w*|identify\w*|spot\w*|"
    r"victim\w*|protect\w*|avoid\w*)\b"
)

_REQUEST_START = re.compile(
    r"^\s*(?:(?:actually|ok(?:ay)?|oh|well|hmm+|sorry|wait|um+|so|but|and|also|hey|hi|hello|no|right|alright|"
    r"instead)[\s,.!-]+)*(?:i\s+(?:want|would\s+like|'d\s+like|need|wish)|i'd\s+like|can\s+you|could\s+you|would\s+you|"
    r"please|help\s+me|tell\s+me|show\s+me|give\s+me|how|what|where|why|when|who|which|let'?s)\b",
    re.IGNORECASE,
)


_RETURN = re.compile(
    r"\b(?:(?:go|get|come|going|getting|coming)\s+back|back\s+to|return(?:ing)?\s+to|resume|"
    r"continue\s+(?:with|where)|where\s+were\s+we|pick\s+up\s+where|left\s+off)\b",
    re.IGNORECASE,
)

# Words of a question that say it is one ("please provide your ..."), not what it is about.
_ASKING_WORDS = """please provide give tell enter type share send say confirm let know need want what which your you
is are the a an of for"""
_ASKING = frozenset(stem(w) for w in _ASKING_WORDS.split())


_REPEAT = re.compile(
    r"\b(?:repeat|say\s+(?:that|it)\s+again|come\s+again|pardon|what\s+(?:was|is)\s+(?:the|your)\s+question|"
    r"what\s+(?:were|are)\s+you\s+asking|what\s+did\s+you\s+(?:ask|say|want|need)|"
    r"what\s+do\s+you\s+(?:need|want)\s+(?:from\s+me|me\s+to\s+(?:say|answer|type))|"
    r"what\s+(?:should|do)\s+i\s+(?:say|answer|type|enter))\b",
    re.IGNORECASE,
)

_THANKS_WORDS = "thanks thank thx ty ta cheers appreciate appreciated grateful"
_BYE_WORDS = "bye goodbye cya ciao farewell"
_GREET_WORDS = "hi hello hey hiya yo greetings morning afternoon evening howdy"
_CHAT_WORDS = """you so very much lot lots a ok okay k kk alright right great perfect awesome cool nice good fine super
excellent wonderful lovely brilliant got it understood noted sounds sure see later soon take care have day night there
all again that thats s is was helpful for the your oh ah yes yep yeah please mate friend everyone folks u ya many then
now lol haha"""
_SOCIAL = re.compile(
    r"\b(?:how\s+(?:are|r)\s+(?:you|u|ya)(?:\s+(?:doing|today))*|how'?s\s+(?:it|life|things|everything|your\s+day)"
    r"(?:\s+(?:going|been|today))*|how\s+(?:is|has)\s+your\s+day(?:\s+(?:been|going))*|"
    r"(?:i\s+)?hope\s+(?:you'?re|you\s+are|u\s+r|ur|you'?ve\s+been|all'?s|all\s+is|everything'?s)\s+"
    r"(?:well|good|fine|ok|okay|great|doing\s+(?:well|good|fine|ok)|having\s+a\s+(?:good|nice|great)\s+day)|"
    r"(?:i\s+)?hope\s+(?:your|ur)\s+(?:day|week|weekend|morning|afternoon|evening)(?:'s|\s+is|\s+has\s+been)?\s+"
    r"(?:going\s+)?(?:ok|okay|well|good|great|fine|nice)|(?:thanks?|ta)\s+(?:you\s+)?for\s+(?:being\s+(?:there|here)|"
    r"(?:all\s+)?(?:your|the)\s+help|helping(?:\s+me)?|everything|your\s+time)|"
    r"what'?s\s+up|nice\s+to\s+(?:meet|see|hear\s+from)\s+(?:you|u)|"
    r"have\s+a\s+(?:good|nice|great|lovely)\s+(?:one|day|evening|weekend))\b",
    re.IGNORECASE,
)
"""Courtesies a greeting or a thanks may carry ("how's your day going", "hope you're well"): they ask for nothing."""
_THANKS = frozenset(_THANKS_WORDS.split())
_BYE = frozenset(_BYE_WORDS.split())
_GREET = frozenset(_GREET_WORDS.split())
_SMALL_TALK = _THANKS | _BYE | _GREET | frozenset(_CHAT_WORDS.split())


_EVERYTHING = re.compile(
    r"\b(?:everything|all\s+(?:of\s+(?:it|them)|tasks|the\s+tasks|that)|every\s+task|them\s+all)\b", re.IGNORECASE
)


def cancels_everything(text: str) -> bool:
    """True when a message that cancels says to drop every task ("cancel everything", "forget all of it")."""
    return cancels(text) and _EVERYTHING.search(text) is not None


def asks_to_repeat(text: str) -> bool:
    """True when a short message asks what the question was ("can you repeat that?", "what were you asking me?")."""
    return len(words(text)) <= 12 and _REPEAT.search(straight(text)) is not None


def small_talk(text: str) -> str | None:
    """What a message that only greets, thanks, acknowledges or says goodbye does: ``"thanks"``, ``"goodbye"``,
    ``"greeting"`` or ``"ack"`` ("thanks a lot!", "ok", "good morning", "bye", or only symbols: "?", an emoji);
    ``None`` for anything else."""
    plain = straight(text)
    if leaves(plain) and not looks_like_request(plain):  # "gotta run, talk later"
        return "goodbye"
    said = words(_SOCIAL.sub(" ", plain))
    if len(said) > 8 or any(w not in _SMALL_TALK for w in said):
        return None
    kinds = set(said)
    social = _SOCIAL.search(plain)
    if not kinds & (_THANKS | _BYE | _GREET) and social:  # "how are you?" alone greets too
        if re.match(r"(?:thanks?|ta)\b", social[0], re.IGNORECASE):  # "thanks for your help" alone thanks
            return "thanks"
        return "goodbye" if re.search(r"\bhave\s+a\b", plain, re.IGNORECASE) else "greeting"
    if kinds & _BYE or {"see", "later"} <= kinds or {"take", "care"} <= kinds:
        return "goodbye"
    if kinds & _THANKS:
        return "thanks"
    if kinds & _GREET:
        return "greeting"
    return "ack"


_FOLLOW_UP = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|thanks|great|cool|and|also|then)[\s,!.]+)*(?P<strong>what\s+about|how\s+about|"
    r"(?:do\s+|make\s+|write\s+)?(?:the\s+)?same\s+(?:again|thing|for|with)|"
    r"(?:and\s+|do\s+|make\s+|write\s+|give\s+me\s+)?(?:another\s+(?:one|for)|one\s+more)|(?:do\s+it\s+)?again|"
    r"now\s+(?:for|one\s+for|the\s+same))\b|^\s*(?:(?:ok(?:ay)?|thanks|great|cool)[\s,!.]+)*(?:and|also|plus)\b"
    r"[\s,]*(?P<rest>.*)$",
    re.IGNORECASE,
)
_ASKS_ANEW = re.compile(
    r"(?:can|could|would|will|do|does|did|is|are|was|were|have|has|tell|give|show|book|make|help|send|get|find|"
    r"i|i'?m|i'?d|please|what|what'?s|where|when|how|why|who|which)\b",
    re.IGNORECASE,
)
"""How a message starts that asks something of its own after "and" ("and can you tell me a joke?")."""


def follows_up(text: str) -> bool:
    """True when a short message carries on from the last answer rather than asking anew: "what about the
    dentist?", "same again for 6543WF", "another one for 2222ZX", or "and" with a few words and no request of their
    own ("and on sunday?"; not "and can you tell me a joke?")."""
    said = straight(text)
    found = _FOLLOW_UP.match(said) if len(words(said)) <= 10 else None
    if found is None:
        return False
    rest = found.group("rest")
    return rest is None or (0 < len(words(rest)) <= 4 and _ASKS_ANEW.match(rest) is None)


_ONE_MORE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|thanks|great|cool|and|also|then|now)[\s,!.]+)*(?:please\s+)?(?:do\s+|make\s+|write\s+|"
    r"give\s+me\s+|i\s+need\s+)?(?:the\s+)?(?:one\s+more|another(?:\s+one)?|same\s+(?:again\s+)?for|the\s+next\s+one)\b",
    re.IGNORECASE,
)


def asks_one_more(text: str) -> bool:
    """True when a message asks for one more of what was just done ("one more for 3032MM", "another one for 2222ZX,
    motor", "same for 4411BA"): while a question waits, that is a request for after it, not its answer."""
    return _ONE_MORE.match(straight(text)) is not None and len(words(text)) <= 14


def returns_to_a_task(text: str) -> bool:
    """True when a short message asks to go back to a task left waiting ("back to the letter", "where were we")."""
    return len(words(text)) <= 12 and _RETURN.search(text) is not None


def without_return_words(text: str) -> str:
    """``text`` without its go-back phrase: what names the task to go back to, if anything ("the letter")."""
    return _RETURN.sub(" ", text)


def echoes_question(text: str, question: str) -> bool:
    """True when ``text`` names what ``question`` asked about ("the claim id is CLM-22" for "your claim id?").

    A statement that repeats the subject of the pending question is an attempt to answer it, even when the answer
    does not fit, not a new request for whatever other task shares those words.
    """
    subject = {stem(w) for w in words(question) if w not in STOPWORDS} - _ASKING
    return bool(subject) and bool(subject & {stem(w) for w in words(text)})


def harmful_term(text: str) -> str | None:
    """The harmful word in ``text`` when it asks for a harmful or illegal act, else ``None``.

    Mentions in a protective sense ("report fraud", "investigate a suspected scam") are allowed.
    """
    found = _HARMFUL.find(text)
    return None if found is None or _PROTECTIVE.find(text) is not None else found


def _intent_index() -> SemanticIndex:
    global _INTENT_INDEX
    if _INTENT_INDEX is None:
        from podium.orchestration.master.routing.embedding import default_embedder

        documents = [(label, text) for label, texts in INTENTS.items() for text in texts]
        _INTENT_INDEX = SemanticIndex(documents, default_embedder(), stopwords=True)
    return _INTENT_INDEX


_INTENT_INDEX: SemanticIndex | None = None
_GREETING = re.compile(
    r"^\s*(?:(?:hi|hello|hey|hiya|good\s+(?:morning|afternoon|evening)|greetings)\b[\s,!.:;-]*)+", re.I
)
INTENT_THRESHOLD = 0.5
"""The score a message needs, against the intents' examples alone, for :func:`is_abandon` and
:func:`is_capability_question`."""


def intent_scores(text: str) -> dict[str, float]:
    """The message's score for each of the router's own intents (``@capabilities``, ``@abandon``), 0 to 1."""
    if len(words(text)) > 14:  # a long message is a request or an answer, not "never mind"
        return {}
    rest = _GREETING.sub("", text)  # "hi, I can't log in" is about logging in; "hi" alone is a greeting
    return _intent_index().scores(rest if words(rest) else text)


def _is_intent(label: str, text: str) -> bool:
    scores = intent_scores(text)
    best = max(scores, key=lambda key: scores[key], default=None)
    return best == label and scores[label] >= INTENT_THRESHOLD


def says_stop(text: str) -> bool:
    """True when ``text`` says to stop (:func:`cancels`) and is not a longer question about something else ("should
    I stop taking it?")."""
    return cancels(text) and not (is_question(text) and len(words(text)) > 4)


_CANCEL_THEN = re.compile(
    r"^\s*(?:oh\s+|ok(?:ay)?\s+|actually\s+|no\s+)?(?:never\s*mind|nevermind|nvm|cancel(?:\s+(?:that|it|this))?|"
    r"forget\s+(?:it|that|this|about\s+it)|scrap\s+that|stop(?:\s+that)?|skip\s+(?:it|that)|leave\s+it)"
    r"\s*(?:[,.;:!-]+|\s+and|\s+(?=(?:what|where|when|how|who|which|can|could|i|please|let'?s)\b))\s*(?P<rest>.+)$",
    re.IGNORECASE,
)


_ON_MY_OWN = re.compile(
    r"(?:i'?ll|i\s+will|i'?m\s+(?:going|gonna)|i'?d\s+rather|i\s+can|i\s+(?:have|already)|we'?ll|that'?s)\b",
    re.IGNORECASE,
)


_ASKS_TO = re.compile(
    r"(?:please\s+|can\s+you\s+|could\s+you\s+|just\s+)?(?:book|make|write|draft|craft|find|show|tell|give|get|"
    r"check|renew|reserve|change|add|send|help|look|open|start|create|plan|compare|save|set|update|pay|order|"
    r"schedule|explain|refill|arrange)\b",
    re.IGNORECASE,
)


def cancels_then(text: str) -> str | None:
    """What a message that first drops the pending task asks next ("nevermind, where do I find my claim id" asks
    "where do I find my claim id"), or ``None`` when it does not start by cancelling or asks nothing more."""
    found = _CANCEL_THEN.match(straight(text))
    if found is None:
        return None
    rest = found["rest"].strip()
    if len(words(rest)) < 3 or _ON_MY_OWN.match(rest):  # "forget it, I'll call the pharmacy myself" asks nothing
        return None
    return rest if is_question(rest) or looks_like_request(rest) or _ASKS_TO.match(rest) else None


def is_abandon(text: str) -> bool:
    """True when a short message abandons the pending task ("nvm", "actually, cancel that", "forget about it"): it
    says to stop (:func:`says_stop`), and past three words it is also closest to the abandon intent's examples
    ("never mind the cost, write the letter" is no abandon)."""
    if not says_stop(text) or len(words(text)) > 8:
        return False
    return len(words(text)) <= 3 or _is_intent(ABANDON, text)


def is_capability_question(text: str) -> bool:
    """True when the message asks what the assistant can do (or only greets), judged by similarity to the
    capability intent's examples."""
    return _is_intent(CAPABILITIES, text)


def looks_like_request(text: str) -> bool:
    """True when the message reads as a new request or question rather than an answer to one."""
    return "?" in text or (_REQUEST_START.match(text) is not None and len(words(text)) >= 3)


def _stems(text: str) -> list[str]:
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def _same(word: str, said: str) -> bool:
    """One word of an option and one said: equal stems, one a prefix of the other ("physio"), or one typo."""
    if word == said:
        return True
    short, long = (word, said) if len(word) <= len(said) else (said, word)
    size = len(short)
    if size < 4:
        return False
    if long.startswith(short) or (size >= 5 and long[:4] == short[:4]):
        return True
    return one_typo(short, long)


def _share(parts: tuple[str, ...], said: list[str]) -> float:
    """The fraction of an option's word stems (``parts``) that ``said`` has, allowing prefixes and typos."""
    if not parts:
        return 0.0
    return sum(1 for p in parts if any(_same(p, w) for w in said)) / len(parts)


def affirmed(text: str) -> str:
    """The clauses of ``text`` that are not negated ("No, I'm not a partner, I'm staff" gives "I'm staff")."""
    return " ".join(c for c in clauses(text) if not negated(c))


@functools.lru_cache(maxsize=1024)
def _option(option: str) -> tuple[tuple[str, ...], str]:
    """An option's word stems (stopwords aside) and its initials ("gp" for "General practice"; none for one word),
    read once per option of the app's choices."""
    parts = words(option)
    return tuple(_stems(option)), "".join(p[0] for p in parts) if len(parts) >= 2 else ""


def _mended(options: tuple[str, ...], text: str) -> str:
    """``text`` with each word of four letters or more that no option has, but that is an option's word with two
    neighbouring letters swapped or one letter left out or doubled, made that word ("hoem" is home, "motr" motor).
    A changed letter is no slip here: "hope" and "come" are words of their own, not "home"."""
    known = {w for option in options for w in words(option) if len(w) >= 4}

    def mend(match: re.Match[str]) -> str:
        typed = match.group(0).lower()
        if typed in known or typed in STOPWORDS:
            return match.group(0)
        found = [w for w in known if one_typo(typed, w, changes=False)]
        return found[0] if len(found) == 1 else match.group(0)

    return re.sub(r"[A-Za-z]{4,}", mend, text) if known else text


_SAME_AS = {
    **dict.fromkeys(("collect", "fetch", "grab"), "pickup"),
    **dict.fromkeys(("car", "vehicl", "auto", "van", "truck", "motorbik", "motorcycl"), "motor"),
    **dict.fromkeys(("deliv", "send", "post", "mail", "ship", "couri", "bring", "drop"), "delivery"),
    **dict.fromkeys(("hous", "flat", "apartment", "address", "place"), "hom"),
}
"""Everyday words for what an option says, as stems: "collect it" is a pickup, "send it to my house" a home
delivery, "my car" motor (a rule-based reading has no synonyms of its own; these are the ones service choices meet
most)."""

_CAPITALS = re.compile(r"\b[A-Z]{2,}\b")
"""A word in capitals, as an abbreviation is typed ("GP")."""


def _choice(options: list[str], text: str) -> str | None:
    stripped = text.strip().rstrip(".!").strip()
    if stripped.isdigit() and 1 <= int(stripped) <= len(options):
        return options[int(stripped) - 1]
    place = ordinal(stripped, len(options))
    if place is not None:
        return options[place]
    if len(stripped.split()) <= 3:  # a short answer: a slip in an option's word is that word ("hoem", "motr")
        text = _mended(tuple(options), text)
    said_words = words(text)
    abbreviated = [o for o in options if (initials := _option(o)[1]) and initials in said_words]
    # "GP" for "General practice": in a short answer, typed in capitals as an abbreviation is, or lowercase when
    # the initials have no vowel (no English word: "book a gp appointment", but not "it" for "information technology")
    if len(abbreviated) == 1:
        initials = _option(abbreviated[0])[1]
        if len(said_words) <= 4 or initials.upper() in _CAPITALS.findall(text) or not set(initials) & set("aeiouy"):
            return abbreviated[0]
    said: list[str] = []
    refused_words: list[str] = []
    for clause in clauses(text):
        stems = _stems(clause)
        (refused_words if negated(clause) else said).extend(stems + [_SAME_AS[s] for s in stems if s in _SAME_AS])
    scored: list[tuple[float, str]] = []
    refused: list[str] = []
    for option in options:
        parts = _option(option)[0]
        share = _share(parts, said)
        if share < 0.5 and _share(parts, refused_words) >= 0.5:
            refused.append(option)
        elif share >= 0.5:
            scored.append((share, option))
    if not scored:
        rest = [o for o in options if o not in refused]
        return rest[0] if refused and len(rest) == 1 else None  # "not Home" of Home or Motor: Motor
    scored.sort(key=lambda item: -item[0])
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        return None  # both options named: ambiguous
    return scored[0][1]


def fit_expectation(expectation: Expectation | None, text: str) -> str | None:
    """What in ``text`` answers ``expectation``: the chosen option, the matched pattern, or the text itself. An
    answer that changes its mind ("dentist. no wait, physio": :func:`podium.human.corrected`) means what it changed
    to.

    ``None`` when the text does not fit (an empty text never fits).
    """
    if not text.strip():
        return None
    if expectation is None or expectation.type == "text":
        return text.strip()
    last = corrected(text)  # "dentist. no wait, physio": what it changed to, first
    changed = fit_expectation(expectation, last) if last is not None and last != text.strip() else None
    if changed is not None:
        return changed
    if expectation.type == "choice":
        return _choice(list(expectation.options), expectation.in_option_words(text))  # "the teeth one": Dental
    if expectation.pattern is None:
        return text.strip()
    try:
        found = re.search(expectation.pattern, text) or re.search(expectation.pattern, joined_codes(text))
    except re.error:
        return None
    return found.group(0) if found else None


def corrections(text: str, expected: Mapping[str, Expectation]) -> dict[str, str]:
    """What a correction ("no wait, I meant 4411BA") says of each named slot: ``{name: value}`` for each slot whose
    expectation ``text`` answers (:func:`fit_expectation`), for a tool that ``takes_corrections``. A free-text slot
    is never taken from a correction (it would take the whole sentence)."""
    found = {
        name: fit_expectation(expectation, text) for name, expectation in expected.items() if expectation.type != "text"
    }
    return {name: value for name, value in found.items() if value is not None}
