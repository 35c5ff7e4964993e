"""The ``podium`` command: chat with an app in the terminal, list and inspect stored conversations."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer

from podium.app import build_agent, load_app
from podium.errors import PodiumError
from podium.events import (
    Artifact,
    ErrorEvent,
    Event,
    InterruptRaised,
    MessageAdded,
    RunEnded,
    SideChannel,
    event_to_dict,
)
from podium.messages import AIMessage, ToolMessage
from podium.runtime.runtime import RunResult, Runtime
from podium.settings import Settings, open_store
from podium.store.base import Store
from podium.store.sqlite import SQLiteStore

cli = typer.Typer(help="Podium: multi-agent apps with a durable runtime.", no_args_is_help=True, add_completion=False)

StoreOption = Annotated[
    str | None, typer.Option("--store", help="'memory', a SQLite file or sqlite:///relative.db (default: PODIUM_STORE)")
]


DEBUG = "PODIUM_DEBUG"
"""Set (to anything but ``""`` or ``0``), a refusal's line is preceded by its traceback: what an app's own code
raised while it was imported or built, say."""


def _refused(exc: BaseException) -> typer.Exit:
    """Print the one ``error:`` line of ``exc`` on stderr (after its traceback when :data:`DEBUG` is set, else
    saying how to see it when the line hides one: a failure of the app's own code); the exit to raise, status 2."""
    import os

    line = "error: " + " ".join(str(exc).split())  # one line, whatever a driver's message holds (psycopg's hints)
    if os.environ.get(DEBUG, "") not in ("", "0"):
        import traceback

        typer.echo("".join(traceback.format_exception(exc)).rstrip(), err=True)
    elif exc.__cause__ is not None:
        line += f" (set {DEBUG}=1 for the traceback)"
    typer.echo(line, err=True)
    return typer.Exit(2)


_MOST = 2**63 - 1
"""The largest count a store takes (SQLite's and PostgreSQL's 64-bit integers); a larger ``--limit`` lists all."""


class _Printer:
    """Shows events for a person, or as JSON lines for scripts (``jsonl``: every event as it is, on stdout, and the
    notes for a person on stderr, so that every stdout line after the first, the thread's, is an event).

    For a person, a reply is what an agent says in the thread's history (``namespace`` ""), under its own path:
    the top-level agent, or the swarm agent the conversation was handed to; it is printed as ``name> text``. A
    worker's answer that a shared history also holds under its supervisor's path (a supervisor's expert, say) is the
    worker reporting to the agent above it, not a reply: it is printed dimmed and indented
    (``  research_expert: ...``), like tool calls. Hand-back bookkeeping
    (``transfer_back_to_...``, marked ``handoff_back``) and messages of nested histories are not printed.
    """

    def __init__(self, jsonl: bool) -> None:
        self.jsonl = jsonl
        from rich.console import Console

        self.console = Console(highlight=False, soft_wrap=True)

    def line(self, data: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()

    def note(self, text: str) -> None:
        if self.jsonl:  # for a person: stdout holds the thread line and events only
            print(text, file=sys.stderr, flush=True)
        else:
            self.console.print(f"[dim]{text}[/dim]", markup=True)

    def __call__(self, event: Event) -> None:
        if self.jsonl:
            if event.kind != "token":
                self.line(event_to_dict(event))
            return
        from rich.markup import escape

        c = self.console
        if isinstance(event, MessageAdded):
            message = event.message
            if message.metadata.get("handoff_back"):
                return  # bookkeeping: the worker has already reported, and control goes back up
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    c.print(f"[dim]  → {escape(call.name)}({escape(call.arguments)})[/dim]")
                if not message.content or event.namespace != "":
                    return
                if event.is_reply:  # the speaker's own
                    c.print(f"[bold cyan]{escape(message.name or 'assistant')}>[/bold cyan] {escape(message.content)}")
                else:
                    c.print(f"[dim]  {escape(message.name or 'assistant')}: {escape(message.content)}[/dim]")
            elif isinstance(message, ToolMessage):
                style = "red" if message.is_error else "dim"
                c.print(f"[{style}]  ← {escape(message.name)}: {escape(message.content[:300])}[/{style}]")
        elif isinstance(event, SideChannel):
            c.print(f"[yellow]  ⋯ {escape(event.text)}[/yellow]")
        elif isinstance(event, Artifact):
            c.print(f"[magenta]  ▣[/magenta] {escape(_artifact_text(event))}")
        elif isinstance(event, InterruptRaised):
            interrupt = event.interrupt
            how = interrupt.how_to_answer()
            c.print(f"[bold green]? {escape(interrupt.prompt)}{escape(f' [{how}]' if how else '')}[/bold green]")
        elif isinstance(event, ErrorEvent):
            c.print(f"[red]error: {escape(event.message)}[/red]")
        elif isinstance(event, RunEnded) and event.status not in ("completed", "interrupted", "failed"):
            c.print(f"[red]run {event.status}: {escape(event.reason)}[/red]")


def _artifact_text(event: Artifact) -> str:
    """An artifact as a person reads it: a plan's changes as prose, other data as compact JSON, never a repr."""
    from podium.orchestration.plan.record import describe

    said = describe(event.title, event.content)
    if said is not None:
        return said
    content = event.content
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    return f"{event.title}: {text}" if event.title else text


def _read_lines(interactive: bool) -> Any:
    while True:
        try:
            text = input("you> ") if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and text == "":
            return
        yield text.rstrip("\n")


async def _chat(app_name: str, thread: str | None, jsonl: bool, store_spec: str | None) -> int:
    settings = Settings.load()
    app = load_app(app_name)
    print(f"app {app.name!r} loaded from {app.source}", file=sys.stderr)
    model = app.model(settings)
    agent = build_agent(app, model)
    store = open_store(store_spec, settings=settings)
    runtime = Runtime(store)
    printer = _Printer(jsonl)
    failures = 0

    def report(result: RunResult) -> None:
        nonlocal failures
        if result.status in ("failed", "limit_exceeded"):  # the turn's work was not done
            failures += 1

    try:
        new = thread is None
        if thread is None:
            import uuid

            thread = uuid.uuid4().hex[:12]
            await store.get_thread(thread)  # the store is reached before the thread is named: it can be continued
        if jsonl:  # the first line, before any event (of a resumed run too): the command's own, naming the thread
            printer.line({"kind": "thread", "thread_id": thread})
        if not new:
            status, _ = await runtime.pending(thread)
            if status == "running":
                printer.note(f"finishing the unfinished run of thread {thread}")
                report(await runtime.resume(agent, thread, on_event=printer))
        elif app.welcome:
            printer.note(app.welcome) if jsonl else printer.console.print(app.welcome)
        if not jsonl:
            printer.note(f"thread {thread} (continue later with --thread {thread})")
        interactive = sys.stdin.isatty()
        for text in _read_lines(interactive):
            if not text.strip():
                printer.note("empty message ignored: type a request, or end with Ctrl-D")
                continue
            report(await runtime.send(agent, text, thread_id=thread, on_event=printer))
    finally:
        await store.close()
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()
    return 1 if failures else 0


@cli.command()
def chat(
    app: Annotated[str, typer.Argument(help="An example name (e.g. 'trip'), a .py file, or module:attribute")],
    thread: Annotated[str | None, typer.Option("--thread", help="Continue this stored conversation")] = None,
    jsonl: Annotated[
        bool,
        typer.Option(
            "--jsonl",
            help='JSON lines: first {"kind": "thread", "thread_id": ...}, then every event (notes go to stderr)',
        ),
    ] = False,
    store: StoreOption = None,
) -> None:
    """Chat with an app in the terminal (offline replay unless PODIUM_MODEL is set).

    When stdin is not a terminal, each line is one human message. With ``--jsonl`` stdout's first line is the
    command's own, ``{"kind": "thread", "thread_id": ...}``; every line after it is one event (all but token
    deltas) as :func:`podium.event_to_dict` writes it, which :func:`podium.event_from_dict` reads back. Notes for a
    person (a welcome, an empty line ignored) go to stderr.
    """
    try:
        code = asyncio.run(_chat(app, thread, jsonl, store))
    except PodiumError as exc:
        raise _refused(exc) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    raise typer.Exit(code)


def _with_store(spec: str | None, work: Callable[[Store], Awaitable[None]], *, inspect: bool = False) -> None:
    """Open the store, run ``work`` on it, close it; a Podium error becomes a message and exit code 2.

    ``inspect``: ``work`` only reads, so the store is opened read-only (a read-only file or folder can be inspected,
    and a missing file is reported, not created) and checked whole first (a damaged file is reported, not half-read).
    Every setting is read and checked first, as every command does: a bad one is refused before anything is opened.
    """

    async def go() -> None:
        opened = open_store(spec, settings=Settings.load(), read_only=inspect)
        try:
            if inspect:
                await opened.check()
            await work(opened)
        finally:
            await opened.close()

    try:
        asyncio.run(go())
    except PodiumError as exc:
        raise _refused(exc) from None


@cli.command()
def threads(
    store: StoreOption = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="How many threads to list (at most)")] = 20,
) -> None:
    """List stored conversations, newest first."""

    async def listing(opened: Store) -> None:
        for info in await opened.list_threads(min(limit, _MOST)):
            typer.echo(f"{info.id}\t{info.metadata.get('agent', '')}")

    _with_store(store, listing, inspect=True)


@cli.command()
def history(
    thread: Annotated[str, typer.Argument(help="The conversation's id")],
    store: StoreOption = None,
) -> None:
    """Print a conversation's stored events as JSON lines."""

    async def dump(opened: Store) -> None:
        for event in await Runtime(opened).events(thread):
            typer.echo(json.dumps(event_to_dict(event), ensure_ascii=False, default=str))

    _with_store(store, dump, inspect=True)


@cli.command("eval")
def eval_(
    app: Annotated[str, typer.Argument(help="An example name, a .py file, or module:attribute")],
    conversations: Annotated[list[str], typer.Argument(help="Conversation files (JSON) or folders of them")],
    isolated: Annotated[bool, typer.Option("--isolated", help="One process per turn over a SQLite file")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
) -> None:
    """Run conversations written as data against an app; print a table and a score (exit 1 if any fails)."""
    from podium.evaluation import load_conversations, run_eval

    try:
        report = asyncio.run(run_eval(app, load_conversations(conversations), isolated=isolated))
    except PodiumError as exc:
        raise _refused(exc) from None
    typer.echo(json.dumps(report.to_dict(), indent=2) if as_json else report.table())
    raise typer.Exit(0 if report.score == 1.0 else 1)


def _serve_apps(names: list[str]) -> dict[str, Any]:
    """The apps to serve by name: those named, else every example found."""
    from podium.app import example_names, no_examples_hint

    chosen = names or example_names()
    if not chosen:
        raise PodiumError(f"no apps to serve: none named and no examples/ folder here; {no_examples_hint()}")
    loaded = [load_app(name) for name in chosen]
    return {app.name: app for app in loaded}


def _check_builds(apps: dict[str, Any]) -> None:
    """Build each app once, around the model it will get, so that an app that cannot be built (its own code raises,
    or it has no model offline) is refused before the server starts, not at its first request.

    Raises:
        UsageError: an app's model cannot be made, or its build raised.
    """
    settings = Settings.load()
    for app in apps.values():
        build_agent(app, app.model(settings))


def _auth_options(
    jwt_secret: str | None, jwt_public_key: str | None, jwks: str | None, audience: str | None, issuer: str | None
) -> Any:
    """The server's JWT configuration; the key files it names are read now, so a bad one stops the start.

    Raises:
        PodiumError: a public key file that cannot be read, a JWKS file that cannot be read or holds no usable key,
            or more than one key source.
    """
    from pathlib import Path

    from podium.server.auth import AuthConfig

    public_key = None
    if jwt_public_key:
        try:
            public_key = Path(jwt_public_key).read_text()
        except OSError as exc:
            raise PodiumError(f"cannot read the JWT public key {jwt_public_key}: {exc.strerror}") from None
    try:
        return AuthConfig(jwt_secret=jwt_secret, jwt_public_key=public_key, jwks=jwks, audience=audience, issuer=issuer)
    except PodiumError as exc:
        if public_key is not None and "public key" in str(exc):
            raise PodiumError(f"{jwt_public_key}: {exc}") from None
        raise


def _seconds(option: str, least: float, help: str) -> Any:
    """A command-line option of seconds: at least ``least`` and finite (``inf`` passes a range check)."""
    return typer.Option(option, min=least, callback=lambda value: _finite(option, value), help=help)


@cli.command()
def serve(
    apps: Annotated[list[str] | None, typer.Argument(help="Apps to serve (default: every example)")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to bind (0: any free port)")] = 8000,
    store: StoreOption = None,
    jwt_secret: Annotated[
        str | None, typer.Option("--jwt-secret", envvar="PODIUM_JWT_SECRET", help="Accept HS256 JWTs signed with this")
    ] = None,
    jwt_public_key: Annotated[
        str | None,
        typer.Option("--jwt-public-key", envvar="PODIUM_JWT_PUBLIC_KEY", help="Accept RS256 JWTs: a PEM file"),
    ] = None,
    jwks: Annotated[
        str | None,
        typer.Option("--jwks", envvar="PODIUM_JWKS", help="Accept RS256 JWTs: a JWKS file (read at start) or URL"),
    ] = None,
    jwt_audience: Annotated[str | None, typer.Option("--jwt-audience", envvar="PODIUM_JWT_AUDIENCE")] = None,
    jwt_issuer: Annotated[str | None, typer.Option("--jwt-issuer", envvar="PODIUM_JWT_ISSUER")] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning or error")] = "info",
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Server processes (more than one needs a PostgreSQL store)")
    ] = 1,
    lease_ttl: Annotated[
        float, _seconds("--lease-ttl", 1.0, "PostgreSQL: seconds before a dead process's runs move elsewhere")
    ] = 10.0,
    max_runs: Annotated[
        int, typer.Option("--max-runs", min=1, help="PostgreSQL: the most runs one process executes at once")
    ] = 100,
    grace: Annotated[
        float,
        _seconds("--grace", 0.0, "Seconds executing runs get to finish at shutdown (the rest go on at the next start)"),
    ] = 5.0,
) -> None:
    """Serve apps over HTTP: the thread and run API and an OpenAI-compatible endpoint (see docs/server.md).

    Requests need an API key (podium keys create NAME) or a JWT; with neither configured, a loopback address
    serves in dev mode (one local user) and any other address refuses to start. Needs the ``server`` extra.
    On a PostgreSQL store any number of processes (--workers, or servers on other hosts) share the runs; see
    docs/deploy.md.
    """
    try:
        import uvicorn

        from podium.server import create_app
        from podium.server.auth import startup_auth
        from podium.server.ops import configure_logging, uvicorn_log_config
    except ImportError as exc:  # pragma: no cover - the dev extra installs both
        typer.echo(f"error: podium serve needs the server extra (pip install 'podium[server]'): {exc}", err=True)
        raise typer.Exit(2) from None
    import logging

    listening: socket.socket | None = None
    try:
        log = configure_logging(log_level)
        if workers > 1:  # refused before any store file is made
            _need_shared_store(workers, store)
        served = _serve_apps(apps or [])
        _check_builds(served)
        config = _auth_options(jwt_secret, jwt_public_key, jwks, jwt_audience, jwt_issuer)

        async def decide(opened: Store) -> None:
            nonlocal config
            config, said = await startup_auth(config, opened, host)
            log.info(said)

        listening = _listen(host, port)  # before anything is opened or recovered: a taken port ends it here
        _with_store(store, decide)  # (every setting checked first, before any file is made)
        opened = open_store(store)
        if isinstance(opened, SQLiteStore):  # one process serves a SQLite file: refused before it resumes anything
            opened.lock_for_serving()
    except BaseException as exc:  # (a refusal of _with_store's comes as typer.Exit)
        if listening is not None:
            listening.close()
        if not isinstance(exc, PodiumError):
            raise
        raise _refused(exc) from None
    port = listening.getsockname()[1]  # the one chosen, for --port 0
    address = f"http://{f'[{host}]' if ':' in host else host}:{port}"  # an IPv6 address in brackets: http://[::1]:8000
    logging.getLogger("podium.server").info("serving %s on %s", ", ".join(served), address)
    typer.echo(f"Open {address}/ in a browser for the chat page ({address}/plan: the plan page).")
    # On SIGTERM or SIGINT the app stops its runs after their grace and then ends every stream (stop_on_signals),
    # while uvicorn waits for the connections: the timeout only cuts a request that outlives that.
    options: dict[str, Any] = {"log_config": uvicorn_log_config(log_level), "timeout_graceful_shutdown": int(grace) + 3}
    # idle connections stay open longer than clients and balancers keep them (httpx 5 s, balancers often 60 s): a
    # server that closed first could close one just as a request is sent on it, which the client sees as ReadError
    options["timeout_keep_alive"] = 75
    if workers > 1:
        import os

        from podium.server._workers import ENV, describe

        target = store if store is not None else str(Settings.load().store)
        os.environ[ENV] = describe(
            list(apps or []), target, config, lease_ttl=lease_ttl, max_runs=max_runs, grace=grace, log_level=log_level
        )
        options["timeout_worker_healthcheck"] = 60  # a worker importing the apps on a busy host is slow to answer
        listening.close()  # (uvicorn's supervisor binds the address itself, for its workers to share)
        uvicorn.run("podium.server._workers:create", factory=True, workers=workers, host=host, port=port, **options)
        return
    app = create_app(
        served,
        store=opened,
        auth=config,
        close_store=True,
        lease_ttl=lease_ttl,
        max_runs=max_runs,
        grace=grace,
        freeze_start_up=True,
        stop_on_signals=True,
    )
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, **options))
    try:
        server.run(sockets=[listening])
    except KeyboardInterrupt:  # Ctrl-C (SIGINT): the server has shut down gracefully
        pass
    if not server.started:  # the application's start-up failed (what uvicorn.run exits with then)
        raise typer.Exit(3)


def _need_shared_store(workers: int, store: str | None) -> None:
    """Refuse several workers without a PostgreSQL store, judged from its name (nothing is opened or created).

    Raises:
        PodiumError: the store (``--store``, else the settings') is not a ``postgresql://`` URL.
    """
    target = store if store is not None else Settings.load().store
    if target is None or not target.startswith("postgresql://"):
        raise PodiumError(
            f"--workers {workers} needs a PostgreSQL store (--store postgresql://...): processes share runs "
            "through its queue; a SQLite or memory store serves one process"
        )


def _finite(option: str, value: float) -> float:
    """``value``, unless it is infinite (a range check lets ``inf`` through)."""
    import math

    if not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a number of seconds", param_hint=f"'{option}'")
    return value


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (the server listens on it), or a :class:`PodiumError` saying why not: a
    server whose port is taken stops before it opens its store or resumes any run."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PodiumError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


keys_cli = typer.Typer(help="API keys of the server: create, list, revoke.", no_args_is_help=True)
cli.add_typer(keys_cli, name="keys")


@keys_cli.command("create")
def keys_create(
    name: Annotated[str, typer.Argument(help="What the key is for")],
    user: Annotated[str | None, typer.Option("--user", help="The user it acts as (default: NAME)")] = None,
    scope: Annotated[
        list[str] | None, typer.Option("--scope", help="read, run or admin; repeat for several (default: read, run)")
    ] = None,
    store: StoreOption = None,
) -> None:
    """Create an API key and print it once (only its digest is stored)."""
    from podium.server.auth import new_api_key

    async def create(opened: Store) -> None:
        if any(k.name == name and k.revoked is None for k in await opened.list_api_keys()):
            raise PodiumError(f"a valid key named {name!r} exists; revoke it first or choose another name")
        secret, key = new_api_key(name, user=user, scopes=scope or ("read", "run"))
        await opened.add_api_key(key)
        typer.echo(secret)
        typer.echo(
            f"key {key.id} for user {key.user!r}, scopes {' '.join(key.scopes)}: keep it, it is not shown again",
            err=True,
        )

    _with_store(store, create)


@keys_cli.command("list")
def keys_list(store: StoreOption = None) -> None:
    """List the API keys (never their secrets): id, name, user, scopes, created, status."""
    import datetime

    async def listing(opened: Store) -> None:
        for key in await opened.list_api_keys():
            created = datetime.datetime.fromtimestamp(key.created, datetime.UTC).strftime("%Y-%m-%d %H:%M")
            status = "valid" if key.revoked is None else "revoked"
            typer.echo(f"{key.id}\t{key.name}\t{key.user}\t{','.join(key.scopes)}\t{created}\t{status}")

    _with_store(store, listing)


@keys_cli.command("revoke")
def keys_revoke(
    key: Annotated[str, typer.Argument(help="The key's id or name")],
    store: StoreOption = None,
) -> None:
    """Revoke an API key: requests made with it get 401 from now on."""

    async def revoke(opened: Store) -> None:
        valid = [k for k in await opened.list_api_keys() if k.revoked is None and key in (k.id, k.name)]
        if not valid:
            raise PodiumError(f"no valid API key with id or name {key!r} (see podium keys list)")
        for found in valid:
            await opened.revoke_api_key(found.id)
            typer.echo(f"revoked {found.id} ({found.name})")

    _with_store(store, revoke)


@cli.command("mcp")
def mcp_(
    apps: Annotated[list[str], typer.Argument(help="Apps to serve, each as one MCP tool")],
    store: StoreOption = None,
) -> None:
    """Serve apps to an MCP client over stdio (Claude Desktop and the like). Needs the ``mcp`` extra."""
    from podium.mcp.server import serve_stdio

    try:
        asyncio.run(serve_stdio(apps, store))
    except PodiumError as exc:  # stdout is the protocol's: errors go to stderr
        raise _refused(exc) from None


@cli.command("graph")
def graph_(app: Annotated[str, typer.Argument(help="An example name, a .py file, or module:attribute")]) -> None:
    """Print a Mermaid drawing of an app's agents, tools and delegations."""
    from podium.graph import draw_app

    try:
        typer.echo(draw_app(app), nl=False)
    except PodiumError as exc:
        raise _refused(exc) from None


def main() -> None:
    """Entry point of the ``podium`` command.

    A command line that does not parse (an unknown option, a value out of range) is one ``error:`` line on stderr
    and exit status 2, like every other refused input.
    """
    if not sys.argv[1:]:
        cli()  # the help, exit status 2
    try:
        code = cli(standalone_mode=False)
    except typer.Abort:
        typer.echo("aborted", err=True)
        code = 1
    except typer.TyperException as exc:  # the command line does not parse
        context = getattr(exc, "ctx", None)
        where = f" (see {context.command_path} --help)" if context is not None else ""
        if exc.format_message().strip():  # a group called bare has shown its help already
            typer.echo(f"error: {exc.format_message()}{where}", err=True)
        code = 2
    sys.exit(code if isinstance(code, int) else 0)
