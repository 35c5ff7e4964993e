"""What a person's message to the plan service is when it is not a verdict: small talk, a question, a stop said
in other words, a correction of the plan, or a new task (docs/plan.md, "What a message is").

These are checks on words, made before a planner sees a message and while a plan waits for an answer: a greeting
or a question is never planned as a task, and "ok stop here" at a step stops the plan. They err towards asking
again: a message they cannot place is asked about, not acted on.
"""

from __future__ import annotations

import re

from podium import human
from podium.human import declines, straight
from podium.orchestration.plan.facts import DATE, TIME, WEEKDAYS, people, ruled_out

__all__ = [
    "again_for",
    "corrects",
    "ends",
    "ends_for_a_reason",
    "is_question",
    "named",
    "next_task",
    "relation",
    "small_talk",
]


def _said(text: str) -> str:
    """``text`` lower-cased, apostrophes straight, punctuation as spaces."""
    return " ".join(re.findall(r"[a-z0-9']+", straight(text).lower()))


_DAYS = rf"{WEEKDAYS}|weekend|week|day|holidays?|new\s+year|christmas|easter|birthday|friyay"
"""What a wish names ("happy friday", "have a good weekend"): small talk, never the date of a task."""
_CHAT = re.compile(
    r"\b(?:hi|hello|hey|hiya|howdy|yo|greetings|(?:good\s+)?(?:morning|afternoon|evening)|good\s+(?:day|night)|"
    r"how\s+(?:are|r)\s+(?:you|u|things)(?:\s+doing|\s+today)?|how's\s+it\s+going|how\s+is\s+it\s+going|"
    r"how\s+do\s+you\s+do|what's\s+up|whats\s+up|sup|nice\s+to\s+meet\s+you|"
    r"thanks|thank\s+you|thx|ty|cheers|much\s+appreciated|bye|goodbye|see\s+you|see\s+ya|"
    r"ok|okay|cool|nice|great|awesome|perfect|lovely|wow|lol|haha|hmm+|um+|ah|oh|there|so|much|very|all|"
    r"again|just|well|fine|alright|good|sounds|you|u|too|and|anyway|for|now|everyone|team|folks|friend|buddy|"
    r"a\s+lot|lots|heaps|loads|today|guys|mate|(?:that's|that\s+is|thats)\s+(?:all\s+i\s+need(?:ed)?|all|it|great|good|fine|perfect|"
    r"cool|nice|awesome|lovely|helpful|everything)|i'm\s+(?:all\s+)?(?:done|good|set|sorted)|"
    r"(?:all\s+)?sorted|(?:all\s+)?done|nothing\s+else|(?:that's|thats)\s+all\s+for\s+(?:now|today)|"
    rf"(?:happy|(?:have|enjoy)\s+(?:a|the|your)\s+(?:good|great|nice|lovely|relaxing\s+)?)\s*(?:{_DAYS})|tgif)\b(?!')"
)
_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|howdy|yo|greetings|(?:good\s+)?(?:morning|afternoon|evening)|good\s+day)\b"
)
_THANKS = re.compile(r"\b(?:thanks|thank\s+you|thx|ty|cheers|much\s+appreciated)\b")
_BYE = re.compile(r"\b(?:bye|goodbye|see\s+you|see\s+ya|good\s+night)\b")


def small_talk(text: str, verbs: frozenset[str] = frozenset()) -> str | None:
    """What a message made only of small talk says: ``"greeting"`` ("hi there, how are you?", or a greeting with a
    short question of chat after it: "hey! busy day?", "hello, anyone there?"), ``"thanks"``, ``"goodbye"`` or
    ``"chat"`` ("cool", "lol"); ``None`` when anything else is in it ("hi, order a laptop", "hey, can you onboard
    Ada Lovelace?", or one starting with one of ``verbs``, the catalogue's tool verbs: "hey, order a laptop?")."""
    said = _said(text)
    if said and _GREETING.match(said) and _chat_after(text, verbs):
        return "greeting"
    if not said or _CHAT.sub(" ", said).strip():
        return None
    if _BYE.search(said):
        return "goodbye"
    if _THANKS.search(said):
        return "thanks"
    return "greeting" if _GREETING.match(said) else "chat"


def _chat_after(text: str, verbs: frozenset[str]) -> bool:
    """Whether what follows a greeting is a short question asking for nothing ("busy day?", "you there?"): no
    request ("can you ...", a tool's verb first), no person, date or number, at most five words."""
    rest = without_small_talk(text)
    if rest == text.strip() or not rest.rstrip().endswith("?") or re.search(r"\d|\b[A-Z][a-z]+\s+[A-Z][a-z]+", rest):
        return False
    said = _said(rest)
    return 0 < len(said.split()) <= 5 and not _ASKS_FOR.match(said) and said.split()[0] not in verbs


def without_small_talk(text: str) -> str:
    """``text`` without the small talk it starts with ("cool. what do you do?" is "what do you do?")."""
    rest = text.strip()
    while True:
        head = re.match(r"^([^,.!?;:]+)[,.!?;:]+\s*", rest)
        if head is None or small_talk(head.group(1)) is None or not rest[head.end() :].strip():
            return rest
        rest = rest[head.end() :]


_ASKS = re.compile(
    r"^(?:what|what's|whats|who|who's|whom|whose|where|where's|when|when's|why|how|how's|which|"
    r"is|isn't|are|aren't|am|was|were|have|has|had|should|shall|"
    r"(?:do|does|doesn't|don't|did|didn't)\s+(?:you|u|i|we|they|he|she|it|ya|anyone|someone|people))\b"
)
"""How a question starts ("do you ..." asks; "do that for Ada" does not)."""
_ASKS_FOR = re.compile(
    r"^(?:(?:can|could|would|will)\s+(?:you|u|we|i|someone)|would\s+it\s+be\s+possible|is\s+it\s+possible|"
    r"do\s+you\s+mind|please|pls|kindly|how\s+about|what\s+about)\b"
)


def is_question(text: str) -> bool:
    """Whether ``text`` asks something ("what's 2+2", "how many steps are left?", "is it raining?") rather than
    asking for something to be done ("can you order a laptop?", "could you please onboard Ada?" are requests)."""
    said = _said(without_small_talk(text))
    if not said or _ASKS_FOR.match(said):
        return False
    return bool(_ASKS.match(said))


_END_CORE = re.compile(
    r"\b(?:stop|stopping|cancel\w*|abort|quit|halt|end|enough|done|never\s*mind|nevermind|nvm|scrap\w*|"
    r"forget\s+(?:it|about\s+it|this|that|everything|the\s+whole\s+thing)|no\s+more|drop\s+(?:it|this|that)|"
    r"leave\s+it|call\s+it\s+(?:a\s+day|quits)|chang(?:e|ed)\s+(?:my|our)\s+minds?|give\s+up|"
    r"(?:don't|dont|do\s+not)\s+(?:want|need)\s+(?:it|this|that|any\s+of\s+(?:it|this|that))(?:\s+any\s*more)?)\b"
)
_END_FILL = re.compile(
    r"\b(?:ok|okay|oh|so|please|pls|thanks|thank\s+you|here|there|now|for\s+now|right|just|then|actually|"
    r"i|i'm|im|we|we're|were|let's|lets|let|us|can|want|to|be|am|are|all|it|this|that|that's|the|plan|steps?|"
    r"everything|rest|of|wait|no|hmm|yeah|yes|sorry|with|at|point|think|alright|well|guys|maybe|shall|today|"
    r"hold|hang|on|whole|thing|lot|stuff|after\s+all|instead|go|ahead|and|you\s+know\s+what|anyway|though)\b(?!')"
)


def ends(text: str, verbs: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` says to stop the whole plan in words of its own ("ok stop here", "let's stop now", "that's
    enough for now", "I'm done", "hold on, cancel all that", "let's leave it there", "scrap the whole thing"), and
    nothing else ("stop the laptop order" names a step: not this), or only why (:func:`ends_for_a_reason`). A
    decline as a whole answer ("not now", "never mind", :func:`podium.human.declines`) ends it too."""
    if declines(text):
        return True
    said = _said(text)
    if not _END_CORE.search(said):
        return False
    return not _END_FILL.sub(" ", _END_CORE.sub(" ", said)).strip() or ends_for_a_reason(text, verbs)


def ends_for_a_reason(text: str, verbs: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` stops the whole plan and says why, or fills around it: "actually scrap that, he's staying",
    "no forget it, she changed her mind", "let's drop this, not needed anymore", "cancel the whole thing please, he
    isn't leaving", "forget it we don't need it". One clause (:func:`podium.human.clauses`) starts with a stop said
    in words of its own (as :func:`ends` reads one alone); what follows it, and every other clause, only gives a
    reason: it corrects nothing (:func:`podium.human.corrects`, :func:`corrects`), names no new date, number or
    person, and asks for no task (:func:`next_task`, ``verbs`` being the catalogue's tool verbs). "scrap that, she
    starts on the 15th" and "forget it, order a monitor instead" change the plan: not this."""
    stopped, reasons = False, []
    for clause in human.clauses(text):
        typed = re.findall(r"[A-Za-z0-9']+", straight(clause))
        said = " ".join(typed).lower()
        if not said or not _END_FILL.sub(" ", said).strip():
            continue  # "sorry", "ok", "actually": fill alone
        found = _END_CORE.search(said)
        if found is None or _END_FILL.sub(" ", said[: found.start()]).strip():
            reasons.append(" ".join(typed))
            continue
        after = said[found.end() :].split()
        kept = next((at for at, word in enumerate(after) if _END_FILL.sub(" ", word).strip()), len(after))
        kept -= 1 if 0 < kept < len(after) and after[kept - 1] in _SUBJECTS else 0  # "i changed my mind"
        tail = " ".join(typed[len(typed) - len(after) + kept :])
        if tail and not (after[kept] in _SUBJECTS or human.cancels(tail) or human.negated(tail)):
            reasons.append(" ".join(typed))  # "stop the laptop order", "leave it with me": not a stop and why
            continue
        stopped = True
        if tail:  # "forget it she changed her mind": the stop, then why, with no comma between
            reasons.append(tail)
    return stopped and bool(reasons) and all(_gives_reason(reason, verbs) for reason in reasons)


_SUBJECTS = frozenset(
    re.findall(r"\S+", "i i'm i've we we're we've he he's she she's they they're it's you someone nobody there's")
)
"""Words a sentence starts with: after "scrap that", "he's staying" says why (after "stop the", "laptop" says what)."""


def _gives_reason(clause: str, verbs: frozenset[str]) -> bool:
    """Whether ``clause`` only says why something is dropped ("he's staying", "she changed her mind", "not needed
    any more"), with nothing the plan could take from it: a correction, a date, a number, a new task, a person
    alone ("Tom Hall") or one ruled out."""
    if human.corrects(clause) or corrects(clause) or re.search(r"\d", clause) or ruled_out(clause):
        return False
    if next_task(clause, verbs) is not None or DATE.search(clause) or TIME.search(clause):
        return False
    named = people(clause)
    rest = clause
    for person in named:
        rest = rest.replace(person, " ")
    return not named or len(rest.split()) > 1 or human.cancels(rest)  # "Tom Hall": a person for the plan


_CORRECTS = re.compile(
    r"\b(?:actually|instead|i\s+meant|i\s+mean|meant\s+to\s+say|sorry|wrong|oops|correction|rather|"
    r"make\s+(?:it|that|this)|change\s+(?:it|that|this)|should\s+be|not\s+\w+\s+but|typo|mistake|scratch\s+that|"
    r"(?:his|her|their|the)\s+name\s+is|(?:he|she|they)(?:'s|\s+is|\s+are|'re)?\s+(?:starting|starts|start|leaving|"
    r"leaves|called|named)|(?:it's|it\s+is|that's|that\s+is)\s+for)\b"
)


def corrects(text: str) -> bool:
    """Whether ``text`` corrects or adds to what the plan was made from ("oh she's actually starting on the 15th",
    "make it a MacBook Pro instead", "his name is Tom Baker")."""
    return bool(_CORRECTS.search(_said(text)))


_TALK = frozenset(
    re.findall(
        r"\S+",
        "a an the it its that this those these to of for with and or but so as at in on by from instead rather than "
        "actually make made making no not nope nah sorry meant mean wait oh ah hmm oops wrong typo correction could "
        "would should can will get got want wanted need switch swap change changed prefer go one ones let let's lets "
        "please ok okay just maybe really yes yeah he she they him her his their them we i you us me my our is are "
        "be was were it's that's",
    )
)
"""Words of a correction that name no thing: changing one's mind, pronouns, small words."""


def named(text: str) -> list[str]:
    """The words of a correction that may name a thing ("tablet" in "actually make it a tablet instead"), as typed
    (lower-cased), each once: every word but the talk of changing one's mind, pronouns and small words."""
    return list(dict.fromkeys(w for w in _said(text).split() if w not in _TALK and not w.isdigit() and len(w) > 1))


_NEXT = re.compile(
    r"^(?:(?:ok|okay|great|cool|thanks|thank\s+you|perfect|nice|good|oh|and|so|please|pls)\s+)*"
    r"(?:now|also|then|next|after\s+that|afterwards|and\s+also|and\s+then|another\s+thing|one\s+more\s+thing|"
    r"in\s+addition|additionally|plus|i\s+also\s+need|we\s+also\s+need|can\s+you\s+also|could\s+you\s+also)\b\s*"
)


def next_task(text: str, verbs: frozenset[str] = frozenset()) -> str | None:
    """The new task ``text`` asks for while a plan waits, or ``None``: it says so ("great, now order her a phone
    charger", "also book a meeting room") or starts with one of ``verbs`` (the catalogue's tool verbs: "order ...").
    The task is returned without the words that introduce it ("order her a phone charger")."""
    said = _said(text)
    found = _NEXT.match(said)
    if found is not None and said[found.end() :].strip():
        # the introducing words, counted in the text as typed (punctuation stays with the words after them)
        kept = " ".join(text.split()[len(said[: found.end()].split()) :]).strip(" ,.;:!")
        return kept or text.strip()
    first = said.split()[0] if said else ""
    if first in verbs:
        return text.strip()
    return None


_RELATION = re.compile(
    r"\b(?:his|her|their|my|our|your|the|them)\s+(?:new\s+|direct\s+|line\s+)?(?:manager|boss|supervisor|team\s+lead|"
    r"lead|colleague|co-?worker|assistant|mentor|buddy|deputy|director|replacement|successor|predecessor|"
    r"teammate|partner|intern|report)s?\b",
    re.IGNORECASE,
)


def relation(text: str) -> str | None:
    """The person ``text`` names only by how they relate to someone ("his manager" in "and the same for his
    manager", "my new boss"), or ``None``: no name can be taken from it, so a plan for them needs one asked."""
    found = _RELATION.search(straight(text))
    return None if found is None else " ".join(found.group(0).split()).lower()


_AGAIN = re.compile(
    r"\b(?:same|again|too|also|as\s+well|likewise|ditto|another|one\s+more|repeat|(?:what|how)\s+about|"
    r"do\s+(?:that|it|this)|one\s+for)\b"
)
_AGAIN_FILL = re.compile(
    r"\b(?:same|again|too|also|as\s+well|likewise|ditto|another|one|more|repeat|what|how|about|and|do|did|the|that|"
    r"this|it|for|please|pls|now|ok|okay|great|thanks|thank\s+you|then|thing|things|can|could|would|you|u|with|to|"
    r"plus|so|yes|yeah|i|we|need|want|like|let's|lets|let|us|same|please|same\s+again|a|an|but|him|her|them|here|"
    r"there|exactly|just|only|well|cool|perfect|nice)\b(?!')"
)


def again_for(text: str, people: list[str], verbs: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` asks for the task before again for the ``people`` it names ("same for Joe Park", "do that
    for Joe Park", "and one for Joe Park too", "what about Joe Park?"): besides them, it only says to do the same
    (and may use one of ``verbs``, the catalogue's tool verbs: "order the same for Joe Park")."""
    if not people:
        return False
    rest = TIME.sub(" ", DATE.sub(" ", straight(text)))  # "same for Joe Park, next friday": the date may change
    for person in people:
        rest = rest.replace(person, " ")
    said = _said(rest)
    if not _AGAIN.search(said):
        return False
    left = _AGAIN_FILL.sub(" ", said).split()
    return all(word in verbs for word in left)
