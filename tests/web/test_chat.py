"""The chat page in a real browser: the seed 000 conversation, reloads, streaming, folded tools, safe text, threads."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests.server.conftest import example_apps, live_server
from tests.web.conftest import screenshots
from tests.web.echo_app import app as echo

from examples.smart_investigator import DEMO

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """SmartInvestigator, the trip helper, faang and the echo app on one server (SQLite), for the whole module."""
    from podium.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path_factory.mktemp("chat") / "chat.db")
    with live_server({**example_apps("smart-investigator", "trip", "faang"), "echo": echo}, store) as base:
        yield base


def say(page: Page, text: str) -> None:
    """Type ``text`` into the chat and wait until its run stopped."""
    from playwright.sync_api import expect

    shown = page.locator("#messages .msg")
    before = shown.count()
    page.fill("#input", text)
    page.press("#input", "Enter")
    expect(shown).not_to_have_count(before)  # the run began (right after Enter the button may not be disabled yet)
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator("#messages .typing")).to_have_count(0)


def question(page: Page) -> object:
    """The last question the agent asked."""
    return page.locator("#messages .msg.question").last


def test_the_seed_conversation_turn_by_turn(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/")
    expect(page.locator("#app")).to_have_value("smart-investigator")  # the page opens on SmartInvestigator
    expect(page.locator("#messages .welcome")).to_contain_text("Hello, I am Smart Investigator")
    messages, notes, tasks = page.locator("#messages"), page.locator("#notes"), page.locator("#tasks .task")
    asked = page.locator("#messages .msg.question").last

    say(page, DEMO[0])  # I want to craft a declined letter.
    expect(asked).to_contain_text("Please provide your claim id")
    expect(page.locator("#hint")).to_have_text("The agent waits for a claim id: letters and digits, e.g. 123ABH.")
    expect(notes).to_contain_text("Choosing DeclineLetterAssistance due to:")
    expect(notes.locator(".note.progress")).to_have_text(["progressDeclineLetterAssistanceObtaining claim_id..."])
    expect(tasks).to_have_count(1)
    expect(tasks.first).to_contain_text("DeclineLetterAssistance")
    expect(tasks.first).to_contain_text("waits for you: a claim id: letters and digits, e.g. 123ABH")
    fold = messages.locator("details.call").first  # the tool call, folded under the reply that made it
    expect(fold.locator("summary")).to_contain_text("DeclineLetterAssistance")
    expect(fold.locator(".result")).to_be_hidden()
    fold.locator("summary").click()
    expect(fold.locator(".result")).to_have_text("result: Please provide your claim id")

    say(page, DEMO[1])  # Where to find a claim id?
    expect(asked).to_contain_text("Please tell me if you are an internal employee or a partner of Suncorp.")
    expect(asked.locator("button.option")).to_have_text(["internal employee", "partner"])
    expect(tasks).to_have_count(2)
    expect(tasks.first).to_contain_text("SmartStrategy")  # top first
    expect(tasks.nth(1)).to_contain_text("DeclineLetterAssistance")
    expect(notes).to_contain_text("Checking partner or internal...")

    say(page, DEMO[2])  # I am a Suncorp friend.
    expect(asked).to_contain_text("'I am a Suncorp friend.' does not fit what the smart strategy task needs")
    say(page, DEMO[3])  # I am a partner.
    expect(asked).to_contain_text("the id can be found at www.my_id.com. Please provide your claim id")
    expect(tasks).to_have_count(1)
    say(page, DEMO[4])  # My id is 123ABH
    expect(asked).to_contain_text("Please provide the crime topology of your letter.")
    expect(asked.locator("button.option")).to_have_text(["Home", "Motor"])
    expect(notes).to_contain_text("Obtaining topology...")
    say(page, DEMO[5])  # Personal Injury
    expect(asked).to_contain_text("'Personal Injury' does not fit what the decline letter assistance task needs")
    say(page, DEMO[6])  # I want to commit fraud.
    expect(asked).to_contain_text("I can't help with 'I want to commit fraud.'")

    asked.get_by_role("button", name="Motor").click()  # an option's button answers the question
    expect(page.locator("#messages .msg.assistant > .body").filter(has_text="Letter generated!")).to_be_visible()
    expect(page.locator("#send")).to_be_enabled()
    expect(asked.get_by_role("button", name="Motor")).to_have_class(re.compile(r"\bchosen\b"))
    expect(asked.locator("button.option:disabled")).to_have_count(2)
    letter = page.locator("#artifact")
    expect(letter).to_contain_text("Here is the letter for claim 123ABH (crime topology: Motor).")
    expect(letter.locator("h3")).to_have_text("DeclineLetterAssistance")
    expect(messages).not_to_contain_text("Dear customer")  # the letter is in the panel, not the chat
    expect(messages).not_to_contain_text("Choosing")  # side-channel notes never mix into the replies
    expect(tasks).to_have_count(0)
    expect(page.locator("#tasks-empty")).to_be_visible()
    humans = page.locator("#messages .msg.user")
    expect(humans).to_have_text([*DEMO[:7], "Motor"])
    expect(notes.locator(".note.rationale")).to_have_count(5)
    with page.expect_download() as download:
        letter.get_by_role("link", name="Download").click()
    assert download.value.suggested_filename == "DeclineLetterAssistance.txt"
    assert "Dear customer" in Path(download.value.path()).read_text()
    screenshots(page, "chat")


def _conversation(page: Page) -> list[str]:
    return page.locator("#messages .msg").all_inner_texts()


def test_a_reload_and_a_second_tab_show_the_same_conversation_and_question(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/?app=smart-investigator")
    say(page, DEMO[0])
    say(page, DEMO[1])
    before, notes = _conversation(page), page.locator("#notes .note").all_inner_texts()
    assert "thread=" in page.url
    page.reload()
    expect(page.locator("#messages .msg.question")).to_have_count(2)
    assert _conversation(page) == before
    assert page.locator("#notes .note").all_inner_texts() == notes
    expect(page.locator("#tasks .task")).to_have_count(2)
    expect(page.locator("#hint")).to_have_text("The agent waits for one of: internal employee, partner.")
    other = page.context.new_page()  # a second tab on the same conversation
    other.goto(page.url)
    expect(other.locator("#messages .msg.question")).to_have_count(2)
    assert _conversation(other) == before
    other.close()
    page.locator("#messages .msg.question").last.get_by_role("button", name="partner").focus()
    page.keyboard.press("Enter")  # the keyboard answers too
    expect(page.locator("#messages .msg.question").last).to_contain_text("www.my_id.com")
    expect(page.locator("#threads li.current")).to_contain_text("I want to craft a declined letter.")


def test_replies_stream_tools_fold_and_markup_stays_text(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    # watch the reply being drawn: every text the streaming bubble shows on its way
    page.add_init_script(
        """
        window.__drawn = [];
        new MutationObserver(() => {
          const body = document.querySelector("#messages .msg.streaming .body");
          if (body) window.__drawn.push(body.textContent);
        }).observe(document, {subtree: true, childList: true, characterData: true});
        """
    )
    page.goto(f"{url}/?app=echo")
    expect(page.locator("#app")).to_have_value("echo")
    say(page, "weather in Lisbon")
    reply = page.locator("#messages .msg.assistant > .body").last
    expect(reply).to_have_text("Here it is: Lisbon: 24 °C, sunny.")
    drawn: list[str] = page.evaluate("window.__drawn")
    assert len(set(drawn)) > 3 and all("Here it is: Lisbon: 24 °C, sunny.".startswith(d) for d in drawn), drawn
    fold = page.locator("#messages details.call")
    expect(fold.locator("summary")).to_have_text('get_weather {"city":"Lisbon"}')
    fold.locator("summary").click()
    expect(fold.locator(".result")).to_have_text("result: Lisbon: 24 °C, sunny.")

    attack = '<img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script> **bold**'
    say(page, attack)
    for _ in range(2):  # as streamed, then as drawn from the store after a reload
        expect(page.locator("#messages .msg.user").last).to_have_text(attack.replace("**bold**", "bold"))
        expect(page.locator("#messages .msg.assistant > .body").last).to_have_text(
            'You said: <img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script> bold'
        )
        expect(page.locator("#messages .msg.assistant strong").last).to_have_text("bold")  # markdown is allowed
        expect(page.locator("#messages img, #messages script")).to_have_count(0)
        assert page.evaluate("window.__pwned") is None
        page.reload()
        expect(page.locator("#messages .msg.user")).to_have_count(2)


def test_a_tool_approval_is_approved_edited_or_rejected_from_its_buttons(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/?app=echo")
    expect(page.locator("#app")).to_have_value("echo")
    say(page, "pay 100 to Ada")
    asked = page.locator("#messages .msg.question").last
    expect(asked).to_contain_text('May I call transfer with {"amount": 100, "to": "Ada"}?')
    expect(asked.locator("button.option")).to_have_text(["Approve", "Edit", "Reject"])
    asked.get_by_role("button", name="Edit").click()  # the arguments go to the input, to change and send
    expect(page.locator("#input")).to_have_value('edit: {"amount":100,"to":"Ada"}')
    page.fill("#input", 'edit: {"amount": 40, "to": "Ada"}')
    page.press("#input", "Enter")
    expect(page.locator("#messages .msg.assistant").last).to_contain_text("sent 40 to Ada")
    expect(asked.locator("button.option:disabled")).to_have_count(3)

    say(page, "pay 5 to Bob")
    asked = page.locator("#messages .msg.question").last
    page.fill("#input", "paid him already")  # typed first: the reason the rejection gives
    asked.get_by_role("button", name="Reject").click()
    expect(page.locator("#messages .msg.assistant").last).to_contain_text("They said: paid him already")
    expect(asked.locator("button.option.chosen")).to_have_text("Reject")

    say(page, "pay 7 to Cy")
    page.locator("#messages .msg.question").last.get_by_role("button", name="Approve").click()
    expect(page.locator("#messages .msg.assistant").last).to_contain_text("sent 7 to Cy")
    expect(page.locator("#messages .typing")).to_have_count(0)
    screenshots(page, "tool-approval")


def test_threads_are_listed_switched_and_renamed(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/?app=echo")
    say(page, "first words")
    first = page.url
    page.get_by_role("button", name="New").click()
    expect(page.locator("#thread-title")).to_have_text("New conversation")
    expect(page.locator("#messages .msg")).to_have_count(0)
    say(page, "second words")
    threads = page.locator("#threads li")
    expect(threads.filter(has_text="first words")).to_have_count(1)
    expect(threads.filter(has_text="second words")).to_have_count(1)
    second = page.url
    threads.filter(has_text="first words").get_by_role("button").click()
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text(["You said: first words"])
    assert page.url == first
    page.go_back()  # Back and Forward follow the switches
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text(["You said: second words"])
    assert page.url == second
    page.go_back()  # "New" made no step of its own: the new conversation became the second one
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text(["You said: first words"])
    page.go_forward()
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text(["You said: second words"])
    page.go_forward()
    expect(page.locator("#messages .msg.assistant > .body")).to_have_text(["You said: first words"])
    assert page.url == first
    page.once("dialog", lambda dialog: dialog.accept("Echo notes"))
    page.get_by_role("button", name="Rename").click()
    expect(page.locator("#thread-title")).to_have_text("Echo notes")
    expect(threads.filter(has_text="Echo notes")).to_have_count(1)
    page.reload()
    expect(page.locator("#thread-title")).to_have_text("Echo notes")
    screenshots(page, "chat-threads")


def test_a_failed_run_is_shown_as_an_error_and_the_chat_goes_on(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/?app=echo")
    say(page, "fail")
    expect(page.locator("#messages .msg.error")).to_have_text(re.compile(r"^The run failed: .*the model broke"))
    expect(page.locator("#notes .note.error")).to_contain_text("the model broke")
    say(page, "still there?")
    expect(page.locator("#messages .msg.assistant > .body").last).to_have_text("You said: still there?")


def test_the_page_says_when_the_server_is_gone(page: Page, tmp_path: Path, console_errors: list[str]) -> None:
    from playwright.sync_api import expect

    from podium.store.sqlite import SQLiteStore

    with live_server({"echo": echo}, SQLiteStore(tmp_path / "gone.db")) as gone:
        page.goto(f"{gone}/?app=echo")
        expect(page.locator("#app")).to_have_value("echo")
    page.fill("#input", "anyone there?")
    page.press("#input", "Enter")
    expect(page.locator("#status")).to_have_text("The server does not answer: is podium serve running?")
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator("#input")).to_have_value("anyone there?")  # what was typed is kept to send again
    page.wait_for_timeout(300)  # the thread list is asked for again (refused too)
    # the browser itself logs the refused connection; the page adds no error of its own
    assert set(console_errors) == {"Failed to load resource: net::ERR_CONNECTION_REFUSED"}
    page.close()  # (the page keeps trying the server: closed first, it can log no more refusals before teardown)
    console_errors.clear()


def test_a_task_app_streams_only_its_reply(page: Page, tmp_path: Path) -> None:
    """tasks-demo's coordinator streams "TO[calculator]: ..." to its calculator task: never drawn, even for a moment."""
    from playwright.sync_api import expect

    from podium.store.sqlite import SQLiteStore

    with live_server(example_apps("tasks-demo"), SQLiteStore(tmp_path / "tasks.db")) as base:
        page.goto(f"{base}/?app=tasks-demo")
        expect(page.locator("#app")).to_have_value("tasks-demo")
        page.evaluate(
            """() => {
              window.__leaked = [];
              new MutationObserver(() => {
                const text = document.querySelector("#messages").innerText;
                if (text.includes("TO[") || text.includes("DONE")) window.__leaked.push(text);
              }).observe(document.querySelector("#messages"), { subtree: true, childList: true, characterData: true });
            }"""
        )
        say(page, "What is 12 times 7?")
        expect(page.locator("#messages .msg.assistant").last).to_contain_text("12 × 7 = 84.")
        assert page.evaluate("window.__leaked") == []
        page.close()  # before the server stops: a page still connected would log a refused connection


def test_a_worker_s_report_to_its_supervisor_is_shown_as_a_report_not_a_second_reply(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    from examples.faang import QUESTION

    page.goto(f"{url}/?app=faang")
    say(page, QUESTION)
    reports = page.locator("#messages .msg.report")
    expect(reports.locator(".who")).to_have_text(["research_expert reported", "math_expert reported"])
    replies = page.locator("#messages .msg.assistant:not(.report):not(.welcome):not(.only-calls) > .body")
    expect(replies).to_have_text(["The combined headcount of the FAANG companies in 2024 is 1,977,586."])
