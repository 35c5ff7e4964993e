"""The FAANG example of seed 001: a supervisor with a research expert and a math expert.

Run it with ``podium chat faang`` and ask "what's the combined headcount of the FAANG companies in 2024?".
Offline it replays ``cassettes/faang.json``, built from the model responses of the seed's trace (with the addition
the seed's model skipped, so the tool calls shown add up to the answer: :data:`ADDS`), and answers 1,977,586; what
the cassette does not hold is answered by the rule-based stand-in below (the app's ``offline_fallback``): the 2024
headcount of the FAANG companies or of any of them ("Apple and Meta", "all but Amazon", "leave Meta out"), added up,
averaged, compared ("how many more than Apple?", "how many times bigger?") or ranked ("which has the most
employees?"), greetings and thanks, and for anything else (another company, a median, a share, a change over time)
a plain sentence saying what it cannot do offline, never another operation's result. "Those two", "them" and
"which one is larger?" are the companies of the answers before. Company names (and their tickers) and its few
words are read through a typo ("googel", "aple", "metta", "emplyees").
With ``PODIUM_MODEL`` set it talks to a real model.

The app uses the ``shared`` context policy, in which the model requests are those of the seed's trace (the
langgraph-supervisor layout). With a real model, ``PODIUM_FAANG_CONTEXT=scoped`` switches to Podium's default
policy, where a handoff carries a task and each expert sees only that task (``build(model, "scoped")`` from Python;
:func:`seed_reply` answers in that policy too). Re-record the cassette with ``python examples/faang.py --record``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

from podium import (
    AIMessage,
    HumanMessage,
    Message,
    Model,
    ModelRequest,
    ReactAgent,
    Runtime,
    ToolCall,
    ToolMessage,
    tool,
)
from podium.app import App
from podium.human import EMERGENCY_REPLY, emergency, one_typo, pleasantry, says_goodbye, straight, yes_or_no
from podium.orchestration.supervisor import ContextPolicy, Supervisor, create_supervisor
from podium.testing import FunctionModel, tool_call

CASSETTE = Path(__file__).parent / "cassettes" / "faang.json"

QUESTION = "what's the combined headcount of the FAANG companies in 2024?"

SUPERVISOR_PROMPT = (
    "You are a team supervisor managing a research expert and a math expert. "
    "For current events, use research_agent. "
    "For math problems, use math_agent."
)
RESEARCH_PROMPT = "You are a world class researcher with access to web search. Do not do any math."
MATH_PROMPT = "You are a math expert. Always use one tool at a time."

# The seed's stand-in search result (a real search service would go here).
SEARCH_RESULT = (
    "Here are the headcounts for each of the FAANG companies in 2024:\n"
    "1. **Facebook (Meta)**: 67,317 employees.\n"
    "2. **Apple**: 164,000 employees.\n"
    "3. **Amazon**: 1,551,000 employees.\n"
    "4. **Netflix**: 14,000 employees.\n"
    "5. **Google (Alphabet)**: 181,269 employees."
)


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


def web_search(query: str) -> str:
    """Search the web for information."""
    return SEARCH_RESULT


def build(model: Model, context: ContextPolicy | None = None) -> Supervisor:
    """The FAANG supervisor around ``model`` (``context`` defaults to ``PODIUM_FAANG_CONTEXT`` or ``shared``)."""
    chosen = context or os.environ.get("PODIUM_FAANG_CONTEXT", "shared")
    if chosen not in ("shared", "scoped"):
        chosen = "shared"
    lookup = tool(read_only=True)  # a search and two sums change nothing: their calls need not be on disk first
    math_agent = ReactAgent("math_expert", model, [lookup(add), lookup(multiply)], prompt=MATH_PROMPT)
    research_agent = ReactAgent("research_expert", model, [lookup(web_search)], prompt=RESEARCH_PROMPT)
    return create_supervisor(
        [research_agent, math_agent],
        model=model,
        prompt=SUPERVISOR_PROMPT,
        context="scoped" if chosen == "scoped" else "shared",
        description="Answers questions about companies with a researcher and a mathematician.",
    )


# --- the stand-in model: answers offline what the cassette cannot ---------------------------------------------

COMPANIES = {"Meta": ("meta", "facebook"), "Apple": ("apple", "aapl"), "Amazon": ("amazon", "amzn"),
             "Netflix": ("netflix", "nflx"), "Alphabet": ("alphabet", "google", "googl", "goog")}  # fmt: skip
"""The FAANG companies in the seed's order, each with the words naming it (its stock ticker last)."""
_TICKERS = {"aapl", "amzn", "nflx", "googl", "goog"}
_NAMES = "|".join(w for words in COMPANIES.values() for w in words)
CAPABILITIES = (
    "Offline I know the 2024 headcount of the FAANG companies (Meta, Apple, Amazon, Netflix and Alphabet), and add "
    "them up, average them, compare two or find the largest: ask, for example, \"What's the combined headcount of the "
    'FAANG companies in 2024?", "How many people work at Apple?" or "How many more employees does Amazon have than '
    'Apple?". Set PODIUM_MODEL to ask a real model anything else.'
)
_HEADCOUNT = re.compile(
    r"\b(head\s?-?\s?counts?|employees?|employ\w*|staff\w*|workforce|workers|people|ppl|persons|folks|jobs|size)\b|"
    r"\bwork(?:s|ing)?\s+(?:at|for)\b|\bhow many\s+(?:are\s+|work\s+)?at\b"
)
_EXCEPT = re.compile(
    r"\b(?:all but|without|except(?: for)?|excluding|exclude|but not|other than|minus|leave out|leaving out|"
    r"not counting|take out|taking out|remove|removing|drop|dropping)\b|"
    rf"\b(?:not|no|skip)\s+(?=(?:the\s+)?(?:{_NAMES})\b)"
)
_OUT = re.compile(
    r"\b(?:leave|leaving|take|taking|keep|keeping|cut|cutting|count|counting|drop|dropping)\s+(.{1,40}?)\s+out\b"
)
"""An exclusion with the company inside it ("leave Meta out", "take Apple and Netflix out")."""
_NOT_COMPANIES = {
    "the", "faang", "these", "those", "them", "all", "each", "every", "big", "tech", "their", "its", "it",
    "companies", "company", "firms", "you", "me", "us", "people", "employees", "staff", "workers", "what", "that",
    "there", "who", "how", "let", "here", "where", "today", "world", "year", "one", "everyone", "he", "she",
    "headcount", "total", "combined", "faang's", "everything", "everybody", "this", "stuff", "things",
    "average", "sum", "both", "between", "either", "last", "before", "ever", "expected", "usual", "others", "rest",
    "which", "whose", "is", "has", "have", "does", "do", "many", "much", "more", "fewer", "less", "now", "then",
}  # fmt: skip
_ASIDES = {
    "so", "and", "also", "now", "hmm", "hm", "um", "uh", "oh", "ah", "well", "right", "ok", "okay", "alright",
    "actually", "sorry", "oops", "please", "btw", "next", "lastly", "finally", "cool", "great", "nice", "wow", "anyway",
    "anyways", "question", "quick", "besides", "lol", "yo", "again", "overall", "altogether", "roughly", "honestly",
    "seriously", "wait", "hey", "hi", "hello", "thanks", "cheers", "yes", "no", "yeah", "sure", "then", "plus",
}  # fmt: skip
"""Words a message may start with before a comma that name no company ("so, how many employees?")."""
_WORD = r"[A-Za-z](?:[\w&.-]*\w)?"
# A company named in a question, whether FAANG or not: "at Microsoft", "does Tesla", "Microsoft's headcount", "the
# Microsoft headcount" (capitalized there: "combnied headcount" is no company), "in IBM", "than tesla", "apple or
# microsoft", and a name the message starts with before a comma ("microsoft, how many people there?").
_COMPANY = tuple(
    re.compile(pattern)
    for pattern in (
        rf"\b(?i:at|of|does|do|for|by)\s+({_WORD})",
        rf"\b(?i:than|vs\.?|versus)\s+(?:(?i:at|in|the|for|with)\s+)?({_WORD})",
        rf"\b({_WORD})'s\b",
        r"(?<=\s)([A-Z](?:[\w&.-]*\w)?)\s+(?:head\s?-?\s?counts?|employees|staff|workforce)\b",
        rf"^\W*(?i:and\s+|what\s+about\s+|how\s+about\s+)?({_WORD})\s+(?i:head\s?-?\s?counts?|employees|staff|workforce)\b",
        r"\b(?i:in|with|about|from)\s+([A-Z](?:[\w&.-]*\w)?)",
        rf"\b(?i:{_NAMES})\b\W+(?i:or|and)\s+({_WORD})",
        rf"(?:^|[,:;]\s*|\b(?i:between|either|is|has|does)\s+)({_WORD})\W+(?i:or|and)\s+(?:the\s+)?(?i:{_NAMES})\b",
        rf"^\W*({_WORD}|[A-Z]\w*(?:\s+[A-Z][\w&.-]*\w){{1,2}})\s*[,:;]",
        rf"(?:^|[,:;]\s*|\b(?i:between|either|of|is|are|has|does|do)\s+)({_WORD})\s+(?i:or|vs\.?|versus)\s+({_WORD})"
        r"(?=\s*(?:[,:;?.!]|$|(?i:who|which|whose|has|have|is|are|does|do|employs?)\b))",
    )
)
"""Where a question names a company (group 1, and group 2 when two are named: "uber or lyft, who has more?")."""
_EITHER = rf"\b(?:{_NAMES})\b\W+or\s+(?:the\s+)?(?:{_NAMES})\b"
"""Two companies of which one is to be chosen ("google or meta"): with "more" or "fewer", which one has."""
# What is asked of the headcounts besides their sum, and what this stand-in does not work out.
_STATISTICS = (
    (
        "ratio",
        re.compile(
            r"\bhow many times\b|\bratio\b|\btimes (?:as|bigger|larger|smaller|more|fewer|less|the size)\b|"
            r"\b(?:twice|thrice|half) (?:as|the)\b|\b(?:double|triple) the\b|"
            rf"\btimes (?:that of |the size of )?(?:{_NAMES})\b"
        ),
    ),
    (
        "difference",
        re.compile(
            r"\bhow (?:many|much) (?:more|fewer|less|bigger|larger|smaller)\b|\bdifference\b|"
            r"\b(?:more|fewer|less) \w* ?than\b|\bvs\b|\bversus\b|\bcompar\w*"
        ),
    ),
    ("average", re.compile(r"\baverage\b|\bmean\b")),
    (
        "most",
        re.compile(
            r"\b(?:most|largest|biggest|highest|maximum|max)\b|\b(?:which|who|whose)\b.*\b(?:bigger|larger|more|greater)\b|"
            r"\b(?:bigger|larger|greater)\b.*\bthan\b|"
            rf"{_EITHER}.*\b(?:bigger|larger|more|greater)\b|\b(?:bigger|larger|more|greater)\b.*{_EITHER}"
        ),
    ),
    (
        "fewest",
        re.compile(
            r"\b(?:fewest|least|smallest|lowest|minimum)\b|\b(?:which|who|whose)\b.*\b(?:smaller|fewer|less)\b|"
            rf"\bsmaller\b.*\bthan\b|{_EITHER}.*\b(?:smaller|fewer|less)\b|\b(?:smaller|fewer|less)\b.*{_EITHER}"
        ),
    ),
)
_REFERS = re.compile(
    r"\b(?:th[eo]se|the|both|all)\s+(?:two|2)\b|\bboth\b|\bthem\b|\bth[eo]se\b|\beach other\b|"
    r"\bwhich of (?:the|th[eo]se|them)\b|\bthe (?:former|latter|pair)\b|\bthe (?:one|other)\b"
)
"""Words that point to the companies of the answers before ("add those two", "which one is larger?")."""
_TWO = re.compile(r"\b(?:two|2|both|pair|each other|former|latter|between)\b")
"""A reference to exactly two of them ("those two", "both", "the difference between them")."""
_COMBINE = re.compile(r"\b(?:add\w*|sum\w*|total\w*|combin\w*|together|plus|altogether|put)\b")
"""Asking for figures added up ("add them up", "the sum of those two", "put them together")."""
_SUPERLATIVE = re.compile(r"\b(?:most|largest|biggest|highest|maximum|max|fewest|least|smallest|lowest|minimum)\b")
_UNREAD = re.compile(r"\b(?:than|times|twice|thrice|half|double|triple|per|divided|multiplied|over)\b")
"""A comparison or an operation no statistic above reads: said to be beyond this stand-in, never answered with a
sum."""
_OUT_OF_REACH = (
    ("a median", re.compile(r"\bmedian\b")),
    ("a percentage or a share", re.compile(r"\bpercent\w*|%|\b(?:share|proportion|fraction)\b")),
    ("a change over time", re.compile(r"\b(?:growth|grow\w*|increase\w*|decrease\w*|chang\w*|layoffs?|hir\w+)\b")),
    ("anything but headcounts", re.compile(r"\b(?:revenue|salar\w*|pay|wages?|profit\w*|market cap\w*)\b")),
)
_EACH = re.compile(r"\bhow many\b.*\band how many\b|\beach\b|\bindividual\w*|\bseparately\b|\bbreak\s?down\b")
"""A question that asks for each company's headcount, besides their total."""
_FIGURE = re.compile(r"\b(Meta|Apple|Amazon|Netflix|Alphabet)(?: has| had)?:? ([\d,]+) employees")
_FOUND = re.compile(r"\*\*(?P<label>[^*]+)\*\*: (?P<count>[\d,]+) employees")
_FOLDED = "\n\nDone so far:"
_USER_REQUEST = "\n\nThe user's request:"


def _listing(names: list[str]) -> str:
    """'Apple, Meta and Amazon'."""
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def _companies(text: str) -> list[str]:
    """The FAANG companies ``text`` names, in the order it names them."""
    found = {m.start(): name for name, words in COMPANIES.items() for w in words for m in re.finditer(rf"\b{w}", text)}
    return list(dict.fromkeys(found[at] for at in sorted(found)))


def _statistic(text: str) -> str:
    """What a question asks of the headcounts: ``"sum"``, ``"ratio"``, ``"difference"``, ``"average"``, ``"most"``,
    ``"fewest"``."""
    words = _spelled(straight(text).lower())
    return next((name for name, asks in _STATISTICS if asks.search(words)), "sum")


_NAME_WORDS = [w for words in COMPANIES.values() for w in words if w not in _TICKERS]
"""The companies' names, which a typo is read as (a ticker is typed as it is)."""
_KNOWN_WORDS = [
    *(w for w in _NAME_WORDS if len(w) > 4),
    *("employees", "employee", "headcount", "headcounts", "workforce", "combined", "average"),
]
"""Words a typo is read as when it is one letter off ("googel", "emplyees")."""
_REAL_WORDS = {"apply", "ample", "maple", "goggle", "employer", "employed", "meat", "metal", "metals"}
"""English words a slip away from a known word, which are no typo of it."""


def _spelled(text: str) -> str:
    """``text`` with each word of five letters or more that is one edit (a letter added, dropped, changed, or two
    neighbours swapped) from one of :data:`_KNOWN_WORDS` written as that word, and each word of four letters or
    more that is a company's name with a slip that changes no letter (:func:`_slipped_name`: "aple", "metta")
    written as that name."""

    def fix(match: re.Match[str]) -> str:
        word = match[0]
        lower = word.lower()
        if len(lower) < 4 or lower in _KNOWN_WORDS or lower in _REAL_WORDS or lower in _TICKERS:
            return word
        close = next((known for known in _KNOWN_WORDS if one_typo(lower, known)), None) if len(lower) > 4 else None
        return close or _slipped_name(lower) or word

    return re.sub(r"[^\W\d_]+", fix, text)


def _slipped_name(lower: str) -> str | None:
    """The one company name ``lower`` is, typed with a doubled letter made single or the other way round, and with
    at most one more slip past its first letter that changes no letter: one left out or added, or two neighbours
    swapped ("aple", "apel", "appl", "metta", "mtea"). A changed letter is no slip in a name this short: "mega",
    "able" and "axle" are words of their own; :data:`_REAL_WORDS` keeps "meat" and "metal" apart."""

    def squeezed(word: str) -> str:
        return re.sub(r"(.)\1+", r"\1", word)

    typed = squeezed(lower)
    found = {
        name
        for name in _NAME_WORDS
        if name[0] == lower[0]
        and lower != name
        and (typed == squeezed(name) or one_typo(typed, squeezed(name), changes=False))
    }
    return found.pop() if len(found) == 1 else None


def _unknown_company(text: str) -> str | None:
    """The first company ``text`` names that is not a FAANG company ("Microsoft's headcount": microsoft)."""
    known = {w for words in COMPANIES.values() for w in words}
    said = straight(text)
    named = sorted(
        (found.start(group), found[group])
        for pattern in _COMPANY
        for found in pattern.finditer(said)
        for group in range(1, pattern.groups + 1)
    )
    for _, name in named:
        lower = name.lower()
        if lower in _NOT_COMPANIES or lower in _ASIDES or lower in known or _HEADCOUNT.fullmatch(lower):
            continue
        if pleasantry(name) is not None:
            continue
        if yes_or_no(name) is None and not re.fullmatch(r"\d+", name):
            return lower
    return None


def _request(text: str, previous: list[str] | None, referent: list[str] | None = None) -> list[str] | str | None:
    """What a user message asks: the companies whose 2024 headcount it wants (their sum, difference, average, or
    which is largest or smallest: :func:`_statistic`), a sentence saying why that cannot be answered offline, or
    ``None`` when it is not about headcounts (``previous``: the companies the last headcount question was about, for
    follow-ups such as "and without Amazon?" or "how many more than Apple is that?"; ``referent``: the companies
    "those two" or "them" point to, :func:`_referent`)."""
    words = _OUT.sub(r"without \1", _spelled(straight(text).lower()))
    cut = _EXCEPT.search(words)
    named = _companies(words[: cut.start()] if cut else words)
    excluded = _companies(words[cut.end() :]) if cut else []
    faang = re.search(r"\bfaang\b|\ball (?:five|5|of them|but)\b", words) is not None
    statistic = _statistic(words)
    refers = not (named or faang) and _REFERS.search(words) is not None  # "add those two", "between them"
    if not (named or faang) and statistic in ("most", "fewest") and _SUPERLATIVE.search(words) is None:
        refers = True  # "which one is larger?" (not "the largest"): of two, those given before
    follows = named or excluded or statistic != "sum"  # "and without Amazon?", "and the fewest?"
    compares = len(named) > 1 and statistic != "sum"  # "is Apple bigger than Meta?": headcounts are all it has
    operates = statistic != "sum" or _COMBINE.search(words) is not None
    about = _HEADCOUNT.search(words) or faang or compares or (refers and operates)
    if not about and (previous is None or not follows):
        return None
    year = re.search(r"\b(?:19|20)\d\d\b", words)
    if year is not None and year[0] != "2024":
        return f"Offline I only have the headcounts of 2024, not {year[0]}. {CAPABILITIES}"
    unknown = _unknown_company(_spelled(straight(text)))
    if unknown is not None:
        return f"Offline I only know the FAANG companies' headcounts, not {unknown}'s. {CAPABILITIES}"
    beyond = next((what for what, asks in _OUT_OF_REACH if asks.search(words)), None)
    if beyond is not None:
        return f"Offline I cannot work out {beyond}. {CAPABILITIES}"
    if refers and operates:  # "add them up", "the difference between them": the figures given before
        return _referred(referent or [], words, statistic, excluded)
    pairwise = statistic in ("difference", "ratio") or _TWO.search(words) is not None
    if referent is not None and len(referent) == 2 and not named and pairwise:  # "and the difference?"
        return referent
    if statistic in ("difference", "ratio"):  # "how many more than Apple is that?" compares the last question's one
        pair = named if len(named) != 1 or not previous or len(previous) != 1 else [*previous, *named]
        if len(pair) != 2 or pair[0] == pair[1]:
            return f"I compare the headcounts of two companies at a time: which two? {CAPABILITIES}"
        return pair
    if statistic == "sum" and _UNREAD.search(words):  # "is Apple ten times Meta?": no sum stands in for it
        return f"Offline I cannot work that out from the headcounts. {CAPABILITIES}"
    base = named or (list(COMPANIES) if faang or previous is None else previous)
    if statistic in ("most", "fewest") and len(base) < 2 and not named:  # "the most recent headcount of Apple"
        base = list(COMPANIES)
    chosen = [c for c in base if c not in excluded]
    return chosen or f"That leaves no company to count. {CAPABILITIES}"


def _user_texts(messages: list[Message]) -> list[str]:
    """The user's messages (without the notes a scoped context adds to them)."""
    return [
        m.content.split(_FOLDED)[0].split(_USER_REQUEST)[0]
        for m in messages
        if isinstance(m, HumanMessage) and m.name is None
    ]


def _asked(messages: list[Message]) -> list[str] | str | None:
    """What the conversation's last user message asks (see :func:`_request`), read after the ones before it."""
    answered: list[list[str]] = []
    asked: list[str] | str | None = None
    for text in _user_texts(messages):
        asked = _request(text, answered[-1] if answered else None, _referent(answered))
        if isinstance(asked, list):
            answered.append(asked)
    return asked


def _referent(answered: list[list[str]]) -> list[str]:
    """The companies "them" or "those two" point to, from the companies of each headcount answered so far: the last
    answer's, when it was about several; else the last two asked one at a time ("apple?", "and google?")."""
    if not answered:
        return []
    last = answered[-1]
    if len(last) == 1 and len(answered) > 1 and len(answered[-2]) == 1 and answered[-2] != last:
        return [*answered[-2], *last]
    return last


def _referred(referent: list[str], words: str, statistic: str, excluded: list[str]) -> list[str] | str:
    """The companies a question about the figures given before means ("add those two", "which one is larger?",
    "the difference between them"), or what is missing to tell, said plainly (never another set of companies)."""
    chosen = [c for c in referent if c not in excluded]
    pairwise = _TWO.search(words) is not None or statistic in ("difference", "ratio")
    fewest = 2 if pairwise or statistic in ("most", "fewest") else 1  # "which of them is bigger?" of three: the most
    if len(chosen) == 2 or (fewest <= len(chosen) and not pairwise):
        return chosen
    if not referent:
        given = "I have not given any headcount yet in this conversation"
    elif len(referent) == 1:
        given = f"So far I have only given {referent[0]}'s headcount"
    else:
        given = f"I gave the headcounts of {_listing(referent)}"
    which = "which two companies do you mean" if fewest == 2 else "which companies do you mean"
    return f'{given}: {which}? Name them ("Apple and Meta"). {CAPABILITIES}'


def _turn(messages: list[Message]) -> list[Message]:
    """The current turn: the messages from the last user message on."""
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage) and m.name is None), default=0)
    return messages[start:]


def _small_talk(text: str) -> str:
    """A reply to a greeting, thanks, a goodbye, a question about the team, or anything else."""
    replies = {
        "greeting": f"Hello! I am a supervisor with a research expert and a math expert. {CAPABILITIES}",
        "thanks": "You're welcome! Anything else about the FAANG companies' headcounts?",
        "goodbye": "Goodbye!",
        "capabilities": f"I am a supervisor with a research expert and a math expert. {CAPABILITIES}",
    }
    kind = pleasantry(text)
    if kind == "thanks" and says_goodbye(text):  # "thanks, that's all": nothing more is asked
        return "You're welcome, goodbye!"
    if kind is None and not re.search(r"[^\W\d_]", text):  # "??", "...": what it can answer, no refusal
        kind = "capabilities"
    return replies.get(kind or "", f"I cannot answer that offline. {CAPABILITIES}")


def _reports(turn: list[Message]) -> dict[str, str]:
    """What each expert has answered in this turn: its own answer in the shared history, a scoped handoff's result,
    or a line of a scoped context's "Done so far" note."""
    said: dict[str, str] = {}
    for m in turn:
        if isinstance(m, AIMessage) and m.name in ("research_expert", "math_expert") and m.content:
            if not m.tool_calls and not m.metadata.get("handoff_back"):
                said[m.name] = m.content
        elif isinstance(m, ToolMessage) and m.name.startswith("transfer_to_") and not m.content.startswith("Success"):
            said[m.name.removeprefix("transfer_to_")] = m.content
        elif isinstance(m, HumanMessage) and _FOLDED in m.content:
            for line in m.content.split(_FOLDED, 1)[1].splitlines():
                if line.startswith("transfer_to_") and ") -> " in line:
                    said[line.split("(")[0].removeprefix("transfer_to_")] = line.split(") -> ", 1)[1]
    return said


def _supervisor(messages: list[Message], request: ModelRequest) -> AIMessage:
    asked = _asked(messages)
    if asked is None:
        return AIMessage(content=_small_talk((_user_texts(messages) or [""])[-1]))
    if isinstance(asked, str):
        return AIMessage(content=asked)
    scoped = any(t.parameters.get("required") for t in request.tools)
    said = _reports(_turn(messages))
    if "research_expert" not in said:
        task = {"task": f"Find the 2024 headcount of {_listing(asked)}."} if scoped else {}
        return AIMessage(tool_calls=[tool_call("transfer_to_research_expert", task)])
    statistic = _statistic(_user_texts(messages)[-1])
    found = {m[1]: m[2] for m in _FIGURE.finditer(said["research_expert"])}
    if statistic in ("most", "fewest") and len(found) > 1:
        ranked = sorted(found, key=lambda name: int(found[name].replace(",", "")), reverse=statistic == "most")
        among = "the FAANG companies" if len(found) == len(COMPANIES) else _listing(list(found))
        if len(found) == 2:  # which of two: both figures, so the answer shows why
            more = {"most": "more", "fewest": "fewer"}[statistic]
            first, second = ranked
            return AIMessage(
                content=f"{first} has {more} employees than {second} in 2024: {found[first]} against {found[second]}."
            )
        return AIMessage(content=f"Of {among}, {ranked[0]} has the {statistic} employees in 2024: {found[ranked[0]]}.")
    if len(asked) > 1 and "math_expert" not in said:
        figures = "; ".join(f"{name}: {count} employees" for name, count in found.items())
        verb = {
            "difference": "Find the difference between",
            "average": "Find the average of",
            "ratio": "Find the ratio of",
        }.get(statistic, "Add up")
        task = {"task": f"{verb} these 2024 headcounts: {figures}."} if scoped else {}
        return AIMessage(tool_calls=[tool_call("transfer_to_math_expert", task)])
    answer = said.get("math_expert") or said["research_expert"]
    if "math_expert" in said and statistic == "sum" and _EACH.search(straight(_user_texts(messages)[-1]).lower()):
        return AIMessage(content=f"{said['research_expert']} {answer}")  # each one's figure, then their total
    return AIMessage(content=answer)


def _research_expert(messages: list[Message]) -> AIMessage:
    turn = _turn(messages)
    results = [m.content for m in turn if isinstance(m, ToolMessage) and m.name == "web_search"]
    folded = [m.content.split(_FOLDED, 1)[1] for m in turn if isinstance(m, HumanMessage) and _FOLDED in m.content]
    results += [note.rsplit("web_search(", 1)[1].split(") -> ", 1)[-1] for note in folded if "web_search(" in note]
    asked = _asked(messages)
    wanted = asked if isinstance(asked, list) else list(COMPANIES)
    if not results:
        return AIMessage(tool_calls=[tool_call("web_search", {"query": f"{_listing(wanted)} headcount 2024"})])
    found = {
        name: m["count"] for m in _FOUND.finditer(results[-1]) for name in _companies(m["label"].lower())[:1]
    }  # "Facebook (Meta)" is Meta
    known = [f"{name} has {found[name]} employees" for name in wanted if name in found]
    missing = [name for name in wanted if name not in found]
    text = f"In 2024 {_listing(known)}." if known else "The search found no headcounts."
    return AIMessage(content=text + (f" The search did not say for {_listing(missing)}." if missing else ""))


def _math_expert(messages: list[Message]) -> AIMessage:
    """Adds the figures up one ``add`` at a time (then multiplies by one over their number for an average), or
    subtracts the second from the first (an ``add`` of its opposite)."""
    turn = _turn(messages)
    texts = [m.content for m in turn if isinstance(m, (HumanMessage, AIMessage)) and _FIGURE.search(m.content)]
    figures = {m[1]: float(m[2].replace(",", "")) for m in _FIGURE.finditer(texts[-1])} if texts else {}
    if len(figures) < 2:
        return AIMessage(content="I need at least two headcounts to work with.")
    statistic = _statistic((_user_texts(messages) or [""])[-1])
    done = [float(v) for m in turn if isinstance(m, HumanMessage) for v in re.findall(r"\) -> (-?[\d.]+)", m.content)]
    done += [float(m.content) for m in turn if isinstance(m, ToolMessage) and m.name in ("add", "multiply")]
    names, values = list(figures), list(figures.values())
    if statistic == "ratio":  # the larger over the smaller, whichever was named first
        (big, large), (small, little) = sorted(figures.items(), key=lambda item: item[1], reverse=True)[:2]
        if not done:
            return AIMessage(tool_calls=[tool_call("multiply", {"a": large, "b": 1 / little})])
        times = f"{done[0]:,.1f}" if done[0] >= 1.05 else f"{done[0]:,.2f}"
        return AIMessage(
            content=f"In 2024 {big} has {times.removesuffix('.0')} times as many employees as {small} "
            f"({large:,.0f} against {little:,.0f})."
        )
    if statistic == "difference":
        if not done:
            return AIMessage(tool_calls=[tool_call("add", {"a": values[0], "b": -values[1]})])
        more = "more" if done[0] >= 0 else "fewer"
        return AIMessage(
            content=f"In 2024 {names[0]} has {abs(done[0]):,.0f} {more} employees than {names[1]} "
            f"({values[0]:,.0f} against {values[1]:,.0f})."
        )
    if len(done) < len(values) - 1:
        return AIMessage(
            tool_calls=[tool_call("add", {"a": done[-1] if done else values[0], "b": values[len(done) + 1]})]
        )
    who = "the FAANG companies" if len(figures) == len(COMPANIES) else _listing(names)
    if statistic != "average":
        return AIMessage(content=f"The combined headcount of {who} in 2024 is {done[-1]:,.0f}.")
    if len(done) < len(values):
        return AIMessage(tool_calls=[tool_call("multiply", {"a": done[-1], "b": 1 / len(values)})])
    average = f"{done[-1]:,.1f}".removesuffix(".0")
    return AIMessage(content=f"The average headcount of {who} in 2024 is {average}.")


def stand_in(messages: list[Message], request: ModelRequest) -> AIMessage:
    """A rule-based stand-in for the three agents' model, told apart by the tools they are offered: it answers
    offline what the cassette cannot (the headcounts of the search result, added up with the math tools)."""
    tools = {t.name for t in request.tools}
    if "transfer_to_research_expert" in tools:
        last = messages[-1] if messages else None
        if isinstance(last, HumanMessage) and emergency(last.content):  # sent to emergency services first
            return AIMessage(content=EMERGENCY_REPLY)
        return _supervisor(messages, request)
    if "web_search" in tools:
        return _research_expert(messages)
    return _math_expert(messages)


app = App(
    name="faang",
    build=build,
    cassette=CASSETTE,
    offline_fallback=FunctionModel(stand_in, name="stand-in", keep=0),  # it serves: keeps no requests
    welcome="A supervisor with a research expert and a math expert. Ask: " + QUESTION,
)

# --- the seed's model responses -----------------------------------------------------------------------------------

RESEARCH_ANSWER = (
    "The individual headcounts of FAANG companies in 2024 are as follows: Meta has 67,317 employees, Apple has "
    "164,000 employees, Amazon has 1,551,000 employees, Netflix has 14,000 employees, and Alphabet has 181,269 "
    "employees. You can sum these figures to get the combined headcount."
)
FINAL_ANSWER = "The combined headcount of the FAANG companies in 2024 is 1,977,586."
# The seed's math expert adds three numbers, then answers with the total of all five (as recorded: its model skipped
# Alphabet's addition).
SEED_ADDS = [
    ("call_jd5esfvy2qsh9tdz23361pha", ' {\n        "a": 67317, \n        "b": 164000\n    }\n'),
    ("call_owov4sx70lmdpz7zooldnue3", ' {"a": 231317, "b": 1551000}'),
    ("call_w2tp827rhg290ekal228ei1c", ' {"a": 1782317, "b": 14000}'),
]
# The example's cassette makes the skipped addition too (the call's id is ours), so that the trail a person sees adds
# up to the answer it gives; every request before it is the seed's.
ADDS = [*SEED_ADDS, ("call_podium0fourth0add0alphab", ' {"a": 1796317, "b": 181269}')]
SCOPED_MATH_TASK = (
    "Add up these 2024 headcounts: Meta 67,317; Apple 164,000; Amazon 1,551,000; Netflix 14,000; Alphabet 181,269."
)


def _call(id: str, name: str, arguments: str) -> AIMessage:
    return AIMessage(tool_calls=[ToolCall(id=id, name=name, arguments=arguments)])


def seed_reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    """The seed trace's responses, chosen from what the caller is shown (stateless, like a model).

    The supervisor's last answer is not in the seed's trace; it repeats the math expert's answer.
    """
    return _replied(messages, request, SEED_ADDS)


def example_reply(messages: list[Message], request: ModelRequest) -> AIMessage:
    """The seed trace's responses with the addition its model skipped (:data:`ADDS`): what the cassette holds."""
    return _replied(messages, request, ADDS)


def _replied(messages: list[Message], request: ModelRequest, adds: list[tuple[str, str]]) -> AIMessage:
    tools = {t.name for t in request.tools}
    own = [m for m in messages if isinstance(m, ToolMessage) and m.name in tools]
    if "transfer_to_research_expert" in tools:
        scoped = any(t.parameters.get("required") for t in request.tools)
        answered = {m.name for m in messages if isinstance(m, AIMessage) and not m.tool_calls and m.name}
        answered |= {m.name.removeprefix("transfer_to_") for m in own if not m.content.startswith("Successfully")}
        notes = [m.content for m in messages if isinstance(m, HumanMessage) and "Done so far:" in m.content]
        answered |= {
            line.split("(")[0].removeprefix("transfer_to_")
            for note in notes
            for line in note.splitlines()
            if line.startswith("transfer_to_")
        }
        if "research_expert" not in answered:
            task = json.dumps({"task": "Find the headcount of each FAANG company in 2024."}) if scoped else " {}"
            return _call("call_fyew4c06vn9ide7nhk6sijws", "transfer_to_research_expert", task)
        if "math_expert" not in answered:
            task = json.dumps({"task": SCOPED_MATH_TASK}) if scoped else " {}"
            return _call("call_z9x3nnqjvnp9hxuehejkivgn", "transfer_to_math_expert", task)
        return AIMessage(content=FINAL_ANSWER)
    if "web_search" in tools:
        if not own and not any("web_search(" in m.content for m in messages if isinstance(m, HumanMessage)):
            arguments = ' {\n        "query": "Combined headcount of FAANG companies in 2024"\n    }\n'
            return _call("call_t52sv5g0zm4x1tft5hcnwjjs", "web_search", arguments)
        return AIMessage(content=RESEARCH_ANSWER)
    # results shown: own tool messages, plus the lines of a "Done so far" note (a scoped worker's folded rounds)
    done = len(own) + sum(m.content.count(") -> ") for m in messages if isinstance(m, HumanMessage))
    if done < len(adds):
        call_id, arguments = adds[done]
        return _call(call_id, "add", arguments)
    return AIMessage(content=FINAL_ANSWER)


async def record(path: Path = CASSETTE) -> None:
    """Record the cassette from the seed's responses (with the addition the seed skipped), or from a real model when
    PODIUM_MODEL is set."""
    from podium import Settings
    from podium.testing import FunctionModel, RecordingModel

    path.unlink(missing_ok=True)  # noqa: ASYNC240 - a one-off script step
    model = RecordingModel(Settings.load().model_or_none() or FunctionModel(example_reply, name="seed-001"), path)
    result = await Runtime().run(build(model, "shared"), HumanMessage(content=QUESTION))
    print(json.dumps({"status": result.status, "output": result.output}))


if __name__ == "__main__":
    if "--record" in sys.argv:
        asyncio.run(record())
    else:
        print(__doc__)
