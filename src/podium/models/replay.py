"""Cassettes: recorded request/response pairs, replayed offline or recorded from any model.

A cassette is a JSON file::

    {"format": "podium-cassette", "version": 1,
     "interactions": [{"request": <chat-completions body>, "response": {"message": <assistant message>,
                       "usage": {...}, "model": "...", "finish_reason": "..."}}]}

:class:`ReplayModel` answers a request with the recorded response whose request matches it: first exactly
(every message and the tool names), then on the current turn (the messages from the last user message on) in
its context (the assistant message before it), then on the turn where it opened its conversation (the system
messages and the turn, nothing before), then on the turn alone, so an offline chat still answers a recorded
question after a different earlier history, preferring the recording where a short answer ("yes") answered the
same question.

With a fallback model, replay answers only what the recording cannot have answered differently: the request
recorded exactly, or a turn recorded as its conversation's opening (its reply saw nothing but the system messages
and the turn, so no earlier history can change it). The two other matches are guesses: "And in Fahrenheit?" after
a question about Paris would replay the conversion recorded after one about Lisbon, and a day planned for museums
the plan recorded for beaches, whose choice lies before the turn. Without a fallback such a guess beats an error;
with one, the fallback answers instead.
Replay is stateless, so any number of concurrent runs can share one instance.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from podium.errors import CassetteError, UsageError
from podium.messages import AIMessage, Usage
from podium.models.base import Model, ModelRequest, ModelResponse
from podium.models.openai_format import from_openai, request_to_openai, to_openai

__all__ = ["NothingRecorded", "RecordingModel", "ReplayModel", "load_cassette"]

FORMAT = "podium-cassette"
VERSION = 1

_EXACT, _IN_CONTEXT, _OPENING, _ALONE = range(4)
"""The match levels, most specific first (see the module)."""


def _wire_key(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    def norm(m: dict[str, Any]) -> dict[str, Any]:
        out = {k: m.get(k) for k in ("role", "content", "name", "tool_call_id") if m.get(k) not in (None, "")}
        calls = m.get("tool_calls") or []
        if calls:
            out["tool_calls"] = [
                [c["function"]["name"], json.dumps(json.loads(c["function"]["arguments"] or "{}"), sort_keys=True)]
                if _is_json(c["function"]["arguments"])
                else [c["function"]["name"], c["function"]["arguments"]]
                for c in calls
            ]
        return out

    names = sorted(t["function"]["name"] for t in tools)
    return json.dumps({"m": [norm(m) for m in messages], "t": names}, sort_keys=True, ensure_ascii=False)


def _is_json(text: str) -> bool:
    try:
        json.loads(text or "{}")
    except (json.JSONDecodeError, TypeError):
        return False
    return True


def _turn_start(messages: list[dict[str, Any]]) -> int:
    """Where the current turn starts: the index of the last user message (0 without one)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            return index
    return 0


def _turn(messages: list[dict[str, Any]], *, context: bool) -> list[dict[str, Any]]:
    """The current turn: the messages from the last user message on (with ``context``, and the assistant message
    before it, which tells what a short answer such as "museums" or "yes" answered)."""
    start = _turn_start(messages)
    before = [m for m in messages[:start] if m.get("role") == "assistant"][-1:] if context else []
    return before + messages[start:]


def _opening(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The current turn as if it opened its conversation: the system messages before it, then the turn."""
    start = _turn_start(messages)
    return [m for m in messages[:start] if m.get("role") == "system"] + messages[start:]


def _opens(messages: list[dict[str, Any]]) -> bool:
    """Whether the current turn opened its conversation (nothing but system messages before it)."""
    return all(m.get("role") == "system" for m in messages[: _turn_start(messages)])


def load_cassette(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read and check a cassette's interactions.

    Raises:
        CassetteError: the file is missing, is not JSON, or does not have the cassette's shape.
    """
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CassetteError(f"cassette {file} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cassette {file} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CassetteError(f'cassette {file} is not a Podium cassette (expected "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise CassetteError(f"cassette {file} has version {data.get('version')!r}; this Podium reads {VERSION}")
    interactions = data.get("interactions")
    if not isinstance(interactions, list):
        raise CassetteError(f'cassette {file}: "interactions" must be a list')
    for number, item in enumerate(interactions):
        try:
            request, response = item["request"], item["response"]
            if not isinstance(request["messages"], list) or not isinstance(response["message"], dict):
                raise TypeError("messages must be a list and message an object")
            from_openai(response["message"])
            for message in request["messages"]:
                from_openai(message)
        except (KeyError, TypeError, ValueError) as exc:
            raise CassetteError(f"cassette {file}: interaction {number} is malformed ({exc})") from None
    return interactions


def _response_from_wire(data: dict[str, Any], model_name: str) -> ModelResponse:
    message = from_openai(data["message"])
    assert isinstance(message, AIMessage)
    return ModelResponse(
        message=message,
        usage=Usage.from_dict(data.get("usage") or {}),
        model_name=data.get("model") or model_name,
        finish_reason=data.get("finish_reason"),
    )


class ReplayModel(Model):
    """Answers from a recorded cassette, offline; a request with no recording raises :class:`CassetteError`."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        name: str | None = None,
        match: Literal["turn", "exact"] = "turn",
        fallback: Model | None = None,
    ) -> None:
        """Load the cassette at ``path`` (checked now, so a malformed file fails early).

        Args:
            path: the cassette.
            name: a label (default ``replay:<file name>``).
            match: ``turn`` also answers a request whose current turn was recorded (see the module; with a
                ``fallback``, only a turn recorded as its conversation's opening); ``exact`` only a request recorded
                as it is.
            fallback: a model answering what the cassette does not hold, or holds only in another context (say, a
                rule-based stand-in that makes an example work offline for any input); without one, a request with
                no match raises :class:`CassetteError`.

        Raises:
            CassetteError: the cassette is missing or malformed.
            UsageError: an unknown ``match``.
        """
        if match not in ("turn", "exact"):
            raise UsageError(f"match must be 'turn' or 'exact', not {match!r}")
        self.path = Path(path)
        self.name = name or f"replay:{self.path.name}"
        self.match = match
        self.fallback = fallback
        self.fallback_replies = 0
        """How many requests the fallback answered."""
        # four indexes, most specific first: the whole request, the turn in its context, the turn as its
        # conversation's opening (only turns recorded as one), the turn alone
        self._indexes: list[dict[str, dict[str, Any]]] = [{}, {}, {}, {}]
        self._questions: list[str] = []
        for item in load_cassette(self.path):
            messages, tools = item["request"]["messages"], item["request"].get("tools") or []
            for level, index in enumerate(self._indexes):
                if level != _OPENING or _opens(messages):
                    index.setdefault(self._key(level, messages, tools), item["response"])
            turn = _turn(messages, context=False)
            if turn and turn[0].get("role") == "user" and len(turn) == 1:
                self._questions.append(str(turn[0].get("content")))
        # the indexes a request is looked up in; with a fallback, only those no earlier history can mislead
        self._levels = [_EXACT] if match == "exact" else [_EXACT, _OPENING] if fallback is not None else list(range(4))

    @staticmethod
    def _key(level: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        """The key of a request at match ``level`` (see the module)."""
        if level == _EXACT:
            return _wire_key(messages, tools)
        if level == _OPENING:
            return _wire_key(_opening(messages), tools)
        return _wire_key(_turn(messages, context=level == _IN_CONTEXT), tools)

    @property
    def recorded_questions(self) -> list[str]:
        """The user messages that open a recorded turn, in recording order."""
        return list(self._questions)

    async def reply(self, request: ModelRequest) -> ModelResponse:
        body = request_to_openai(request)
        messages, tools = body["messages"], body.get("tools") or []
        found = None
        for level in self._levels:  # each key made only when the more specific ones missed
            found = self._indexes[level].get(self._key(level, messages, tools))
            if found is not None:
                break
        if found is None and self.fallback is not None:
            self.fallback_replies += 1
            return await self.fallback.reply(request)
        if found is None:
            last = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), None)
            known = "; ".join(repr(q) for q in self._questions[:8]) or "none"
            raise CassetteError(
                f"cassette {self.path} has no recorded reply for this request (last user message: {last!r}). "
                f"Recorded questions: {known}. Set PODIUM_MODEL to use a real model, or record a new cassette."
            )
        return _response_from_wire(found, self.name)


class NothingRecorded(ReplayModel):
    """Offline with nothing to replay: the model of an app that has neither a cassette nor a fallback.

    It counts as offline (a replay), so an app that never calls its model (a master agent routing with the offline
    router, say) runs as it is; a request is refused with ``message`` (what to configure), as the run's error.
    """

    def __init__(self, message: str, *, name: str = "offline") -> None:
        """Refuse every request with ``message``."""
        self.path = Path()
        self.name = name
        self.match = "exact"
        self.fallback = None
        self.fallback_replies = 0
        self._indexes = [{}, {}, {}, {}]
        self._questions = []
        self._levels = []
        self.message = message
        """What a request is refused with."""

    async def reply(self, request: ModelRequest) -> ModelResponse:
        """Raises:
        UsageError: always, with :attr:`message`."""
        raise UsageError(self.message)


class RecordingModel(Model):
    """Forwards to ``inner`` and appends every request/response pair to the cassette at ``path``."""

    def __init__(self, inner: Model, path: str | os.PathLike[str]) -> None:
        """Record ``inner``'s replies into ``path`` (created, or extended if it already is a cassette)."""
        self.inner = inner
        self.path = Path(path)
        self.name = inner.name
        self._interactions: list[dict[str, Any]] = load_cassette(self.path) if self.path.exists() else []

    async def reply(self, request: ModelRequest) -> ModelResponse:
        response = await self.inner.reply(request)

        self._interactions.append(
            {
                "request": request_to_openai(request),
                "response": {
                    "message": to_openai(response.message),
                    "usage": response.usage.to_dict(),
                    "model": response.model_name,
                    "finish_reason": response.finish_reason,
                },
            }
        )
        self._write()
        return response

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT, "version": VERSION, "interactions": self._interactions}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".cassette-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, ensure_ascii=False)
            out.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, self.path)
