"""The OpenAI-compatible endpoint driven by the official ``openai`` client over real HTTP: models, chat completions
streaming and not, a conversation over turns with a question answered in the next turn, stateless requests,
identity from the credentials, and errors."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from openai import OpenAI
from tests.server.conftest import example_apps, live_server

from podium.server.auth import AuthConfig, new_api_key
from podium.store.sqlite import SQLiteStore

WEATHER = [{"role": "user", "content": "What's the weather in Lisbon?"}]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[OpenAI]:
    """An ``openai`` client of a dev-mode server serving the trip example."""
    with (
        live_server(example_apps("trip"), SQLiteStore(tmp_path / "s.db")) as url,
        OpenAI(base_url=f"{url}/v1", api_key="unused-in-dev-mode", max_retries=0) as client,
    ):
        yield client


def test_models_are_the_apps(client: OpenAI) -> None:
    assert [(m.id, m.object, m.owned_by) for m in client.models.list()] == [("trip", "model", "podium")]
    assert client.models.retrieve("trip").id == "trip"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nope")


def test_a_conversation_over_turns_with_a_question_answered_in_the_next_turn(client: OpenAI) -> None:
    conversation = {"X-Conversation-Id": "trip-1"}

    first = client.chat.completions.create(model="trip", messages=WEATHER, extra_headers=conversation)
    assert first.object == "chat.completion" and first.model == "trip"
    assert first.choices[0].message.content == "Today in Lisbon: 24 °C, sunny."
    assert first.choices[0].message.tool_calls is None and first.choices[0].finish_reason == "stop"
    assert (
        first.usage is not None
        and first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens > 0
    )

    # the server keeps the conversation: only the new message is sent
    second = client.chat.completions.create(
        model="trip", messages=[{"role": "user", "content": "And in Fahrenheit?"}], extra_headers=conversation
    )
    assert second.choices[0].message.content == "That is 75.2 °F."

    asked = client.chat.completions.create(
        model="trip",
        messages=[{"role": "user", "content": "Save a note: pack sunglasses for Lisbon"}],
        metadata={"conversation_id": "trip-1"},  # the body names the conversation too
    )
    assert (
        asked.choices[0].message.content
        == "Save this note to your trip notebook: 'pack sunglasses for Lisbon'? [yes / no]"
    )
    answered = client.chat.completions.create(
        model="trip", messages=[{"role": "user", "content": "yes"}], extra_headers=conversation
    )
    assert answered.choices[0].message.content == "Done: Saved to the trip notebook: pack sunglasses for Lisbon"


def test_streaming_over_two_turns_sends_text_chunks_usage_and_done(client: OpenAI) -> None:
    conversation = {"X-Conversation-Id": "streamed"}
    stream = client.chat.completions.create(
        model="trip",
        messages=[{"role": "user", "content": "Save a note: pack sunglasses for Lisbon"}],
        stream=True,
        stream_options={"include_usage": True},
        extra_headers=conversation,
    )
    chunks = list(stream)
    assert {c.object for c in chunks} == {"chat.completion.chunk"} and len({c.id for c in chunks}) == 1
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert deltas[0].role == "assistant"
    assert all(d.tool_calls is None for d in deltas)  # the agent's own tool calls never reach the client
    text = "".join(d.content or "" for d in deltas)
    assert text == "Save this note to your trip notebook: 'pack sunglasses for Lisbon'? [yes / no]"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0

    stream = client.chat.completions.create(
        model="trip", messages=[{"role": "user", "content": "yes"}], stream=True, extra_headers=conversation
    )
    chunks = list(stream)
    assert (
        "".join(c.choices[0].delta.content or "" for c in chunks)
        == "Done: Saved to the trip notebook: pack sunglasses for Lisbon"
    )
    assert all(c.usage is None for c in chunks)  # usage only when asked for


def test_raw_stream_ends_with_done(client: OpenAI) -> None:
    url = str(client.base_url).rstrip("/")
    with httpx.stream(
        "POST", f"{url}/chat/completions", json={"model": "trip", "messages": WEATHER, "stream": True}
    ) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in r.iter_lines() if line]
    assert lines[-1] == "data: [DONE]" and all(line.startswith("data: ") for line in lines)


def test_without_a_conversation_the_sent_history_is_the_input(client: OpenAI) -> None:
    history = [*WEATHER, {"role": "assistant", "content": "Today in Lisbon: 24 °C, sunny."}]
    follow_up = {"role": "user", "content": "And in Fahrenheit?"}
    done = client.chat.completions.with_raw_response.create(model="trip", messages=[*history, follow_up])
    assert done.parse().choices[0].message.content == "That is 75.2 °F."
    again = client.chat.completions.with_raw_response.create(model="trip", messages=[*history, follow_up])
    assert again.headers["x-podium-thread-id"] != done.headers["x-podium-thread-id"]  # each request stands alone


def test_the_thread_header_a_response_sent_continues_that_thread(client: OpenAI) -> None:
    note = [{"role": "user", "content": "Save a note: pack sunglasses for Lisbon"}]
    asked = client.chat.completions.with_raw_response.create(model="trip", messages=note)  # stateless
    assert asked.parse().choices[0].message.content.endswith("[yes / no]")
    thread = {"X-Podium-Thread-Id": asked.headers["x-podium-thread-id"]}
    answered = client.chat.completions.with_raw_response.create(
        model="trip", messages=[{"role": "user", "content": "yes"}], extra_headers=thread
    )
    assert answered.headers["x-podium-thread-id"] == thread["X-Podium-Thread-Id"]
    assert answered.parse().choices[0].message.content == "Done: Saved to the trip notebook: pack sunglasses for Lisbon"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(
            model="trip", messages=WEATHER, extra_headers={"X-Podium-Thread-Id": "no-such-thread"}
        )


def test_bad_requests_get_4xx_with_json_detail(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError, match="no assistant 'nope'"):
        client.chat.completions.create(model="nope", messages=WEATHER)
    with pytest.raises(openai.UnprocessableEntityError, match="last message must be a user message"):
        client.chat.completions.create(model="trip", messages=[*WEATHER, {"role": "assistant", "content": "hi"}])
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model="trip", messages=[])
    with pytest.raises(openai.UnprocessableEntityError, match="n must be 1"):  # not one reply where two were asked
        client.chat.completions.create(model="trip", messages=WEATHER, n=2)


def test_identity_comes_from_the_key_never_the_user_field(tmp_path: Path) -> None:
    path = tmp_path / "s.db"

    async def keys() -> tuple[str, str]:
        store = SQLiteStore(path)
        alice, a = new_api_key("alice")
        bob, b = new_api_key("bob")
        await store.add_api_key(a)
        await store.add_api_key(b)
        await store.close()
        return alice, bob

    alice_key, bob_key = asyncio.run(keys())
    with live_server(example_apps("trip"), SQLiteStore(path), auth=AuthConfig()) as url:
        alice = OpenAI(base_url=f"{url}/v1", api_key=alice_key, max_retries=0)
        bob = OpenAI(base_url=f"{url}/v1", api_key=bob_key, max_retries=0)
        stranger = OpenAI(base_url=f"{url}/v1", api_key="pdm_wrong_key", max_retries=0)
        same = {"X-Conversation-Id": "shared-name"}
        note = [{"role": "user", "content": "Save a note: pack sunglasses for Lisbon"}]
        asked = alice.chat.completions.with_raw_response.create(
            model="trip", messages=note, user="bob", extra_headers=same
        )
        assert asked.parse().choices[0].message.content.endswith("[yes / no]")
        # bob's conversation of the same name is another one: his "yes" answers nothing of alice's
        bobs = bob.chat.completions.with_raw_response.create(
            model="trip", messages=[{"role": "user", "content": "What's the weather in Lisbon?"}], extra_headers=same
        )
        assert bobs.headers["x-podium-thread-id"] != asked.headers["x-podium-thread-id"]
        thread = asyncio.run(_owner(path, asked.headers["x-podium-thread-id"]))
        assert thread == "alice"  # not the body's "user"
        bob_threads = httpx.post(f"{url}/threads/search", json={}, headers={"X-Api-Key": bob_key}).json()
        assert asked.headers["x-podium-thread-id"] not in {t["thread_id"] for t in bob_threads}
        with pytest.raises(openai.NotFoundError):  # alice's thread id is not bob's to continue
            bob.chat.completions.create(
                model="trip",
                messages=[{"role": "user", "content": "yes"}],
                extra_headers={"X-Podium-Thread-Id": asked.headers["x-podium-thread-id"]},
            )
        with pytest.raises(openai.AuthenticationError, match="invalid or revoked API key"):
            stranger.models.list()
        for each in (alice, bob, stranger):
            each.close()


async def _owner(path: Path, thread_id: str) -> str:
    store = SQLiteStore(path)
    info = await store.get_thread(thread_id)
    await store.close()
    assert info is not None
    return str(info.metadata["owner"])


def test_an_artifact_follows_the_reply(tmp_path: Path) -> None:
    """An OpenAI client has no side panel: the decline letter the run made comes after its text."""
    with (
        live_server(example_apps("smart-investigator"), SQLiteStore(tmp_path / "a.db")) as url,
        OpenAI(base_url=f"{url}/v1", api_key="unused-in-dev-mode", max_retries=0) as client,
    ):
        ask = {"X-Conversation-Id": "letter"}
        said = [{"role": "user", "content": "I need a decline letter for claim 31KD77, Motor"}]
        reply = client.chat.completions.create(model="smart-investigator", messages=said, extra_headers=ask)  # type: ignore[arg-type]
        text = reply.choices[0].message.content or ""
        assert "Letter generated" in text and "claim 31KD77" in text
        assert text.index("Letter generated") < text.index("claim 31KD77 (crime topology")


def test_a_supervisor_answers_once_without_its_workers_hand_back_bookkeeping(tmp_path: Path) -> None:
    """The reply is the supervisor's answer: a worker's report and its transfer back stay in the thread's history
    (the thread API shows them), not in what an OpenAI client reads."""
    ask = [{"role": "user", "content": "what's the combined headcount of apple and meta?"}]
    with (
        live_server(example_apps("faang"), SQLiteStore(tmp_path / "s.db")) as url,
        OpenAI(base_url=f"{url}/v1", api_key="dev", max_retries=0) as client,
    ):
        whole = client.chat.completions.create(model="faang", messages=ask).choices[0].message.content or ""
        streamed = "".join(
            chunk.choices[0].delta.content or ""
            for chunk in client.chat.completions.create(model="faang", messages=ask, stream=True)
            if chunk.choices
        )
    for reply in (whole, streamed):
        assert reply == "The combined headcount of Apple and Meta in 2024 is 231,317.", reply
