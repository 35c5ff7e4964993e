"""Calculations read from what people type: "what's 15% of 240?", "one hundred and five minus twenty-one", "split 90
dollars between 3 people", and the tool calls that compute them (the tasks demo's calculator, offline).

A phrase reader, not a model: it reads the common ways of asking for arithmetic and says plainly when it cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeAlias

from podium.human import one_typo, straight

ARITHMETIC = (
    "I can add, subtract, multiply and divide numbers (in figures or words), and take a percentage of a number: "
    "try 'What is 15% of 240?'."
)


@dataclass(frozen=True, slots=True)
class Operation:
    """A step of a calculation, ``left sign right``; the sign ``%`` takes ``left`` percent of ``right``."""

    sign: str
    left: Expression
    right: Expression


Expression: TypeAlias = "float | Operation"

_UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
SIGNS = {
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
LEADING = {
    "ok", "okay", "so", "and", "now", "also", "hey", "hi", "please", "then", "well", "can", "could", "would",
    "will", "you", "tell", "me", "what", "what's", "whats", "is", "are", "how", "much", "calculate", "compute",
    "work", "figure", "out", "evaluate", "find", "do", "does", "the", "result", "value", "answer", "of", "i",
    "need", "want", "to", "wat", "wats",
}  # fmt: skip
_TRAILING = {"?", ".", "!", "please", "is", "equal", "equals", "=", "for", "me", "now", "exactly", "then", "thanks"}
# Words before a calculation that do not change it: a greeting, a correction ("sorry, I meant ...").
PREAMBLE = {
    *LEADING, "hello", "sorry", "oops", "no", "wait", "actually", "meant", "mean", "make", "that", "it", "a", "an",
    "just", "oh", "um", "hmm", "quick", "question", "instead", "rather", "again", "let's", "lets", "try", "thanks",
    "thank", "cheers", "great", "cool", "nice", "perfect", "ta",
}  # fmt: skip
_ONE_NUMBER = {"double": 2.0, "twice": 2.0, "triple": 3.0, "treble": 3.0, "quadruple": 4.0, "halve": 0.5, "half": 0.5}
"""Words that make a calculation of one number ("double 56" is 56 × 2, "halve 90" is 90 ÷ 2)."""
_OPERATORS = ["times", "plus", "minus", "divided", "multiplied", "percent", "multiply", "divide", "subtract"]
"""Words a typo is read as when it is one letter off ("tims", "pluss", "minsu")."""
_REAL_WORDS = {"time", "mines", "plum", "plug", "plums", "minds", "divine", "dived", "percept"}
"""English words one letter off an operator word, which are no typo of it."""
_PERCENT_NOUNS = {"tip", "tax", "vat", "discount", "markup", "gratuity", "service", "commission", "fee", "surcharge"}
_ARTICLES = {"a", "an", "the", "my", "our"}
_PRICED = {"bill", "check", "cheque", "tab", "meal", "dinner", "lunch", "order", "purchase", "total", "price", "item"}
"""Nouns that name an amount after its number ("a $65 bill")."""
_REDUCED = re.compile(r"\b(?:off|discount\w*|sale|less|minus|reduced|markdown)\b")
_IN_ALL = re.compile(
    r"\b(?:total|altogether|in all|including|incl|pay|owe|plus|add(?:ed|ing)?|with (?:an? |the )?(?:tip|tax|vat))\b"
)
_EACH = {"each", "apiece", "per"}
_SPENDING = re.compile(
    r"[$€£]|\b(?:how much|cost\w*|spen[dt]\w*|pa(?:y|id)|total|price\w*|bill|tip|tax|vat|discount\w*|off|sale|"
    r"save|saving|dollars?|euros?|pounds?|bucks|quid)\b"
)
"""Words of money: a story of a price or a percentage is read only among them ("4 people at 8pm" is none)."""
MONEY = {"$", "€", "£", "dollars", "dollar", "bucks", "euros", "euro", "eur", "usd", "pounds", "quid", "gbp"}
BREAKS = {"!", "?", ":", ";", ",", "."}
"""Where a sentence or a clause ends: "hello! quick one: 18 plus 27?" holds its calculation in one part."""
# Words saying a total is shared out: "we spent 240 and there are 4 of us, how much each?".
_SHARED = re.compile(
    r"\b(?:split|share[ds]?|sharing|divvy)\b|\b(?:how much|what)\b.*\b(?:each|apiece|per (?:person|head))\b"
)
_PERCENT_ENDS = {"on", "of", "off", *SIGNS}
_PEOPLE = {"of", "people", "persons", "friends", "guests", "ways", "kids", "children", "adults", "us", "them"}


def tokenize(text: str) -> list[str | float]:
    """The words, signs and numbers of ``text``, number words read as numbers ("twenty-one" is 21)."""
    lower = re.sub(r"[a-z]{4,}", _typo, text.lower())  # "17 tims 4"
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


def _typo(match: re.Match[str]) -> str:
    """The operator word a word is a typo of, or the word."""
    word = match[0]
    if word in _OPERATORS or word in _REAL_WORDS:
        return word
    return next((known for known in _OPERATORS if one_typo(word, known)), word)


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


def read_calculation(text: str) -> Expression | str:
    """The calculation ``text`` asks for, or a sentence saying why it cannot be done.

    Currency aside ("85 dollars" is 85), the calculation is the whole text after words that do not change it
    ("sorry, I meant 45 times 4"), or the one part of it between punctuation that holds one ("hello! quick one: 18
    plus 27?"), or a total shared out ("240 and there are 4 of us, how much each?" is 240 ÷ 4). Two calculations in
    one text are asked about, never one of them answered alone.
    """
    tokens = [t for t in tokenize(text) if t not in MONEY]
    unsupported = next((_UNSUPPORTED[t] for t in tokens if isinstance(t, str) and t in _UNSUPPORTED), None)
    if unsupported is not None:
        return f"I cannot compute {unsupported}. {ARITHMETIC}"
    found = _read(tokens)
    if found is None:
        parts: list[list[str | float]] = [[]]
        for token in tokens:
            if token in BREAKS:
                parts.append([])
            else:
                parts[-1].append(token)
        read = [r for r in map(_read, parts) if isinstance(r, Operation)]
        if len(read) > 1:
            return f"One calculation at a time, please: {' or '.join(repr(render(r)) for r in read)}?"
        found = read[0] if read else _shared_out(tokens, text) or _priced(tokens, text) or _percent_story(tokens, text)
    if isinstance(found, float):  # a number alone ("minus 30") is no calculation: never "30 = -30"
        return f"{text.strip()!r} needs two numbers, for example 'What is 50 minus 30?'. {ARITHMETIC}"
    return found if found is not None else f"I could not read a calculation in {text.strip()!r}. {ARITHMETIC}"


def _read(tokens: list[str | float]) -> Expression | None:
    """The calculation ``tokens`` hold once the words around it are taken off, or ``None``."""
    tokens = _percent_of(tokens)
    start, end = 0, len(tokens)
    while start < end and tokens[start] in PREAMBLE:
        start += 1
    while end > start and tokens[end - 1] in _TRAILING:
        end -= 1
    tokens = tokens[start:end]
    if not tokens:
        return None
    if tokens[0] in _ONE_NUMBER:  # "double 56", "half of 90"
        times, rest = _ONE_NUMBER[str(tokens[0])], tokens[2:] if tokens[1:2] == ["of"] else tokens[1:]
        one = _Reader(rest).whole() if rest else None
        if one is None:
            return None
        return Operation("÷", one, 2.0) if times == 0.5 else Operation("×", one, times)
    return _spelled_out(tokens) if tokens[0] in _FORMS else _Reader(tokens).whole()


def _priced(tokens: list[str | float], text: str) -> Expression | None:
    """A count of things at a price each, when ``tokens`` hold these two numbers and no other: "3 coffees at 4.50
    each", "4 tickets for 12 apiece", "2 shirts @ 15" (the count times the price)."""
    numbers = [at for at, t in enumerate(tokens) if isinstance(t, float)]
    if len(numbers) != 2 or not 0 < numbers[1] - numbers[0] <= 4:
        return None
    count, price = numbers
    between = tokens[count + 1 : price]
    after = tokens[price + 1 : price + 2]
    priced = any(t in _EACH for t in after) or (any(t in ("at", "@") for t in between) and _SPENDING.search(text))
    if not priced or not all((isinstance(t, str) and t.isalpha()) or t == "@" for t in between):
        return None
    return Operation("×", tokens[count], tokens[price])


def _percent_story(tokens: list[str | float], text: str) -> Expression | None:
    """A percentage of an amount told in everyday words, when ``tokens`` hold these two numbers and no other: a
    tip, a tax or a share of it ("tip of 18% on a $65 bill": 18% of 65), the amount less it ("a jacket is 120 with
    25% off, how much do I pay": 120 - 25% of 120), or the amount with it ("how much do we pay in all with an 18%
    tip on 65": 65 + 18% of 65)."""
    numbers = [at for at, t in enumerate(tokens) if isinstance(t, float)]
    percents = [at for at in numbers if tokens[at + 1 : at + 2] == ["percent"]]
    if len(numbers) != 2 or len(percents) != 1 or not _SPENDING.search(straight(text).lower()):
        return None
    rate = tokens[percents[0]]
    amount = next(tokens[at] for at in numbers if at != percents[0])
    assert isinstance(rate, float) and isinstance(amount, float)
    words = straight(text).lower()
    share = Operation("%", rate, amount)
    if _REDUCED.search(words) and not re.search(r"\bsav(?:e|ing|ings)\b", words):
        return Operation("-", amount, share)
    return Operation("+", amount, share) if _IN_ALL.search(words) else share


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


def _shared_out(tokens: list[str | float], text: str) -> Expression | None:
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
    return Operation("÷", numbers[1 - counts[0]][1], numbers[counts[0]][1])


def _spelled_out(tokens: list[str | float]) -> Expression | None:
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
        result = Operation("+" if form == "mean" else form, result, term)
    return Operation("÷", result, float(len(terms))) if form == "mean" and result is not None else result


class _Reader:
    """Reads a calculation written with signs or their words; products and quotients first ("2 plus 3 times 4"
    is 14), and "15 percent of 240"."""

    def __init__(self, tokens: list[str | float]) -> None:
        self.tokens = tokens
        self.position = 0

    def whole(self) -> Expression | None:
        """The calculation, if the tokens are one and nothing else."""
        found = self.chain(("+", "-"))
        return found if self.position == len(self.tokens) else None

    def peek(self) -> str | float | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def chain(self, signs: tuple[str, ...]) -> Expression | None:
        """Terms joined by ``signs`` (a sum's terms are products)."""
        part = self.chain if signs == ("+", "-") else None
        left = part(("×", "÷")) if part is not None else self.operand()
        while left is not None and SIGNS.get(str(self.peek())) in signs:
            sign = SIGNS[str(self.peek())]
            self.position += 1
            right = part(("×", "÷")) if part is not None else self.operand()
            if right is None:
                return None
            left = Operation(sign, left, right)
        return left

    def operand(self) -> Expression | None:
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
            return Operation("-", whole, Operation("%", token, whole)) if off else Operation("%", token, whole)
        return token


def looks_like_arithmetic(text: str) -> bool:
    """Whether a message asks for a calculation (a number, and a sign or a word of arithmetic)."""
    tokens = tokenize(text)
    words = {t for t in tokens if isinstance(t, str)}
    numbers = [t for t in tokens if isinstance(t, float)]
    if bool(numbers) and bool(words & {*SIGNS, *_FORMS, *_UNSUPPORTED, "percent"}):
        return True
    return isinstance(read_calculation(text), Operation)


@dataclass(frozen=True, slots=True)
class _Result:
    """The result of an earlier tool call of the calculation (negated for a subtraction)."""

    step: int
    negated: bool = False


def tool_steps(expression: Expression) -> list[tuple[str, float | _Result, float | _Result]]:
    """The tool calls that compute ``expression``, in order: subtraction adds the opposite, and a percentage
    multiplies, then divides by 100."""
    steps: list[tuple[str, float | _Result, float | _Result]] = []

    def step(tool: str, a: float | _Result, b: float | _Result) -> _Result:
        steps.append((tool, a, b))
        return _Result(len(steps) - 1)

    def walk(node: Expression) -> float | _Result:
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


def render(node: Expression, outer: int = 0, right: bool = False) -> str:
    """The calculation as written back to the user ("15% of 240", "(2 + 4) ÷ 2")."""
    if isinstance(node, float):
        return figure(node)
    if node.sign == "%":
        return f"{render(node.left, 3)}% of {render(node.right, 3)}"
    level = 1 if node.sign in "+-" else 2
    text = f"{render(node.left, level)} {node.sign} {render(node.right, level, right=node.sign in '-÷')}"
    return f"({text})" if level < outer or (right and level == outer) else text


def figure(value: float) -> str:
    """``value`` as the calculator writes it: without ".0", and rounded past float noise ("0.30000000000000004")."""
    value = round(value, 10)
    return str(int(value)) if value.is_integer() else str(value)
