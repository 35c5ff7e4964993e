"""A local stand-in for the chat-completions API, for testing the OpenAI adapter over real HTTP.

Standard library only: a ``ThreadingHTTPServer`` on ``127.0.0.1`` (random port) in a background thread. It serves
``POST /v1/chat/completions`` and Azure's ``POST /openai/deployments/<deployment>/chat/completions?api-version=...``,
records every request it receives (path, query, headers, JSON body) and answers each from a queue of scripted
behaviours, in order:

- :func:`completion`: a JSON chat completion (text and/or tool calls, with usage);
- :func:`stream`: an SSE stream (text pieces, tool-call deltas split across chunks, a usage chunk when the request
  asks for ``stream_options.include_usage``, then ``data: [DONE]``), or one that breaks off with an error event;
  ``gap`` makes it slow (seconds between chunks) and ``finish_reason="length"`` cuts it off; ``calls_as`` sends the
  tool-call pieces as some servers do (without ``index``, or with the id and name in every piece), ``usage=None``
  leaves the usage out, and ``drop`` closes the connection part way;
- :func:`error`: an HTTP error status with an OpenAI-style JSON error body and optional ``Retry-After``, or a page
  that is not the API's JSON (a proxy's HTML).

Both answers may carry a ``refusal`` instead of text.

Every behaviour takes ``delay`` (seconds to wait before answering, to provoke client timeouts). A request that
finds the queue empty gets a 418 (a status the ``openai`` client does not retry) naming the problem.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["Behaviour", "Received", "StandIn", "ToolCallSpec", "completion", "error", "stream"]

ToolCallSpec = tuple[str, str, str]
"""A scripted tool call: ``(id, name, raw argument text)``."""


@dataclass(slots=True, kw_only=True)
class Behaviour:
    """One scripted answer."""

    kind: str
    """``completion``, ``stream`` or ``error``."""
    text: str | list[str] = ""
    """The reply's text (a list: the stream's text pieces, one chunk each)."""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    """Tool calls of the reply."""
    usage: tuple[int, int] | None = (11, 7)
    """Prompt and completion tokens reported (``None``: no usage at all)."""
    refusal: str | None = None
    """The reply's ``refusal`` field (then its content is ``null``)."""
    calls_as: str = "indexed"
    """Streams: ``indexed`` (as OpenAI), ``no_index`` (pieces without ``index``), ``name_every_piece`` (the id and
    name repeated in each piece)."""
    drop: bool = False
    """Streams: close the connection after the text pieces, without finishing the reply."""
    page: str | None = None
    """Errors: this body (``text/html`` unless ``page_type`` says) instead of the API's JSON error."""
    page_type: str = "text/html; charset=utf-8"
    """Errors: the ``Content-Type`` of ``page``."""
    model: str = "standin-model"
    """The ``model`` field of the answer."""
    finish_reason: str | None = None
    """Default: ``tool_calls`` when there are tool calls, else ``stop``."""
    argument_piece: int = 4
    """Streams: characters of tool-call arguments per chunk (so a call spans several chunks)."""
    status: int = 200
    """HTTP status (errors)."""
    message: str = ""
    """Error message (errors)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers."""
    fail: str | None = None
    """Streams: send an error event with this message after the text pieces, instead of finishing."""
    delay: float = 0.0
    """Seconds to wait before answering."""
    gap: float = 0.0
    """Streams: seconds to wait before each chunk after the first (a slow model on CPU)."""


def completion(
    text: str = "",
    tool_calls: list[ToolCallSpec] | None = None,
    *,
    usage: tuple[int, int] | None = (11, 7),
    model: str = "standin-model",
    finish_reason: str | None = None,
    refusal: str | None = None,
    delay: float = 0.0,
) -> Behaviour:
    """A JSON chat completion with ``text`` and/or ``tool_calls`` (or a ``refusal``)."""
    return Behaviour(
        kind="completion",
        text=text,
        tool_calls=list(tool_calls or ()),
        usage=usage,
        model=model,
        finish_reason=finish_reason,
        refusal=refusal,
        delay=delay,
    )


def stream(
    pieces: list[str] | None = None,
    tool_calls: list[ToolCallSpec] | None = None,
    *,
    usage: tuple[int, int] | None = (11, 7),
    model: str = "standin-model",
    finish_reason: str | None = None,
    argument_piece: int = 4,
    fail: str | None = None,
    refusal: str | None = None,
    calls_as: str = "indexed",
    drop: bool = False,
    delay: float = 0.0,
    gap: float = 0.0,
) -> Behaviour:
    """An SSE stream: one chunk per text piece (or a ``refusal`` in two pieces), then each tool call over several
    chunks (or ``fail``'s error, or a ``drop``); ``gap`` seconds pass between two chunks."""
    return Behaviour(
        kind="stream",
        text=list(pieces or ()),
        tool_calls=list(tool_calls or ()),
        usage=usage,
        model=model,
        finish_reason=finish_reason,
        argument_piece=argument_piece,
        fail=fail,
        refusal=refusal,
        calls_as=calls_as,
        drop=drop,
        delay=delay,
        gap=gap,
    )


def error(
    status: int,
    message: str,
    *,
    retry_after: str | None = None,
    headers: dict[str, str] | None = None,
    page: str | None = None,
    page_type: str = "text/html; charset=utf-8",
    delay: float = 0.0,
) -> Behaviour:
    """An error status with an OpenAI-style body (or ``page``, a body of ``page_type``: HTML unless said);
    ``retry_after`` sets the ``Retry-After`` header."""
    extra = dict(headers or {})
    if retry_after is not None:
        extra["Retry-After"] = retry_after
    return Behaviour(
        kind="error", status=status, message=message, headers=extra, page=page, page_type=page_type, delay=delay
    )


@dataclass(slots=True, kw_only=True)
class Received:
    """One request the stand-in received."""

    method: str
    """HTTP method."""
    path: str
    """The URL path, without the query."""
    query: dict[str, str]
    """Query parameters (first value of each)."""
    headers: dict[str, str]
    """Request headers, names lower-cased."""
    body: Any
    """The JSON body (``None`` when there was none)."""
    deployment: str | None = None
    """The Azure deployment named in the path."""


class StandIn:
    """The running stand-in; use as a context manager, or :meth:`start` and :meth:`close`."""

    def __init__(self) -> None:
        """Create the server on a free loopback port (not yet serving)."""
        self.requests: list[Received] = []
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._server.server_address[1])

    @property
    def root(self) -> str:
        """``http://127.0.0.1:<port>`` (the Azure endpoint)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ``<root>/v1``."""
        return f"{self.root}/v1"

    def script(self, *behaviours: Behaviour) -> None:
        """Append behaviours to the queue (each request consumes the first)."""
        with self._lock:
            self._queue.extend(behaviours)

    @property
    def pending(self) -> int:
        """Scripted behaviours not consumed yet."""
        with self._lock:
            return len(self._queue)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies received, in order."""
        return [r.body for r in self.requests]

    def start(self) -> StandIn:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving (again is harmless); delayed answers still waiting are cut short."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take(self, received: Received) -> Behaviour | None:
        with self._lock:
            self.requests.append(received)
            return self._queue.popleft() if self._queue else None


def _handler_for(standin: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = standin

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and chunked streams
    owner: StandIn

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet."""

    def do_POST(self) -> None:
        """Record the request, then answer it from the queue."""
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        deployment = None
        segments = parts.path.strip("/").split("/")
        if parts.path == "/v1/chat/completions":
            pass
        elif (
            len(segments) == 5 and segments[:2] == ["openai", "deployments"] and segments[3:] == ["chat", "completions"]
        ):
            deployment = segments[2]
        else:
            self._json(404, _error_body(f"no route {parts.path}", "not_found"))
            return
        received = Received(
            method="POST",
            path=parts.path,
            query={k: v[0] for k, v in parse_qs(parts.query).items()},
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            deployment=deployment,
        )
        behaviour = self.owner._take(received)
        if behaviour is None:
            self._json(418, _error_body("the stand-in has no scripted reply left for this request", "standin"))
            return
        if behaviour.delay and self.owner._closing.wait(behaviour.delay):
            return
        try:
            if behaviour.kind == "error" and behaviour.page is not None:
                self._page(behaviour.status, behaviour.page, behaviour.headers, behaviour.page_type)
            elif behaviour.kind == "error":
                self._json(behaviour.status, _error_body(behaviour.message, "scripted"), behaviour.headers)
            elif behaviour.kind == "stream":
                self._stream(behaviour, body or {})
            else:
                self._json(200, _completion_body(behaviour), behaviour.headers)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            self.close_connection = True

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _page(self, status: int, page: str, headers: dict[str, str], content_type: str) -> None:
        payload = page.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, behaviour: Behaviour, request: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in behaviour.headers.items():
            self.send_header(name, value)
        self.end_headers()
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        for n, chunk in enumerate(_stream_chunks(behaviour, include_usage)):
            if n and behaviour.gap and self.owner._closing.wait(behaviour.gap):
                return
            if chunk is None:  # a drop: the connection closes mid-reply, no terminating chunk
                self.wfile.flush()
                self.close_connection = True
                return
            self._chunk(f"data: {json.dumps(chunk)}\n\n".encode())
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _error_body(message: str, type_: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": None}}


def _finish(behaviour: Behaviour) -> str:
    return behaviour.finish_reason or ("tool_calls" if behaviour.tool_calls else "stop")


def _usage(behaviour: Behaviour) -> dict[str, int] | None:
    if behaviour.usage is None:
        return None
    prompt, done = behaviour.usage
    return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}


def _completion_body(behaviour: Behaviour) -> dict[str, Any]:
    text = "".join(behaviour.text) if isinstance(behaviour.text, list) else behaviour.text
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if behaviour.refusal is not None:
        message["refusal"] = behaviour.refusal
    if behaviour.tool_calls:
        message["tool_calls"] = [
            {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}
            for id_, name, arguments in behaviour.tool_calls
        ]
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": 1700000000,
        "model": behaviour.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(behaviour), "logprobs": None}],
        "usage": _usage(behaviour),
    }


def _stream_chunks(behaviour: Behaviour, include_usage: bool) -> list[dict[str, Any] | None]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-standin",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": behaviour.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    pieces = behaviour.text if isinstance(behaviour.text, list) else [behaviour.text]
    chunks: list[dict[str, Any] | None] = [chunk({"role": "assistant", "content": ""})]
    chunks.extend(chunk({"content": piece}) for piece in pieces if piece)
    if behaviour.refusal is not None:
        half = len(behaviour.refusal) // 2
        chunks.extend(chunk({"refusal": part}) for part in (behaviour.refusal[:half], behaviour.refusal[half:]))
    if behaviour.fail is not None:
        return [*chunks, _error_body(behaviour.fail, "server_error")]
    if behaviour.drop:
        return [*chunks, None]
    size = max(1, behaviour.argument_piece)
    for index, (id_, name, arguments) in enumerate(behaviour.tool_calls):
        first = {"index": index, "id": id_, "type": "function", "function": {"name": name, "arguments": ""}}
        chunks.append(chunk({"tool_calls": [first]}))
        for start in range(0, len(arguments), size):
            piece: dict[str, Any] = {"index": index, "function": {"arguments": arguments[start : start + size]}}
            if behaviour.calls_as == "name_every_piece":
                piece = {**piece, "id": id_, "type": "function", "function": {**piece["function"], "name": name}}
            chunks.append(chunk({"tool_calls": [piece]}))
    if behaviour.calls_as == "no_index":
        for delta in chunks:
            for piece in ((delta or {}).get("choices") or [{}])[0].get("delta", {}).get("tool_calls", ()):
                del piece["index"]
    chunks.append(chunk({}, _finish(behaviour)))
    if include_usage and behaviour.usage is not None:
        chunks.append(
            {
                "id": "chatcmpl-standin",
                "object": "chat.completion.chunk",
                "created": 1700000000,
                "model": behaviour.model,
                "choices": [],
                "usage": _usage(behaviour),
            }
        )
    return chunks
