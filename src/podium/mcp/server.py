"""Podium apps as MCP tools: what ``podium mcp APP`` serves over stdio (and the server's ``/mcp`` endpoint reuses).

Each app is one tool named after it, taking ``input`` (the human's message) and an optional ``thread_id`` (the
conversation to continue, from an earlier result; a new one when left out). The result says how the run ended, its
answer, and the thread id to pass back for the next turn; it is an error result (``isError``) when the call was
refused (``status: "error"``) or the run did not end well (failed, hit a limit, cancelled).

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

    def __init__(
        self, app: App, agent: Agent | Callable[[], Agent], runtime: Runtime, *, about: str | None = None
    ) -> None:
        """Serve ``agent`` (built from ``app``; or a function building it on first use) with ``runtime``;
        ``about`` says what the app is for (default: the agent's description, else the app's welcome)."""
        self.app = app
        self._agent = agent
        self.runtime = runtime
        self.name = re.sub(r"[^A-Za-z0-9_-]", "_", app.name)[:64]
        """The tool's name: the app's (characters MCP names do not allow become ``_``)."""
        if not about:
            built = None if callable(agent) and not hasattr(agent, "invoke") else agent
            about = getattr(built, "description", "") or app.welcome or getattr(built, "name", app.name)
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
        if thread_id and await self.runtime.store.get_thread(thread_id) is None:
            # a mistyped id must not start a new conversation that has lost the context the caller meant
            raise UsageError(
                f"no conversation {thread_id!r} in the store: pass the thread_id of an earlier result to continue "
                "it, or leave thread_id out to start a new conversation"
            )
        if thread_id:
            status, pending = await self.runtime.pending(thread_id)
            if status == "running":  # a process died mid-run: finish it, then take the message
                await self.runtime.resume(self.agent, thread_id)
            elif status == "interrupted" and pending:
                return await self.runtime.resume(self.agent, thread_id, answers_from_text(input, pending))
        return await self.runtime.run(self.agent, input, thread_id=thread_id or None)


def refusal(arguments: Mapping[str, Any]) -> str | None:
    """What is wrong with a tool call's ``arguments`` (``input`` a string, ``thread_id`` a string if given), or None."""
    text, thread_id = arguments.get("input"), arguments.get("thread_id")
    if "input" not in arguments or text is None:
        return "input is missing: pass the user's message as input (a string)"
    if not isinstance(text, str):
        return f"input must be the user's message as a string, not {type(text).__name__} {text!r:.80}"
    if thread_id is not None and not isinstance(thread_id, str):
        return f"thread_id must be a string (from an earlier result), not {type(thread_id).__name__} {thread_id!r:.80}"
    return None


def failed(data: Mapping[str, Any]) -> bool:
    """True when a tool result says the call was refused or the run did not end well (an MCP error result)."""
    return data.get("status") in ("error", "failed", "limit_exceeded", "cancelled")


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

    class Server(FastMCP):
        async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
            """Arguments that do not fit get the tool's own error result, not a dump of the schema validation."""
            problem = refusal(arguments) if name in seen else None
            if problem is not None:
                return _result({"status": "error", "error": problem, "thread_id": None})
            return await super().call_tool(name, arguments)

    server = Server(name, **settings)
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise UsageError(f"two apps are served as the MCP tool {tool.name!r}")
        seen.add(tool.name)
        server.add_tool(_handler(tool, Context), name=tool.name, description=tool.description)
    return server


def _result(data: dict[str, Any]) -> Any:
    """The MCP result carrying ``data`` (as JSON text and as structured content), an error result when it failed."""
    import pydantic_core
    from mcp import types

    text = pydantic_core.to_json(data, fallback=str, indent=2).decode()
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structuredContent=data, isError=failed(data)
    )


def _handler(tool: AppTool, context_type: type[Context]) -> Any:  # type: ignore[type-arg]
    from typing import Annotated

    from mcp import types

    async def call(input: str, ctx: Context, thread_id: str | None = None) -> Any:  # type: ignore[type-arg]
        ask = _elicitor(ctx) if _can_elicit(ctx) else None
        return _result(await tool.turn(input, thread_id, ask))

    call.__annotations__["ctx"] = context_type  # FastMCP finds the context parameter by its annotation
    # the result as it is built (isError set by _result), with the schema of its structured content
    call.__annotations__["return"] = Annotated[types.CallToolResult, dict[str, Any]]
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

    def __init__(
        self,
        apps: Mapping[str, App],
        runtime: Runtime,
        agent: Callable[[str], Agent],
        describe: Callable[[str], str | None] | None = None,
    ) -> None:
        """Serve ``apps`` (by name) with ``runtime``; ``agent(name)`` builds an app's agent on first use and
        ``describe(name)`` says what the app is for (default: its welcome)."""
        from mcp.server.transport_security import TransportSecuritySettings

        tools = [
            AppTool(app, _builder(agent, name), runtime, about=describe(name) if describe else None)
            for name, app in apps.items()
        ]
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
