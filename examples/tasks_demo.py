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
words, words around the calculation, a count at a price each, typos of its words) and says so plainly when it cannot;
a follow-up ("minus 30?", "and divided by 4?", "now double it", "divide that by 5", "now subtract 17") applies to
the previous result, a day plan is read in other words ("sort out a day of sightseeing in Oslo", "what should we do
for a day in Paris?"), several requests in one message ("what's 12 times 3 and 40 minus 8", "what's 6 times 7, and
plan a day in Oslo") are each done in turn (the plan last, its question said with the other answers), a choice left
to the planner ("you pick") is said to be the person's and a question about its options plainly unanswered, a
correction ("sorry, I meant times 4") changes the previous calculation's last step, the answer to "Which city?" is
planned, and a choice given with the request ("Plan a day in Lisbon, I love the beach") or after the plan
("actually, beaches") is planned without asking.

The weather table is a stand-in for a real weather service. Re-record the cassette (from the rule-based stand-in
below, or a real model when ``PODIUM_MODEL`` is set) with ``python -m examples.tasks_demo --record``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from examples.tasks.calculations import (
    BREAKS,
    LEADING,
    MONEY,
    PREAMBLE,
    SIGNS,
    Operation,
    figure,
    looks_like_arithmetic,
    read_calculation,
    render,
    tokenize,
    tool_steps,
)
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
from podium.human import (
    EMERGENCY_REPLY,
    clauses,
    declines,
    emergency,
    is_question,
    leaves_choice,
    negated,
    pleasantry,
    requests_in,
    says_goodbye,
    straight,
)
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
_RESULT = re.compile(r" = (?P<value>-?\d+(?:\.\d+)?)\.$")
"""The result at the end of the calculator's answer ("1250 + 380 = 1630.")."""
_LAST_STEP = re.compile(r"^(?P<head>.+) (?P<sign>[-+×÷]) (?P<last>-?\d+(?:\.\d+)?) = -?\d+(?:\.\d+)?\.$")
"""A calculator's answer whose last step is a sign and a number ("45 × 3 = 135.": "45", "×", "3")."""
_CORRECTION = re.compile(r"^(?:sorry|oops|no|wait|actually|i meant|i mean|make (?:that|it)|correction)\b")
_ASK_CITY = "Which city?"
_CANCEL = re.compile(r"(?:no|cancel|stop|never ?mind|forget it|nothing)\b")


_VERBS = {"add": "plus", "subtract": "minus", "deduct": "minus", "multiply": "times", "divide": "over"}
"""Verbs of arithmetic that continue the last result with one number ("now subtract 17", "then divide by 3")."""


def _as_sign(tokens: list[str | float]) -> list[str | float]:
    """``tokens`` with a verb of arithmetic and its one number written as a sign and the number ("subtract 17" is
    "minus 17", "take away 4" is "minus 4"), when that is all they say; else ``tokens`` as they are."""
    verb = str(tokens[0]) if tokens else ""
    rest = tokens[1:]
    if verb == "take" and rest[:1] in (["away"], ["off"]):
        verb, rest = "subtract", rest[1:]
    rest = [t for t in rest if t not in ("by", "?", ".", "!", "please", "now", "then", "too")]
    if verb not in _VERBS or len(rest) != 1 or not isinstance(rest[0], float):
        return tokens
    return [_VERBS[verb], rest[0]]


def _follow_up(text: str, messages: list[Message]) -> str | None:
    """A calculation continuing the previous result ("minus 30?" after "1250 + 380 = 1630." is "1630 minus 30"),
    a sentence asking for both numbers when there is none, or ``None`` when ``text`` does not start with an operation.
    """
    tokens = tokenize(text)
    while tokens and tokens[0] in LEADING:
        tokens.pop(0)
    tokens = _as_sign(tokens)
    if not tokens or not isinstance(tokens[0], str) or tokens[0] not in SIGNS:
        return None
    fresh = read_calculation(text)
    if tokens[0] == "-" and isinstance(fresh, Operation):  # "-5 plus 3": a calculation of its own
        return None
    said = [m.content for m in messages if isinstance(m, HumanMessage) and m.name == "calculator"]
    previous = next((found for found in map(_RESULT.search, reversed(said)) if found is not None), None)
    if previous is None:
        return f"{text.strip()}: of what? Give me both numbers, for example 'What is 50 minus 30?'."
    rest = " ".join(figure(t) if isinstance(t, float) else t for t in tokens)
    return f"TO[calculator]: {previous['value']} {rest}"


def _correction(text: str, messages: list[Message]) -> str | None:
    """The calculation a correction of the previous one asks for ("sorry, I meant times 4" or "no, 4" after "45 × 3
    = 135." is 45 × 4), a sentence asking for the whole calculation when the previous one has no last step to
    change, or ``None`` when ``text`` is no correction of a last step (a whole calculation is read as it is)."""
    if _CORRECTION.match(straight(text).lower().strip()) is None:
        return None
    tokens = [t for t in tokenize(text) if t not in MONEY and t not in BREAKS]
    while tokens and tokens[0] in PREAMBLE:
        tokens.pop(0)
    if len(tokens) == 2 and isinstance(tokens[1], float) and str(tokens[0]) in SIGNS:
        sign, value = SIGNS[str(tokens[0])], tokens[1]
    elif len(tokens) == 1 and isinstance(tokens[0], float):
        sign, value = None, tokens[0]
    else:
        return None
    said = [m.content for m in messages if isinstance(m, HumanMessage) and m.name == "calculator"]
    latest = next((answer for answer in reversed(said) if _RESULT.search(answer)), "")
    previous = _LAST_STEP.match(latest)  # "15% of 240 = 36." has no last step to change
    if previous is None:
        return "DONE Which calculation do you mean? Give me the whole of it, for example 'What is 45 times 4?'."
    return f"TO[calculator]: {previous['head']} {sign or previous['sign']} {figure(value)}"


def _changed_preference(text: str, messages: list[Message]) -> str | None:
    """The plan again with the other option, when ``text`` names one option after the coordinator gave a plan
    ("actually I changed my mind, beaches")."""
    asked = next((m.content for m in reversed(messages) if isinstance(m, AIMessage)), "")
    planned = re.match(r"DONE Your day in (?P<city>.+?): ", asked)
    chosen = _preference(text.replace("?", ""))
    if planned is None or chosen is None:
        return None
    return f"TO[planner]: Plan a day in {planned['city']}, with {chosen}"


_DAY_PLAN = re.compile(
    r"\b(?:plan|planning|itinerar(?:y|ies)|day\s+trip)\b|"
    r"\b(?:a|one|the|our|my|whole|full|free|spare|perfect|nice|fun|good|great)\s+(?:\w+\s+)?day\b"
    r"(?:\s+(?:out|off|trip|of|for|with|us|me|them|the|my|our|family|kids|friends|fun|together|\w+ing)){0,3}"
    r"\s+(?:in|at|around|exploring|visiting|seeing)\b"
)
"""A request for a day plan in its many wordings ("plan a day in Oslo", "can you sort out a day of sightseeing in
Oslo", "organise a day out in Lisbon", "what should we do for a day in Paris?", "an itinerary for Tokyo")."""
_PLACE_DAY = re.compile(
    r"\b(?:a|an|one|our|my|the|whole|full|free|nice|fun|good|great|perfect)\s+((?:[\w'-]+\s+){1,3})day\b"
)
"""A day named by its place ("a tokyo day for me", "a nice lisbon day"): a plan when those words hold a city."""
_WHAT_TO_DO = re.compile(r"\bwhat\s+(?:should|shall|can|could|do|would)\s+(?:we|i|us)\s+(?:do|see|visit)\b")
"""A question of what to do, a plan when it names a place ("what can we see in Tokyo?")."""
_WEATHER_ASKED = re.compile(r"^(?:is|will|was|would)\s+(?:it|today|tomorrow)\b|^it'?s\b|^it\s+is\b")
"""A question about the day itself ("is it a nice day in Oslo?"), which asks for no plan."""


def _asks_plan(text: str) -> bool:
    """Whether ``text`` asks for a day plan."""
    words = straight(text).lower().strip()
    if _WEATHER_ASKED.match(words) is not None:
        return False
    if _DAY_PLAN.search(words) is not None or any(places(m.group(1)) for m in _PLACE_DAY.finditer(words)):
        return True
    return _WHAT_TO_DO.search(words) is not None and bool(places(text))


_HELPERS = ("calculator", "planner")
_ALREADY = "\n\nAlready answered: "
"""What the coordinator adds to a plan asked with other requests: their answers, which the planner says with its
question (the person reads them before answering it, not only in the final reply)."""
_THAT = re.compile(r"\b(?:that|it|this|the (?:result|answer|total)|that (?:number|result))\b")
"""A word for the previous result ("divide that by 5", "now double it")."""


def _jobs(text: str) -> list[tuple[str, str]] | None:
    """The requests of a message that asks for several things ("what's 12 times 3 and 40 minus 8", "what's 6
    times 7, and also plan a day in Oslo"), each with the helper that does it ("" for none), in the order asked;
    ``None`` when it asks one thing. Words after a plan stay with it ("plan a day in Lisbon and we love museums")."""
    jobs: list[tuple[str, str]] = []
    joined = re.sub(r"\s*[,;.]\s*(?:and\s+)?then\b", " and then", text)  # "12 times 3, then plan a day in Oslo"
    for part in requests_in(re.sub(r"\bplus\b", "+", joined)):  # "2 plus 2" is one request
        if _asks_plan(part):
            jobs.append(("planner", part))
        elif isinstance(read_calculation(part), Operation):
            jobs.append(("calculator", part))
        elif jobs and jobs[-1][0] == "planner":
            jobs[-1] = ("planner", f"{jobs[-1][1]}, {part}")
        elif re.search(r"\d", part):  # "3 coffees at 4.50 and a muffin at 3": one calculation, read whole
            return None
        else:
            jobs.append(("", part))
    return jobs if sum(1 for helper, _ in jobs if helper) > 1 or (len(jobs) > 1 and jobs[0][0]) else None


def _next_job(messages: list[Message]) -> AIMessage | None:
    """The next request of the user's last message for a helper, or the answer to all of them once each is done
    (what no helper does said so), or ``None`` when the message asked one thing."""
    start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage) and m.name is None)
    jobs = _jobs(messages[start].content)
    if jobs is None:
        return None
    done = [m.content for m in messages[start:] if isinstance(m, HumanMessage) and m.name in _HELPERS]
    doable = [at for at, (helper, _) in enumerate(jobs) if helper]
    order = sorted(doable, key=lambda at: jobs[at][0] == "planner")  # the planner asks a question: it goes last
    if len(done) < len(order):
        helper, part = jobs[order[len(done)]]
        carried = f"{_ALREADY}{' '.join(done)}" if helper == "planner" and done else ""  # said with its question
        return AIMessage(content=f"TO[{helper}]: {part}{carried}")
    said = dict(zip(order, done, strict=True))
    return AIMessage(
        content="DONE " + " ".join(said.get(at, f"I cannot help with {part!r}.") for at, (_, part) in enumerate(jobs))
    )


def _on_result(text: str, messages: list[Message]) -> str | None:
    """A calculation on the previous result, named by a word for it ("divide that by 5", "thanks, now double it",
    "what's 20% of that?"), or ``None``."""
    if _THAT.search(text.lower()) is None or isinstance(read_calculation(text), Operation):
        return None
    said = [m.content for m in messages if isinstance(m, HumanMessage) and m.name == "calculator"]
    previous = next((found for found in map(_RESULT.search, reversed(said)) if found is not None), None)
    if previous is None:
        return None
    replaced = _THAT.sub(previous["value"], text.lower(), count=1)
    return f"TO[calculator]: {replaced}" if isinstance(read_calculation(replaced), Operation) else None


def _coordinator(messages: list[Message]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, HumanMessage) and last.name in _HELPERS:
        return _next_job(messages) or AIMessage(content=f"DONE {last.content}")
    text = last.content if isinstance(last, HumanMessage) else ""
    if emergency(text):  # no task of the desk's: the person is sent to emergency services first
        return AIMessage(content=f"DONE {EMERGENCY_REPLY}")
    several = _next_job(messages)
    if several is not None:
        return several
    words = text.lower().strip(" ?!.,")
    if _asks_plan(words):
        return AIMessage(content=f"TO[planner]: {text}")
    for reading in (_correction, _changed_preference, _on_result):
        read = reading(text, messages[:-1])
        if read is not None:
            return AIMessage(content=read)
    follow_up = _follow_up(text, messages[:-1])
    if follow_up is not None:
        return AIMessage(content=follow_up if follow_up.startswith("TO[") else f"DONE {follow_up}")
    if looks_like_arithmetic(text):
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
    kind = pleasantry(text) or ("goodbye" if says_goodbye(text) else "")  # "actually i'm off, bye"
    return AIMessage(content=f"DONE {replies.get(kind, HELP)}")


def _calculator(messages: list[Message]) -> AIMessage:
    """Reads the calculation, then makes its tool calls one at a time, each with the results of the ones before."""
    start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    calculation = read_calculation(messages[start].content)
    if isinstance(calculation, str):
        return AIMessage(content=calculation)
    results = [m for m in messages[start:] if isinstance(m, ToolMessage)]
    if any(r.is_error for r in results):
        return AIMessage(
            content=f"I could not compute {render(calculation)}: {results[-1].content.rsplit(': ', 1)[-1]}."
        )
    values = [float(r.content) for r in results]
    steps = tool_steps(calculation)
    if len(values) < len(steps):
        tool, a, b = steps[len(values)]
        args = [x if isinstance(x, float) else -values[x.step] if x.negated else values[x.step] for x in (a, b)]
        return AIMessage(tool_calls=[tool_call(tool, {"a": args[0], "b": args[1]})])
    value = values[-1] if values else calculation
    assert isinstance(value, float)
    return AIMessage(content=f"{render(calculation)} = {figure(value)}.")


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


_ABOUT_OPTIONS = re.compile(
    r"\b(?:museums?|beach(?:es)?|which|better|best|nicer|crowded|busy|busier|quieter|recommend|suggest|prefer|"
    r"differen\w*|compare|vs|versus|one|either|both|them|they|there)\b"
)
"""A question about the planner's options ("are the beaches nice?", "which one is less crowded?")."""


def _planner(messages: list[Message]) -> AIMessage:
    request, _, already = next(m.content for m in messages if isinstance(m, HumanMessage)).partition(_ALREADY)
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
        return AIMessage(content=f"@user {already} Do you prefer museums or beaches in {city}?".replace("  ", " "))
    answer = answers[-1]
    if emergency(answer):  # said instead of an answer: the plan can wait
        return AIMessage(content=f"DONE {EMERGENCY_REPLY}")
    if declines(answer) or says_goodbye(answer):
        return AIMessage(content=f"DONE All right: no plan for {city}.")
    if _preference(answer) is None and leaves_choice(answer):  # "you pick": the person's to make
        return AIMessage(content=f"@user That choice is yours: museums or beaches in {city}?")
    if _preference(answer) is None and is_question(answer):
        about = _ABOUT_OPTIONS.search(straight(answer).lower()) is not None
        said = "I cannot tell you more than that" if about else "I cannot answer that while planning your day"
        return AIMessage(content=f"@user {said}: museums or beaches in {city}?")
    if _preference(answer) is None:
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
