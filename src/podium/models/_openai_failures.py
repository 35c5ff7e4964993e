"""What the OpenAI adapter makes of a failed request: whether and when to try again, and the error it raises.

The retry policy is the ``openai`` client's (rate limits, lock and request timeouts, server errors and dropped
connections are tried again; a server's ``x-should-retry`` header decides first; ``Retry-After`` sets the wait, else
an exponential back-off), applied by the adapter itself so that every attempt and every wait fits in one deadline.

Error texts never carry the endpoint's key: a gateway that echoes the key it was sent (LiteLLM proxies do) would
otherwise hand it to whoever reads the run's reason.
"""

from __future__ import annotations

import json
import re
from typing import Any

from podium.errors import ModelError, ModelHTTPError

__all__ = [
    "backoff",
    "describe",
    "exposes",
    "redact",
    "retry_after",
    "retryable",
    "server_message",
    "timed_out",
    "unparsed",
]

_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s,;'\"]+")
_SECRET_FIELD = re.compile(r"(?i)\b((?:authorization|api[-_ ]?key)\"?\s*[:=]\s*\"?)(?!bearer\b)[^\s,;'\"]+")
_SK_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{6,}")
_TAG = re.compile(r"<[^>]*>")
_EXCERPT = 200
"""Characters of a non-JSON error page kept in the error's text."""


def redact(text: str, keys: tuple[str | None, ...]) -> str:
    """``text`` without the given keys, bearer tokens, ``Authorization``/``api-key`` values and ``sk-`` keys."""
    for key in keys:
        if key and len(key) >= 4:  # a key of a character or two would blank out ordinary words
            text = text.replace(key, "[redacted]")
    text = _BEARER.sub(r"\1[redacted]", text)
    text = _SECRET_FIELD.sub(r"\1[redacted]", text)
    return _SK_KEY.sub("sk-[redacted]", text)


def retryable(exc: Exception) -> bool:
    """True when the ``openai`` client would try ``exc``'s request again (given retries left)."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        decided = exc.response.headers.get("x-should-retry")
        if decided in ("true", "false"):
            return decided == "true"
        status = exc.status_code
        return status in (408, 409, 429) or status >= 500
    return isinstance(exc, openai.APIConnectionError)  # timeouts included


def retry_after(exc: Exception) -> float | None:
    """The seconds the server asked to wait (``retry-after-ms`` or ``Retry-After``, in seconds or as a date)."""
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    for name, unit in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / unit
        except ValueError:
            continue
        return seconds if 0 < seconds < float("inf") else None
    value = headers.get("retry-after")
    if value:
        import email.utils
        import time

        try:
            when = email.utils.parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError, IndexError):
            return None
        return max(when - time.time(), 0.0) or None
    return None


def backoff(retries: int) -> float:
    """The wait before retry number ``retries + 1`` when the server names none: 0.5 s doubling, at most 8 s, less up
    to a quarter at random so that many clients do not retry in step."""
    import random

    return min(0.5 * 2.0**retries, 8.0) * (1 - 0.25 * random.random())


def describe(
    exc: Exception, model: str, endpoint: str, *, timeout: float, mid_reply: bool, keys: tuple[str | None, ...]
) -> Exception:
    """The Podium error for a failure of ``openai`` (other exceptions are returned as they are), its text redacted.

    Args:
        exc: what the ``openai`` client raised.
        model: the model's name.
        endpoint: the endpoint's URL, for an error that cannot reach it.
        timeout: the call's timeout in seconds, for an error saying it ran out.
        mid_reply: the reply had begun to stream (a broken connection broke off a reply, it did not fail to open).
        keys: the secrets to keep out of the text (see :func:`redact`).
    """
    import openai

    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        return ModelHTTPError(exc.status_code, redact(server_message(exc), keys))
    if isinstance(exc, openai.APITimeoutError):
        return timed_out(model, timeout)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        if not mid_reply and (cause is None or _is_connect_failure(cause)):
            text = f"cannot reach the endpoint of model {model!r} ({endpoint}): {cause or exc}"
        else:
            text = (
                f"the connection to the endpoint of model {model!r} ({endpoint}) broke off before the reply was "
                f"complete: {cause or exc}"
            )
        return ModelError(redact(text, keys))
    if isinstance(exc, openai.OpenAIError):  # an error event inside a stream, an invalid response ...
        return ModelError(redact(f"model {model!r} failed: {exc}", keys))
    if isinstance(exc, json.JSONDecodeError):  # the client read a reply of status 200 that is not whole JSON
        return ModelError(redact(unparsed(model, endpoint, f"{exc.msg} at position {exc.pos}", exc.doc), keys))
    return exc


def unparsed(model: str, endpoint: str, problem: str, body: str) -> str:
    """The text of an error for a reply whose body is not the chat completion it should be: the model, the
    endpoint, what is wrong, and the start of the body."""
    excerpt = body[:_EXCERPT] + ("..." if len(body) > _EXCERPT else "")
    said = f"the endpoint ({endpoint}) answered with a body that is no chat completion ({problem})"
    return f"model {model!r}: {said}: {excerpt}"


def exposes(exc: BaseException, keys: tuple[str | None, ...]) -> bool:
    """True when ``exc`` (or an exception it was raised from) holds a secret in its text or body: a traceback that
    shows it as the cause would print the secret."""
    seen: BaseException | None = exc
    for _ in range(8):  # a chain is short; the bound also ends a cycle
        if seen is None:
            break
        for text in (str(seen), str(getattr(seen, "body", ""))):
            if redact(text, keys) != text:
                return True
        seen = seen.__cause__ or seen.__context__
    return False


def timed_out(model: str, timeout: float) -> ModelError:
    """The error of a call that ran out of time."""
    return ModelError(
        f"model {model!r} did not answer within its timeout of {timeout:g} s (PODIUM_TIMEOUT bounds the whole call, "
        "its retries and their waits included)"
    )


def server_message(exc: Any) -> str:
    """The ``error.message`` of the server's JSON body; for a page that is not the API's JSON (a proxy's HTML), the
    start of its text; else the client's own description."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    if isinstance(body, str) and body.strip():
        text = " ".join(_TAG.sub(" ", body).split())
        if len(text) > _EXCERPT:
            text = text[:_EXCERPT].rstrip() + "..."
        kind = exc.response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
        return f"not an API error but a page ({kind}), perhaps from a proxy or gateway in front of it: {text!r}"
    return str(exc.message)


def _is_connect_failure(cause: BaseException | None) -> bool:
    """True for a connection that was never made (refused, unresolvable, timed out connecting)."""
    names = {cls.__name__ for cls in type(cause).__mro__} if cause is not None else set()
    return bool(names & {"ConnectError", "ConnectTimeout", "gaierror", "ConnectionRefusedError"})
