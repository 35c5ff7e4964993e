"""The API docs page at ``/docs``: a file of the package that lists the routes from ``/openapi.json``, offline (no
CDN, nothing fetched from elsewhere), in the browser and over HTTP."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest
from tests.server.conftest import example_apps, live_server
from tests.web.conftest import screenshots

from podium.store.memory import MemoryStore

if TYPE_CHECKING:
    from playwright.sync_api import Page


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_server(example_apps("trip"), MemoryStore()) as served:
        yield served


def test_the_docs_page_is_the_packages_own_file_and_names_no_other_host(url: str) -> None:
    from podium.server.pages import STATIC

    with httpx.Client(base_url=url) as client:
        page = client.get("/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert page.text == (STATIC / "api.html").read_text()
        for text in (page.text, client.get("/static/api.js").text):
            assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.IGNORECASE), "an external URL"
        assert client.get("/redoc").status_code == 404  # (FastAPI's, from a CDN too)
        assert "/docs" not in client.get("/openapi.json").json()["paths"]


@pytest.mark.browser
def test_the_docs_page_lists_every_route_with_its_methods_summary_and_parameters(url: str, page: Page) -> None:
    from playwright.sync_api import expect

    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{url}/docs")
    schema = httpx.get(f"{url}/openapi.json").json()
    routes = page.locator("section.route")
    expect(routes).to_have_count(sum(len(methods) for methods in schema["paths"].values()))
    wait = page.locator("section.route", has_text="POST /threads/{thread_id}/runs/wait")
    expect(wait).to_have_count(1)
    expect(wait).to_contain_text(schema["paths"]["/threads/{thread_id}/runs/wait"]["post"]["summary"])
    expect(wait.locator(".param", has_text="thread_id")).to_contain_text("path")
    expect(wait).to_contain_text("RunCreate")  # the request body's schema
    expect(page.locator("header")).to_contain_text(f"Podium {schema['info']['version']}")
    assert all(address.startswith(url) for address in requested), requested
    screenshots(page, "api-docs")
