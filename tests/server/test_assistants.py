"""Assistants over real HTTP: one per app, read-only; unknown ids answer 404 with a JSON ``detail``."""

from __future__ import annotations

import httpx

from podium.app import example_names


def test_every_example_is_an_assistant(server: str) -> None:
    found = httpx.post(f"{server}/assistants/search", json={}).json()
    assert [a["assistant_id"] for a in found] == [a["graph_id"] for a in found]
    assert sorted(a["assistant_id"] for a in found) == example_names()
    trip = httpx.get(f"{server}/assistants/trip").json()
    assert trip["graph_id"] == "trip" and trip["description"].startswith("Answers weather questions")
    si = httpx.get(f"{server}/assistants/smart-investigator").json()  # the chat page greets with the app's welcome
    assert si["metadata"]["welcome"].startswith("Hello, I am Smart Investigator")


def test_search_filters_by_graph_and_pages(server: str) -> None:
    assert [a["assistant_id"] for a in httpx.post(f"{server}/assistants/search", json={"graph_id": "trip"}).json()] == [
        "trip"
    ]
    assert httpx.post(f"{server}/assistants/search", json={"metadata": {"x": 1}}).json() == []
    paged = httpx.post(f"{server}/assistants/search", json={"limit": 1, "offset": 1}).json()
    assert [a["assistant_id"] for a in paged] == example_names()[1:2]


def test_unknown_assistant_and_bad_body_answer_json_errors(server: str) -> None:
    missing = httpx.get(f"{server}/assistants/nope")
    assert missing.status_code == 404
    assert "no assistant 'nope'" in missing.json()["detail"]
    bad = httpx.post(f"{server}/assistants/search", json={"limit": 0})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["body", "limit"]


def test_server_package_exports_what_it_lists() -> None:
    import podium.server

    for name in podium.server.__all__:
        assert getattr(podium.server, name) is not None
    assert podium.server.Principal("a", frozenset({"read"})).user == "a"
