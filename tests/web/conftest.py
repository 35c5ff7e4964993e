"""Browser tests of the pages: Debian's chromium driven by Playwright for Python, against a real server on loopback.

One headless browser per module (``executable_path`` is the system's chromium: nothing is downloaded), and each
module serves its apps with its own server. Not one per session: while Playwright's sync API is started it holds
an event loop as running in its thread, so the browser must be gone before the worker runs the asyncio tests of
other modules (and a browser test runs coroutines in another thread: :func:`run`). Every page a test opens must log no console error. Screenshots of each
page at 1280 px and 390 px go to ``tmp/artifacts/`` (git-ignored), kept by CI as test artifacts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

T = TypeVar("T")
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "tmp" / "artifacts"
WIDE, NARROW = {"width": 1280, "height": 900}, {"width": 390, "height": 844}


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end in a thread of its own (this thread's loop belongs to Playwright)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless chromium, shared by the browser tests of a module."""
    if not CHROMIUM.exists():
        pytest.skip("the browser tests need Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()


class ConsoleErrors(list[str]):
    """What a page logged as errors (console errors and uncaught exceptions)."""

    def watch(self, page: Page) -> Page:
        page.on("console", lambda message: self.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: self.append(f"uncaught: {error}"))
        return page


@pytest.fixture
def console_errors() -> ConsoleErrors:
    """The console errors of the pages a test opened with :func:`page`."""
    return ConsoleErrors()


@pytest.fixture
def page(browser: Browser, console_errors: ConsoleErrors) -> Iterator[Page]:
    """A fresh page (its own storage) at 1280 px; the test fails if the page logged a console error."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport=WIDE)
    context.set_default_timeout(20_000)
    expect.set_options(timeout=15_000)  # a loaded machine (CI beside other work) answers a re-plan in seconds
    yield console_errors.watch(context.new_page())
    context.close()
    assert list(console_errors) == [], f"console errors: {console_errors}"


def screenshots(page: Page, name: str) -> None:
    """Keep ``name`` at 1280 px and 390 px wide, and check the page fits 390 px without scrolling sideways."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}-1280.png", full_page=True)
    page.set_viewport_size(NARROW)
    page.screenshot(path=ARTIFACTS / f"{name}-390.png", full_page=True)
    width: Any = page.evaluate("document.documentElement.scrollWidth")
    page.set_viewport_size(WIDE)
    assert width <= NARROW["width"], f"{name} is {width} px wide at 390 px: it scrolls sideways"
