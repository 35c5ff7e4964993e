"""The pages on a server that requires API keys: they ask for one, keep it for the tab (or the device), send it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from tests.server.conftest import live_server
from tests.web.conftest import ConsoleErrors, run
from tests.web.echo_app import app as echo
from tests.web.test_chat import say

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser
REFUSED = "Failed to load resource: the server responded with a status of 401 (Unauthorized)"


def _key(path: Path) -> str:
    from podium.server.auth import new_api_key
    from podium.store.sqlite import SQLiteStore

    async def add() -> str:
        store = SQLiteStore(path)
        secret, key = new_api_key("alice-laptop", user="alice")
        await store.add_api_key(key)
        await store.close()
        return secret

    return run(add())


def _give_key(page: Page, key: str, *, remember: bool = False) -> None:
    from playwright.sync_api import expect

    dialog = page.get_by_role("dialog", name="API key")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Key").fill(key)
    if remember:
        dialog.get_by_label("Remember on this device").check()
    dialog.get_by_role("button", name="Use this key").click()


def test_the_pages_ask_for_an_api_key_and_send_it(page: Page, tmp_path: Path, console_errors: ConsoleErrors) -> None:
    from playwright.sync_api import expect

    from podium.server.auth import AuthConfig
    from podium.store.sqlite import SQLiteStore

    path = tmp_path / "keys.db"
    secret = _key(path)
    with live_server({"echo": echo}, SQLiteStore(path), auth=AuthConfig()) as url:
        assert httpx.get(f"{url}/").status_code == 200  # the pages need no key; the API does
        assert httpx.post(f"{url}/assistants/search", json={}).status_code == 401
        page.goto(f"{url}/")
        _give_key(page, "pdm_wrong_key")
        expect(page.get_by_role("dialog", name="API key")).to_contain_text("That key was refused")
        _give_key(page, secret)
        expect(page.locator("#app")).to_have_value("echo")
        expect(page.get_by_role("dialog", name="API key")).to_have_count(0)
        say(page, "hello with a key")
        expect(page.locator("#messages .msg.assistant > .body").last).to_have_text("You said: hello with a key")
        page.reload()  # kept for this tab
        expect(page.locator("#messages .msg.assistant > .body").last).to_have_text("You said: hello with a key")
        expect(page.get_by_role("dialog", name="API key")).to_have_count(0)

        other = page.context.browser.new_context()  # another tab starts without the key  # type: ignore[union-attr]
        tab = ConsoleErrors().watch(other.new_page())
        tab.goto(f"{url}/plan")
        assert (
            httpx.get(f"{url}/plans").status_code == 401
        )  # no plan app here: a caller without a key is told that first
        _give_key(tab, secret, remember=True)
        expect(tab.locator("#plans-empty")).to_have_text("No plans: this server serves no plan service app.")
        tab.reload()  # remembered on this device
        expect(tab.locator("#plans-empty")).to_be_visible()
        expect(tab.get_by_role("dialog", name="API key")).to_have_count(0)
        other.close()
    # the refused requests are the browser's own log lines; the page logs nothing else
    assert set(console_errors) == {REFUSED}
    console_errors.clear()
