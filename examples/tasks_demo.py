"""A desk of tasks (seed 003): a coordinator delegates to sub-tasks, which use tools and ask you questions.

The tree::

    coordinator                 (LLM; routes each request with "TO[name]:")
    ├── calculator              (LLM + tools multiply, add, divide: a worker task that uses tools)
    └── planner                 (LLM; asks you a question, then delegates)
        └── researcher          (LLM + tool get_weather: the third level)

Run it with ``podium chat tasks-demo``. Offline it replays ``cassettes/tasks_demo.json``, and answers requests the
cassette does not hold with the rule-based stand-in below (the app's ``offline_fallback``, so any question works
offline); with ``PODIUM_MODEL`` set it talks to a real model. Try: "What is 12 times 7?", "What is 1250 plus 380?",
"What's 15% of 240?", "Plan a day in Lisbon" (the planner asks whether you prefer museums or beaches: answer one of
them), "Plan a day in Oslo". Offline, the stand-in does every calculation with the calculator's tools (sums,
differences, products, quotients, negative numbers, percentages, a tip or a discount, a bill shared out, numbers in
words, words around the calculation) and says so plainly when it cannot; a follow-up ("minus 30?", "and divided by
4?") applies to the previous result, a correction ("sorry, I meant times 4") changes the previous calculation's last
step, the answer to "Which city?" is planned, and a choice given with the request ("Plan a day in Lisbon, I love the
beach") or after the plan ("actually, beaches") is planned without asking.

The weather table is a stand-in for a real weather service. Re-record the cassette (from the rule-based stand-in
below, or a real model when ``PODIUM_MODEL`` is set) with ``python -m examples.tasks_demo --record``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from examples.trip import describe_weather, get_weather, places  # the same stand-in weather service
from podium import (
    AIMessage,
    Expectation,
    HumanMessage,
    Message,
    Model,
    ModelRequest,
    Runtime,
    Settings,
    ToolMessage,
)
from podium.app import App
from podium.human import EMERGENCY_REPLY, clauses, declines, emergency, negated, pleasantry, says_goodbye, straight
from podium.orchestration.tasks import ResponderAgent, Task, with_guidance
from podium.testing import FunctionModel, RecordingModel, tool_call

CASSETTE = Path(__file__).parent / "cassettes" / "tasks_demo.json"

COORDINATOR = (
    "You are the coordinator of a small desk. Send arithmetic to the calculator by starting your reply with "
    "'TO[calculator]:', and day plans to the planner with 'TO[planner]:'. When a helper answers, give the user "
    "the final answer starting with 'DONE'. Otherwise, answer briefly yourself, also starting with 'DONE' (a reply "
    "without it is passed on to the first helper)."
)
CALCULATOR = "You are the calculator. Use the tools for every computation, then state the result in one sentence."
PLANNER = (
    "You plan a day in a city. First ask the user, starting with '@user', whether they prefer museums or beaches. "
    "Then ask the researcher for the weather with 'TO[researcher]:'. Then give the plan, starting with 'DONE'."
)
RESEARCHER = "You look up today's weather with get_weather and report it in one sentence."
PREFERENCE = Expectation(type="choice", options=["museums", "beaches"])
"""The answer the planner's question expects."""


def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: the first factor.
        b: the second factor.
    """
    return a * b


def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: the first term.
        b: the second term.
    """
    return a + b


def divide(a: float, b: float) -> float:
    """Divide a number by another.

    Args:
        a: the dividend.
        b: the divisor (not zero).
    """
    if b == 0:
        raise ValueError("cannot divide by zero")
    return a / b


def build(model: Model) -> Task:
    """The task tree around ``model`` (one model for every agent, as a chat app has)."""
    calculator = Task(
        ResponderAgent(
            "calculator",
            model,
            prompt=CALCULATOR,
            tools=[
                with_guidance(multiply, instructions="for products", examples=[{"a": 6, "b": 7}]),
                with_guidance(add, instructions="for sums (a negative b subtracts)", examples=[{"a": 2, "b": 3}]),
                with_guidance(divide, instructions="for quotients", examples=[{"a": 10, "b": 4}]),
            ],
        ),
        history="restart",
        description="Does arithmetic with tools.",
    )
    researcher = Task(ResponderAgent("researcher", model, prompt=RESEARCHER, tools=[get_weather]), history="restart")
    planner = Task(
        ResponderAgent(
            "planner",
            model,
            prompt=PLANNER,
            user_expectation=PREFERENCE,
        ),
        sub_tasks=[researcher],
        history="restart",
        description="Plans a day in a city.",
    )
    return Task(ResponderAgent("coordinator", model, prompt=COORDINATOR), sub_tasks=[calculator, planner])


# --- the stand-in model: records the cassette, and answers offline what the cassette cannot --------------------

HELP = "I can do arithmetic ('What is 12 times 7?') or plan a day ('Plan a day in Lisbon')."
ARITHMETIC = (
    "I can add, subtract, multiply and divide numbers (in figures or words), and take a percentage of a number: "
    "try 'What is 15% of 240?'."
)


@dataclass(frozen=True, slots=True)
class _Operation:
    """A step of a calculation, ``left sign right``; the sign ``%`` takes ``left`` percent of ``right``."""

    sign: str
    left: _Expression
    right: _Expression


_Expression: TypeAlias = "float | _Operation"

_UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_SIGNS = {
    "plus": "+", "+": "+", "minus": "-", "-": "-", "times": "×", "x": "×", "*": "×", "×": "×", "over": "÷",
    "/": "÷", "÷": "÷",
}  # fmt: skip
_PHRASES = {"multiplied by": "times", "divided by": "over", "per cent": "percent", "%": " percent", "’": "'"}
_UNSUPPORTED = {
    "root": "square roots", "sqrt": "square roots", "squared": "powers", "cubed": "powers", "power": "powers",
    "^": "powers", "mod": "remainders", "modulo": "remainders", "remainder": "remainders", "factorial": "factorials",
    "log": "logarithms", "logarithm": "logarithms", "sin": "trigonometry", "cos": "trigonometry",
}  # fmt: skip
# The words opening a spelled-out calculation, and what it does with the numbers it lists.
_FORMS = {
    "add": "+", "sum": "+", "total": "+", "subtract": "-", "deduct": "-", "take": "-", "difference": "-",
    "multiply": "×", "product": "×", "divide": "÷", "quotient": "÷", "average": "mean", "mean": "mean",
}  # fmt: skip
# Words around a calculation: "what is ... ?", "can you calculate ... please".
_LEADING = {
    "ok", "okay", "so", "and", "now", "also", "hey", "hi", "please", "then", "well", "can", "could", "would",
    "will", "you", "tell", "me", "what", "what's", "whats", "is", "are", "how", "much", "calculate", "compute",
    "work", "figure", "out", "evaluate", "find", "do", "does", "the", "result", "value", "answer", "of", "i",
    "need", "want", "to",
}  # fmt: skip
_TRAILING = {"?", ".", "!", "please", "is", "equal", "equals", "=", "for", "me", "now", "exactly", "then", "thanks"}
# Words before a calculation that do not change it: a greeting, a correction ("sorry, I meant ...").
_PREAMBLE = {
    *_LEADING, "hello", "sorry", "oops", "no", "wait", "actually", "meant", "mean", "make", "that", "it", "a", "an",
    "just", "oh", "um", "hmm", "quick", "question", "instead", "rather", "again", "let's", "lets", "try",
}  # fmt: skip
_MONEY = {"$", "€", "£", "dollars", "dollar", "bucks", "euros", "euro", "eur", "usd", "pounds", "quid", "gbp"}
_BREAKS = {"!", "?", ":", ";", ",", "."}
"""Where a sentence or a clause ends: "hello! quick one: 18 plus 27?" holds its calculation in one part."""
# Words saying a total is shared out: "we spent 240 and there are 4 of us, how much each?".
_SHARED = re.compile(
    r"\b(?:split|share[ds]?|sharing|divvy)\b|\b(?:how much|what)\b.*\b(?:each|apiece|per (?:person|head))\b"
)
_PERCENT_ENDS = {"on", "of", "off", *_SIGNS}
_PEOPLE = {"of", "people", "persons", "friends", "guests", "ways", "kids", "children", "adults", "us", "them"}


def _tokens(text: str) -> list[str | float]:
    """The words, signs and numbers of ``text``, number words read as numbers ("twenty-one" is 21)."""
    lower = text.lower()
    for phrase, word in _PHRASES.items():
        lower = lower.replace(phrase, word)
    lower = re.sub(r"(?<=\d),(?=\d{3}\b)", "", lower)  # 1,250
    lower = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", lower)  # twenty-one
    words = re.findall(r"\d+(?:\.\d+)?|[a-z]+(?:'[a-z]+)?|[^\s\w]", lower)
    tokens: list[str | float] = []
    index = 0
    while index < len(words):
        value, end = _spelled_number(words, index)
        if value is None:
            tokens.append(float(words[index]) if words[index][0].isdigit() else words[index])
            end = index + 1
        else:
            tokens.append(value)
        index = end
    return tokens


def _spelled_number(words: list[str], index: int) -> tuple[float | None, int]:
    """The number written in words from ``words[index]`` on ("one hundred and five"), and where it ends."""
    total, current, last = 0, 0, ""
    while index < len(words):
        word, following = words[index], words[index + 1] if index + 1 < len(words) else ""
        if word in _UNITS and last in ("", "tens", "hundred", "scale") and not (last == "tens" and current % 10):
            if last == "tens" and _UNITS.index(word) >= 10:
                break
            current, last = current + _UNITS.index(word), "unit"
        elif word in _TENS and last in ("", "hundred", "scale"):
            current, last = current + 20 + 10 * _TENS.index(word), "tens"
        elif word == "hundred" and last in ("unit", "tens") and current < 100:
            current, last = current * 100, "hundred"
        elif word in _SCALES and last in ("unit", "tens", "hundred"):
            total, current, last = total + current * _SCALES[word], 0, "scale"
        elif not (word == "and" and last in ("hundred", "scale") and following in (*_UNITS, *_TENS)):
            break
        index += 1
    return (float(total + current), index) if last else (None, index)


def _calculation(text: str) -> _Expression | str:
    """The calculation ``text`` asks for, or a sentence saying why it cannot be done.

    Currency aside ("85 dollars" is 85), the calculation is the whole text after words that do not change it
    ("sorry, I meant 45 times 4"), or the one part of it between punctuation that holds one ("hello! quick one: 18
    plus 27?"), or a total shared out ("240 and there are 4 of us, how much each?" is 240 ÷ 4). Two calculations in
    one text are asked about, never one of them answered alone.
    """
    tokens = [t for t in _tokens(text) if t not in _MONEY]
    unsupported = next((_UNSUPPORTED[t] for t in tokens if isinstance(t, str) and t in _UNSUPPORTED), None)
    if unsupported is not None:
        return f"I cannot compute {unsupported}. {ARITHMETIC}"
    found = _read(tokens)
    if found is None:
        parts: list[list[str | float]] = [[]]
        for token in tokens:
            if token in _BREAKS:
                parts.append([])
            else:
                parts[-1].append(token)
        read = [r for r in map(_read, parts) if isinstance(r, _Operation)]
        if len(read) > 1:
            return f"One calculation at a time, please: {' or '.join(repr(_render(r)) for r in read)}?"
        found = read[0] if read else _shared_out(tokens, text)
    if isinstance(found, float):  # a number alone ("minus 30") is no calculation: never "30 = -30"
        return f"{text.strip()!r} needs two numbers, for example 'What is 50 minus 30?'. {ARITHMETIC}"
    return found if found is not None else f"I could not read a calculation in {text.strip()!r}. {ARITHMETIC}"


def _read(tokens: list[str | float]) -> _Expression | None:
    """The calculation ``tokens`` hold once the words around it are taken off, or ``None``."""
    tokens = _percent_of(tokens)
    start, end = 0, len(tokens)
    while start < end and tokens[start] in _PREAMBLE:
        start += 1
    while end > start and tokens[end - 1] in _TRAILING:
        end -= 1
    tokens = tokens[start:end]
    if not tokens:
        return None
    return _spelled_out(tokens) if tokens[0] in _FORMS else _Reader(tokens).whole()


def _percent_of(tokens: list[str | float]) -> list[str | float]:
    """``tokens`` with a percentage's noun read as "of" or "off": "20 percent tip on 85" is "20 percent of 85", and
    "20 percent discount on 85" is "20 percent off 85"."""
    read: list[str | float] = []
    at = 0
    while at < len(tokens):
        read.append(tokens[at])
        if tokens[at] == "percent":
            end = at + 1
            while end < min(at + 3, len(tokens)) and isinstance(tokens[end], str) and tokens[end] not in _PERCENT_ENDS:
                end += 1  # at most two words: "tip", "service charge"
            if end < len(tokens) and tokens[end] in ("on", "of", "off"):
                off = tokens[end] == "off" or "discount" in tokens[at + 1 : end]
                read.append("off" if off else "of")
                at = end
        at += 1
    return read


def _shared_out(tokens: list[str | float], text: str) -> _Expression | None:
    """A total shared out among people, when ``text`` asks what each gets and holds two numbers: the total, and the
    count ("4 of us", "3 people", "between 3")."""
    numbers = [(at, t) for at, t in enumerate(tokens) if isinstance(t, float)]
    if len(numbers) != 2 or _SHARED.search(straight(text).lower()) is None:
        return None
    counts = [
        index
        for index, (at, _) in enumerate(numbers)
        if (at + 1 < len(tokens) and tokens[at + 1] in _PEOPLE) or (at > 0 and tokens[at - 1] in ("between", "among"))
    ]
    if len(counts) != 1:
        return None
    return _Operation("÷", numbers[1 - counts[0]][1], numbers[counts[0]][1])


def _spelled_out(tokens: list[str | float]) -> _Expression | None:
    """A calculation opened by a verb or a noun: "add 2 and 3", "subtract 4 from 9", "the average of 1, 2 and 6"."""
    form, rest = _FORMS[str(tokens[0])], tokens[1:]
    if rest[:1] in (["of"], ["between"]):
        rest = rest[1:]
    if form == "-" and "from" in rest:  # subtract 4 from 9: 9 - 4
        at = rest.index("from")
        rest = [*rest[at + 1 :], "and", *(t for t in rest[:at] if t != "away")]
    items: list[list[str | float]] = [[]]
    for token in rest:
        if token in ("and", ",", "to", "by", "with"):
            items.append([])
        else:
            items[-1].append(token)
    terms = [_Reader(item).whole() for item in items if item]
    if len(terms) < 2 or (form in ("-", "÷") and len(terms) != 2):
        return None
    result = terms[0]
    for term in terms[1:]:
        if result is None or term is None:
            return None
        result = _Operation("+" if form == "mean" else form, result, term)
    return _Operation("÷", result, float(len(terms))) if form == "mean" and result is not None else result


class _Reader:
    """Reads a calculation written with signs or their words; products and quotients first ("2 plus 3 times 4"
    is 14), and "15 percent of 240"."""

    def __init__(self, tokens: list[str | float]) -> None:
        self.tokens = tokens
        self.position = 0

    def whole(self) -> _Expression | None:
        """The calculation, if the tokens are one and nothing else."""
        found = self.chain(("+", "-"))
        return found if self.position == len(self.tokens) else None

    def peek(self) -> str | float | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def chain(self, signs: tuple[str, ...]) -> _Expression | None:
        """Terms joined by ``signs`` (a sum's terms are products)."""
        part = self.chain if signs == ("+", "-") else None
        left = part(("×", "÷")) if part is not None else self.operand()
        while left is not None and _SIGNS.get(str(self.peek())) in signs:
            sign = _SIGNS[str(self.peek())]
            self.position += 1
            right = part(("×", "÷")) if part is not None else self.operand()
            if right is None:
                return None
            left = _Operation(sign, left, right)
        return left

    def operand(self) -> _Expression | None:
        """A number, a negative one, "15 percent of …", or a calculation in brackets."""
        token = self.peek()
        self.position += 1
        if token in ("-", "minus", "negative"):
            inner = self.operand()
            return -inner if isinstance(inner, float) else None
        if token == "(":
            inner = self.chain(("+", "-"))
            if self.peek() != ")":
                return None
            self.position += 1
            return inner
        if not isinstance(token, float):
            return None
        if self.tokens[self.position : self.position + 2] in (["percent", "of"], ["percent", "off"]):
            off = self.tokens[self.position + 1] == "off"
            self.position += 2
            whole = self.operand()
            if whole is None:
                return None
            return _Operation("-", whole, _Operation("%", token, whole)) if off else _Operation("%", token, whole)
        return token


def _looks_like_arithmetic(text: str) -> bool:
    """Whether a message asks for a calculation (a number, and a sign or a word of arithmetic)."""
    tokens = _tokens(text)
    words = {t for t in tokens if isinstance(t, str)}
    numbers = [t for t in tokens if isinstance(t, float)]
    if bool(numbers) and bool(words & {*_SIGNS, *_FORMS, *_UNSUPPORTED, "percent"}):
        return True
    return _shared_out([t for t in tokens if t not in _MONEY], text) is not None


@dataclass(frozen=True, slots=True)
class _Result:
    """The result of an earlier tool call of the calculation (negated for a subtraction)."""

    step: int
    negated: bool = False


def _steps(expression: _Expression) -> list[tuple[str, float | _Result, float | _Result]]:
    """The tool calls that compute ``expression``, in order: subtraction adds the opposite, and a percentage
    multiplies, then divides by 100."""
    steps: list[tuple[str, float | _Result, float | _Result]] = []

    def step(tool: str, a: float | _Result, b: float | _Result) -> _Result:
        steps.append((tool, a, b))
        return _Result(len(steps) - 1)

    def walk(node: _Expression) -> float | _Result:
        if isinstance(node, float):
            return node
        a, b = walk(node.left), walk(node.right)
        if node.sign == "%":
            return step("divide", step("multiply", a, b), 100.0)
        if node.sign == "-":
            b = -b if isinstance(b, float) else _Result(b.step, not b.negated)
        return step({"+": "add", "-": "add", "×": "multiply", "÷": "divide"}[node.sign], a, b)

    walk(expression)
    return steps


def _render(node: _Expression, outer: int = 0, right: bool = False) -> str:
    """The calculation as written back to the user ("15% of 240", "(2 + 4) ÷ 2")."""
    if isinstance(node, float):
        return _number(node)
    if node.sign == "%":
        return f"{_render(node.left, 3)}% of {_render(node.right, 3)}"
    level = 1 if node.sign in "+-" else 2
    text = f"{_render(node.left, level)} {node.sign} {_render(node.right, level, right=node.sign in '-÷')}"
    return f"({text})" if level < outer or (right and level == outer) else text


def _number(value: float) -> str:
    value = round(value, 10)
    return str(int(value)) if value.is_integer() else str(value)


_RESULT = re.compile(r" = (?P<value>-?\d+(?:\.\d+)?)\.$")
"""The result at the end of the calculator's answer ("1250 + 380 = 1630.")."""
_LAST_STEP = re.compile(r"^(?P<head>.+) (?P<sign>[-+×÷]) (?P<last>-?\d+(?:\.\d+)?) = -?\d+(?:\.\d+)?\.$")
"""A calculator's answer whose last step is a sign and a number ("45 × 3 = 135.": "45", "×", "3")."""
_CORRECTION = re.compile(r"^(?:sorry|oops|no|wait|actually|i meant|i mean|make (?:that|it)|correction)\b")
_ASK_CITY = "Which city?"
_CANCEL = re.compile(r"(?:no|cancel|stop|never ?mind|forget it|nothing)\b")


def _follow_up(text: str, messages: list[Message]) -> str | None:
    """A calculation continuing the previous result ("minus 30?" after "1250 + 380 = 1630." is "1630 minus 30"),
    a sentence asking for both numbers when there is none, or ``None`` when ``text`` does not start with an operation.
    """
    tokens = _tokens(text)
    while tokens and tokens[0] in _LEADING:
        tokens.pop(0)
    if not tokens or not isinstance(tokens[0], str) or tokens[0] not in _SIGNS:
        return None
    fresh = _calculation(text)
    if tokens[0] == "-" and isinstance(fresh, _Operation):  # "-5 plus 3": a calculation of its own
        return None
    said = [m.content for m in messages if isinstance(m, HumanMessage) and m.name == "calculator"]
    previous = next((found for found in map(_RESULT.search, reversed(said)) if found is not None), None)
    if previous is None:
        return f"{text.strip()}: of what? Give me both numbers, for example 'What is 50 minus 30?'."
    rest = " ".join(_number(t) if isinstance(t, float) else t for t in tokens)
    return f"TO[calculator]: {previous['value']} {rest}"


def _correction(text: str, messages: list[Message]) -> str | None:
    """The calculation a correction of the previous one asks for ("sorry, I meant times 4" or "no, 4" after "45 × 3
    = 135." is 45 × 4), a sentence asking for the whole calculation when the previous one has no last step to
    change, or ``None`` when ``text`` is no correction of a last step (a whole calculation is read as it is)."""
    if _CORRECTION.match(straight(text).lower().strip()) is None:
        return None
    tokens = [t for t in _tokens(text) if t not in _MONEY and t not in _BREAKS]
    while tokens and tokens[0] in _PREAMBLE:
        tokens.pop(0)
    if len(tokens) == 2 and isinstance(tokens[1], float) and str(tokens[0]) in _SIGNS:
        sign, number = _SIGNS[str(tokens[0])], tokens[1]
    elif len(tokens) == 1 and isinstance(tokens[0], float):
        sign, number = None, tokens[0]
    else:
        return None
    said = [m.content for m in messages if isinstance(m, HumanMessage) and m.name == "calculator"]
    latest = next((answer for answer in reversed(said) if _RESULT.search(answer)), "")
    previous = _LAST_STEP.match(latest)  # "15% of 240 = 36." has no last step to change
    if previous is None:
        return "DONE Which calculation do you mean? Give me the whole of it, for example 'What is 45 times 4?'."
    return f"TO[calculator]: {previous['head']} {sign or previous['sign']} {_number(number)}"


def _changed_preference(text: str, messages: list[Message]) -> str | None:
    """The plan again with the other option, when ``text`` names one option after the coordinator gave a plan
    ("actually I changed my mind, beaches")."""
    asked = next((m.content for m in reversed(messages) if isinstance(m, AIMessage)), "")
    planned = re.match(r"DONE Your day in (?P<city>.+?): ", asked)
    chosen = _preference(text.replace("?", ""))
    if planned is None or chosen is None:
        return None
    return f"TO[planner]: Plan a day in {planned['city']}, with {chosen}"


def _coordinator(messages: list[Message]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, HumanMessage) and last.name in ("calculator", "planner"):
        return AIMessage(content=f"DONE {last.content}")
    text = last.content if isinstance(last, HumanMessage) else ""
    if emergency(text):  # no task of the desk's: the person is sent to emergency services first
        return AIMessage(content=f"DONE {EMERGENCY_REPLY}")
    words = text.lower().strip(" ?!.,")
    if re.search(r"\bplan\b", words):
        return AIMessage(content=f"TO[planner]: {text}")
    for reading in (_correction, _changed_preference):
        read = reading(text, messages[:-1])
        if read is not None:
            return AIMessage(content=read)
    follow_up = _follow_up(text, messages[:-1])
    if follow_up is not None:
        return AIMessage(content=follow_up if follow_up.startswith("TO[") else f"DONE {follow_up}")
    if _looks_like_arithmetic(text):
        return AIMessage(content=f"TO[calculator]: {text}")
    asked = next((m.content for m in reversed(messages[:-1]) if isinstance(m, AIMessage)), "")
    if asked.startswith(f"DONE {_ASK_CITY}"):  # the answer to the planner's "Which city?"
        if _CANCEL.match(words):
            return AIMessage(content="DONE All right: no plan.")
        city = (places(text) or [text.strip(" ?!.")])[0]
        if re.fullmatch(r"[^\W\d_][\w' -]{0,40}", city):
            return AIMessage(content=f"TO[planner]: Plan a day in {city[0].upper() + city[1:]}")
    replies = {
        "greeting": f"Hello! I am a small desk of tasks. {HELP}",
        "capabilities": f"I am a small desk of tasks. {HELP}",
        "thanks": "You're welcome!",
        "goodbye": "Goodbye!",
    }
    return AIMessage(content=f"DONE {replies.get(pleasantry(text) or '', HELP)}")


def _calculator(messages: list[Message]) -> AIMessage:
    """Reads the calculation, then makes its tool calls one at a time, each with the results of the ones before."""
    start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    calculation = _calculation(messages[start].content)
    if isinstance(calculation, str):
        return AIMessage(content=calculation)
    results = [m for m in messages[start:] if isinstance(m, ToolMessage)]
    if any(r.is_error for r in results):
        return AIMessage(
            content=f"I could not compute {_render(calculation)}: {results[-1].content.rsplit(': ', 1)[-1]}."
        )
    values = [float(r.content) for r in results]
    steps = _steps(calculation)
    if len(values) < len(steps):
        tool, a, b = steps[len(values)]
        args = [x if isinstance(x, float) else -values[x.step] if x.negated else values[x.step] for x in (a, b)]
        return AIMessage(tool_calls=[tool_call(tool, {"a": args[0], "b": args[1]})])
    value = values[-1] if values else calculation
    assert isinstance(value, float)
    return AIMessage(content=f"{_render(calculation)} = {_number(value)}.")


def _preference(answer: str) -> str | None:
    """The option an answer to the planner's question chooses: ``None`` for a question, "neither", both, or an
    option said no to. Words around the option do not matter ("no wait, beaches", "I changed my mind: museums")."""
    said = straight(answer).strip().lower()
    if "?" in said:
        return None
    named: set[str] = set()
    refused: set[str] = set()
    for clause in clauses(said):
        for option in PREFERENCE.options:
            if re.search(rf"\b{option.removesuffix('es').removesuffix('s')}", clause):
                (refused if negated(clause) else named).add(option)
    if refused:
        return None
    if named:
        return named.pop() if len(named) == 1 else None
    return PREFERENCE.fit(said)  # "2", "the second one"


def _planner(messages: list[Message]) -> AIMessage:
    request = next(m.content for m in messages if isinstance(m, HumanMessage))
    cities = places(request)
    if not cities:
        return AIMessage(content=f"DONE {_ASK_CITY} Say, for example, 'Plan a day in Lisbon'.")
    city, last = cities[0], messages[-1]
    answers = [m.content for m in messages[2:] if isinstance(m, HumanMessage) and m.name is None]
    if isinstance(last, HumanMessage) and last.name == "researcher":
        choice = next((p for p in map(_preference, [*reversed(answers), request]) if p is not None), "sights")
        return AIMessage(
            content=f"DONE Your day in {city}: a walk through the old town in the morning, lunch by the river, "
            f"the afternoon at the {choice}. {last.content}"
        )
    if _preference(request) is not None and not answers:  # "Plan a day in Lisbon, with beaches": no question
        return AIMessage(content=f"TO[researcher]: What is the weather in {city} today?")
    if not answers:
        return AIMessage(content=f"@user Do you prefer museums or beaches in {city}?")
    if emergency(answers[-1]):  # said instead of an answer: the plan can wait
        return AIMessage(content=f"DONE {EMERGENCY_REPLY}")
    if declines(answers[-1]) or says_goodbye(answers[-1]):
        return AIMessage(content=f"DONE All right: no plan for {city}.")
    if _preference(answers[-1]) is None:
        return AIMessage(content=f"@user Please answer museums or beaches: which do you prefer in {city}?")
    return AIMessage(content=f"TO[researcher]: What is the weather in {city} today?")


def _researcher(messages: list[Message]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(content=describe_weather(last.content))
    city = (places(last.content) or [last.content.rstrip("?").split(" in ")[-1].replace(" today", "").strip()])[0]
    return AIMessage(tool_calls=[tool_call("get_weather", {"city": city})])


def stand_in(messages: list[Message], request: ModelRequest) -> AIMessage:
    """A rule-based stand-in for a model: it recorded the shipped cassette, and answers offline what the cassette
    cannot (arithmetic done with the calculator's tools, or said plainly to be beyond them)."""
    system = messages[0].content if messages and messages[0].kind == "system" else ""
    for prompt, answer in ((COORDINATOR, _coordinator), (CALCULATOR, _calculator), (PLANNER, _planner)):
        if system.startswith(prompt):
            return answer(messages)
    return _researcher(messages)


app = App(
    name="tasks-demo",
    build=build,
    cassette=CASSETTE,
    offline_fallback=FunctionModel(stand_in, name="stand-in", keep=0),  # it serves: keeps no requests
    welcome="A desk of tasks: ask 'What is 12 times 7?', 'What is 1250 plus 380?' or 'Plan a day in Lisbon'.",
)


# --- recording --------------------------------------------------------------------------------------------------

# The conversations recorded into the cassette: each a list of human lines (answers to questions included).
SCRIPT = [
    ["What is 12 times 7?", "What is 1250 plus 380?"],
    ["Plan a day in Lisbon", "beaches"],
    ["Plan a day in Oslo", "museums"],
]


async def record(path: Path = CASSETTE) -> None:
    """Record the cassette from a real model when PODIUM_MODEL is set, else from the stand-in."""
    await asyncio.to_thread(path.unlink, missing_ok=True)
    model = RecordingModel(Settings.load().model_or_none() or FunctionModel(stand_in, name="stand-in"), path)
    runtime = Runtime()
    task = build(model)
    for lines in SCRIPT:
        thread = None
        for line in lines:
            result = await runtime.send(task, line, thread_id=thread)
            thread = result.thread_id
            print(json.dumps({"human": line, "status": result.status, "output": result.output}, ensure_ascii=False))


if __name__ == "__main__":
    if "--record" in sys.argv:
        asyncio.run(record())
    else:
        print(__doc__)
