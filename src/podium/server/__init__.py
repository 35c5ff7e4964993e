"""Podium's HTTP server: every app as an assistant behind the thread and run API (see ``docs/server.md``).

Needs the ``server`` extra (FastAPI and uvicorn); ``import podium`` never imports this package.
"""

from podium.server.app import create_app
from podium.server.auth import AuthConfig, Principal, require

__all__ = ["AuthConfig", "Principal", "create_app", "require"]
