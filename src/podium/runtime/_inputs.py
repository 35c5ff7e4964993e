"""Checks of what callers hand the runtime, made before anything is created or stored.

A run's input, a resume's answer, a thread id and the waiting options are checked here, so that bad input is a
:class:`UsageError` that leaves no thread, run or event behind (a lone surrogate used to fail only when the store
encoded it, after the thread existed).
"""

from __future__ import annotations

import json
import math

from podium.errors import UsageError
from podium.messages import HumanMessage, message_to_dict

__all__: list[str] = []


def check_text(text: object, what: str) -> None:
    """Refuse ``text`` unless it is text that can be stored (UTF-8: no lone surrogates).

    Blank text is allowed: an empty answer reaches the agent, which asks again (``Expectation.fit`` never takes it).
    """
    if not isinstance(text, str):
        raise UsageError(f"{what} must be text, not {type(text).__name__}")
    _encodable(text, what)


def _encodable(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"{what} is not valid text: it holds a lone surrogate {text[exc.start]!r} at position {exc.start} "
            "(text decoded from bytes that are not UTF-8?)"
        ) from None


def check_input(input: object) -> HumanMessage:
    """The run's input as a message, checked: text, not blank, storable (its name and metadata too)."""
    if isinstance(input, HumanMessage):
        message = input
        what = "the input message's content"
    else:
        message = HumanMessage(content=input)  # type: ignore[arg-type]  # checked just below
        what = "the input"
    if not isinstance(message.content, str):
        raise UsageError(f"the input must be text, not {type(message.content).__name__}")
    if not message.content.strip():
        raise UsageError("the input is empty: a run needs a message")
    _encodable(message.content, what)
    if type(message) is not HumanMessage or message.name is not None or message.metadata:
        # (a plain message's JSON form holds nothing but the content checked above: not written to check it)
        _encodable(json.dumps(message_to_dict(message), ensure_ascii=False, default=str), "the input message")
    return message


def check_answer(answer: object) -> None:
    """Refuse an answer that is not text, or answers by interrupt id that are not text (see ``Runtime.resume``)."""
    if answer is None:
        return
    if isinstance(answer, str):
        check_text(answer, "the answer")
        return
    if not isinstance(answer, dict):
        raise UsageError(
            f"the answer must be text, or a dict of texts by interrupt id, not {type(answer).__name__} {answer!r}"
        )
    if not answer:
        raise UsageError("the answers by interrupt id are empty: give at least one")
    for interrupt_id, text in answer.items():
        if not isinstance(interrupt_id, str):
            raise UsageError(f"answers are keyed by interrupt id (text), not {type(interrupt_id).__name__}")
        check_text(text, f"the answer to {interrupt_id!r}")


def check_call(thread_id: object, run_id: object, if_busy: object, busy_timeout: object) -> None:
    """Refuse bad ids and waiting options of ``run``, ``resume`` and ``send``."""
    for name, value in (("thread_id", thread_id), ("run_id", run_id)):
        if value is not None:
            if not isinstance(value, str) or not value.strip():
                raise UsageError(f"{name} must be non-empty text (or None), not {value!r}")
            _encodable(value, name)
    if if_busy not in ("fail", "wait"):
        raise UsageError(f"if_busy must be 'fail' or 'wait', not {if_busy!r}")
    if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, int | float) or not 0 <= busy_timeout < math.inf:
        raise UsageError(f"busy_timeout must be a number of seconds, 0 or more, not {busy_timeout!r}")


def check_runtime(lease_ttl: object, busy_poll: object) -> None:
    """Refuse a lease or a polling interval that is not a number of seconds, 0 or more."""
    for name, value in (("lease_ttl", lease_ttl), ("busy_poll", busy_poll)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
            raise UsageError(f"{name} must be a number of seconds, 0 or more, not {value!r}")
