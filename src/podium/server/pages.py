"""The web pages: the chat page at ``/``, the plan page at ``/plan`` and the API page at ``/docs`` (docs/server.md).

Plain HTML, CSS and JavaScript modules shipped inside the package (``podium/server/static``): nothing is fetched
from elsewhere and no build step runs. The pages use the public HTTP API only, with the caller's credentials (an API
key the page asks for when the server requires one), so the pages themselves need none. A strict Content Security
Policy allows only the package's own scripts, one more guard beside the pages rendering model text as text.
"""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import Scope

__all__ = ["STATIC", "mount"]

STATIC = Path(__file__).parent / "static"
"""The folder of the pages' files."""

_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


@router.get("/")
async def chat_page() -> FileResponse:
    """The chat page: any app's conversations, with the side channel, artifacts, questions and task stack."""
    return FileResponse(STATIC / "chat.html", headers=_HEADERS)


@router.get("/plan")
async def plan_page() -> FileResponse:
    """The plan page: tasks planned, approved step by step, and followed live."""
    return FileResponse(STATIC / "plan.html", headers=_HEADERS)


@router.get("/docs")
async def api_page() -> FileResponse:
    """The API page: every route of ``/openapi.json`` with its methods, summary and parameters (works offline)."""
    return FileResponse(STATIC / "api.html", headers=_HEADERS)


class _Static(StaticFiles):
    """The pages' scripts and styles, with the pages' security headers."""

    def file_response(
        self, full_path: str | os.PathLike[str], stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers.update(_HEADERS)
        return response


def mount(app: FastAPI) -> None:
    """Serve the pages on ``app``: ``/``, ``/plan``, ``/docs`` and their files under ``/static``."""
    app.include_router(router)
    app.mount("/static", _Static(directory=STATIC), name="static")
