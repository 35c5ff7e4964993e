"""The chat page while things change under it: switching conversation mid-run, queued runs, a second tab, a failed
send, a server that dies mid-run and comes back, and the layout with a status line."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from tests.server.conftest import live_server
from tests.web.echo_app import app as echo
from tests.web.test_chat import say
from tests.web.test_restart import _free_port

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

LONG = "word " * 120  # its echo streams for about four seconds
LONG_REPLY = f"You said: {LONG.strip()}"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The echo app on one server (SQLite), for the whole module."""
    from podium.store.sqlite import SQLiteStore

    with live_server({"echo": echo}, SQLiteStore(tmp_path_factory.mktemp("live") / "live.db")) as base:
        yield base


def _thread(page: Page) -> str:
    return page.url.split("thread=")[1].split("&")[0]


def _wait_idle(url: str, thread: str) -> None:
    for _ in range(200):
        if httpx.get(f"{url}/threads/{thread}").json()["status"] != "busy":
            return
        time.sleep(0.1)
    raise AssertionError(f"thread {thread} is still busy")


def _start(page: Page, text: str) -> None:
    """Send ``text`` and return as soon as its reply streams."""
    from playwright.sync_api import expect

    page.fill("#input", text)
    page.press("#input", "Enter")
    expect(page.locator("#messages .msg.streaming")).to_have_count(1)


def test_switching_conversation_mid_run_keeps_each_conversation_apart(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/?app=echo")
    say(page, "words in B")
    threads, messages = page.locator("#threads li"), page.locator("#messages .msg")
    page.get_by_role("button", name="New").click()
    _start(page, LONG)  # thread A streams...
    a = _thread(page)
    threads.filter(has_text="words in B").get_by_role("button").click()  # ...while B is opened
    expect(page.locator("#thread-title")).to_have_text("words in B")
    expect(page.locator("#send")).to_be_enabled()  # A's run does not keep B busy
    page.wait_for_timeout(800)  # A goes on streaming meanwhile
    expect(messages).to_have_text(["words in B", "You said: words in B"])
    _wait_idle(url, a)
    expect(messages).to_have_count(2)  # A's end is drawn nowhere in B
    say(page, "more words in B")
    expect(page.locator("#messages .msg.user")).to_have_text(["words in B", "more words in B"])
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text(
        ["You said: words in B", "You said: more words in B"]
    )
    threads.filter(has_text="word word").get_by_role("button").click()  # and A holds its whole reply
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text([LONG_REPLY])

    _start(page, "again " + LONG)  # "New" while A streams
    page.get_by_role("button", name="New").click()
    expect(page.locator("#thread-title")).to_have_text("New conversation")
    _wait_idle(url, a)
    page.wait_for_timeout(300)
    expect(messages).to_have_count(0)
    expect(page.locator("#status")).to_be_hidden()  # no "no thread 'null'"
    say(page, "a new one")
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text(["You said: a new one"])
    assert _thread(page) != a


def test_a_page_opened_on_a_thread_with_a_queued_run_follows_the_running_one_first(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    thread = httpx.post(f"{url}/threads", json={"metadata": {"assistant_id": "echo", "graph_id": "echo"}}).json()
    for text in (LONG, "second, queued"):
        body = {"assistant_id": "echo", "input": {"messages": [{"role": "user", "content": text}]}}
        httpx.post(f"{url}/threads/{thread['thread_id']}/runs", json=body).raise_for_status()
    page.goto(f"{url}/?app=echo&thread={thread['thread_id']}")
    expect(page.locator("#messages .msg.streaming")).to_have_count(1)  # the running run is followed live
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text(
        [LONG_REPLY, "You said: second, queued"], timeout=30_000
    )
    expect(page.locator("#messages .msg.user")).to_have_text([LONG.strip(), "second, queued"])
    expect(page.locator("#send")).to_be_enabled()


def test_a_second_tab_catches_up_and_a_refused_send_refreshes_the_conversation(
    page: Page, url: str, console_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/?app=echo")
    say(page, "hello")
    other = _second_tab(page, console_errors)
    other.goto(page.url)
    expect(other.locator("#messages .msg")).to_have_count(2)
    say(page, "approve the purchase")  # the first tab asks a question
    expect(page.locator("#messages .msg.question")).to_contain_text("May I the purchase?")
    other.evaluate("window.dispatchEvent(new Event('focus'))")  # the second tab comes back into view
    expect(other.locator("#messages .msg.question")).to_contain_text("May I the purchase?")
    expect(other.locator("#hint")).to_have_text("The agent waits for one of: yes, no.")
    other.locator("#messages .msg.question").get_by_role("button", name="yes").click()
    expect(other.locator("#messages .msg.assistant > .body").last).to_contain_text("the purchase: done")
    assert other.evaluate("document.activeElement.id") == "input"  # focus goes back to the input, not the body

    page.evaluate("window.dispatchEvent(new Event('focus'))")  # the first tab learns the answer
    expect(page.locator("#messages .msg.assistant > .body").last).to_contain_text("the purchase: done")
    say(page, "approve the refund")  # a question the second tab does not know about
    other.fill("#input", "yes please")
    other.press("#input", "Enter")  # sent as new input: the server refuses it (409)
    expect(other.locator("#status")).to_have_text(
        "This conversation changed in another window. It is shown again as it is now: send your message again."
    )
    expect(other.locator("#messages .msg.question").last).to_contain_text("May I the refund?")
    expect(other.locator("#input")).to_have_value("yes please")  # what was typed is kept
    expect(other.locator("#send")).to_be_enabled()
    other.fill("#input", "no")
    other.press("#input", "Enter")  # now it answers the question
    expect(other.locator("#messages .msg.assistant > .body").last).to_contain_text("the refund: not done")
    # the progress note names the tool, not the id of its call
    expect(other.locator("#notes .note.progress .where").first).to_have_text("approve")
    assert [e for e in console_errors if "409" not in e] == []
    console_errors.clear()


def _second_tab(page: Page, console_errors: Any) -> Page:
    """A second tab of ``page``'s browser context whose console errors are kept with the first tab's."""
    other = page.context.new_page()
    other.on("console", lambda message: console_errors.append(message.text) if message.type == "error" else None)
    other.on("pageerror", lambda error: console_errors.append(f"uncaught: {error}"))
    return other


def test_a_first_message_with_an_emoji_at_the_title_cut_starts_a_conversation(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/?app=echo")
    text = "a" * 59 + "😀 emoji at the cut"
    say(page, text)
    expect(page.locator("#status")).to_be_hidden()
    expect(page.locator("#thread-title")).to_have_text("a" * 59 + "😀")
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text([f"You said: {text}"])


def test_the_page_reconnects_after_the_server_died_mid_run(
    page: Page, tmp_path: Path, console_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    from podium.store.sqlite import SQLiteStore

    path, port = tmp_path / "restart.db", _free_port()
    with live_server({"echo": echo}, SQLiteStore(path), port=port, grace=0.1) as url:
        page.clock.install()  # the page's timers, which the test may skip ahead
        page.goto(f"{url}/?app=echo")
        _start(page, LONG)
    # the server stopped mid-run: the page says it reconnects, and keeps no half-streamed reply
    expect(page.locator("#status")).to_contain_text("The connection to the server was lost. Reconnecting")
    expect(page.locator("#messages .msg.streaming")).to_have_count(0)
    with live_server({"echo": echo}, SQLiteStore(path), port=port):
        page.clock.fast_forward(20_000)  # the page's wait before its next try: skipped
        expect(page.locator("#status")).to_be_hidden()  # once the page reaches the server, whether the run ended or not
        expect(page.locator("#messages .msg.assistant > .body")).to_have_text([LONG_REPLY], timeout=30_000)
        expect(page.locator("#status")).to_be_hidden()
        expect(page.locator("#send")).to_be_enabled()
        say(page, "still there?")
        expect(page.locator("#messages .msg.assistant > .body").last).to_have_text("You said: still there?")
    assert {e for e in console_errors if "ERR_CONNECTION_REFUSED" not in e} == set()
    page.close()  # (a page left open may log one more refused retry before teardown)
    console_errors.clear()


def test_a_status_line_leaves_the_composer_in_the_window(page: Page, url: str) -> None:
    page.goto(f"{url}/?app=echo")
    page.evaluate("""() => {
        const line = document.getElementById("status");
        line.textContent = "A long status line. ".repeat(20);
        line.className = "status error";
        line.hidden = false;
    }""")
    box = page.locator("#send").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900, box
    assert page.evaluate("document.documentElement.scrollHeight") <= 900


def test_working_stays_under_what_the_run_says(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/?app=echo")
    _start(page, LONG)  # the reply streams: the user's message, the streaming reply, then "working…" last
    classes = page.locator("#messages .msg").evaluate_all("items => items.map(item => item.className)")
    assert classes[-3:] == ["msg user", "msg assistant streaming", "msg typing"], classes
    expect(page.locator("#messages .msg.assistant > .body").last).to_have_text(LONG_REPLY)
