"""The plan page in a real browser: a plan approved step by step (one step rejected, one edited), followed live;
approve all; the planner's clarification question answered."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from tests.server.conftest import example_apps, live_server
from tests.web.conftest import screenshots
from tests.web.test_restart import _free_port

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The plan service example on one server (SQLite), for the whole module."""
    from podium.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path_factory.mktemp("plan") / "plan.db")
    with live_server(example_apps("plan-service"), store) as base:
        yield base


def _plan(page: Page, task: str) -> None:
    page.fill("#task", task)
    page.press("#task", "Enter")


def test_a_plan_approved_step_by_step_with_a_rejection_and_an_edit_updates_live(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/plan")
    expect(page.locator("#plans-empty")).to_be_visible()
    page.evaluate("window.__sameDocument = true")  # a reload would lose it: every change below arrives live
    _plan(page, "onboard Jessica Smith next week")
    steps = page.locator("#steps .step")
    expect(steps).to_have_count(6)
    expect(page.locator("#goal")).to_have_text("onboard Jessica Smith next week")
    expect(page.locator("#plan-status")).to_have_text("in progress")
    expect(steps.locator(".agent")).to_have_text(["HrAgent"] * 4 + ["TechSupportAgent"] * 2)
    expect(steps.locator(".state")).to_have_text(["awaiting feedback"] + ["planned"] * 5)
    expect(steps.nth(1).get_by_role("button", name="Approve", exact=True)).to_be_hidden()  # only the waiting step
    expect(page.locator("#planner-said")).to_contain_text("Plan v1: 6 steps by HrAgent, TechSupportAgent.")

    steps.nth(0).get_by_role("button", name="Approve", exact=True).click()
    expect(steps.nth(0).locator(".state")).to_have_text("completed")
    expect(steps.nth(0).locator(".said")).to_contain_text("HrAgent: [demo stand-in, nothing was changed] Would create")
    expect(steps.nth(1).locator(".state")).to_have_text("awaiting feedback")

    steps.nth(1).get_by_role("button", name="Reject", exact=True).click()
    steps.nth(1).get_by_label("Why reject this step?").fill("The agency runs payroll")
    steps.nth(1).get_by_role("button", name="Reject step").click()
    expect(steps.nth(1).locator(".state")).to_have_text("rejected")
    expect(steps.nth(1).locator(".feedback")).to_have_text("Your comment: The agency runs payroll")
    expect(steps.nth(2).locator(".state")).to_have_text("awaiting feedback")

    edited = "Enroll Jessica Smith in the pension plan only [enroll_in_benefits]"
    steps.nth(2).get_by_role("button", name="Edit").click()
    steps.nth(2).get_by_label("New action").fill(edited)
    steps.nth(2).get_by_role("button", name="Approve edited action").click()
    expect(steps.nth(2).locator(".state")).to_have_text("completed")
    expect(steps.nth(2).locator(".action")).to_have_text(edited)
    expect(steps.nth(2).locator(".feedback")).to_contain_text("Edited from: Enroll in health and pension benefits")
    expect(steps.nth(2).locator(".said")).to_contain_text("Would enroll")

    for index in (3, 4, 5):
        expect(steps.nth(index).locator(".state")).to_have_text("awaiting feedback")
        steps.nth(index).get_by_role("button", name="Approve", exact=True).click()
        expect(steps.nth(index).locator(".state")).to_have_text("completed")
    expect(page.locator("#plan-status")).to_have_text("completed")
    expect(page.locator("#summary")).to_have_text(
        "6 steps by HrAgent, TechSupportAgent. 5 of 6 steps done, 1 rejected."
    )
    expect(steps.locator(".state")).to_have_text(["completed", "rejected"] + ["completed"] * 4)
    expect(page.locator("#plans li.current")).to_contain_text("onboard Jessica Smith")
    expect(page.locator("#plans li.current .badge")).to_have_text("completed")
    assert page.evaluate("window.__sameDocument") is True
    screenshots(page, "plan")

    session = page.url.split("session=")[1].split("&")[0]
    stored = httpx.get(f"{url}/plans", params={"session_id": session}).json()[0]["steps"]
    assert [s["status"] for s in stored] == ["completed", "rejected"] + ["completed"] * 4
    assert stored[1]["human_feedback"] == "The agency runs payroll" and stored[2]["updated_action"] == edited
    page.reload()  # and a reload shows the same plan
    expect(steps.locator(".state")).to_have_text(["completed", "rejected"] + ["completed"] * 4)


def test_a_clarification_re_plans_and_approve_all_runs_every_step(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/plan")
    _plan(page, "onboard")
    expect(page.locator("#clarify")).to_be_visible()
    expect(page.locator("#clarify-question")).not_to_be_empty()
    expect(page.locator("#version")).to_have_text("version 1")
    page.get_by_label("Clarification").fill("Jessica Smith joins as a new employee on 2026-12-01")
    page.locator("#clarify").get_by_role("button", name="Send").click()
    expect(page.locator("#version")).to_have_text("version 2")
    steps = page.locator("#steps .step")
    expect(steps.first.locator(".state")).to_have_text("awaiting feedback")
    expect(steps.first.locator(".action")).to_contain_text("Jessica Smith")
    page.get_by_role("button", name="Approve all").click()
    expect(page.locator("#plan-status")).to_have_text("completed")
    for state in steps.locator(".state").all_inner_texts():
        assert state == "completed"
    listed = page.locator("#plans li.current")  # the session's newest version, with its status
    expect(listed).to_have_text(re.compile(r"^onboard.* v2$"))
    expect(listed.locator(".badge")).to_have_text("completed")


def test_a_plan_whose_every_step_is_rejected_shows_rejected(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/plan")
    _plan(page, "Reset the password of Ada Lovelace")
    step = page.locator("#steps .step").first
    step.get_by_role("button", name="Reject", exact=True).click()
    step.get_by_label("Why reject this step?").fill("She reset it herself")
    step.get_by_role("button", name="Reject step").click()
    expect(page.locator("#plan-status")).to_have_text("rejected")
    expect(page.locator("#plan-reason")).to_have_text("Why: nothing was done (step rejected)")
    expect(page.locator("#summary")).to_contain_text("0 of 1 steps done, 1 rejected.")
    expect(page.locator("#plans li.current .badge")).to_have_text("rejected")


def test_a_decided_step_never_offers_its_buttons_again(page: Page, url: str) -> None:
    """The server takes a verdict before the step moves on, so the plan read right after it may still show the step
    waiting (served here twice, as a slow step would): its buttons stay off all the same."""
    from playwright.sync_api import Route, expect

    stale: dict[str, str] = {}
    served = {"stale": 0}

    def plans(route: Route) -> None:
        if stale.get("body") is not None and served["stale"] < 2:
            served["stale"] += 1
            route.fulfill(status=200, content_type="application/json", body=stale["body"])
            return
        route.continue_()

    page.goto(f"{url}/plan")
    _plan(page, "Reset the password of Ada Lovelace and order a laptop for her")
    first = page.locator("#steps .step").first
    expect(first.get_by_role("button", name="Approve", exact=True)).to_be_enabled()
    session = re.search(r"session=([^&]+)", page.url)
    assert session is not None
    stale["body"] = httpx.get(f"{url}/plans", params={"session_id": session.group(1)}).text  # the step waiting
    page.route(re.compile(r".*/plans\?session_id=.*"), plans)
    page.evaluate(
        """() => {
          window.__offered = 0;
          const item = document.querySelector("#steps .step");
          item.querySelector("button.approve").addEventListener("click", () => {
            const seen = () => {
              const again = item.querySelector("button.approve");
              if (again && !again.disabled && !again.closest(".buttons").hidden) window.__offered++;
            };
            new MutationObserver(seen).observe(item, { subtree: true, attributes: true, childList: true });
          });
        }"""
    )
    first.get_by_role("button", name="Approve", exact=True).click()
    expect(first.locator(".state")).to_have_text("completed")
    assert served["stale"] == 2
    assert page.evaluate("window.__offered") == 0


def test_back_and_forward_follow_the_plans_shown(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/plan")
    _plan(page, "Reset the password of Grace Hopper")
    expect(page.locator("#steps .step .action").first).to_contain_text("Grace Hopper")
    _plan(page, "Reset the password of Alan Turing")
    expect(page.locator("#steps .step .action").first).to_contain_text("Alan Turing")
    page.go_back()
    expect(page.locator("#steps .step .action").first).to_contain_text("Grace Hopper")
    expect(page.locator("#plans li.current")).to_contain_text("Grace Hopper")
    page.go_forward()
    expect(page.locator("#steps .step .action").first).to_contain_text("Alan Turing")
    page.go_back()
    page.go_back()  # the page before any plan: the task box again
    expect(page.locator("#steps .step")).to_have_count(0)
    expect(page.locator("#task")).to_be_visible()


def test_the_planner_can_be_answered_again_after_an_answer(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/plan")
    _plan(page, "asdf qwerty zxcv")
    expect(page.locator("#version")).to_have_text("version 1")
    send = page.locator("#clarify").get_by_role("button", name="Send")
    page.get_by_label("Clarification").fill("lorem ipsum dolor")
    send.click()
    expect(page.locator("#version")).to_have_text("version 2")
    expect(page.locator("#clarify")).to_be_visible()  # the planner asks again: its question can be answered
    expect(send).to_be_enabled()
    page.get_by_label("Clarification").fill("onboard Jessica Smith next week")
    page.press("#clarify-answer", "Enter")
    expect(page.locator("#version")).to_have_text("version 3")
    page.locator("#add-info summary").click()
    expect(page.get_by_role("button", name="Re-plan")).to_be_enabled()


def test_a_stop_typed_as_information_stops_the_plan(page: Page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/plan")
    _plan(page, "Onboard Jessica Smith, who starts next week")
    expect(page.locator("#plan-status")).to_have_text("in progress")
    page.locator("#add-info summary").click()
    page.get_by_label("More information").fill("ok stop here")
    page.get_by_role("button", name="Re-plan").click()
    expect(page.locator("#plan-status")).to_have_text("stopped")  # not a plan rejected or done to its end
    expect(page.locator("#plans li.current .badge")).to_have_text("stopped")
    expect(page.locator("#version")).to_have_text("version 1")  # stopped, not planned again
    expect(page.locator("#steps .step .state").first).to_have_text("rejected")
    expect(page.locator("#steps .step .feedback").first).to_have_text("The plan was stopped here.")


def test_an_answer_typed_while_the_last_one_is_taken_is_kept(page: Page, url: str) -> None:
    """The plan's reads after a clarification come back slowly (1.5 s each): the next answer, typed meanwhile, is
    still in its box when the first one has been taken."""
    from playwright.sync_api import expect

    page.goto(f"{url}/plan")
    _plan(page, "asdf qwerty zxcv")
    expect(page.locator("#version")).to_have_text("version 1")
    page.evaluate(
        """() => {
          const fetched = window.fetch;
          window.fetch = async (...args) => {
            const answer = await fetched(...args);
            if (String(args[0]).includes("/plans?session_id=")) await new Promise((r) => setTimeout(r, 1500));
            return answer;
          };
        }"""
    )
    box = page.get_by_label("Clarification")
    box.fill("lorem ipsum dolor")
    page.locator("#clarify").get_by_role("button", name="Send").click()
    expect(page.locator("#version")).to_have_text("version 2")  # the first read after the answer: still slow ones due
    box.fill("onboard Jessica Smith next week")
    page.wait_for_timeout(3500)  # the reads the first answer made have all come back by now
    expect(box).to_have_value("onboard Jessica Smith next week")


def test_the_server_error_goes_once_the_server_is_back(page: Page, tmp_path: Path, console_errors: list[str]) -> None:
    from playwright.sync_api import expect

    from podium.store.sqlite import SQLiteStore

    path, port = tmp_path / "plans.db", _free_port()
    with live_server(example_apps("plan-service"), SQLiteStore(path), port=port) as base:
        page.goto(f"{base}/plan")
        _plan(page, "onboard Jessica Smith next week")
        expect(page.locator("#steps .step")).to_have_count(6)
    expect(page.locator("#status")).to_have_text("The server does not answer: is podium serve running?")
    with live_server(example_apps("plan-service"), SQLiteStore(path), port=port):
        expect(page.locator("#status")).to_be_hidden()
        expect(page.locator("#steps .step").first.get_by_role("button", name="Approve", exact=True)).to_be_enabled()
    assert set(console_errors) == {"Failed to load resource: net::ERR_CONNECTION_REFUSED"}
    page.close()  # (a page left open may log one more refused retry before teardown)
    console_errors.clear()
