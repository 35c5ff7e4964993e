"""The router's own intents, given by example like any tool: asking what the assistant can do, and abandoning
the pending task. Also the harm cues of the guardrail: requests that turn an app's own vocabulary against someone
(acting on another person's account without their knowledge, faking or back-dating records).

The examples are scored exactly as tools' examples are (:mod:`podium.orchestration.master.routing.scoring`), so
"remind me what you can do" or "forget about the letter" are recognised without a phrase list.
"""

from __future__ import annotations

from podium.human import Caseless, straight

__all__ = ["ABANDON", "CAPABILITIES", "INTENTS", "discrimination_cue", "harm_cue"]

CAPABILITIES = "@capabilities"
"""The label of "what can you do?"."""
ABANDON = "@abandon"
"""The label of "never mind"."""

INTENTS: dict[str, tuple[str, ...]] = {
    CAPABILITIES: (
        "what can you do",
        "what can you help me with",
        "what kind of things do you do",
        "tell me what you are able to do",
        "what are your capabilities",
        "what services do you offer",
        "what options do I have",
        "how can you help me",
        "what do you handle",
        "list the tasks you support",
        "show me the menu",
        "help",
        "hello",
        "hi there",
        "who are you",
        "what else is possible",
        "what is this assistant for",
        "what can I ask you to do",
        "which tasks can you take care of",
        "what do you do exactly",
        "what can I use you for",
    ),
    ABANDON: (
        "never mind",
        "nevermind, nvm",
        "forget it",
        "cancel that",
        "cancel this request",
        "stop",
        "stop this please",
        "I changed my mind",
        "I don't want to do this any more",
        "I no longer need this",
        "abort",
        "drop it",
        "leave it for now",
        "let's not do that",
        "I'll do it later instead",
        "quit this task",
        "skip it",
        "scrap that",
        "no need any more",
        "don't bother",
        "I'm done with this, thanks",
        "I give up",
        "forget the whole thing",
    ),
}
"""Example messages of each intent."""

_THIRD = r"(?:him|her|them|his|their|the\s+(?:user|customer|patient|owner|employee|person))"
_CUES = Caseless(
    "|".join(
        [
            rf"\bwithout\s+(?:telling|asking|informing|notifying|alerting)\s+{_THIRD}",
            rf"\bwithout\s+{_THIRD}\s+(?:knowing|knowledge|consent|permission|noticing|finding\s+out)",
            rf"\bbehind\s+{_THIRD}\s+back\b",
            r"\bso\s+(?:he|she|they)\s+(?:won'?t|doesn'?t|don'?t|can'?t|never)\s+(?:know|notice|find\s+out|see)",
            r"\b(?:secretly|covertly)\b",
            r"\b(?:read|see|access|check|open|snoop\s+on|spy\s+on|monitor)\s+(?:his|her|their)\s+"
            r"(?:e-?mails?|messages?|inbox|records?|files?|account|chats?)",
            r"\bspy(?:ing)?\s+on\b",
            r"\b(?:log\s*(?:in)?to|get\s+into|break\s+into|hack\s+into)\s+(?:his|her|their|someone|somebody)",
            r"\b(?:manager|boss|colleague|co-?worker|neighbou?r|ex|ex-wife|ex-husband|wife|husband|friend|sister|"
            r"brother|mother|father|landlord|tenant)'?s\s+(?:\w+\s+)?(?:e-?mails?|mailbox|inbox|password|account|"
            r"login|messages?|records?|files?|prescriptions?|medication|claim|phone|laptop|data)",
            r"\b(?:someone|somebody|anyone)\s+else'?s\b",
            r"\b(?:another|a\s+different|other)\s+(?:person|user|patient|customer|employee|client|member)'?s\b",
            r"\bunder\s+(?:another|a\s+different|someone\s+else'?s)\b",
            r"\bwithout\s+(?:a|an|any|the)?\s*(?:prescription|script|licen[cs]e|permit|warrant)s?\b",
            r"\b(?:pretend(?:ing)?\s+to\s+be|impersonat\w*|pos(?:e|ing)\s+as)\b",
            r"\b(?:fake|fabricat\w*|falsif\w*|back-?dat\w*|forg(?:e|ed|ing)|doctor(?:ed)?\s+the|tamper\w*)\b",
            r"\bmake\s+up\s+(?:a|an|some|the)\s+\w*\s*(?:reason|excuse|story|claim|record|diagnosis)",
            r"\b(?:cover\s+up|hide\s+(?:the\s+)?evidence|destroy\s+(?:the\s+)?evidence)\b",
        ]
    )
)


_PROTECTED = (
    r"(?:black|white|asian|hispanic|latin[oa]|arab|jewish|jew|muslim|christian|hindu|sikh|buddhist|atheist|gay|lesbian|"
    r"bisexual|queer|trans(?:gender)?|disabled|handicapped|pregnant|old|elderly|too\s+old|young|a\s+woman|a\s+man|female|"
    r"male|foreign(?:er)?|an?\s+immigrant|indigenous|aboriginal|african|chinese|indian|mexican|(?:of\s+)?(?:his|her|"
    r"their)\s+(?:race|religion|skin|colou?r|ethnicity|gender|sex|age|disability|nationality|accent|faith|sexuality))"
)
_GROUNDS = Caseless(
    rf"\b(?:because|since|as|for\s+being|due\s+to|on\s+the\s+grounds?\s+(?:that|of))\s+(?:[\w']+\s+){{0,4}}?"
    rf"(?:(?:is|are|was|were|being|of)\s+)?(?:an?\s+)?{_PROTECTED}\b"
)


def discrimination_cue(text: str) -> str | None:
    """The phrase in ``text`` that gives a protected trait (race, religion, sex, age, disability, pregnancy,
    origin) as the ground of a decision ("decline it because the customer is ..."), or ``None``."""
    found = _GROUNDS.find(straight(text))
    return None if found is None else " ".join(found.split())


def harm_cue(text: str) -> str | None:
    """The phrase in ``text`` that turns a request against someone (covert access, impersonation, faked records).

    Unlike harmful terms these are ordinary words in a suspicious construction; the router refuses on them, and
    the hybrid classifier lets the model judge them.
    """
    found = _CUES.find(text)
    return None if found is None else " ".join(found.split())
