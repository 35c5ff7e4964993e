"""Fixtures for the MCP tests: the test server as a stdio subprocess or on streamable HTTP on loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from podium.mcp import MCPServer

SERVER = str(Path(__file__).parent / "weather_server.py")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_url() -> Iterator[str]:
    """The test server's streamable HTTP endpoint, served by a subprocess on loopback."""
    port = _free_port()
    process = subprocess.Popen([sys.executable, SERVER, "http", str(port)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("the MCP test server did not start") from None
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(10)


@pytest.fixture(params=["stdio", "http"])
async def weather(request: pytest.FixtureRequest) -> AsyncIterator[MCPServer]:
    """The connected test server, once per transport."""
    if request.param == "stdio":
        server = MCPServer.stdio("weather", sys.executable, [SERVER, "stdio"])
    else:
        server = MCPServer.http("weather", request.getfixturevalue("http_url"))
    async with server:
        yield server
