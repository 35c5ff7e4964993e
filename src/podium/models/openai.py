"""The OpenAI-compatible adapter, on the official ``openai`` package.

It speaks chat completions, so it covers OpenAI, Azure OpenAI, and the servers that copy that API (vLLM, Ollama,
llama.cpp, LiteLLM proxies): set a base URL and a key. Retries of rate limits (429, honouring ``Retry-After``) and
server errors, and timeouts, are the ``openai`` client's; what still fails becomes a :class:`ModelError`.
The ``openai`` package is imported when the first request is made, so ``import podium`` stays fast.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from podium.settings import Settings

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
        client: Any = None,
    ) -> None:
        """Configure the endpoint; no connection is made until the first request.

        Args:
            model: the model (or Azure deployment) name.
            base_url: the API's base URL (default: OpenAI's), e.g. ``http://localhost:11434/v1`` for Ollama.
            api_key: the key (default: the ``openai`` client's own lookup of ``OPENAI_API_KEY``).
            azure_endpoint: an Azure OpenAI resource endpoint; selects the Azure client.
            api_version: the Azure API version.
            timeout: seconds allowed per request attempt.
            max_retries: retries of rate limits, timeouts and server errors.
            client: a ready ``openai.AsyncOpenAI`` (or Azure) client to use instead.

        Raises:
            UsageError: no model name.
        """
        if not model:
            raise UsageError("OpenAIModel needs a model name (set PODIUM_MODEL)")
        self.name = model
        self.base_url = base_url
        self.api_key = api_key
        self.azure_endpoint = azure_endpoint
        self.api_version = api_version
        self.timeout = timeout
        self.max_retries = max_retries
        self._client = client

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIModel:
        """The model the settings (environment or settings file) describe."""
        if not settings.model:
            raise UsageError("no model configured: set PODIUM_MODEL (and PODIUM_BASE_URL / PODIUM_API_KEY)")
        return cls(
            settings.model,
            base_url=settings.base_url,
            api_key=settings.api_key,
            azure_endpoint=settings.azure_endpoint,
            api_version=settings.api_version,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )

    def _get_client(self) -> Any:
        check_allowed(self.azure_endpoint or self.base_url)
        if self._client is None:
            import openai

            if self.azure_endpoint:
                self._client = openai.AsyncAzureOpenAI(
                    azure_endpoint=self.azure_endpoint,
                    api_key=self.api_key,
                    api_version=self.api_version,
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                )
            else:
                self._client = openai.AsyncOpenAI(
                    base_url=self.base_url,
                    api_key=self.api_key or _env_key(),
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                )
        return self._client

    async def reply(self, request: ModelRequest) -> ModelResponse:
        client = self._get_client()
        try:
            completion = await client.chat.completions.create(model=self.name, **request.to_openai())
        except Exception as exc:
            raise _model_error(exc, self.name) from exc
        if not completion.choices:
            raise ModelError(f"model {self.name!r} returned no choices")
        choice = completion.choices[0]
        message = choice.message
        calls = [
            ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "{}")
            for c in (message.tool_calls or ())
            if getattr(c, "function", None) is not None
        ]
        return ModelResponse(
            message=AIMessage(content=message.content or "", tool_calls=calls),
            usage=_usage(completion.usage),
            model_name=completion.model or self.name,
            finish_reason=choice.finish_reason,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        client = self._get_client()
        body = request.to_openai()
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage = Usage()
        finish_reason: str | None = None
        model_name = self.name
        try:
            chunks = await client.chat.completions.create(
                model=self.name, stream=True, stream_options={"include_usage": True}, **body
            )
            async for chunk in chunks:
                model_name = chunk.model or model_name
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish_reason = choice.finish_reason or finish_reason
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    yield TextDelta(delta.content)
                for piece in delta.tool_calls or ():
                    entry = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                    fn = piece.function
                    if piece.id:
                        entry["id"] = piece.id
                    if fn is not None and fn.name:
                        entry["name"] += fn.name
                    if fn is not None and fn.arguments:
                        entry["arguments"] += fn.arguments
                    yield ToolCallDelta(
                        index=piece.index,
                        id=piece.id,
                        name=fn.name if fn is not None else None,
                        arguments=(fn.arguments or "") if fn is not None else "",
                    )
        except Exception as exc:
            raise _model_error(exc, self.name) from exc
        message = AIMessage(
            content="".join(text),
            tool_calls=[
                ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"] or "{}") for _, c in sorted(calls.items())
            ],
        )
        yield Done(ModelResponse(message=message, usage=usage, model_name=model_name, finish_reason=finish_reason))


def _env_key() -> str | None:
    import os

    return os.environ.get("OPENAI_API_KEY") or "not-needed"


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage(requests=1)
    return Usage(int(raw.prompt_tokens or 0), int(raw.completion_tokens or 0), 1)


def _model_error(exc: Exception, model: str) -> Exception:
    import openai

    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        return ModelHTTPError(exc.status_code, str(exc.message))
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(f"model {model!r} did not answer in time (after retries)")
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(f"cannot reach the endpoint of model {model!r}: {exc}")
    return exc
