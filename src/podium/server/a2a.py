"""Every served app as an A2A agent, with the official ``a2a-sdk`` (the ``a2a`` extra).

- **Cards.** ``/a2a/<app>/.well-known/agent-card.json`` describes the app ``<app>``, whose JSON-RPC endpoint is
  ``/a2a/<app>``; ``/.well-known/agent-card.json`` is the card of the first served app (the server's default
  agent), so a client given only the server's address finds it.
- **Messages are turns of a thread.** An A2A context is a conversation: the first message of a context starts a
  thread of the caller (a digest of user, app and context id, so two users' contexts never meet) and later
  messages of the same context continue it. Runs go through the server's executor like every other run.
- **Questions.** A Podium interrupt ends the A2A task's turn as ``input-required`` with the question as the status
  message (how to answer in brackets, as over ``/v1``; its choices in the message metadata, ``podium.questions``);
  the next message on that task (or context) answers it and the same run resumes.
- **Progress streams** (``message/stream``): each reply the app says on the way is a ``working`` status
  message; the final answer is the task's ``answer`` artifact, then the task completes. A run that fails or hits a
  limit fails the task with the reason as its status message.
- **Auth** is the rest of the server's: open in dev mode; otherwise an API key or JWT with the ``run`` scope, the
  threads created belong to that user and the SDK's task records are kept per user.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response

from podium.server._wire import parse_body
from podium.server.auth import authenticate, dev_principal

if TYPE_CHECKING:
    from podium.server._state import ServerState

__all__ = ["available", "mount"]

_PRINCIPAL = "podium.principal"


def available() -> bool:
    """True when the ``a2a`` extra is installed (checked without importing it)."""
    return importlib.util.find_spec("a2a") is not None


def mount(app: FastAPI, state: ServerState) -> None:
    """Answer A2A for every app of ``state`` on ``app`` (cards and JSON-RPC, see the module docstring).

    The SDK is imported on the first A2A request, so a server that never speaks A2A starts without it.
    """
    made: dict[str, Any] = {}
    default = next(iter(state.apps), None)
    router = APIRouter(tags=["a2a"])

    async def card(name: str, request: Request) -> JSONResponse:
        from podium.server._a2a_agent import card_json

        state.app(name)
        await dev_principal(state)  # dev mode may have ended (a key was created): the card says what holds now
        return JSONResponse(card_json(state, name, str(request.base_url)))

    @router.get("/.well-known/agent-card.json")
    async def default_card(request: Request) -> JSONResponse:
        """The card of the server's first app."""
        if default is None:
            raise HTTPException(404, "no app is served")
        return await card(default, request)

    @router.get("/a2a/{name}/.well-known/agent-card.json")
    async def app_card(name: str, request: Request) -> JSONResponse:
        """The card of the app ``name``."""
        return await card(name, request)

    @router.post("/a2a/{name}")
    async def rpc(name: str, request: Request) -> Response:
        """The app's A2A JSON-RPC endpoint (``SendMessage``, ``SendStreamingMessage``, ``GetTask``, ...)."""
        state.app(name)
        principal = await authenticate(request)
        if not principal.allows("run"):
            raise HTTPException(403, f"A2A needs the 'run' scope; the credentials hold {sorted(principal.scopes)}")
        if not made:
            from podium.server._a2a_agent import dispatchers

            made.update(dispatchers(state))
        request.scope[_PRINCIPAL] = principal
        try:  # (the SDK answers a body that is not UTF-8, or nests too deep, as an internal error with Python's text)
            parse_body(await request.body())  # the body stays cached on the request for the SDK
        except ValueError as exc:
            error = {"code": -32700, "message": f"Parse error: {exc}"}
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error})
        response: Response = await made[name].handle_requests(request)
        return response

    app.include_router(router)
