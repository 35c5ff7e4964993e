"""What the pages need from the server, without a browser: the files served with their headers, a thread's events."""

from __future__ import annotations

import httpx
from tests.server.conftest import example_apps, live_server

from podium.store.memory import MemoryStore


def test_the_pages_and_their_files_are_served_from_the_package_with_a_strict_policy() -> None:
    from podium.server.pages import STATIC

    with live_server(example_apps("trip"), MemoryStore()) as url, httpx.Client(base_url=url) as client:
        for path, marker in (("/", "/static/chat.js"), ("/plan", "/static/plan.js")):
            page = client.get(path)
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            assert marker in page.text
            assert "script-src 'self'" in page.headers["content-security-policy"]
        for name in ("chat.js", "plan.js", "common.js", "style.css"):
            served = client.get(f"/static/{name}")
            assert served.status_code == 200 and served.text == (STATIC / name).read_text()
            assert served.headers["x-content-type-options"] == "nosniff"
        assert client.get("/static/missing.js").status_code == 404
        assert "/" not in client.get("/openapi.json").json()["paths"]  # pages are not API routes


def test_a_threads_stored_events_in_order_after_a_seq() -> None:
    with live_server(example_apps("trip"), MemoryStore()) as url, httpx.Client(base_url=url, timeout=30) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        ask = {"messages": [{"role": "user", "content": "Save a note: pack sunglasses for Lisbon"}]}
        client.post(f"/threads/{thread}/runs/wait", json={"assistant_id": "trip", "input": ask})
        events = client.get(f"/threads/{thread}/events").json()
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        kinds = [e["kind"] for e in events]
        assert kinds[0] == "run_started" and kinds[-2:] == ["interrupt", "run_ended"]
        assert events[-2]["interrupt"]["expectation"]["options"] == ["yes", "no"]
        later = client.get(f"/threads/{thread}/events", params={"after": events[-3]["seq"]}).json()
        assert later == events[-2:]
        assert client.get(f"/threads/{thread}/events", params={"limit": 2}).json() == events[:2]
        assert client.get("/threads/nope/events").status_code == 404
        assert client.get(f"/threads/{thread}/events", params={"after": -1}).status_code == 422


def test_every_file_of_the_pages_is_package_data() -> None:
    """A wheel (not only a checkout) ships the pages: every static file matches a package-data pattern."""
    import fnmatch
    import tomllib
    from pathlib import Path

    from podium.server.pages import STATIC

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["podium"]
    files = [f"server/static/{path.name}" for path in STATIC.iterdir()]
    assert {"server/static/chat.html", "server/static/plan.html", "server/static/style.css"} <= set(files)
    assert all(any(fnmatch.fnmatch(file, pattern) for pattern in patterns) for file in files)
