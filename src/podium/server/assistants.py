"""Assistants: one per app, ``assistant_id`` = ``graph_id`` = the app's name (read-only)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from podium.server._schema import BODY, Assistant, errors
from podium.server._state import ServerState
from podium.server._wire import StorableDict, WholeNumber, iso
from podium.server.auth import Principal, require

__all__ = ["router"]

router = APIRouter(tags=["assistants"])


class AssistantSearch(BaseModel):
    """``POST /assistants/search``."""

    model_config = ConfigDict(extra="allow")
    graph_id: str | None = None
    name: str | None = None
    metadata: StorableDict = Field(default_factory=dict)
    limit: WholeNumber = Field(10, ge=1, le=1000)
    offset: WholeNumber = Field(0, ge=0)


def _assistant(state: ServerState, name: str) -> dict[str, Any]:
    app = state.app(name)
    stamp = iso(state.started)
    return {
        "assistant_id": app.name,
        "graph_id": app.name,
        "name": app.name,
        "description": state.description(name),
        "config": {},
        "context": {},
        "metadata": {"welcome": app.welcome} if app.welcome else {},  # the chat page's greeting
        "version": 1,
        "created_at": stamp,
        "updated_at": stamp,
    }


@router.post("/assistants/count", responses=errors(*BODY))
async def count_assistants(
    body: AssistantSearch, request: Request, principal: Annotated[Principal, Depends(require("read"))]
) -> int:
    """How many apps :func:`search_assistants` finds with the same filters (paging aside)."""
    every = body.model_copy(update={"offset": 0, "limit": 1_000_000})
    return len(await search_assistants(every, request, principal))


@router.post("/assistants/search", response_model=list[Assistant], responses=errors(*BODY))
async def search_assistants(
    body: AssistantSearch, request: Request, _: Annotated[Principal, Depends(require("read"))]
) -> list[dict[str, Any]]:
    """The apps, filtered by ``graph_id`` or ``name``."""
    state: ServerState = request.app.state.podium
    names = [n for n in sorted(state.apps) if body.graph_id in (None, n) and body.name in (None, n)]
    if body.metadata:
        names = []  # assistants carry no metadata
    return [_assistant(state, n) for n in names[body.offset : body.offset + body.limit]]


@router.get("/assistants/{assistant_id}", response_model=Assistant, responses=errors(404))
async def get_assistant(
    assistant_id: str, request: Request, _: Annotated[Principal, Depends(require("read"))]
) -> dict[str, Any]:
    """One app as an assistant."""
    return _assistant(request.app.state.podium, assistant_id)
