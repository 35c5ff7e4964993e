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
from podium.runtime.bus import EventBus
from podium.runtime.journal import Limits
from podium.store.base import Store

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


MIN_LEASE_TTL = 0.03
"""The shortest write lease a runtime takes (seconds). A lease is renewed every third of its time to live, at most
every 10 ms; one shorter than this expires between its renewals, and another writer takes the thread mid-run (the
run then fails with ``LeaseLost``). Leases of seconds are what production wants; short ones are for tests."""

MIN_BUSY_POLL = 0.001
"""The shortest interval (seconds) between checks of a busy thread: a waiter polls at this pace, and 0 would spin
a core for as long as it waits."""


def check_runtime(store: object, bus: object, limits: object, lease_ttl: object, busy_poll: object) -> None:
    """Refuse what ``Runtime(...)`` cannot work with: a store, bus or limits of the wrong type, a lease or a polling
    interval that is not a number of seconds at least its minimum."""
    if store is not None and not isinstance(store, Store):
        hint = (
            f"; pass open_store({store!r:.80}) to open a store by its name (or a store itself: MemoryStore(), "
            "SQLiteStore(path))"
            if isinstance(store, str)
            else " (MemoryStore(), SQLiteStore(path), PostgresStore(url), or open_store())"
        )
        raise UsageError(f"the runtime's store must be a podium Store, not {type(store).__name__}{hint}")
    if bus is not None and not isinstance(bus, EventBus):
        raise UsageError(f"the runtime's bus must be a podium EventBus, not {type(bus).__name__} {bus!r:.80}")
    _check_limits(limits)
    for name, value, least, why in (
        ("lease_ttl", lease_ttl, MIN_LEASE_TTL, "a shorter lease expires between its renewals"),
        ("busy_poll", busy_poll, MIN_BUSY_POLL, "a shorter poll spins a core while waiting"),
    ):
        if isinstance(value, bool) or not isinstance(value, int | float) or not least <= value < math.inf:
            raise UsageError(f"{name} must be a number of seconds, at least {least:g} ({why}), not {value!r}")


def check_options(agent: object, limits: object, on_event: object) -> None:
    """Refuse an ``agent`` that is not one, ``limits`` that are not :class:`Limits`, an ``on_event`` that cannot be
    called (``run``, ``resume``, ``send``, ``stream``)."""
    if not isinstance(getattr(agent, "name", None), str) or not callable(getattr(agent, "invoke", None)):
        raise UsageError(
            "agent must be an agent (a podium.Agent with a name and invoke(), such as ReactAgent(...)), not "
            f"{type(agent).__name__} {agent!r:.80}"
        )
    _check_limits(limits)
    if on_event is not None and not callable(on_event):
        raise UsageError(
            f"on_event must be a function called with each event (or None), not {type(on_event).__name__} "
            f"{on_event!r:.80}"
        )


def _check_limits(limits: object) -> None:
    if limits is not None and not isinstance(limits, Limits):
        raise UsageError(
            f"limits must be a podium Limits (Limits(max_model_calls=..., max_tokens=..., timeout=...)), not "
            f"{type(limits).__name__} {limits!r:.80}"
        )
