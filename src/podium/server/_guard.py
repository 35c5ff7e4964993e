"""The server's one middleware: body checks before any route reads a body, and the request metrics.

Plain ASGI on purpose: a middleware written as ``app.middleware("http")`` runs every request through a task and
memory streams of its own, which cost more than some routes' whole work under load.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from starlette.responses import JSONResponse

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from podium.server._metrics import Metrics

__all__ = ["RequestGuard"]

_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


class RequestGuard:
    """Refuse bodies that are too large (413) or not JSON (415); count every request by its route template.

    A request is counted when its response starts (for a stream: once its headers are sent), under the route's
    path template, so ids do not multiply the series; one refused here counts as ``unmatched``.
    """

    def __init__(self, app: ASGIApp, *, max_body: int, metrics: Metrics) -> None:
        """Wrap ``app``.

        Args:
            app: the application.
            max_body: the largest request body accepted, in bytes.
            metrics: where requests are counted.
        """
        self.app = app
        self.max_body = max_body
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method: str = scope["method"]
        start = time.perf_counter()

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start":
                template = getattr(scope.get("route"), "path", None) or "unmatched"
                self.metrics.observe_request(method, template, message["status"], time.perf_counter() - start)
            await send(message)

        if method not in _WITH_BODY:
            await self.app(scope, receive, timed)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, timed)
            return
        received, refused = 0, False

        async def counted() -> Message:
            """The body as it arrives, refused once it outgrows the limit (a chunked body has no Content-Length)."""
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                received += len(message.get("body", b""))
                if received > self.max_body:
                    refused = True
                    too_large = JSONResponse({"detail": f"the body is larger than {self.max_body} bytes"}, 413)
                    await too_large(scope, receive, timed)
                    return {"type": "http.disconnect"}  # the route stops reading; what it sends is dropped
            return message

        async def unless_refused(message: Message) -> None:
            if not refused:
                await timed(message)

        await self.app(scope, counted, unless_refused)

    def _refusal(self, scope: Scope) -> JSONResponse | None:
        headers: dict[bytes, bytes] = dict(scope["headers"])
        length = headers.get(b"content-length", b"").decode("latin-1")
        if length.isascii() and length.isdigit() and int(length) > self.max_body:
            return JSONResponse({"detail": f"the body is larger than {self.max_body} bytes"}, status_code=413)
        kind = headers.get(b"content-type", b"").decode("latin-1").partition(";")[0].strip().lower()
        if kind and kind != "application/json" and not kind.endswith("+json"):
            return JSONResponse(
                {"detail": f"send JSON (Content-Type: application/json), not {kind!r}"}, status_code=415
            )
        return None
