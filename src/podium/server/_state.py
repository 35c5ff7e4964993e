"""What the routes share: the apps, their agents, the runtime and the store of one server."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import HTTPException

from podium.server._executor import Executor

if TYPE_CHECKING:
    from podium.agents.base import Agent
    from podium.app import App
    from podium.models.base import Model
    from podium.runtime.bus import EventBus
    from podium.runtime.runtime import Runtime
    from podium.server._convert import Values
    from podium.server._metrics import Metrics
    from podium.server.auth import AuthConfig
    from podium.store.base import Store


@dataclass(slots=True, kw_only=True)
class ServerState:
    """One server's apps and runtime (``request.app.state.podium``)."""

    apps: Mapping[str, App]
    store: Store
    runtime: Runtime
    bus: EventBus
    auth: AuthConfig
    metrics: Metrics
    executor: Executor = field(init=False)
    agents: dict[str, Agent] = field(default_factory=dict)
    models: list[Model] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    values: dict[str, tuple[Values, tuple[int, str]]] = field(default_factory=dict)
    """Threads' values as last read, with the log head they reach (see :func:`podium.server.threads.thread_values`)."""

    def __post_init__(self) -> None:
        self.executor = Executor(
            store=self.store, runtime=self.runtime, bus=self.bus, agent=self.agent, apps=self.apps.keys()
        )

    def app(self, name: str) -> App:
        """The app named ``name`` (an assistant id or graph id).

        Raises:
            HTTPException: 404, no such app.
        """
        found = self.apps.get(name)
        if found is None:
            known = ", ".join(sorted(self.apps)) or "none"
            raise HTTPException(404, f"no assistant {name!r}; known: {known}")
        return found

    def agent(self, name: str) -> Agent:
        """The agent of app ``name``, built on first use around the app's model (offline replay by default).

        Raises:
            HTTPException: 404, no such app.
        """
        app = self.app(name)
        agent = self.agents.get(name)
        if agent is None:
            from podium.settings import Settings

            model = app.model(Settings.load())
            self.models.append(model)
            agent = self.agents[name] = app.build(model)
        return agent

    def built(self, name: str) -> Agent | None:
        """The agent of app ``name`` (built now if need be), or None when it cannot be built (its model is not
        configured, its ``build`` raises): a run of it then fails saying why."""
        try:
            return self.agent(name)
        except Exception:
            return None

    def description(self, name: str) -> str | None:
        """What the app ``name`` is for: its agent's description, else the app's welcome (None without either).

        Raises:
            HTTPException: 404, no such app.
        """
        app = self.app(name)
        about = getattr(self.built(name), "description", None)
        return (about if isinstance(about, str) and about.strip() else None) or app.welcome or None

    async def close(self) -> None:
        """Close the models that hold connections."""
        for model in self.models:
            close: Any = getattr(model, "aclose", None)
            if close is not None:
                await close()
        self.models.clear()
