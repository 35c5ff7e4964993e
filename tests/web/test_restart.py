"""The chat page across a server restart: the same conversation and the same pending question, still answerable."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests.server.conftest import example_apps, live_server
from tests.web.test_chat import say

from examples.smart_investigator import DEMO

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_server_restart_shows_the_same_conversation_and_pending_question(page: Page, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from podium.store.sqlite import SQLiteStore

    path, port = tmp_path / "restart.db", _free_port()
    with live_server(example_apps("smart-investigator"), SQLiteStore(path), port=port) as url:
        page.goto(f"{url}/")
        say(page, DEMO[0])
        say(page, DEMO[1])
        before = page.locator("#messages .msg").all_inner_texts()
        notes = page.locator("#notes .note").all_inner_texts()
    with live_server(example_apps("smart-investigator"), SQLiteStore(path), port=port):
        page.reload()
        asked = page.locator("#messages .msg.question").last
        expect(asked).to_contain_text("Please tell me if you are an internal employee or a partner of Suncorp.")
        assert page.locator("#messages .msg").all_inner_texts() == before
        assert page.locator("#notes .note").all_inner_texts() == notes
        expect(page.locator("#tasks .task")).to_have_count(2)
        expect(page.locator("#threads li.current .badge")).to_have_text("waiting for you")
        asked.get_by_role("button", name="partner").click()  # the question is still answerable
        expect(page.locator("#messages .msg.question").last).to_contain_text("www.my_id.com")
        expect(page.locator("#send")).to_be_enabled()
