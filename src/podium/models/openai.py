"""The OpenAI-compatible adapter, on the official ``openai`` package.

It speaks chat completions, so it covers OpenAI, Azure OpenAI, and the servers that copy that API (vLLM, Ollama,
llama.cpp, LiteLLM proxies): set a base URL and a key. Rate limits (429, honouring ``Retry-After``), server errors,
timeouts and dropped connections are retried as the ``openai`` client would, but by the adapter, so that the timeout
is one deadline for the whole call: every attempt, every wait between attempts, and a streamed reply from opening to
its last chunk. What still fails becomes a :class:`ModelError` whose text never holds the endpoint's key.
The ``openai`` package is imported when the first request is made, so ``import podium`` stays fast.

A reply the provider's content filter stopped is a :class:`ModelError`; a refusal (the ``refusal`` field) becomes the
reply's text, so that it is shown rather than lost. A server that ignores ``stream: true`` and answers a streamed
request with one JSON completion is read as that completion (its text, tool calls and usage; see ``_unstreamed``).

The client (and its connection pool) belongs to the event loop that made the first request: a request from
another loop gets a fresh client, since pooled connections cannot cross loops. Close the model with
:meth:`OpenAIModel.aclose` (or ``async with model:``) before its loop ends, so no connection is left open.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

from podium.errors import ModelError, ModelHTTPError, UsageError
from podium.messages import AIMessage, ToolCall, Usage
from podium.models._openai_failures import (
    backoff,
    describe,
    exposes,
    redact,
    retry_after,
    retryable,
    server_message,
    timed_out,
    unparsed,
)
from podium.models._unstreamed import whole_completion
from podium.models.base import (
    Done,
    Model,
    ModelRequest,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    check_allowed,
)
from podium.models.openai_format import request_to_openai, usage_from
from podium.models.text_tools import TOOL_FORMATS, ToolFormat, read_tool_calls, text_tools_request

__all__ = ["OpenAIModel"]

_OPENAI_URL = "https://api.openai.com/v1"


class OpenAIModel(Model):
    """A chat-completions model behind any OpenAI-compatible endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        azure_endpoint: str | None = None,
        api_version: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        max_tokens: int | None = 1024,
        tool_format: ToolFormat = "native",
        client: Any = None,
    ) -> None:
        """Configure the endpoint; no connection is made until the first request.

        Args:
            model: the model (or Azure deployment) name.
            base_url: the API's base URL (default: OpenAI's), e.g. ``http://localhost:11434/v1`` for Ollama.
            api_key: the key (default: the ``openai`` client's own lookup of ``OPENAI_API_KEY``).
            azure_endpoint: an Azure OpenAI resource endpoint; selects the Azure client.
            api_version: the Azure API version (default: ``OPENAI_API_VERSION``).
            timeout: seconds one call may take in all: its retries and the waits before them, and a streamed reply
                from opening it to its end, however steadily it trickles.
            max_retries: retries of rate limits, timeouts, server errors and dropped connections.
            max_tokens: the reply cap of requests whose settings give none (``None``: the server's default,
                which for many local servers is unbounded).
            tool_format: ``native`` (the API's tool-call field; a reply that is obviously a call of a known tool
                written as text counts too) or ``text`` (tools described in the prompt, calls read from the reply's
                text: for models and servers without tool calling), see :mod:`podium.models.text_tools`.
            client: a ready ``openai.AsyncOpenAI`` (or Azure) client to use instead; its own retries are turned
                off, the model's ``max_retries`` and ``timeout`` apply.

        Raises:
            UsageError: no model name, no key for OpenAI's own endpoint (which refuses every request without one), no
                API version for Azure, or an unknown ``tool_format``.
        """
        if not model:
            raise UsageError("OpenAIModel needs a model name (set PODIUM_MODEL)")
        if client is None and not azure_endpoint and _is_openai(base_url) and not (api_key or _env_key()):
            raise UsageError(
                f"model {model!r} uses OpenAI's endpoint, which needs an API key: pass api_key, set PODIUM_API_KEY "
                "or OPENAI_API_KEY, or set base_url (PODIUM_BASE_URL) to a local OpenAI-compatible server"
            )
        if client is None and azure_endpoint and not (api_version or os.environ.get("OPENAI_API_VERSION")):
            raise UsageError(_NO_API_VERSION.format(model=model))
        self.name = model
        self.base_url = base_url
        self.api_key = api_key
        self.azure_endpoint = azure_endpoint
        self.api_version = api_version
        self.timeout = timeout
        self.max_retries = max_retries
        if max_tokens is not None and max_tokens < 1:
            raise UsageError(f"max_tokens must be at least 1, not {max_tokens}")
        self.max_tokens = max_tokens
        if tool_format not in TOOL_FORMATS:
            raise UsageError(f"tool_format must be 'native' or 'text', not {tool_format!r}")
        self.tool_format: ToolFormat = tool_format
        # the adapter retries, within its deadline: a handed-in client's own retries would multiply its attempts
        self._client = client.with_options(max_retries=0) if hasattr(client, "with_options") else client
        self._own_client = client is None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _endpoint(self) -> str | None:
        if self.azure_endpoint or self.base_url:
            return self.azure_endpoint or self.base_url
        if not self._own_client:  # a client handed in: check where it really points
            return str(getattr(self._client, "base_url", "")) or None
        return None

    def _get_client(self) -> Any:
        check_allowed(self._endpoint())
        if not self._own_client:
            return self._client
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = self._new_client()
            self._client_loop = loop
        return self._client

    def _new_client(self) -> Any:
        import openai

        try:
            if self.azure_endpoint:
                return openai.AsyncAzureOpenAI(
                    azure_endpoint=self.azure_endpoint,
                    api_key=self.api_key,
                    api_version=self.api_version,
                    timeout=self.timeout,
                    max_retries=0,  # the adapter retries, within its deadline
                )
            return openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key or _env_key() or "not-needed",  # local servers take any key
                timeout=self.timeout,
                max_retries=0,
            )
        except (openai.OpenAIError, ValueError) as exc:  # missing key or API version
            if "api_version" in str(exc):
                raise UsageError(_NO_API_VERSION.format(model=self.name)) from None
            raise UsageError(f"cannot configure model {self.name!r}: {exc}") from None

    async def aclose(self) -> None:
        """Close the connections of the client this model made (a client handed in is left to its owner)."""
        client, self._client = (self._client, None) if self._own_client else (None, self._client)
        self._client_loop = None
        if client is not None:
            await client.close()

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        if self.tool_format == "text":
            request = text_tools_request(request)
        body = request_to_openai(request)
        if self.max_tokens is not None:
            body.setdefault("max_tokens", self.max_tokens)
        return body

    async def _create(self, client: Any, body: dict[str, Any], deadline: float) -> Any:
        """Send the request, retrying what the ``openai`` client would retry; every attempt and wait ends by
        ``deadline`` (event-loop time).

        Raises:
            ModelError: the deadline passed, or the server asked for a wait (``Retry-After``) that would pass it.
            Exception: the last attempt's failure, as the ``openai`` client raised it.
        """
        import openai

        loop = asyncio.get_running_loop()
        options = dict(body)
        headers = dict(options.pop("extra_headers", None) or {})
        for retries in range(self.max_retries + 1):
            headers["x-stainless-retry-count"] = str(retries)  # as the client marks its own retries
            try:
                left = deadline - loop.time()
                if left <= 0:
                    raise TimeoutError
                return await asyncio.wait_for(
                    client.chat.completions.create(model=self.name, extra_headers=headers, **options), left
                )
            except TimeoutError:
                raise timed_out(self.name, self.timeout) from None
            except Exception as exc:
                if retries == self.max_retries or not retryable(exc):
                    raise
                asked = retry_after(exc)
                wait = asked if asked is not None else backoff(retries)
                left = deadline - loop.time()
                if asked is not None and asked >= left and isinstance(exc, openai.APIStatusError):
                    raise ModelHTTPError(
                        exc.status_code,
                        f"{redact(server_message(exc), self._keys())}; it asked to wait {asked:g} s before trying "
                        f"again (Retry-After), past the call's timeout of {self.timeout:g} s (PODIUM_TIMEOUT), so "
                        f"model {self.name!r} gave up at once",
                    ) from None
                if wait >= left:
                    raise
                await asyncio.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _failure(self, exc: Exception, *, mid_reply: bool = False) -> Exception:
        """The error to raise for ``exc``, its text free of the endpoint's key; its ``__cause__`` is ``exc`` unless
        ``exc`` holds the key (a traceback would print it). Raise it ``from`` its ``__cause__``."""
        keys = self._keys()
        error = describe(
            exc, self.name, self._endpoint() or _OPENAI_URL, timeout=self.timeout, mid_reply=mid_reply, keys=keys
        )
        if error is not exc:
            error.__cause__ = None if exposes(exc, keys) else exc
        return error

    def _keys(self) -> tuple[str | None, ...]:
        """The secrets that may reach an error's text: the configured key, and the one the client really sends."""
        return (self.api_key, getattr(self._client, "api_key", None), _env_key())

    async def reply(self, request: ModelRequest) -> ModelResponse:
        client = self._get_client()
        deadline = asyncio.get_running_loop().time() + self.timeout
        try:
            completion = await self._create(client, self._body(request), deadline)
        except Exception as exc:
            error = self._failure(exc)
            raise error from error.__cause__
        return self._response(completion, request)

    def _response(self, completion: Any, request: ModelRequest) -> ModelResponse:
        """The reply a whole chat completion holds: its text (or refusal), tool calls and usage.

        Raises:
            ModelError: the body is no completion (not JSON), it has no choices, or the content filter stopped it.
        """
        if isinstance(completion, str | bytes):  # a 200 whose body is not JSON: the client hands back its text
            text = completion.decode("utf-8", "replace") if isinstance(completion, bytes) else completion
            endpoint = self._endpoint() or _OPENAI_URL
            raise ModelError(redact(unparsed(self.name, endpoint, "not JSON", text), self._keys()))
        if not completion.choices:
            raise ModelError(f"model {self.name!r} returned no choices")
        choice = completion.choices[0]
        message = choice.message
        self._check_filter(choice.finish_reason)
        present = [c for c in message.tool_calls or () if getattr(c, "function", None) is not None]
        calls = [
            ToolCall(id=id, name=c.function.name, arguments=c.function.arguments or "{}")
            for id, c in zip(_unique_ids([c.id for c in present]), present, strict=True)
        ]
        content = message.content or getattr(message, "refusal", None) or ""  # a refusal is shown, not dropped
        response = ModelResponse(
            message=AIMessage(content=content, tool_calls=calls),
            usage=usage_from(completion.usage),
            model_name=completion.model or self.name,
            finish_reason=choice.finish_reason,
        )
        return read_tool_calls(response, request, text_format=self.tool_format == "text")

    def _check_filter(self, finish_reason: str | None) -> None:
        """Raise for a reply the provider's content filter stopped: what is left of it is no answer."""
        if finish_reason == "content_filter":
            raise ModelError(
                f"the provider's content filter stopped the reply of model {self.name!r} (finish_reason "
                "'content_filter'); rephrase the request, or review the filter settings of the deployment"
            )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        client = self._get_client()
        body = self._body(request)
        body["stream"] = True
        body.setdefault("stream_options", {"include_usage": True})
        text: list[str] = []
        calls = _StreamedCalls()
        usage = Usage(requests=1)  # what a server that ignores include_usage leaves us
        finish_reason: str | None = None
        model_name = self.name
        chunks: Any = None
        whole: Any = None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout  # the whole call: opening the stream (and its retries) and every chunk
        try:
            chunks = await self._create(client, body, deadline)
            whole = await whole_completion(
                chunks, self.name, deadline=deadline, seconds=self.timeout, keys=self._keys()
            )
            pieces = aiter(chunks)
            while whole is None:  # a stream (a whole completion is read after the connection is given back)
                try:
                    chunk = await asyncio.wait_for(anext(pieces), max(deadline - loop.time(), 0.0))
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise ModelError(
                        f"model {self.name!r} did not finish its reply within {self.timeout:g} s "
                        "(PODIUM_TIMEOUT bounds the whole call, a streamed reply and retries included)"
                    ) from None
                model_name = chunk.model or model_name
                if chunk.usage is not None:
                    usage = usage_from(chunk.usage)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish_reason = choice.finish_reason or finish_reason
                delta = choice.delta
                if delta is None:
                    continue
                shown = delta.content or getattr(delta, "refusal", None)  # a refusal is shown, not dropped
                if shown:
                    text.append(shown)
                    yield TextDelta(shown)
                for piece in delta.tool_calls or ():
                    yield calls.add(piece)
        except Exception as exc:
            error = self._failure(exc, mid_reply=chunks is not None)
            raise error from error.__cause__
        finally:
            if chunks is not None:  # also when the consumer stops early: give the connection back
                await chunks.close()
        if whole is not None:  # the server ignored stream=true and sent the whole completion: its reply, at once
            response = self._response(whole, request)
            if response.message.content:
                yield TextDelta(response.message.content)
            for index, call in enumerate(response.message.tool_calls):
                yield ToolCallDelta(index=index, id=call.id, name=call.name, arguments=call.arguments)
            yield Done(response)
            return
        self._check_filter(finish_reason)
        message = AIMessage(content="".join(text), tool_calls=calls.tool_calls())
        response = ModelResponse(message=message, usage=usage, model_name=model_name, finish_reason=finish_reason)
        yield Done(read_tool_calls(response, request, text_format=self.tool_format == "text"))


class _StreamedCalls:
    """Tool calls assembled from streamed pieces, tolerant of what servers leave out or repeat.

    A piece names its call by ``index``; a piece without one continues the call the last piece went to, unless it
    carries an id of its own (then it starts a new call). A name that repeats what the call already holds (some
    proxies send the whole name in every piece) is not appended again.
    """

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, str]] = {}
        self.current: int | None = None

    def add(self, piece: Any) -> ToolCallDelta:
        """Add one streamed piece; return what it added, as a delta."""
        fn = piece.function
        name = (fn.name if fn is not None else None) or ""
        arguments = (fn.arguments if fn is not None else None) or ""
        if piece.index is not None:
            index = piece.index
        elif self.current is not None and (not piece.id or piece.id == self.calls[self.current]["id"]):
            index = self.current
        else:
            index = max(self.calls, default=-1) + 1
        self.current = index
        entry = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        new_id = piece.id if piece.id and piece.id != entry["id"] else None
        if new_id:
            entry["id"] = new_id
        held = entry["name"]
        if name == held or not name:
            added = ""
        elif held and name.startswith(held):  # the whole name again, after a part of it
            added = name[len(held) :]
        else:
            added = name
        entry["name"] = held + added
        entry["arguments"] += arguments
        return ToolCallDelta(index=index, id=new_id, name=added or None, arguments=arguments)

    def tool_calls(self) -> list[ToolCall]:
        """The assembled calls in index order, each with a unique id."""
        ordered = [c for _, c in sorted(self.calls.items())]
        ids = _unique_ids([c["id"] for c in ordered])
        return [
            ToolCall(id=id, name=c["name"], arguments=c["arguments"] or "{}")
            for id, c in zip(ids, ordered, strict=True)
        ]


def _unique_ids(ids: list[str | None]) -> list[str]:
    """The calls' ids, with a fresh one for each missing id and each repeat of an id in the same reply."""
    seen: set[str] = set()
    out: list[str] = []
    for id in ids:
        if not id or id in seen:
            id = f"call_{uuid.uuid4().hex[:24]}"
        seen.add(id)
        out.append(id)
    return out


def _env_key() -> str | None:
    return os.environ.get("OPENAI_API_KEY") or None


def _is_openai(base_url: str | None) -> bool:
    """True when ``base_url`` is OpenAI's own endpoint (the default when none is given)."""
    if base_url is None:
        return True
    from urllib.parse import urlsplit

    return (urlsplit(base_url).hostname or "").lower() in ("api.openai.com", "openai.com")


_NO_API_VERSION = (
    "model {model!r} uses Azure OpenAI, which needs an API version: set PODIUM_API_VERSION (for example "
    "2024-10-21) or pass api_version"
)
