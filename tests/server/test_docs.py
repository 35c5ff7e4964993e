"""The curl and langgraph-sdk examples of ``docs/server.md`` run against a live server and say what the page says."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

DOC = (Path(__file__).parents[2] / "docs" / "server.md").read_text(encoding="utf-8")
DOC_URL = "http://127.0.0.1:8000"


def test_the_curl_block_runs(server: str) -> None:
    block = next(b for b in re.findall(r"```bash\n(.*?)```", DOC, re.S) if "curl" in b)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.replace(DOC_URL, server)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "event: metadata"
    assert lines[-3:] == [
        "Today in Lisbon: 24 °C, sunny.",
        "Save this note to your trip notebook: 'pack sunglasses for Lisbon'?",
        "Done: Saved to the trip notebook: pack sunglasses for Lisbon",
    ]


def test_the_sdk_block_runs(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", DOC, re.S) if "langgraph_sdk" in b]
    exec(compile(block.replace(DOC_URL, server), "docs/server.md", "exec"), {"__name__": "docs"})
    assert capsys.readouterr().out.splitlines() == [
        "Save this note to your trip notebook: 'umbrella for Paris'? ['yes', 'no']",
        "Fine, I did not save it.",
    ]


def test_the_openai_block_runs(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", DOC, re.S) if "from openai import" in b]
    exec(compile(block.replace(DOC_URL, server), "docs/server.md", "exec"), {"__name__": "docs"})
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == [
        "Save this note to your trip notebook: 'pack sunglasses for Lisbon'? [yes / no]",
        "Done: Saved to the trip notebook: pack sunglasses for Lisbon",
    ]
    assert "trip" in lines[0]
