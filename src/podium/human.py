"""What people say that every agent reads the same way: an emergency, yes and no in their many forms, and "never mind".

These are the agent-independent parts of reading a person: the master agent's router screens every message with
:func:`emergency` and :func:`cancels`; a question asked with :meth:`podium.RunContext.ask` takes "yeah" or "nope"
for yes or no (:meth:`podium.Expectation.fit` uses :func:`yes_or_no`), is declined by "never mind"
(:func:`declines`), and answers an emergency with :data:`EMERGENCY_REPLY` before asking again. An app's own
offline stand-ins use them too, so that no assistant answers "my friend isn't breathing" with the weather.

They are phrase lists, not a model: they catch the common ways of saying these things in English and nothing more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from podium._spelling import one_typo

__all__ = [
    "EMERGENCY_REPLY",
    "Caseless",
    "Lazy",
    "approval",
    "cancels",
    "clauses",
    "corrected",
    "corrects",
    "declines",
    "elided",
    "emergency",
    "is_question",
    "joined_codes",
    "leaves",
    "leaves_choice",
    "negated",
    "one_typo",
    "ordinal",
    "pleasantry",
    "requests_in",
    "says_goodbye",
    "straight",
    "unsure",
    "yes_or_no",
]

EMERGENCY_REPLY = (
    "This sounds like an emergency. Please call your local emergency number now (000, 911, 112 or 999), or go to the "
    "nearest emergency department; if you are thinking of ending your life, call a crisis line. I can't help with "
    "it here."
)
"""What an assistant says to a message describing an emergency (:func:`emergency`)."""

_ESCAPE = re.compile(r"\\.")
_CODED_OR_FLAGS = re.compile(r"\\[0-7NuUx]|\(\?[aiLmsux-]")


class Caseless:
    """A case-insensitive regular expression, searched fast.

    Python's ``re`` searches a case-insensitive pattern several times slower than a case-sensitive one: it folds
    every character it compares and cannot skip ahead to a literal. An ASCII text is lowercased (every character
    keeps its place) and searched with the pattern as written, which finds the same match; any other text is
    searched case-insensitively. So the pattern must be lowercase ASCII outside its escapes (``\\b``, ``\\S``),
    with no character given by code (``\\x4b``) and no inline flags. Each form is compiled when first needed, so
    importing a module of phrase lists compiles nothing.
    """

    __slots__ = ("_folded", "_lower", "_pattern")

    def __init__(self, pattern: str) -> None:
        """Keep ``pattern``.

        Raises:
            ValueError: the pattern has a letter that is not lowercase ASCII, a character given by its code, or an
                inline flag.
        """
        bare = _ESCAPE.sub("", pattern)
        if not bare.isascii() or bare != bare.lower() or _CODED_OR_FLAGS.search(pattern):
            raise ValueError(f"a Caseless pattern is lowercase ASCII without codes or flags: {pattern!r}")
        self._pattern = pattern
        self._lower: re.Pattern[str] | None = None
        self._folded: re.Pattern[str] | None = None

    def find(self, text: str) -> str | None:
        """The first match in ``text``, as written there, or ``None``."""
        if text.isascii():
            if self._lower is None:
                self._lower = re.compile(self._pattern)
            found = self._lower.search(text.lower())
            return None if found is None else text[found.start() : found.end()]
        if self._folded is None:
            self._folded = re.compile(self._pattern, re.IGNORECASE)
        match = self._folded.search(text)
        return None if match is None else match.group(0)


class Lazy:
    """A regular expression compiled when first used, so that importing a module of phrase lists compiles nothing
    (compiling this module's patterns took longer than the rest of ``import podium``'s own modules together)."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int | re.RegexFlag = 0) -> None:
        """Keep ``pattern`` and its ``flags`` (as :func:`re.compile` takes them)."""
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled on the first call)."""
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def match(self, text: str) -> re.Match[str] | None:
        """:meth:`re.Pattern.match`."""
        return self.compiled.match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        """:meth:`re.Pattern.fullmatch`."""
        return self.compiled.fullmatch(text)

    def search(self, text: str) -> re.Match[str] | None:
        """:meth:`re.Pattern.search`."""
        return self.compiled.search(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """:meth:`re.Pattern.finditer`."""
        return self.compiled.finditer(text)

    def split(self, text: str) -> list[str | Any]:
        """:meth:`re.Pattern.split`."""
        return self.compiled.split(text)

    def sub(self, replacement: str | Callable[[re.Match[str]], str], text: str) -> str:
        """:meth:`re.Pattern.sub`."""
        return self.compiled.sub(replacement, text)


_SOMEONE = r"(?:i'?m|i\s+am|i've\s+been|i\s+have\s+been|he'?s|she'?s|they'?re|we'?re|is|are|was|were|been|got|get)"

_PERSON = (
    r"(?:he|she|they|i|friend|dad|mom|mum|father|mother|husband|wife|partner|son|daughter|someone|somebody|man|woman|"
    r"person|child|baby|kid|boy|girl|colleague|co-?worker|boss|neighbou?r|patient|brother|sister|grandma|grandpa|"
    r"grand(?:mother|father)|uncle|aunt|guy|lady|student|customer|toddler)"
)
"""Who an emergency happens to, as people name them ("my dad", "a colleague")."""

_EMERGENCY = Caseless(
    # breathing, the heart, consciousness
    r"\b(?:can'?t|cannot|can\s+not|unable\s+to|struggling\s+to|hard\s+to|trouble|difficulty)\s+breath\w*|"
    r"\b(?:not|isn'?t|aren'?t|wasn'?t|stopped|stops|no\s+longer)\s+breathing|\bchoking\b|"
    r"\bchest\s+pains?|\bpains?\s+in\s+(?:my|his|her|the)\s+chest|\bheart\s+attack|\bcardiac\s+arrest|"
    r"\bhaving\s+a\s+stroke|\b(?:face|mouth|smile)\s+(?:is\s+)?droop\w*|\bdroop\w*\s+face|"
    r"\b(?:face|mouth|smile)\s+(?:has\s+|just\s+|suddenly\s+)*(?:went|goes|gone|looks|is|turned)\s+(?:all\s+|very\s+)?"
    r"(?:droopy|lopsided|crooked|uneven|numb|slack)|\bsmile\s+(?:is\s+|looks\s+|went\s+)?(?:crooked|lopsided|uneven)|"
    r"\bspeech\s+(?:is\s+|went\s+)?(?:all\s+)?(?:jumbled|garbled|muddled|slurred)|\bwords\s+(?:are\s+|keep\s+)?"
    r"coming\s+out\s+(?:all\s+)?(?:jumbled|garbled|muddled|slurred|wrong)|\bfainted\s+and\s+(?:is\s+not|isn'?t|not|won'?t|can'?t|hasn'?t)\s+(?:been\s+)?(?:waking|responding|"
    r"breathing|moving|woken|come\s+round)|"
    r"\b(?:signs?|symptoms?)\s+of\s+(?:a\s+)?stroke|\bthink\s+(?:it'?s|(?:he|she|they)'?s\s+having)\s+a\s+stroke|"
    r"\bone\s+side\s+of\s+(?:\w+'?s?\s+){0,2}face\s+(?:has\s+|is\s+|just\s+|suddenly\s+|gone\s+)*"
    r"(?:dropped|drooped|droop\w*|fallen|sagg\w+|slump\w*|numb|paraly[sz]ed|frozen)|"
    r"\bsuddenly\s+(?:can'?t|cannot|unable\s+to)\s+(?:speak|talk|get\s+(?:his|her|their|my)\s+words\s+out)|"
    r"\b(?:can'?t|cannot)\s+(?:speak|talk)\s+properly\b(?=.*\b(?:arm|leg|face)\b)|"
    r"\b(?:arm|leg|hand)\s+(?:suddenly\s+)?(?:went|goes|is|has\s+gone|feels|is\s+going)\s+(?:all\s+)?"
    r"(?:numb|weak|limp|dead)\b(?=.*\b(?:face|speech|speak|talk|words)\b)|"
    r"\b(?:can'?t|cannot|unable\s+to)\s+(?:lift|raise|move|feel)\s+(?:my|his|her|their|one)\s+(?:arm|leg|side)|"
    r"\bslurr\w*\s+(?:speech|words|(?:his|her|my|their)\s+words)|\bseizures?\b|\bconvuls\w*|\bunconscious|"
    r"\bunresponsive|\bpassed\s+out|\b(?:he|she|they|he'?s|she'?s|they'?re)\s+(?:is\s+|are\s+|was\s+)?"
    r"(?:not|isn'?t|no\s+longer)\s+(?:responding|moving|waking\s+up)\b|"
    rf"\b{_PERSON}\s+(?:has\s+|just\s+|suddenly\s+)?fainted\b|"
    rf"\bclutch\w*\s+(?:his|her|my|their)\s+chest|\b{_PERSON}\s+(?:just\s+)?fell\s+(?:off|from|down)\s+(?:a|the)\s+"
    r"(?:cliff|roof|ladder|balcony|stairs|building|window)|\b(?:he|she|they|i|friend|dad|mom|mum|father|mother|husband|wife|partner|son|"
    r"daughter|someone|somebody|man|woman|person|child|baby|kid|boy|girl|colleague|co-?worker|boss|neighbou?r|"
    r"patient|brother|sister|grandma|grandpa|grand(?:mother|father)|uncle|aunt|guy|lady|student|customer)"
    r"\s+(?:has\s+|just\s+|suddenly\s+)?collapsed|"
    r"\bwon'?t\s+wake\s+up|\bcan'?t\s+wake\s+(?:him|her|them)|"
    # blood and injuries
    rf"\bbleeding\s+(?:heavily|badly|a\s+lot|profusely|everywhere|out)|\b{_SOMEONE}\s+bleeding\b|"
    rf"\b{_SOMEONE}\s+(?:badly\s+|seriously\s+|really\s+)?(?:hurt|injured|wounded|stabbed|shot)\b|"
    r"\b(?:badly|seriously|critically)\s+(?:hurt|injured|burn(?:ed|t))|\bbroken\s+(?:neck|back|skull)|"
    # poisonings, overdoses, self-harm
    r"\boverdos\w*|\b(?:swallow(?:ed|ing)?|drank|drunk|ate|eaten|took|taken|taking)\s+(?:\w+\s+){0,3}"
    r"(?:bleach|poison\w*|detergent|batter(?:y|ies)|chemicals?|cleaning\s+products?|rat\s+bait|antifreeze)|"
    r"\b(?:swallow(?:ed|ing)?|took|taken|taking|ate|eaten)\s+(?:too\s+many|a\s+(?:whole|full)\s+(?:bottle|packet|box)"
    r"\s+of|an?\s+(?:entire|handful\s+of|lot\s+of)|all\s+(?:of\s+)?(?:my|the|his|her|their))\s+(?:\w+\s+){0,2}"
    r"(?:pills|tablets|meds|medicines?|medications?|capsules|painkillers|paracetamol|sleeping\s+\w+)|"
    r"\btoo\s+many\s+(?:pills|tablets|painkillers|sleeping\s+pills)|\bsuicid\w*|"
    r"\b(?:got|gotten|been)\s+into\s+(?:my|the|his|her|their|our)\s+(?:pills|tablets|meds|medicines?|medications?|"
    r"painkillers)|\bswallow(?:ed|ing)?\s+a\s+handful\b|\bswallow(?:ed|ing)?\s+(?:some|a\s+bunch\s+of|a\s+lot\s+of|several|"
    r"(?:my|the|his|her|their|our))\s+(?:\w+\s+)?(?:pills|tablets|meds|medicines?|medications?|capsules|painkillers)|"
    r"\bkill(?:ing)?\s+(?:my|him|her|them)sel(?:f|ves)|\bend\s+(?:my\s+life|it\s+all)\b|\bwant\s+to\s+die|"
    r"\bself[-\s]?harm\w*|\bhurt(?:ing)?\s+myself|\banaphyla\w*|\ballergic\s+reaction|"
    r"\b(?:throat|tongue|lips?|face|eyes?|mouth)\s+(?:is\s+|are\s+|has\s+|have\s+)?(?:swelling|swollen|swelled|"
    r"puffing|closing)(?:\s+up)?(?:\s+(?:fast|quickly|badly))?\b(?=.*\b(?:sting|stung|bee|wasp|allerg\w*|ate|eaten|"
    r"nuts?|peanuts?|shellfish|breath\w*|fast|quickly|suddenly)\b)|\b(?:throat|airway)\s+(?:is\s+)?closing\b|"
    r"\b(?:don'?t|do\s+not|no\s+longer)\s+want\s+to\s+(?:be\s+alive|exist(?!\s+(?:in|on|as)\b)|"
    r"live(?:\s+any\s*more|\s*$|\s*[.!,])|wake\s+up\s+(?:any\s*more|again))|\bwish(?:ing)?\s+(?:i\s+(?:was|were)|to\s+be)\s+"
    r"dead|\bbetter\s+off\s+dead|\bno\s+reason\s+to\s+(?:live|go\s+on)|\btake\s+my\s+(?:own\s+)?life|\bnot\s+worth\s+living|"
    # fire, gas, violence
    r"\b(?:is|are|was|been|caught|set)\s+on\s+fire|\bfire\s+in\s+(?:the|my|our|a)\s+(?:building|house|home|"
    r"kitchen|office|flat|apartment|server\s+room|room|garage|warehouse|school|hallway|basement|attic|car)\b|\bsmoke\s+"
    r"(?:coming|pouring|everywhere|alarm\s+(?:is\s+)?going)|\b(?:full\s+of|filling\s+with)\s+smoke|\b(?:house|home|flat|apartment|building|kitchen|car)\s+"
    r"(?:is\s+)?(?:burning|ablaze)|\bgas\s+leak|\bsmell\s+(?:of\s+)?gas\b|"
    r"\b(?:threaten\w*|going|gonna|trying)\s+to\s+(?:hurt|kill|attack|stab|shoot)\s+(?:me|us|him|her|them|my)|"
    r"\b(?:he|she|they|someone|somebody)(?:'ll|\s+will|'s\s+going\s+to|\s+is\s+going\s+to|'re\s+going\s+to|"
    r"\s+wants?\s+to|\s+said\s+(?:he|she|they)(?:'ll|'d|\s+will|\s+would))\s+(?:\w+\s+){0,4}?"
    r"(?:hurt|kill|attack|stab|shoot|beat\s+up)\s+(?:me|us)\b|"
    r"\b(?:being|been|was|got)\s+(?:attacked|assaulted|stabbed|shot|raped)|\b(?:attacking|hitting|beating)\s+me\b|"
    r"\b(?:has|have|with|holding)\s+a\s+(?:gun|knife|weapon)\b|\bbreaking\s+into\s+(?:my|our|the)\s+(?:house|home|flat)|"
    r"\bsomeone\s+(?:is\s+)?in\s+my\s+(?:house|home|flat)|\bcall\s+(?:an\s+)?(?:ambulance|911|999|112|000)\b"
)

_CANCEL = Caseless(
    r"\b(?:cancel\w*|stop|stopp\w*|forget|never\s*mind|nevermind|nvm|abort\w*|quit|scrap\w*|"
    r"drop\s+(?:it|this|that|the)(?!\s+(?:\w+\s+)?(?:round|off|by|over|in)\b)|skip\s+(?:it|this|that)|give\s+up|changed?\s+(?:my|our)\s+minds?|no\s+longer|"
    r"any\s*more|(?:don'?t|do\s+not|doesn'?t)\s+(?:want|need|bother)|leave\s+it|(?:let'?s|let\s+us)\s+not|"
    r"later|no\s+need|done\s+with\s+(?:this|it|that))\b"
)

_DECLINE = Lazy(
    r"^\s*(?:oh\s+|ok(?:ay)?[,\s]+|actually[,\s]+|um+[,\s]+)?(?:no[,\s]+)?(?:cancel(?:\s+(?:it|that|this))?|"
    r"stop(?:\s+(?:it|that|this))?|never\s*mind|nevermind|nvm|forget\s+(?:it|that|this|about\s+it)|skip(?:\s+it)?|"
    r"abort|quit|leave\s+it|don'?t\s+bother|not\s+now|no\s+thanks?(?:\s+you)?|i\s+changed\s+my\s+mind)"
    r"[\s.!,]*(?:please|thanks|thank\s+you)?[\s.!]*$",
    re.IGNORECASE,
)

_YES = frozenset(
    {
        *("yes", "y", "ye", "yea", "yeah", "yeh", "yep", "yup", "ya", "yas", "yessir", "sure", "ok", "okay", "k"),
        *("kk", "alright", "right", "correct", "affirmative", "absolutely", "definitely", "certainly", "indeed"),
        *("agreed", "fine", "please"),
    }
)
_POLITE = r"please|thanks|thank\s+you|cheers|mate|then|oh|well|um+|ah"
_YES_PHRASES = Lazy(
    r"^(?:(?:yes|yeah|yep|yup|sure(?:\s+thing)?|ok(?:ay)?|alright|of\s+course|please\s+do|go\s+ahead|do\s+it|"
    r"sounds\s+good|that'?s\s+(?:right|correct|fine)|why\s+not|by\s+all\s+means|for\s+sure|i\s+do|i\s+would|"
    r"no\s+problem|no\s+doubt|yes\s+please|(?:i\s+)?(?:approve|accept|confirm)(?:d)?|"
    rf"let'?s\s+do\s+it|go\s+for\s+it|{_POLITE})[\s,.!]*)+$",
    re.IGNORECASE,
)
_NO = frozenset(["no", "n", "nope", "nah", "nay", "negative", "never"])
_NO_FIRST = Lazy(r"(?:no|nope|nah)\b(?!\s+(?:problem|probs?|worries|worry|doubt|question|one)\b)(?!')")
"""A no that the answer begins with, then goes on; not "no problem" or "no doubt", which say yes."""
_NO_PHRASES = Lazy(
    r"^(?:(?:no|nope|nah|no\s+way|not\s+really|not\s+at\s+all|not\s+now|i\s+don'?t|i\s+do\s+not|don'?t|do\s+not|"
    r"no\s+thanks?(?:\s+you)?|better\s+not|rather\s+not|i'?d\s+rather\s+not|definitely\s+not|absolutely\s+not|"
    r"i\s+(?:guess|think|suppose)\s+not|i\s+don'?t\s+think\s+so|i\s+do\s+not\s+think\s+so|"
    r"(?:i\s+)?(?:reject(?:ed)?|deny|denied|decline[d]?)|"
    rf"of\s+course\s+not|{_POLITE})[\s,.!]*)+$",
    re.IGNORECASE,
)


_CODE_GAPS = Lazy(r"(?<=\d)[ -](?=\d)|(?<=\b[A-Za-z])[ -](?=\d)|(?<=\d)-(?=[A-Za-z])")


def joined_codes(text: str) -> str:
    """``text`` with the spaces and dashes people put inside numbers and codes taken out: "P 123 456" is
    "P123456", "0412 345 678" is "0412345678", "123-ABH" is "123ABH" (a pattern that did not match the text as
    typed may match this)."""
    return _CODE_GAPS.sub("", text)


_TA = (
    r"(?:(?:ok(?:ay)?|cool|great|nice|lovely|brilliant|perfect|awesome|sweet|good|right|alright|oh|ah|mate)[\s,.!]+)*"
    r"ta(?:[\s,.!]+(?:very\s+much|muchly|so\s+much|a\s+lot|mate|love|again|then|for\s+(?:that|this|everything|"
    r"(?:the|your|all\s+the|all\s+your)\s+help)))*$"
)
"""British "ta" for thanks, alone or with a few words of small talk ("ok cool, ta", "ta very much"): only then,
since "ta" in a longer message may be a word or a code of its own."""
_PLEASANTRIES = (
    ("greeting", Lazy(r"(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening|day))\b")),
    ("thanks", Lazy(rf".*\b(?:thanks|thank you|thx|cheers)\b|{_TA}")),
    ("goodbye", Lazy(r"(?:bye|goodbye|see you)\b")),
    (
        "capabilities",
        Lazy(
            r".*\b(?:help|what (?:can|could|do) (?:you|u|ya) (?:do|help with|offer)|(?:who|what) (?:are|r) (?:you|u)|"
            r"what can i ask|how does this work|what do (?:you|u) know|"
            r"what (?:kinds?|sorts?|types?) of (?:stuff|things|questions|info\w*) (?:do|can) (?:you|u))\b"
        ),
    ),
)


def pleasantry(text: str) -> str | None:
    """What a message that is no request says, when it starts so (or, for thanks and "what can you do?", holds it):
    ``"greeting"``, ``"thanks"``, ``"goodbye"`` or ``"capabilities"``; ``None`` otherwise. Stand-in models answer
    these with their own words."""
    bare = straight(text).lower().strip(" ?!.,")
    found = next((kind for kind, said in _PLEASANTRIES if said.match(bare)), None)
    return found or ("goodbye" if says_goodbye(text) else None)  # "actually I'm off, bye"


_GOODBYE = Lazy(
    r"\b(?:bye|goodbye|bye-bye|ciao|cya|ta[\s-]ta|take\s+care|(?:i'?m\s+)?heading\s+(?:off|out)(?:\s+now)?(?=\W*(?:thanks?\W*)?$)|"
    r"see\s+(?:you|ya)(?:\s+later)?|(?:gotta|got\s+to|have\s+to|need\s+to|must)\s+"
    r"(?:go|run|dash|fly|head\s+off)(?!\s+(?:to|and|for|get|pick|buy|see|fetch|check|make|book|do|out|back|home|"
    r"into|in|at|through|over|with)\b)|(?:talk|speak|chat)\s+(?:to\s+you\s+)?(?:later|soon)|ttyl|"
    r"catch\s+you\s+later|(?:i'?ll|i\s+will)\s+come\s+back(?:\s+to\s+(?:this|it|that))?\s+later|i'?m\s+off\b"
    r"(?!\s+(?:to|work|sick)\b)|that'?s\s+all(?:\s+for\s+now)?|good\s*night|nite)\b",
    re.IGNORECASE,
)


def says_goodbye(text: str) -> bool:
    """True when ``text`` is a short message that takes leave ("thanks, bye", "ok I have to go", "that's all for
    now"): a question waiting for an answer is left unanswered, not asked again."""
    said = straight(text)
    return len(said.split()) <= 8 and _GOODBYE.search(said) is not None


def leaves(text: str) -> bool:
    """True when ``text`` takes leave (:func:`says_goodbye`) and says nothing else to stop or drop: "see you later"
    and "thanks, bye" leave a waiting question for later; "cancel that, bye" drops it."""
    return says_goodbye(text) and not cancels(_GOODBYE.sub(" ", straight(text)))


_QUESTION_START = Lazy(
    r"^\s*(?:what|what's|whats|when|where|why|how|who|which|whose|is|are|do|does|did|can|could|will|would|should|"
    r"shall|may|am|have|has)\b",
    re.IGNORECASE,
)


def is_question(text: str) -> bool:
    """True when ``text`` is put as a question (a question mark, or a question word or auxiliary verb first)."""
    return "?" in text or _QUESTION_START.match(straight(text)) is not None


_LEAVES_CHOICE = Lazy(
    r"\b(?:whatever(?:\s+you\s+(?:think|like|want|prefer))?|(?:you|u)\s+(?:choose|decide|pick|tell\s+me)|"
    r"up\s+to\s+(?:you|u)|your\s+call|(?:it\s+)?(?:doesn'?t|does\s+not|don'?t)\s+matter|"
    r"(?:i\s+)?(?:don'?t|do\s+not)\s+(?:mind|care)|(?:either|any)\s+(?:one|is\s+fine|will\s+do)|surprise\s+me|"
    r"the\s+usual|(?:you\s+know|whichever(?:\s+is)?)\s+best|no\s+preference|dealer'?s\s+choice)\b",
    re.IGNORECASE,
)


def leaves_choice(text: str) -> bool:
    """True when a short answer to a choice leaves it to the assistant ("whatever you think", "you decide", "the
    usual", "doesn't matter", "either one")."""
    return len(text.split()) <= 10 and _LEAVES_CHOICE.search(straight(text)) is not None


def straight(text: str) -> str:
    """``text`` with typographic apostrophes made straight (phones type "don’t")."""
    return text.replace("\u2019", "'")


def emergency(text: str) -> str | None:
    """The words of ``text`` that describe an emergency (someone cannot breathe, is unconscious, bleeding or hurt;
    chest pain or the signs of a stroke; a poisoning or an overdose; thoughts of suicide or self-harm; a fire, a gas
    leak, an attack or a threat), or ``None``. No task of an assistant should handle those: the person is sent to
    emergency services first (:data:`EMERGENCY_REPLY`)."""
    found = _EMERGENCY.find(straight(text))
    return None if found is None else " ".join(found.split())


def cancels(text: str) -> bool:
    """True when ``text`` says to stop or drop something ("cancel", "never mind", "nvm", "forget it", "I changed my
    mind", "no longer", "not any more"), anywhere in it."""
    return _CANCEL.find(straight(text)) is not None


def declines(text: str) -> bool:
    """True when ``text``, as a whole, declines to answer a question: "never mind", "cancel", "stop", "skip it",
    "forget it", "not now", "no thanks" (a word or two of politeness aside), and nothing more."""
    return _DECLINE.match(straight(text)) is not None


def yes_or_no(text: str, *, declines_as_no: bool = True) -> bool | None:
    """``True`` when ``text`` says yes ("y", "yeah", "sure", "ok", "go ahead", "yes please"), ``False`` when it says
    no ("n", "nope", "nah", "not now", "no thanks", and a decline: "never mind", "cancel", unless
    ``declines_as_no`` is false), ``None`` otherwise (anything more than that: "yes but make it Tuesday" is
    neither). A no that goes on is still no ("no, make it 7pm", "no. wrong time"): in doubt, the answer that does
    nothing; but "no idea" says neither, and "no problem" yes."""
    said = straight(text).strip().lower().rstrip(".!")
    if not said:
        return None
    if said in _YES:
        return True
    if not re.sub(rf"\b(?:{_POLITE})\b|[\s,.!]", "", said):  # politeness alone ("thanks") says neither
        return None
    if _YES_PHRASES.match(said):
        return True
    if _plain_no(said, declines_as_no=declines_as_no):
        return False
    if _NO_FIRST.match(said) and not unsure(said):  # "no, 7pm", "no. wrong time", "no wait, ...": a no that goes on
        return False
    return None


def _plain_no(said: str, *, declines_as_no: bool = True) -> bool:
    """Whether ``said`` (lowercase, stripped) is a no and nothing more ("nope", "no thanks", "never mind")."""
    return said in _NO or bool(_NO_PHRASES.match(said)) or (declines_as_no and declines(said))


_REJECTS = Lazy(
    r"(?:reject(?:ed)?|den(?:y|ied)|refused?|no(?:pe)?)(?:\s*[:,;.!-]\s*|\s+because\s+|\s*$)(?P<why>.*)", re.I | re.S
)
_EDIT = Lazy(r"(?:edit(?:ed)?|change(?:d)?|use)?\s*[:-]?\s*(?P<args>\{.*\})\s*", re.I | re.S)


def approval(text: str) -> str | None:
    """A decision on a proposed action read from ``text``: ``"approve"``, ``"reject"`` or ``"reject: <why>"``,
    ``"edit: <JSON object>"`` (the arguments to use instead, compact), or ``None`` when it says none of these.

    Taken: "approve" and every yes (:func:`yes_or_no`); "reject", "no" or "deny", each alone or with a reason
    ("no, too expensive"), and every plain no ("never mind"); "edit: {...}" or a JSON object alone.
    """
    said = straight(text).strip()
    if not said:
        return None
    edit = _EDIT.fullmatch(said)
    if edit:
        try:
            arguments = json.loads(edit.group("args"))
        except ValueError:
            return None
        return "edit: " + json.dumps(arguments, separators=(",", ":")) if isinstance(arguments, dict) else None
    bare = said.rstrip(".!").strip().lower()
    verdict = yes_or_no(said)
    if bare in ("approve", "approved", "accept", "allow") or verdict:
        return "approve"
    rejected = _REJECTS.fullmatch(said)
    if rejected and not _plain_no(straight(bare)):  # "no, too expensive": the reason goes with it
        why = rejected.group("why").strip().rstrip(".").strip()
        return f"reject: {why}" if why else "reject"
    if verdict is False:
        return "reject"
    return "reject" if re.match(r"(?:don'?t|do not|stop)\b", bare) else None


_JOINERS = Lazy(
    r"\s*(?:[,;]\s*)?\b(?:and\s+also|and\s+then|and|also|plus|as\s+well\s+as)\b\s*|\s*;\s*|\s*\?\s+(?=\S)",
    re.IGNORECASE,
)


_VALUE_TOKEN = Lazy(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]*")
"""A code: a word of letters and digits ("1122AA", "RX1234567", "P-111222"; a plain number is not one: "2 and 3"
are two numbers of one request)."""


def elided(before: str, part: str) -> str | None:
    """``part`` made whole from the request before it, when it only gives another code for it ("decline letters
    for claims 1122AA" and "3344BB, both motor" make "decline letters for claims 3344BB, both motor"; "refill
    RX1234567" and "RX7654321 please" make "refill RX7654321 please"), else ``None``: the words of ``before`` up to
    its first value, then ``part``, which starts with a value of its own."""
    said = part.lstrip(" ,;")
    first = _VALUE_TOKEN.match(said)
    found = _VALUE_TOKEN.search(before)
    if first is None or found is None or found.start() == 0:
        return None
    return before[: found.start()] + said


def requests_in(text: str) -> list[str]:
    """The requests ``text`` may hold, split where one sentence joins another ("book a GP appointment and also
    refill my prescription", "What are your hours? And how much do I owe?"): candidates, for a caller that checks
    each part is a request of its own (``[text]`` when nothing joins two parts of two words or more, or a value
    alone to a part with one: "refill RX1234567 and RX7654321", see :func:`elided`)."""
    kept: list[str] = []
    carried = ""  # a short part before any request: it goes with the next one
    for part in (p.strip(" ,.;") for p in _JOINERS.split(text)):
        another = bool(kept) and _VALUE_TOKEN.fullmatch(part) is not None and _VALUE_TOKEN.search(kept[-1]) is not None
        if len(part.split()) >= 2 or another:
            kept.append(f"{carried} {part}".strip())
            carried = ""
        elif kept:  # too short to be a request: it stays with the one before
            kept[-1] = f"{kept[-1]} {part}".strip()
        else:
            carried = f"{carried} {part}".strip()
    return kept if len(kept) > 1 else [text]


_UNSURE = Lazy(
    r"\b(?:not\s+sure|unsure|(?:do\s*n[o']?t|do\s+not|don't)\s+(?:know|have|remember)|no\s+idea|dunno|"
    r"(?:can'?t|cannot|could\s*n'?t)\s+(?:find|remember|see)|have\s*n'?t\s+got|have\s+not\s+got|forgot|"
    r"lost\s+(?:it|my)|no\s+clue)\b",
    re.IGNORECASE,
)


_ORDINALS = {
    **dict.fromkeys(("first", "1st", "one"), 1),
    **dict.fromkeys(("second", "2nd", "two"), 2),
    **dict.fromkeys(("third", "3rd", "three"), 3),
    **dict.fromkeys(("fourth", "4th", "four"), 4),
    **dict.fromkeys(("fifth", "5th", "five"), 5),
    **dict.fromkeys(("sixth", "6th", "six"), 6),
    **dict.fromkeys(("last", "final", "bottom"), -1),
}
_ORDINAL = Lazy(
    r"(?:(?:i'?ll\s+(?:take|have|go\s+with)|i\s+(?:want|choose|pick)|let'?s\s+(?:go\s+with|do)|go\s+with|make\s+it)\s+)?"
    r"(?:the\s+)?(?:(?P<word>first|second|third|fourth|fifth|sixth|last|final|bottom|1st|2nd|3rd|4th|5th|6th)"
    r"(?:\s+(?:one|option|choice))?|(?:option|number|choice|no\.?|#)\s*(?P<number>\d+|one|two|three|four|five|six))"
    r"(?:\s+(?:please|thanks|thank\s+you))?",
    re.IGNORECASE,
)


def ordinal(text: str, count: int) -> int | None:
    """The index (from 0) of the option ``text`` picks by its place among ``count`` options ("the second one",
    "option 2", "#3", "the last one", "I'll take the first"), or ``None`` (a bare digit is the caller's to read)."""
    said = _ORDINAL.fullmatch(straight(text).strip().rstrip(".!").strip())
    if said is None:
        return None
    key = (said["word"] or said["number"]).lower()
    place = int(key) if key.isdigit() else _ORDINALS[key]
    index = count - 1 if place == -1 else place - 1
    return index if 0 <= index < count else None


_CORRECTS = Caseless(
    r"^\s*(?:no+[,.!\s]+|oh+[,.!\s]+|ah+[,.!\s]+|hang\s+on[,.!\s]+)?(?:wait\b|sorry\b|oops\b|whoops\b|actually\b|"
    r"correction\b|my\s+(?:bad|mistake)\b|i\s+meant?\b|wrong\s+(?:one|number|id|code)\b|that'?s\s+(?:wrong|not\s+right)\b|"
    r"make\s+(?:it|that)\b|change\s+(?:it|that)\s+to\b|it\s+should\s+(?:be|say|have\s+been)\b)|"
    r"\bi\s+meant\b|\bshould\s+have\s+(?:said|been)\b|\btypo\b|\bwrong\s+(?:one|number|id|code)\b"
)


_CORRECTION_MARK = Lazy(
    r"(?:\bno+\s+wait\b|\bwait\b|\bsorry\b|\bactually\b|\bi\s+meant\b|\bi\s+mean\b|\bmake\s+(?:it|that)\b|"
    r"\bchange\s+(?:it|that)\s+to\b|\bit\s+should\s+(?:be|say)\b|\bcorrection\b|\boops\b|\bmy\s+(?:bad|mistake)\b)"
    r"[\s,.:;!-]*",
    re.IGNORECASE,
)


def corrected(text: str) -> str | None:
    """What ``text`` says after its last correction ("dentist. no wait, physio": "physio"; "4411AB, sorry I
    meant 4411BA": "4411BA"), or ``None`` when it corrects nothing or nothing follows: an answer that changes its
    mind means its last word."""
    said = straight(text)
    last = None
    for last in _CORRECTION_MARK.finditer(said):  # noqa: B007 - the last one is wanted
        pass
    if last is None:
        return None
    rest = said[last.end() :].strip(" ,.;:!?-")
    return rest or None


def corrects(text: str) -> bool:
    """True when ``text`` corrects something said before ("no wait, I meant 4411BA", "sorry, wrong one: it's
    P-111223", "actually make it 9", "oops, typo"): a tool may read again what it was told."""
    return _CORRECTS.find(straight(text)) is not None


def unsure(text: str) -> bool:
    """True when ``text`` says the person does not know or have what was asked ("I'm not sure", "I don't have
    one", "no idea", "I can't find it", "I forgot")."""
    return _UNSURE.search(straight(text)) is not None


_NEGATION = Lazy(
    r"\b(?:not|no|never|neither|nor|isn'?t|aren'?t|wasn'?t|don'?t|doesn'?t|won'?t|n't|rather\s+than|instead\s+of)\b"
)
_CLAUSE = Lazy(r"[,;:.!?()\u2013\u2014]|\s-\s|\bbut\b|\bso\b", re.IGNORECASE)


def clauses(text: str) -> list[str]:
    """The clauses of ``text`` (apostrophes straightened), split at punctuation, a dash, "but" and "so": what a
    negation reaches ("No, I'm not a partner, I'm staff" has three)."""
    return [c for c in _CLAUSE.split(straight(text)) if c.strip()]


def negated(clause: str) -> bool:
    """Whether ``clause`` (one of :func:`clauses`) says no to what it names ("not Motor", "I don't want Home",
    "rather than Dental")."""
    return _NEGATION.search(clause.lower()) is not None
