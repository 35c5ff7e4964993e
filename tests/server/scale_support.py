"""Several real ``podium serve`` processes on one PostgreSQL schema, and a TCP proxy that can cut one off.

``servers(n, ...)`` starts them (``tests/server/scale_app.py`` on free loopback ports) and stops them afterwards;
``Proxy`` forwards a port to PostgreSQL until :meth:`Proxy.cut`, which drops every connection and refuses new ones
(a network partition of the processes that connect through it) until :meth:`Proxy.restore`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

APP = str(Path(__file__).with_name("scale_app.py"))


def free_port() -> int:
    """A loopback port nobody listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def schema_url(url: str, schema: str, *, port: int | None = None) -> str:
    """``url`` with the schema as the connections' search path (created first), optionally through another port."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    parts = urlsplit(url)
    netloc = parts.netloc if port is None else f"{parts.netloc.rpartition(':')[0]}:{port}"
    query = (parts.query + "&" if parts.query else "") + "options=" + quote(f"-csearch_path={schema}")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


@dataclass
class Server:
    """One ``podium serve`` process."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, as when a host dies."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)


def start(store: str, log_dir: Path, name: str, env: dict[str, str], lease_ttl: float = 3.0) -> Server:
    """Start one server process on a free port (it answers once :func:`ready` says so)."""
    port = free_port()
    log = log_dir / f"{name}.log"
    command = [sys.executable, "-m", "podium", "serve", APP, "--port", str(port), "--store", store]
    command += ["--lease-ttl", str(lease_ttl), "--log-level", "warning"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)
    return Server(url=f"http://127.0.0.1:{port}", process=process, log=log)


def ready(servers: list[Server], timeout: float = 120.0) -> None:
    """Wait until every server answers ``/health`` (processes start slowly on a busy machine)."""
    deadline = time.monotonic() + timeout
    for server in servers:
        while True:
            assert server.process.poll() is None, server.log.read_text()
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(server.url + "/health", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, f"{server.url} did not start: {server.log.read_text()}"
            time.sleep(0.2)


@contextlib.contextmanager
def servers(stores: list[str], log_dir: Path, env: dict[str, str], lease_ttl: float = 3.0) -> Iterator[list[Server]]:
    """One server per store URL (the same database, possibly through proxies), stopped when the block ends."""
    started = [start(store, log_dir, f"server{i}", env, lease_ttl) for i, store in enumerate(stores)]
    try:
        ready(started)
        yield started
    finally:
        for server in started:
            if server.process.poll() is None:
                server.process.terminate()
        for server in started:
            try:
                server.process.wait(20)
            except subprocess.TimeoutExpired:
                server.kill()


def log_lines(path: Path) -> list[tuple[str, int, str, int]]:
    """The ``(what, pid, run_id, step)`` lines the app's steps wrote."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        what, pid, run_id, n = line.split()
        out.append((what, int(pid), run_id, int(n)))
    return out


def sql(url: str, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """One statement on a connection of its own."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(query, params)
        return cursor.fetchall() if cursor.description else []


class Proxy:
    """Forwards a loopback port to ``target`` (host, port) until cut."""

    def __init__(self, target: tuple[str, int]) -> None:
        """Listen on a free loopback port (``self.port``)."""
        self.target = target
        self.port = free_port()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        """Accept connections again."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Drop every connection and refuse new ones."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
