"""A streamed request answered whole: servers that ignore ``stream: true`` and send one JSON chat completion.

The ``openai`` client reads such an answer as an event stream, finds no event in it and ends the stream at once, so
the reply would be empty, silently. :func:`whole_completion` looks at the answer's ``Content-Type`` before the
stream is read, and reads a JSON answer as the completion it is.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from podium.errors import ModelError
from podium.models._openai_failures import redact

__all__ = ["whole_completion"]


async def whole_completion(
    chunks: Any, model: str, *, deadline: float, seconds: float, keys: tuple[str | None, ...]
) -> Any | None:
    """The chat completion a server sent as JSON in answer to a streamed request, or ``None`` for a real stream.

    Args:
        chunks: the ``openai`` client's stream, not yet read (its ``response`` is the HTTP response).
        model: the model's name, for errors.
        deadline: event-loop time by which the body must be read.
        seconds: the call's timeout (``PODIUM_TIMEOUT``), for errors.
        keys: the secrets to keep out of errors' text (an answer may echo the key).

    Raises:
        ModelError: the body did not come by the deadline or broke off, is not a JSON object, holds an error, or has
            no choices.
    """
    response = getattr(chunks, "response", None)
    if response is None:
        return None
    media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if not (media_type == "application/json" or media_type.endswith("+json")):
        return None
    left = max(deadline - asyncio.get_running_loop().time(), 0.0)
    try:
        body = await asyncio.wait_for(response.aread(), left)
    except TimeoutError:
        raise ModelError(
            f"model {model!r} did not finish its reply within {seconds:g} s "
            "(PODIUM_TIMEOUT bounds the whole call, a streamed reply and retries included)"
        ) from None
    except Exception as exc:  # the client's transport (not the openai package's errors) failed while reading
        raise ModelError(
            redact(
                f"the connection to the endpoint of model {model!r} broke off before the reply was complete: {exc}",
                keys,
            )
        ) from None
    excerpt = body[:200].decode("utf-8", "replace")
    answered = "the endpoint answered a streamed request with JSON instead of an event stream"
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ModelError(
            redact(f"model {model!r}: {answered}, and it does not parse ({exc}): {excerpt}", keys)
        ) from None
    if not isinstance(data, dict):
        raise ModelError(redact(f"model {model!r}: {answered}, and it is not an object: {excerpt}", keys))
    if not data.get("choices"):
        problem = data.get("error")
        said = problem.get("message", problem) if isinstance(problem, dict) else problem
        detail = f"its error: {said}" if said else f"it has no choices: {excerpt}"
        raise ModelError(redact(f"model {model!r}: {answered}; {detail}", keys))
    from openai.types.chat import ChatCompletion

    return ChatCompletion.construct(**data)  # unchecked, as the client reads the completions it parses itself
