"""Fixtures of the model tests: a local stand-in for the chat-completions API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.models.openai_standin import StandIn


@pytest.fixture
def standin() -> Iterator[StandIn]:
    """A chat-completions stand-in on a random loopback port, with an empty script."""
    with StandIn() as server:
        yield server
