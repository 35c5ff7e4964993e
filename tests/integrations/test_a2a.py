"""A2A both ways, with the official a2a-sdk over real HTTP on loopback: its client talks to the apps ``podium serve``
answers as A2A agents, and :class:`podium.integrations.a2a.A2AAgent` makes such an app a supervisor's worker and a
ReAct agent's tool, questions to the human included."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from tests.server.conftest import example_apps, live_server

from podium import AIMessage, HumanMessage, MemoryStore, Message, ModelRequest, ReactAgent, Runtime, ToolMessage
from podium.integrations.a2a import A2AAgent, A2AError
from podium.models.test import FunctionModel, tool_call
from podium.orchestration.supervisor.supervisor import create_supervisor
from podium.server.auth import AuthConfig, new_api_key

NOTE = "Save a note: pack sunglasses for Lisbon"
QUESTION = "Save this note to your trip notebook: 'pack sunglasses for Lisbon'?"
SAVED = "Done: Saved to the trip notebook: pack sunglasses for Lisbon"


@pytest.fixture
def base_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.chdir(Path(__file__).parents[2])
    with live_server(example_apps("trip", "faang"), MemoryStore(), close_store=True) as url:
        yield url


def message(text: str, *, task_id: str = "", context_id: str = "") -> pb.SendMessageRequest:
    parts = [pb.Part(text=text)]
    msg = pb.Message(role=pb.Role.ROLE_USER, message_id=str(uuid.uuid4()), task_id=task_id, context_id=context_id)
    msg.parts.extend(parts)
    return pb.SendMessageRequest(message=msg)


async def exchange(
    url: str, request: pb.SendMessageRequest, *, streaming: bool = True, headers: dict[str, str] | None = None
) -> list[pb.StreamResponse]:
    async with httpx.AsyncClient(timeout=30, headers=headers) as http:
        client = await ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create_from_url(url)
        return [response async for response in client.send_message(request)]


def states(responses: list[pb.StreamResponse]) -> list[str]:
    out = []
    for response in responses:
        if response.HasField("task"):
            out.append("task:" + pb.TaskState.Name(response.task.status.state))
        elif response.HasField("status_update"):
            out.append(pb.TaskState.Name(response.status_update.status.state))
        elif response.HasField("artifact_update"):
            out.append("artifact:" + "".join(p.text for p in response.artifact_update.artifact.parts))
    return out


async def test_the_cards_describe_the_served_apps(base_url: str) -> None:
    async with httpx.AsyncClient() as http:
        root = (await http.get(f"{base_url}/.well-known/agent-card.json")).json()
        faang = (await http.get(f"{base_url}/a2a/faang/.well-known/agent-card.json")).json()
        missing = await http.get(f"{base_url}/a2a/nope/.well-known/agent-card.json")
    assert root["name"] == "trip"  # the first served app is the server's default agent
    assert root["supportedInterfaces"] == [
        {"url": f"{base_url}/a2a/trip", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    assert root["capabilities"] == {"streaming": True} and "securitySchemes" not in root  # dev mode: open
    assert faang["name"] == "faang" and faang["supportedInterfaces"][0]["url"] == f"{base_url}/a2a/faang"
    assert missing.status_code == 404 and "no assistant 'nope'" in missing.json()["detail"]


async def test_the_sdk_client_streams_an_answer(base_url: str) -> None:
    responses = await exchange(f"{base_url}/a2a/trip", message("What's the weather in Lisbon?"))
    assert states(responses) == [
        "task:TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "artifact:Today in Lisbon: 24 °C, sunny.",
        "TASK_STATE_COMPLETED",
    ]
    sent = await exchange(
        f"{base_url}/a2a/faang",
        message("what's the combined headcount of the FAANG companies in 2024?"),
        streaming=False,
    )
    (only,) = sent
    assert pb.TaskState.Name(only.task.status.state) == "TASK_STATE_COMPLETED"
    assert only.task.artifacts[0].parts[0].text == "The combined headcount of the FAANG companies in 2024 is 1,977,586."


async def test_a_question_is_input_required_and_the_next_message_answers_it(base_url: str) -> None:
    url = f"{base_url}/a2a/trip"
    asked = await exchange(url, message(NOTE))
    assert states(asked)[-1] == "TASK_STATE_INPUT_REQUIRED"
    status = asked[-1].status_update.status
    assert status.message.parts[0].text == f"{QUESTION} [yes / no]"
    (question,) = status.message.metadata["podium.questions"]
    assert question["prompt"] == QUESTION and list(question["options"]) == ["yes", "no"]
    task_id, context_id = asked[0].task.id, asked[0].task.context_id
    answered = await exchange(url, message("yes", task_id=task_id, context_id=context_id))
    assert states(answered) == ["TASK_STATE_WORKING", f"artifact:{SAVED}", "TASK_STATE_COMPLETED"]
    assert answered[-1].status_update.task_id == task_id
    # the context is one conversation: a later message continues the same thread
    later = await exchange(url, message("What's the weather in Lisbon?", context_id=context_id))
    assert states(later)[-1] == "TASK_STATE_COMPLETED"
    async with httpx.AsyncClient() as http:
        threads = (await http.post(f"{base_url}/threads/search", json={})).json()
    assert len(threads) == 1 and threads[0]["metadata"]["context_id"] == context_id


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, dict[str, str]]]:
    """A server requiring API keys; its URL and a key per user (ann, bob; reader holds only ``read``)."""
    from podium.store.sqlite import SQLiteStore

    monkeypatch.chdir(Path(__file__).parents[2])
    path = tmp_path / "keys.db"

    async def add() -> dict[str, str]:
        store = SQLiteStore(path)
        secrets = {}
        for user, scopes in (("ann", ["read", "run"]), ("bob", ["read", "run"]), ("reader", ["read"])):
            secret, key = new_api_key(f"{user}-key", user=user, scopes=scopes)
            await store.add_api_key(key)
            secrets[user] = secret
        await store.close()
        return secrets

    secrets = asyncio.run(add())
    with live_server(example_apps("trip"), SQLiteStore(path), auth=AuthConfig()) as url:
        yield url, secrets


async def test_with_keys_required_a2a_needs_them_and_keeps_each_users_records(
    keyed: tuple[str, dict[str, str]],
) -> None:
    base_url, keys = keyed
    url = f"{base_url}/a2a/trip"
    async with httpx.AsyncClient() as http:
        card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
        anonymous = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}})
        reader = await http.post(url, json={}, headers={"Authorization": f"Bearer {keys['reader']}"})
    assert card["securitySchemes"] == {
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "description": "a Podium API key or a JWT"}}
    }
    assert anonymous.status_code == 401 and "credentials required" in anonymous.json()["detail"]
    assert reader.status_code == 403 and "'run' scope" in reader.json()["detail"]

    ann = {"Authorization": f"Bearer {keys['ann']}"}
    bob = {"Authorization": f"Bearer {keys['bob']}"}
    asked = await exchange(url, message(NOTE, context_id="shared-name"), headers=ann)
    assert states(asked)[-1] == "TASK_STATE_INPUT_REQUIRED"
    # bob's context of the same name is another conversation: no question waits there
    bobs = await exchange(url, message("What's the weather in Lisbon?", context_id="shared-name"), headers=bob)
    assert states(bobs)[-1] == "TASK_STATE_COMPLETED"
    # ann's task is not bob's to answer
    with pytest.raises(Exception, match="not found"):
        await exchange(url, message("yes", task_id=asked[0].task.id, context_id="shared-name"), headers=bob)
    answered = await exchange(url, message("yes", task_id=asked[0].task.id, context_id="shared-name"), headers=ann)
    assert states(answered)[-1] == "TASK_STATE_COMPLETED"
    async with httpx.AsyncClient() as http:
        anns = (await http.post(f"{base_url}/threads/search", json={}, headers=ann)).json()
        bobs_threads = (await http.post(f"{base_url}/threads/search", json={}, headers=bob)).json()
    assert len(anns) == 1 and len(bobs_threads) == 1 and anns[0]["thread_id"] != bobs_threads[0]["thread_id"]


def last_tool_result(messages: list[Message]) -> ToolMessage | None:
    return next((m for m in reversed(messages) if isinstance(m, ToolMessage)), None)


async def test_a_supervisor_uses_a_remote_podium_app_as_a_worker_questions_included(base_url: str) -> None:
    """Another Podium app, served on another port, is a worker; its input-required is a durable interrupt here."""
    trip = await A2AAgent.discover(f"{base_url}/a2a/trip")
    assert trip.name == "trip" and trip.description.startswith("Answers weather questions")

    def supervise(messages: list[Message], request: ModelRequest) -> AIMessage:
        start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        done = [m for m in messages[start:] if isinstance(m, ToolMessage) and m.name == "transfer_to_trip"]
        if done:
            return AIMessage(content=f"The trip helper says: {done[-1].content}")
        task = messages[start].content.split("\n")[0]
        return AIMessage(tool_calls=[tool_call("transfer_to_trip", {"task": task}, id=f"h{start}")])

    supervisor = create_supervisor([trip], model=FunctionModel(supervise))
    runtime = Runtime(MemoryStore())
    asked = await runtime.run(supervisor, NOTE)
    assert asked.status == "interrupted", asked.reason
    (interrupt,) = asked.interrupts
    assert interrupt.prompt == f"{QUESTION} [yes / no]"
    assert interrupt.expectation is not None and interrupt.expectation.options == ["yes", "no"]
    assert interrupt.path[-1] == "trip"
    done = await runtime.resume(supervisor, asked.thread_id, "yes")
    assert done.status == "completed" and done.output == f"The trip helper says: {SAVED}"

    # a later request in the same conversation goes to the same remote conversation, without a question
    again = await runtime.run(supervisor, "What's the weather in Lisbon?", thread_id=asked.thread_id)
    assert again.output == "The trip helper says: Today in Lisbon: 24 °C, sunny."


async def test_the_remote_agent_as_a_tool_and_its_failures_reach_the_model(base_url: str) -> None:
    def answer(messages: list[Message], request: ModelRequest) -> AIMessage:
        result = last_tool_result(messages)
        if result is None:
            return AIMessage(
                tool_calls=[
                    tool_call("trip", {"text": "What's the weather in Lisbon?"}),
                    tool_call("gone", {"text": "hello"}),
                ]
            )
        results = [m for m in messages if isinstance(m, ToolMessage)]
        return AIMessage(content=" | ".join(f"{m.name}: {m.content} ({m.is_error})" for m in results))

    trip = A2AAgent(f"{base_url}/a2a/trip", name="trip", description="Trips.")
    gone = A2AAgent("http://127.0.0.1:9/a2a/none", name="gone", timeout=5)
    agent = ReactAgent("helper", FunctionModel(answer), [trip.as_tool(), gone.as_tool()])
    result = await Runtime(MemoryStore()).run(agent, "weather?")
    trip_part, gone_part = result.output.split(" | ")
    assert trip_part == "trip: Today in Lisbon: 24 °C, sunny. (False)"
    assert gone_part.startswith("gone: Error: tool 'gone' failed with A2AError: A2A agent 'gone': the exchange failed")
    assert gone_part.endswith("(True)")


async def test_a_task_that_fails_or_an_unreadable_card_is_an_a2a_error(base_url: str) -> None:
    with pytest.raises(A2AError, match="cannot read its agent card"):
        await A2AAgent.discover("http://127.0.0.1:9/a2a/none", timeout=5)

    def blank(messages: list[Message], request: ModelRequest) -> AIMessage:
        result = last_tool_result(messages)
        if result is None:
            return AIMessage(tool_calls=[tool_call("trip", {"text": " "})])  # the server rejects an empty message
        return AIMessage(content=result.content)

    trip = A2AAgent(f"{base_url}/a2a/trip", name="trip")
    result = await Runtime(MemoryStore()).run(ReactAgent("helper", FunctionModel(blank), [trip.as_tool()]), "hi")
    assert result.output == (
        "Error: tool 'trip' failed with A2AError: A2A agent 'trip': the task ended rejected: the message is empty: "
        "send the user's message as text"
    )


@pytest.mark.parametrize(
    ("parts", "said"),
    [
        ([pb.Part(text="")], "the message is empty"),
        ([pb.Part(text="   \n")], "the message is empty"),
        ([pb.Part(text=""), pb.Part(text=" ")], "the message is empty"),
        ([pb.Part(url="https://example.com/a.pdf")], "send the message as text: this agent reads text parts only"),
        ([pb.Part(raw=b"\x00\x01")], "send the message as text: this agent reads text parts only"),
    ],
)
async def test_a_message_without_text_is_rejected_saying_why(base_url: str, parts: list[pb.Part], said: str) -> None:
    msg = pb.Message(role=pb.Role.ROLE_USER, message_id=str(uuid.uuid4()))
    msg.parts.extend(parts)
    for streaming in (True, False):
        responses = await exchange(f"{base_url}/a2a/trip", pb.SendMessageRequest(message=msg), streaming=streaming)
        last = responses[-1]
        status = last.task.status if last.HasField("task") else last.status_update.status
        assert pb.TaskState.Name(status.state) == "TASK_STATE_REJECTED"
        assert said in "".join(p.text for p in status.message.parts)
