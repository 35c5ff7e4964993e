"""The OpenAI-compatible adapter, on the official ``openai`` package.

It speaks chat completions, so it covers OpenAI, Azure OpenAI, and the servers that copy that API (vLLM, Ollama,
llama.cpp, LiteLLM proxies): set a base URL and a key. Retries of rate limits (429, honouring ``Retry-After``) and
server errors, and timeouts, are the ``openai`` client's; what still fails becomes a :class:`ModelError`.
The ``openai`` package is imported when the first request is made, so ``import podium`` stays fast.

The client (and its connection pool) belongs to the event loop that made the first request: a request from
another loop gets a fresh client, since pooled connections cannot cross loops. Close the model with
:meth:`OpenAIModel.aclose` (or ``async with model:``) before its loop ends, so no connection is left open.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

from podium.errors import ModelError, ModelHTTPError, UsageError
from podium.messages import AIMessage, ToolCall, Usage
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
            api_version: the Azure API version.
            timeout: seconds a request may take in all (a streamed reply too, however steadily it trickles).
            max_retries: retries of rate limits, timeouts and server errors.
            max_tokens: the reply cap of requests whose settings give none (``None``: the server's default,
                which for many local servers is unbounded).
            tool_format: ``native`` (the API's tool-call field; a reply that is obviously a call of a known tool
                written as text counts too) or ``text`` (tools described in the prompt, calls read from the reply's
                text: for models and servers without tool calling), see :mod:`podium.models.text_tools`.
            client: a ready ``openai.AsyncOpenAI`` (or Azure) client to use instead.

        Raises:
            UsageError: no model name, no key for OpenAI's own endpoint (which refuses every request without one), or
                an unknown ``tool_format``.
        """
        if not model:
            raise UsageError("OpenAIModel needs a model name (set PODIUM_MODEL)")
        if client is None and not azure_endpoint and _is_openai(base_url) and not (api_key or _env_key()):
            raise UsageError(
                f"model {model!r} uses OpenAI's endpoint, which needs an API key: pass api_key, set PODIUM_API_KEY "
                "or OPENAI_API_KEY, or set base_url (PODIUM_BASE_URL) to a local OpenAI-compatible server"
            )
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
        self._client = client
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
                    max_retries=self.max_retries,
                )
            return openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key or _env_key() or "not-needed",  # local servers take any key
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
        except (openai.OpenAIError, ValueError) as exc:  # missing key or API version
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

    async def reply(self, request: ModelRequest) -> ModelResponse:
        client = self._get_client()
        try:
            completion = await client.chat.completions.create(model=self.name, **self._body(request))
        except Exception as exc:
            raise _model_error(exc, self.name) from exc
        if not completion.choices:
            raise ModelError(f"model {self.name!r} returned no choices")
        choice = completion.choices[0]
        message = choice.message
        present = [c for c in message.tool_calls or () if getattr(c, "function", None) is not None]
        calls = [
            ToolCall(id=id, name=c.function.name, arguments=c.function.arguments or "{}")
            for id, c in zip(_unique_ids([c.id for c in present]), present, strict=True)
        ]
        response = ModelResponse(
            message=AIMessage(content=message.content or "", tool_calls=calls),
            usage=usage_from(completion.usage),
            model_name=completion.model or self.name,
            finish_reason=choice.finish_reason,
        )
        return read_tool_calls(response, request, text_format=self.tool_format == "text")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        client = self._get_client()
        body = self._body(request)
        body["stream"] = True
        body.setdefault("stream_options", {"include_usage": True})
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage = Usage(requests=1)  # what a server that ignores include_usage leaves us
        finish_reason: str | None = None
        model_name = self.name
        chunks: Any = None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout  # the whole reply, not the gap between two chunks
        try:
            chunks = await client.chat.completions.create(model=self.name, **body)
            pieces = aiter(chunks)
            while True:
                try:
                    chunk = await asyncio.wait_for(anext(pieces), max(deadline - loop.time(), 0.0))
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise ModelError(
                        f"model {self.name!r} did not finish its reply within {self.timeout:g} s "
                        "(PODIUM_TIMEOUT bounds a streamed reply's total time)"
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
                if delta.content:
                    text.append(delta.content)
                    yield TextDelta(delta.content)
                for piece in delta.tool_calls or ():
                    index = piece.index if piece.index is not None else len(calls)
                    entry = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                    fn = piece.function
                    if piece.id:
                        entry["id"] = piece.id
                    if fn is not None and fn.name:
                        entry["name"] += fn.name
                    if fn is not None and fn.arguments:
                        entry["arguments"] += fn.arguments
                    yield ToolCallDelta(
                        index=index,
                        id=piece.id,
                        name=fn.name if fn is not None else None,
                        arguments=(fn.arguments or "") if fn is not None else "",
                    )
        except Exception as exc:
            raise _model_error(exc, self.name) from exc
        finally:
            if chunks is not None:  # also when the consumer stops early: give the connection back
                await chunks.close()
        message = AIMessage(
            content="".join(text),
            tool_calls=[
                ToolCall(id=id, name=c["name"], arguments=c["arguments"] or "{}")
                for id, (_, c) in zip(
                    _unique_ids([c["id"] for _, c in sorted(calls.items())]), sorted(calls.items()), strict=True
                )
            ],
        )
        response = ModelResponse(message=message, usage=usage, model_name=model_name, finish_reason=finish_reason)
        yield Done(read_tool_calls(response, request, text_format=self.tool_format == "text"))


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
    import os

    return os.environ.get("OPENAI_API_KEY") or None


def _is_openai(base_url: str | None) -> bool:
    """True when ``base_url`` is OpenAI's own endpoint (the default when none is given)."""
    if base_url is None:
        return True
    from urllib.parse import urlsplit

    return (urlsplit(base_url).hostname or "").lower() in ("api.openai.com", "openai.com")


def _model_error(exc: Exception, model: str) -> Exception:
    import openai

    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        return ModelHTTPError(exc.status_code, _server_message(exc))
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(f"model {model!r} did not answer in time (after retries)")
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(f"cannot reach the endpoint of model {model!r}: {exc}")
    if isinstance(exc, openai.OpenAIError):  # an error event inside a stream, an invalid response ...
        return ModelError(f"model {model!r} failed: {exc}")
    return exc


def _server_message(exc: Any) -> str:
    """The ``error.message`` of the server's JSON body, else the client's own description."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return str(exc.message)
