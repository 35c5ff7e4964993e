"""Tools from MCP servers: :class:`MCPServer` connects to one (a stdio subprocess or streamable HTTP) and offers its
tools as Podium tools.

Each remote tool becomes a :class:`MCPTool`, named ``<prefix>_<tool>`` (the prefix is the server's name unless
given), advertising the server's JSON schema as it is. The server validates the arguments; a result it marks as an
error goes back to the model as an error tool message, so the model can correct itself. A server that stops
answering (its process died, the connection dropped) makes the call fail with :class:`MCPError`, which agents
handling tool errors report to the model like any failing tool.

The server may change its tools while connected: on its ``tools/list_changed`` notification the list is read again,
and agents given the server itself as a toolset (``ReactAgent(..., [server])``) see the new list at their next
model call. Orchestrations that take a fixed list (the master agent) get ``server.list_tools()``.
"""

from __future__ import annotations

import asyncio
import json
import re
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podium.errors import ModelRetry, PodiumError, UsageError
from podium.tools import Tool, ToolArgumentsError, ToolMetadata, ToolReturn

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from mcp import ClientSession
    from mcp import types as mcp_types

__all__ = ["MCPError", "MCPServer", "MCPTool"]


class MCPError(PodiumError):
    """An MCP server could not be started or reached, or it stopped answering."""

    def __init__(self, server: str, message: str) -> None:
        super().__init__(f"MCP server {server!r}: {message}")
        self.server = server
        """The server's name."""


def _require_mcp() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError("MCP support needs the 'mcp' extra: pip install 'podium[mcp]'") from None


def _tool_name(prefix: str, name: str) -> str:
    joined = re.sub(r"[^A-Za-z0-9_-]", "_", f"{prefix}_{name}" if prefix else name)
    return joined[:64]


class MCPTool(Tool):
    """One tool of an MCP server, callable by a model like any Podium tool."""

    __slots__ = ("remote_name", "server")

    def __init__(self, server: MCPServer, remote: mcp_types.Tool, *, name: str, metadata: ToolMetadata) -> None:
        """Wrap ``remote`` (as the server listed it) under ``name``."""
        self.server = server
        self.remote_name: str = remote.name
        """The tool's name on the server."""

        async def call(arguments: dict[str, Any]) -> Any:
            return await server.call_tool(self.remote_name, arguments)

        schema = dict(remote.inputSchema or {"type": "object", "properties": {}})
        hints = remote.annotations
        super().__init__(
            call,
            name=name,
            description=remote.description or remote.title or "",
            metadata=metadata,
            parameters=schema,
            read_only=bool(hints is not None and hints.readOnlyHint),  # the server's word: see Tool's read_only
        )

    def validate(self, arguments: str | dict[str, Any]) -> dict[str, Any]:
        """Parse the model's arguments into an object; the server checks them against its schema."""
        if isinstance(arguments, str):
            try:
                raw = json.loads(arguments.strip() or "{}")
            except json.JSONDecodeError as exc:
                raise ToolArgumentsError(
                    f"The arguments for tool '{self.name}' are not valid JSON ({exc.msg} at position {exc.pos}). "
                    "Call the tool again with a JSON object."
                ) from None
        else:
            raw = arguments
        if not isinstance(raw, dict):
            raise ToolArgumentsError(
                f"The arguments for tool '{self.name}' must be a JSON object, not {type(raw).__name__}."
            )
        return {"arguments": raw}

    def __repr__(self) -> str:
        return f"MCPTool({self.name!r})"


class MCPServer:
    """A connection to one MCP server, whose tools it offers as Podium tools (a :class:`podium.Toolset`).

    Use it as an async context manager around the runs that use it::

        async with MCPServer.stdio("files", "python", ["files_server.py"]) as files:
            agent = ReactAgent("helper", model, [files])
    """

    def __init__(
        self,
        name: str,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        prefix: str | None = None,
        timeout: float = 60.0,
        metadata: ToolMetadata | None = None,
    ) -> None:
        """Describe the server; :meth:`connect` (or ``async with``) starts the session.

        Args:
            name: what Podium calls the server (in errors, and the default tool prefix).
            command: for stdio: the program to start.
            args: for stdio: its arguments.
            env: for stdio: its environment (default: a minimal safe one, as the ``mcp`` package chooses).
            cwd: for stdio: its working folder.
            url: for streamable HTTP: the endpoint (e.g. ``http://127.0.0.1:8000/mcp``).
            headers: for streamable HTTP: headers sent with every request (authentication).
            prefix: put before each tool's name with ``_`` (default: ``name``; ``""`` for none).
            timeout: seconds one call may take before it fails.
            metadata: how the tools present themselves to orchestrators (default: listed to users, introduced by
                their description).

        Raises:
            UsageError: neither or both of ``command`` and ``url`` given.
        """
        if (command is None) == (url is None):
            raise UsageError(f"MCP server {name!r}: give either command (stdio) or url (streamable HTTP)")
        self.name = name
        self.command = command
        self.args = list(args)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.url = url
        self.headers = dict(headers or {})
        self.prefix = name if prefix is None else prefix
        self.timeout = timeout
        self.metadata = metadata
        self._tools: list[MCPTool] = []
        self._session: ClientSession | None = None
        self._stack: AsyncExitStack | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self.refreshes = 0
        """How many times the tool list was read (1 after connecting; one more per change notification)."""

    @classmethod
    def stdio(cls, name: str, command: str, args: Sequence[str] = (), **options: Any) -> MCPServer:
        """A server started as a subprocess speaking MCP on its stdin and stdout."""
        return cls(name, command=command, args=args, **options)

    @classmethod
    def http(cls, name: str, url: str, **options: Any) -> MCPServer:
        """A server reached over streamable HTTP at ``url``."""
        return cls(name, url=url, **options)

    # connection ---------------------------------------------------------------------------------------------------
    async def __aenter__(self) -> MCPServer:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Start the session and read the tool list.

        Raises:
            MCPError: the server cannot be started or does not answer the handshake.
            UsageError: the ``mcp`` extra is not installed.
        """
        _require_mcp()
        from mcp import ClientSession

        stack = AsyncExitStack()
        try:
            read, write = await self._open(stack)
            session = await stack.enter_async_context(
                ClientSession(
                    read, write, read_timeout_seconds=timedelta(seconds=self.timeout), message_handler=self._on_message
                )
            )
            await session.initialize()
            self._session, self._stack = session, stack
            await self.refresh()
        except BaseException as exc:
            self._session = None
            failure: BaseException = exc
            try:  # a transport failing in its task group cancels us first, and surfaces when the group closes
                await stack.aclose()
            except Exception as closing:
                failure = closing
            if isinstance(failure, Exception) and not isinstance(failure, PodiumError):
                raise MCPError(self.name, f"cannot connect: {_describe(failure)}") from failure
            raise

    async def _open(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        if self.command is not None:
            from mcp import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=self.command, args=self.args, env=self.env, cwd=self.cwd)
            read, write = await stack.enter_async_context(stdio_client(params))
            return read, write
        import httpx
        from mcp.client.streamable_http import streamable_http_client

        client = await stack.enter_async_context(
            httpx.AsyncClient(headers=self.headers, timeout=httpx.Timeout(self.timeout, read=max(self.timeout, 300)))
        )
        read, write, _ = await stack.enter_async_context(streamable_http_client(str(self.url), http_client=client))
        return read, write

    async def close(self) -> None:
        """End the session (and stop a stdio server's process)."""
        if self._refreshing is not None:
            self._refreshing.cancel()
            self._refreshing = None
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            try:
                await stack.aclose()
            except Exception:  # a server already gone cannot be closed more
                pass

    # tools --------------------------------------------------------------------------------------------------------
    def list_tools(self) -> list[Tool]:
        """The server's tools as last listed (empty before :meth:`connect`)."""
        return list(self._tools)

    async def refresh(self) -> None:
        """Read the tool list again."""
        session = self._connected()
        remote: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            from mcp import types

            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            remote.extend(page.tools)
            cursor = page.nextCursor
            if not cursor:
                break
        tools: list[MCPTool] = []
        for item in remote:
            metadata = self.metadata or ToolMetadata(expose_to_user=True, introduction=item.description)
            tools.append(MCPTool(self, item, name=_tool_name(self.prefix, item.name), metadata=metadata))
        self._tools = tools
        self.refreshes += 1

    async def _on_message(self, message: Any) -> None:
        from mcp import types

        notification = message.root if isinstance(message, types.ServerNotification) else None
        if isinstance(notification, types.ToolListChangedNotification):
            # the handler runs inside the session's receive loop, which must stay free to read the answer
            self._refreshing = asyncio.get_running_loop().create_task(self.refresh())

    def _connected(self) -> ClientSession:
        if self._session is None:
            raise MCPError(self.name, "not connected; use 'async with' or await connect() first")
        return self._session

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call the server's tool ``name``; return its result as Podium tool output.

        Raises:
            ModelRetry: the server reported an error (the model sees its text).
            MCPError: the server did not answer (gone, timed out, protocol error).
        """
        session = self._connected()
        try:
            result = await session.call_tool(name, arguments)
        except Exception as exc:
            raise MCPError(self.name, f"the call to {name!r} failed: {_describe(exc)}") from exc
        text = _content_text(result.content)
        if result.isError:
            raise ModelRetry(text or f"tool {name!r} failed")
        if result.structuredContent is not None and not text:
            return result.structuredContent
        others = [c.model_dump(mode="json") for c in result.content if c.type != "text"]
        if others:
            return ToolReturn(content=text, artifact=others)
        return text


def _content_text(content: Sequence[Any]) -> str:
    """The text parts of an MCP result, one per line (images and resources are named, not inlined)."""
    parts: list[str] = []
    for item in content:
        if item.type == "text":
            parts.append(item.text)
        elif item.type == "resource_link":
            parts.append(f"[resource {item.uri}]")
        else:
            parts.append(f"[{item.type}]")
    return "\n".join(parts)


def _describe(exc: BaseException) -> str:
    """A readable reason, looking inside exception groups (anyio task groups wrap failures)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    if "closed" in text.lower() or type(exc).__name__ in ("ClosedResourceError", "BrokenResourceError", "EndOfStream"):
        return f"the connection closed (the server stopped?): {text}"
    return text
