"""``podium serve`` as a real process: it starts, serves, stops, and refuses what it cannot serve."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from podium.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_process(*args: str, store: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``podium serve ARGS`` on a free port; yields the process and its base URL once it answers."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "podium", "serve", *args, "--port", str(port), "--store", str(store)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, process.communicate()
            try:
                httpx.get(f"{url}/assistants/trip", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "podium serve did not start"
                time.sleep(0.1)
        yield process, url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=15)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hang is the failure reported
            process.kill()
            process.communicate()
            raise


def test_serve_runs_the_named_apps_and_stops_on_sigint(tmp_path: Path) -> None:
    with serve_process("trip", store=tmp_path / "s.db") as (process, url):
        names = [a["assistant_id"] for a in httpx.post(f"{url}/assistants/search", json={}).json()]
        assert names == ["trip"]
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=15)
        assert process.returncode == 0, err
        assert "serving trip on http://127.0.0.1" in err


def test_serve_refuses_an_unknown_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    done = CliRunner().invoke(cli, ["serve", "nope", "--store", str(tmp_path / "s.db")])
    assert done.exit_code == 2
    assert "no app 'nope'" in done.output


def test_serve_without_examples_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, ["serve", "--store", str(tmp_path / "s.db")])
    assert done.exit_code == 2
    assert "no apps to serve" in done.output
