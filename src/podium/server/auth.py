"""Who is calling: the :class:`Principal` every route works for, and the :func:`require` dependency.

Every thread and run belongs to ``principal.user``; another user's ids answer 404. Without an
:class:`AuthConfig` the server runs in dev mode: one local user holding every scope.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from fastapi import Request

__all__ = ["SCOPES", "AuthConfig", "Principal", "Scope", "require"]

Scope = Literal["read", "run", "admin"]
"""What a route needs: ``read`` (look), ``run`` (create and steer runs), ``admin`` (manage the server)."""

SCOPES: frozenset[str] = frozenset({"read", "run", "admin"})
"""Every scope."""


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated caller."""

    user: str
    """The user every record created by this caller belongs to."""
    scopes: frozenset[str]
    """What the caller may do."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthConfig:
    """How callers are authenticated."""

    dev_user: str = "local"
    """The one user of dev mode."""


def require(scope: Scope) -> Callable[[Request], Principal]:
    """A FastAPI dependency answering the caller's :class:`Principal` when it holds ``scope``."""

    def dependency(request: Request) -> Principal:
        config: AuthConfig = request.app.state.podium.auth
        return Principal(user=config.dev_user, scopes=SCOPES)

    dependency.__name__ = f"require_{scope}"
    return dependency
