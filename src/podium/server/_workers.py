"""``podium serve --workers N``: every worker process builds the same server from a description in its environment.

The command line checks everything once (apps, store, authentication) and describes the result in one environment
variable; uvicorn starts the workers, each of which calls :func:`create` and serves the shared socket. Workers share
nothing but the PostgreSQL database (see docs/deploy.md), exactly as servers on several hosts do.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

    from podium.server.auth import AuthConfig

__all__ = ["ENV", "create", "describe"]

ENV = "PODIUM_SERVE_WORKER"
"""The environment variable holding the description of the server each worker builds."""


def describe(
    apps: list[str],
    store: str,
    auth: AuthConfig,
    *,
    lease_ttl: float,
    max_runs: int,
    grace: float = 5.0,
    log_level: str = "info",
) -> str:
    """The description :func:`create` reads: the apps as named on the command line (none: every example), the store
    URL, the settled authentication and the log level."""
    names = {f.name for f in fields(auth) if not f.name.startswith("_")}
    settled = {k: sorted(v) if isinstance(v, frozenset) else v for k, v in asdict(auth).items() if k in names}
    spec = {"apps": apps, "store": store, "auth": settled, "lease_ttl": lease_ttl, "max_runs": max_runs}
    return json.dumps({**spec, "grace": grace, "log_level": log_level})


def create() -> FastAPI:
    """Build this worker's server from :data:`ENV` (uvicorn calls it in each worker process)."""
    from podium.app import example_names, load_app
    from podium.server.app import create_app
    from podium.server.auth import AuthConfig
    from podium.server.ops import configure_logging
    from podium.settings import open_store

    spec: dict[str, Any] = json.loads(os.environ[ENV])
    configure_logging(spec.get("log_level", "info"))  # JSON lines in this process too, before the apps load
    auth = dict(spec["auth"])
    auth["default_scopes"] = frozenset(auth["default_scopes"])
    served = {app.name: app for app in (load_app(name) for name in spec["apps"] or example_names())}
    return create_app(
        served,
        store=open_store(spec["store"]),
        auth=AuthConfig(**auth),
        close_store=True,
        lease_ttl=spec["lease_ttl"],
        max_runs=spec["max_runs"],
        grace=spec["grace"],
        freeze_start_up=True,
        stop_on_signals=True,
    )
