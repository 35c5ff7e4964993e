"""A lean HTTP/1.1 client for the benches' load: one POST per connection, nothing pooled.

httpx's connection pool spends more CPU per request at a thousand connections than the servers measured, so a
bench driving it would measure its client (a bare FastAPI endpoint fell to about 40 requests/s on 2 cores).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

__all__ = ["post"]


async def post(base: str, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
    """POST ``body`` as JSON to ``base`` (``http://host:port``) + ``path``: the status and the body (by length or
    chunked)."""
    host, _, port = base.removeprefix("http://").partition(":")
    reader, writer = await asyncio.open_connection(host, int(port or 80))
    try:
        data = json.dumps(body).encode()
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )
        await writer.drain()
        status = int((await reader.readline()).split()[1])
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding") == "chunked":
            chunks = []
            while size := int((await reader.readline()).strip() or b"0", 16):
                chunks.append(await reader.readexactly(size))
                await reader.readline()
            return status, b"".join(chunks)
        if "content-length" in headers:
            return status, await reader.readexactly(int(headers["content-length"]))
        return status, await reader.read()
    finally:
        writer.close()
