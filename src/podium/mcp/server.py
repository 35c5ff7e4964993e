"""Podium apps as MCP tools: what ``podium mcp APP`` serves over stdio (and the server's ``/mcp`` endpoint reuses).

Each app is one tool named after it, taking ``input`` (the human's message) and an optional ``thread_id`` (the
conversation to continue; a new one when left out). The result says how the run ended, its answer, and the
thread id to pass back for the next turn.

A question to the human (an interrupt) is asked through MCP elicitation when the client supports it: the user
answers in the client and the same call goes on to the app's answer. Otherwise (or when the user declines the
form) the result says what is asked (``status: "waiting"``, ``question``), and the next call with that
``thread_id`` answers it with its ``input``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from podium.errors import PodiumError, UsageError
from podium.events import answers_from_text
from podium.store.base import check_new_thread_id

if TYPE_CHECKING:
    from mcp.server.fastmcp import Context, FastMCP

    from podium.agents.base import Agent
    from podium.app import App
    from podium.events import Interrupt
    from podium.runtime.runtime import RunResult, Runtime

__all__ = ["AppTool", "HTTPEndpoint", "app_server", "serve_stdio"]

_MAX_QUESTIONS = 50
"""Questions one call answers through elicitation before it hands the conversation back (a guard, not a limit)."""


class AppTool:
    """One app behind an MCP tool: runs a turn, resumes a waiting conversation, asks the human in between."""

    def __init__(self, app: App, agent: Agent | Callable[[], Agent], runtime: Runtime) -> None:
        """Serve ``agent`` (built from ``app``; or a function building it on first use) with ``runtime``."""
        self.app = app
        self._agent = agent
        self.runtime = runtime
        self.name = re.sub(r"[^A-Za-z0-9_-]", "_", app.name)[:64]
        """The tool's name: the app's (characters MCP names do not allow become ``_``)."""
        about = agent.description or app.welcome or agent.name if not callable(agent) else app.welcome or app.name
        self.description = (
            f"Talk to the {app.name} app ({about}). Pass the user's message "
            "as input; pass the thread_id of an earlier result to continue that conversation (also to answer "
            "a question the app asked)."
        )

    @property
    def agent(self) -> Agent:
        """The app's agent (built now if it was given as a function)."""
        if callable(self._agent) and not hasattr(self._agent, "invoke"):
            self._agent = self._agent()
        return self._agent  # type: ignore[return-value]

    async def turn(self, input: str, thread_id: str | None, ask: Any = None) -> dict[str, Any]:
        """Run one turn and return the tool result as data.

        Args:
            input: the human's message, or the answer to the question the thread waits on.
            thread_id: the conversation; a new one when None.
            ask: ``async (interrupt) -> str | None`` asking the human directly (MCP elicitation); None returns the
                question instead.
        """
        try:
            result = await self._start(input, thread_id)
            for _ in range(_MAX_QUESTIONS):
                if result.status != "interrupted" or ask is None:
                    break
                answers: dict[str, str] = {}
                for interrupt in result.interrupts:
                    answer = await ask(interrupt)
                    if answer is None:  # declined: hand the question back
                        return _data(result)
                    answers[interrupt.id] = answer
                result = await self.runtime.resume(self.agent, result.thread_id, answers)
        except PodiumError as exc:
            return {"status": "error", "error": str(exc), "thread_id": thread_id}
        return _data(result)

    async def _start(self, input: str, thread_id: str | None) -> RunResult:
        exists = bool(thread_id) and await self.runtime.store.get_thread(thread_id or "") is not None
        if thread_id and not exists:
            check_new_thread_id(thread_id)  # a client names a new conversation: no path, no space
        if thread_id and exists:
            status, pending = await self.runtime.pending(thread_id)
            if status == "running":  # a process died mid-run: finish it, then take the message
                await self.runtime.resume(self.agent, thread_id)
            elif status == "interrupted" and pending:
                return await self.runtime.resume(self.agent, thread_id, answers_from_text(input, pending))
        return await self.runtime.run(self.agent, input, thread_id=thread_id or None)


def _data(result: RunResult) -> dict[str, Any]:
    out: dict[str, Any] = {"status": result.status, "thread_id": result.thread_id}
    if result.status == "completed":
        out["output"] = result.output
    elif result.status == "interrupted":
        out["status"] = "waiting"
        questions = [i.to_dict() for i in result.interrupts]
        out["question"] = result.interrupts[0].prompt if len(questions) == 1 else [q["prompt"] for q in questions]
        expectation = result.interrupts[0].expectation
        if len(questions) == 1 and expectation is not None and expectation.options:
            out["options"] = list(expectation.options)
        if len(questions) > 1:
            out["question_ids"] = [q["id"] for q in questions]
        out["next"] = "Ask the user, then call this tool again with this thread_id and the answer as input."
    else:
        out["reason"] = result.reason
    return out


def app_server(tools: Sequence[AppTool], *, name: str = "podium", **settings: Any) -> FastMCP:
    """An MCP server (the ``mcp`` package's ``FastMCP``) with one tool per app.

    Raises:
        UsageError: two apps with the same tool name.
    """
    from mcp.server.fastmcp import Context, FastMCP

    server = FastMCP(name, **settings)
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise UsageError(f"two apps are served as the MCP tool {tool.name!r}")
        seen.add(tool.name)
        server.add_tool(_handler(tool, Context), name=tool.name, description=tool.description)
    return server


def _handler(tool: AppTool, context_type: type[Context]) -> Any:  # type: ignore[type-arg]
    async def call(input: str, ctx: Context, thread_id: str | None = None) -> dict[str, Any]:  # type: ignore[type-arg]
        ask = _elicitor(ctx) if _can_elicit(ctx) else None
        return await tool.turn(input, thread_id, ask)

    call.__annotations__["ctx"] = context_type  # FastMCP finds the context parameter by its annotation
    return call


def _can_elicit(ctx: Context) -> bool:  # type: ignore[type-arg]
    from mcp import types

    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    return bool(ctx.session.check_client_capability(wanted))


def _elicitor(ctx: Context) -> Any:  # type: ignore[type-arg]
    from pydantic import BaseModel, Field

    class Answer(BaseModel):
        answer: str = Field(description="Your answer")

    async def ask(interrupt: Interrupt) -> str | None:
        prompt = interrupt.prompt
        if interrupt.expectation is not None and interrupt.expectation.options:
            prompt += f" ({' / '.join(interrupt.expectation.options)})"
        reply = await ctx.elicit(prompt, Answer)
        return reply.data.answer if reply.action == "accept" else None

    return ask


class HTTPEndpoint:
    """Apps as MCP tools over streamable HTTP, for a web server to mount (``podium serve`` answers at ``/mcp``)."""

    def __init__(self, apps: Mapping[str, App], runtime: Runtime, agent: Callable[[str], Agent]) -> None:
        """Serve ``apps`` (by name) with ``runtime``; ``agent(name)`` builds an app's agent on first use."""
        from mcp.server.transport_security import TransportSecuritySettings

        tools = [AppTool(app, _builder(agent, name), runtime) for name, app in apps.items()]
        # the host server decides who may call; MCP's own loopback-only host check would refuse a public name
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.server = app_server(tools, log_level="ERROR", transport_security=security)
        self.routes = list(self.server.streamable_http_app().routes)
        """Starlette routes answering at ``/mcp``."""

    def run(self) -> Any:
        """The context manager that runs the MCP sessions while the web server lives (enter it in its lifespan)."""
        return self.server.session_manager.run()

    @classmethod
    def available(cls) -> bool:
        """True when the ``mcp`` extra is installed: the version whose server API this module uses.

        Another major version of ``mcp`` (2.x renamed that API) counts as not installed.
        """
        try:
            import mcp.server.fastmcp  # noqa: F401
        except ImportError:
            return False
        return True


def _builder(agent: Callable[[str], Agent], name: str) -> Callable[[], Agent]:
    return lambda: agent(name)


async def serve_stdio(app_specs: Sequence[str], store_spec: str | None = None) -> None:
    """Serve the apps named by ``app_specs`` over stdio until the client closes the connection.

    Raises:
        UsageError: an app cannot be found, or the ``mcp`` extra is missing.
    """
    from podium.app import load_app
    from podium.mcp.client import _require_mcp
    from podium.runtime.runtime import Runtime
    from podium.settings import Settings, open_store

    _require_mcp()
    if not app_specs:
        raise UsageError("name at least one app to serve")
    settings = Settings.load()
    apps = [load_app(spec) for spec in app_specs]
    store = open_store(store_spec, settings=settings)
    runtime = Runtime(store)
    try:
        tools = [AppTool(app, app.build(app.model(settings)), runtime) for app in apps]
        await app_server(tools, log_level="ERROR").run_stdio_async()
    finally:
        await store.close()
