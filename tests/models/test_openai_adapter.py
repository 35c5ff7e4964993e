"""The OpenAI-compatible adapter over real HTTP: the real ``openai`` client against a local stand-in server."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from tests.models.openai_standin import StandIn, completion, error, stream

import podium
from podium import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage, ToolSpec, Usage
from podium.events import TokenDelta
from podium.models import Done, ModelRequest, ModelResponse, ModelSettings, TextDelta, ToolCallDelta
from podium.models.base import allow_model_requests
from podium.models.openai import OpenAIModel
from podium.testing import RecordingModel, ReplayModel

WEATHER = ToolSpec(
    name="get_weather",
    description="The weather of a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CLOCK = ToolSpec(name="get_time", description="The time in a zone.", parameters={"type": "object", "properties": {}})
QUICK_RETRY = {"retry-after-ms": "1"}
"""``Retry-After: 0`` is below the ``openai`` client's floor (it then backs off 0.4 s); this header is honoured."""

MakeModel = Callable[..., OpenAIModel]


@pytest.fixture(autouse=True)
def _blocked() -> None:
    """Real model requests blocked, as the suite's default (loopback stays allowed)."""
    allow_model_requests(False)


@pytest.fixture
async def make_model(standin: StandIn) -> AsyncIterator[MakeModel]:
    """Build OpenAIModels on the stand-in; each is closed (its connections released) after the test."""
    made: list[OpenAIModel] = []

    def build(name: str = "gpt-test", **options: Any) -> OpenAIModel:
        options.setdefault("base_url", standin.base_url)
        options.setdefault("api_key", "sk-test")
        model = OpenAIModel(name, **options)
        made.append(model)
        return model

    yield build
    for model in made:
        await model.aclose()


def ask(text: str = "Hello?") -> ModelRequest:
    return ModelRequest(messages=[HumanMessage(content=text)])


async def collect(model: OpenAIModel, request: ModelRequest) -> list[Any]:
    return [event async for event in model.stream(request)]


# replies ----------------------------------------------------------------------------------------------------------
async def test_text_reply_and_the_request_on_the_wire(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(completion("It is sunny.", usage=(42, 5), model="gpt-test-2024"))
    request = ModelRequest(
        messages=[
            SystemMessage(content="Be brief."),
            HumanMessage(content="Weather in Paris?"),
            AIMessage(
                content="", tool_calls=[ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')]
            ),
            ToolMessage(content="sunny", tool_call_id="call_1", name="get_weather"),
            HumanMessage(content="So?"),
        ],
        tools=[WEATHER],
        settings=ModelSettings(temperature=0.25, parallel_tool_calls=False, tool_choice="get_weather"),
    )

    response = await make_model().reply(request)

    assert response == ModelResponse(
        message=AIMessage(content="It is sunny."),
        usage=Usage(input_tokens=42, output_tokens=5, requests=1),
        model_name="gpt-test-2024",
        finish_reason="stop",
    )
    [received] = standin.requests
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == "Bearer sk-test"
    assert received.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "content": "sunny", "tool_call_id": "call_1"},
            {"role": "user", "content": "So?"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "The weather of a city.",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                },
            }
        ],
        "temperature": 0.25,
        "parallel_tool_calls": False,
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "max_tokens": 1024,  # the default reply cap
    }


async def test_two_tool_calls_keep_ids_names_and_raw_arguments(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(
        completion(tool_calls=[("call_a", "get_weather", '{"city": "Oslo"}'), ("call_b", "get_time", '{"tz": "CET"')])
    )

    response = await make_model().reply(ModelRequest(messages=[HumanMessage(content="Both?")], tools=[WEATHER, CLOCK]))

    assert response.message == AIMessage(
        content="",
        tool_calls=[
            ToolCall(id="call_a", name="get_weather", arguments='{"city": "Oslo"}'),
            ToolCall(id="call_b", name="get_time", arguments='{"tz": "CET"'),  # invalid JSON stays as written
        ],
    )
    assert response.finish_reason == "tool_calls"
    assert [t["function"]["name"] for t in standin.bodies[0]["tools"]] == ["get_weather", "get_time"]


# streaming --------------------------------------------------------------------------------------------------------
async def test_stream_assembles_text_and_split_tool_calls(standin: StandIn, make_model: MakeModel) -> None:
    calls = [("call_w", "get_weather", '{"city": "Lisbon"}'), ("call_t", "get_time", '{"tz": "Europe/Lisbon"}')]
    standin.script(stream(["Let me ", "check ", "both."], calls, usage=(30, 12), argument_piece=5))

    events = await collect(
        make_model(), ModelRequest(messages=[HumanMessage(content="Lisbon?")], tools=[WEATHER, CLOCK])
    )

    assert isinstance(events[-1], Done) and not any(isinstance(e, Done) for e in events[:-1])
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Let me check both."
    pieces = [e for e in events if isinstance(e, ToolCallDelta)]
    assert len(pieces) > 4  # the arguments really arrived over several chunks
    assembled: dict[int, dict[str, str]] = {}
    for piece in pieces:
        entry = assembled.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
        entry["id"] += piece.id or ""
        entry["name"] += piece.name or ""
        entry["arguments"] += piece.arguments
    assert [(c["id"], c["name"], c["arguments"]) for _, c in sorted(assembled.items())] == calls
    assert events[-1].response == ModelResponse(
        message=AIMessage(
            content="Let me check both.", tool_calls=[ToolCall(id=i, name=n, arguments=a) for i, n, a in calls]
        ),
        usage=Usage(input_tokens=30, output_tokens=12, requests=1),
        model_name="standin-model",
        finish_reason="tool_calls",
    )
    body = standin.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_stream_without_a_usage_chunk_still_counts_the_request(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(stream(["plain"]))
    request = ModelRequest(
        messages=[HumanMessage(content="hi")],
        settings=ModelSettings(extra={"stream_options": {"include_usage": False}}),
    )

    events = await collect(make_model(), request)

    assert events[-1] == Done(
        ModelResponse(
            message=AIMessage(content="plain"),
            usage=Usage(requests=1),
            model_name="standin-model",
            finish_reason="stop",
        )
    )
    assert standin.bodies[0]["stream_options"] == {"include_usage": False}


async def test_an_error_inside_a_stream_becomes_a_model_error(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(stream(["partial "], fail="the model crashed"))

    seen: list[Any] = []
    with pytest.raises(podium.ModelError, match="the model crashed") as caught:
        async for event in make_model().stream(ask()):
            seen.append(event)

    assert seen == [TextDelta("partial ")]
    assert isinstance(caught.value.__cause__, openai.OpenAIError)


# failures ---------------------------------------------------------------------------------------------------------
async def test_rate_limit_is_retried_then_answered(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(error(429, "slow down", retry_after="0", headers=QUICK_RETRY), completion("finally"))

    response = await make_model(max_retries=2).reply(ask())

    assert response.message.content == "finally"
    assert len(standin.requests) == 2
    assert [r.headers["x-stainless-retry-count"] for r in standin.requests] == ["0", "1"]
    assert standin.bodies[0] == standin.bodies[1]


async def test_rate_limit_every_time_raises_model_http_error(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(*[error(429, "slow down", retry_after="0", headers=QUICK_RETRY)] * 3)

    with pytest.raises(podium.ModelHTTPError) as caught:
        await make_model(max_retries=1).reply(ask())

    assert caught.value.status_code == 429
    assert "slow down" in str(caught.value)
    assert len(standin.requests) == 2 and standin.pending == 1  # one try plus one retry, no more


async def test_a_slow_server_raises_model_error_not_an_openai_exception(
    standin: StandIn, make_model: MakeModel
) -> None:
    standin.script(completion("too late", delay=5.0))

    with pytest.raises(podium.ModelError) as caught:
        await make_model(timeout=0.2, max_retries=0).reply(ask())

    assert type(caught.value) is podium.ModelError
    assert "did not answer within its timeout of 0.2 s (PODIUM_TIMEOUT" in str(caught.value)
    assert len(standin.requests) == 1


async def test_bad_request_raises_model_http_error_with_the_server_message(
    standin: StandIn, make_model: MakeModel
) -> None:
    standin.script(error(400, "The model `nope` does not exist"))

    with pytest.raises(podium.ModelHTTPError) as caught:
        await make_model("nope").reply(ask())

    assert caught.value.status_code == 400
    assert str(caught.value) == "model endpoint answered 400: The model `nope` does not exist"
    assert len(standin.requests) == 1  # a 400 is not retried


async def test_stream_http_error_is_a_model_http_error(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(error(401, "bad key"))

    with pytest.raises(podium.ModelHTTPError, match="bad key") as caught:
        await collect(make_model(), ask())

    assert caught.value.status_code == 401


# Azure ------------------------------------------------------------------------------------------------------------
async def test_azure_hits_the_deployment_path_with_the_api_version(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(completion("from azure"))
    model = make_model(
        "my-deployment", base_url=None, azure_endpoint=standin.root, api_key="az-key", api_version="2024-10-21"
    )

    response = await model.reply(ask())

    assert response.message.content == "from azure"
    [received] = standin.requests
    assert received.path == "/openai/deployments/my-deployment/chat/completions"
    assert received.deployment == "my-deployment"
    assert received.query == {"api-version": "2024-10-21"}
    assert received.headers["api-key"] == "az-key"
    assert received.body["messages"] == [{"role": "user", "content": "Hello?"}]


def test_azure_without_an_api_version_fails_when_built_naming_podiums_setting(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)

    with pytest.raises(podium.UsageError, match="needs an API version: set PODIUM_API_VERSION") as caught:
        OpenAIModel("dep", azure_endpoint=standin.root, api_key="az-key")
    assert "OPENAI_API_VERSION" not in str(caught.value)  # the client's variable, not Podium's setting
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    assert OpenAIModel("dep", azure_endpoint=standin.root, api_key="az-key").name == "dep"
    assert standin.requests == []


# blocking ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("base_url", ["https://api.example.com/v1", "http://10.1.2.3:8000/v1", None])
async def test_non_loopback_endpoints_are_blocked_before_any_io(base_url: str | None, make_model: MakeModel) -> None:
    model = make_model(base_url=base_url)

    with pytest.raises(podium.ModelRequestsBlocked):
        await model.reply(ask())
    with pytest.raises(podium.ModelRequestsBlocked):
        await collect(model, ask())
    assert model._client is None  # no client was even made


async def test_a_handed_in_client_is_checked_where_it_points(standin: StandIn) -> None:
    remote = openai.AsyncOpenAI(base_url="https://api.example.com/v1", api_key="x")
    local = openai.AsyncOpenAI(base_url=standin.base_url, api_key="x", max_retries=0)
    standin.script(completion("local ok"))
    try:
        with pytest.raises(podium.ModelRequestsBlocked):
            await OpenAIModel("gpt", client=remote).reply(ask())
        model = OpenAIModel("gpt", client=local)
        assert (await model.reply(ask())).message.content == "local ok"
        await model.aclose()
        assert not local.is_closed()  # the owner of a handed-in client closes it
    finally:
        await remote.close()
        await local.close()


async def test_loopback_is_allowed_while_blocking(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(completion("local"))

    assert (await make_model().reply(ask())).message.content == "local"


# the adapter inside Podium ----------------------------------------------------------------------------------------
def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return f"sunny in {city}"


async def test_react_agent_runs_a_tool_loop_over_http(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(
        completion(tool_calls=[("call_1", "get_weather", '{"city": "Paris"}')], usage=(20, 4)),
        completion("It is sunny in Paris.", usage=(30, 6)),
    )
    agent = podium.ReactAgent("forecaster", make_model(), [get_weather], prompt="Answer with the tools.")

    result = await podium.Runtime(podium.MemoryStore()).run(agent, "Weather in Paris?")

    assert result.status == "completed", result.reason
    assert result.output == "It is sunny in Paris."
    assert result.usage == Usage(input_tokens=50, output_tokens=10, requests=2)
    first, second = standin.bodies
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert second["messages"] == [
        {"role": "system", "content": "Answer with the tools."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "name": "forecaster",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "content": "sunny in Paris", "tool_call_id": "call_1"},
    ]


async def test_react_agent_streams_tokens_over_http(standin: StandIn, make_model: MakeModel) -> None:
    standin.script(
        stream([], [("call_1", "get_weather", '{"city": "Rome"}')]),
        stream(["Sunny ", "in ", "Rome."]),
    )
    agent = podium.ReactAgent("forecaster", make_model(), [get_weather])
    tokens: list[str] = []

    def on_event(event: podium.Event) -> None:
        if isinstance(event, TokenDelta):
            tokens.append(event.text)

    result = await podium.Runtime(podium.MemoryStore()).run(agent, "Rome?", on_event=on_event)

    assert result.output == "Sunny in Rome."
    assert tokens == ["Sunny ", "in ", "Rome."]
    assert standin.bodies[1]["messages"][-1] == {"role": "tool", "content": "sunny in Rome", "tool_call_id": "call_1"}


async def test_recorded_cassette_replays_without_the_server(
    standin: StandIn, make_model: MakeModel, tmp_path: Path
) -> None:
    standin.script(completion("Take the train.", [("call_9", "get_weather", '{"city": "Bern"}')], usage=(15, 9)))
    cassette = tmp_path / "cassettes" / "trip.json"
    request = ModelRequest(
        messages=[SystemMessage(content="Plan trips."), HumanMessage(content="Bern?")], tools=[WEATHER]
    )

    recorded = await RecordingModel(make_model(), cassette).reply(request)
    standin.close()

    data = json.loads(cassette.read_text(encoding="utf-8"))
    assert data["format"] == "podium-cassette" and len(data["interactions"]) == 1
    replayed = await ReplayModel(cassette).reply(request)
    assert replayed == recorded
    assert recorded.message.tool_calls == [ToolCall(id="call_9", name="get_weather", arguments='{"city": "Bern"}')]


async def test_settings_from_the_environment_give_a_working_model(standin: StandIn, tmp_path: Path) -> None:
    env = {
        "PODIUM_MODEL": "local-llm",
        "PODIUM_BASE_URL": standin.base_url,
        "PODIUM_API_KEY": "sk-from-env",
        "PODIUM_MAX_RETRIES": "0",
        "PODIUM_TIMEOUT": "5",
    }
    (tmp_path / "empty.toml").write_text("")  # no settings from a file (nor from a podium.toml where tests run)
    settings = podium.Settings.load(env=env, file=tmp_path / "empty.toml")
    model = settings.model_or_none()
    assert isinstance(model, OpenAIModel)
    assert (model.max_retries, model.timeout) == (0, 5.0)
    standin.script(completion("configured"))

    async with model:
        response = await model.reply(ask())

    assert response.message.content == "configured"
    [received] = standin.requests
    assert received.body["model"] == "local-llm"
    assert received.headers["authorization"] == "Bearer sk-from-env"
    assert podium.Settings.load(env={}, file=tmp_path / "empty.toml").model_or_none() is None


# event loops ------------------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_one_model_serves_successive_event_loops(standin: StandIn) -> None:
    """Pooled connections cannot cross loops: a second ``asyncio.run`` must get a fresh client, not a dead pool."""
    standin.script(completion("first"), completion("second"))
    model = OpenAIModel("gpt", base_url=standin.base_url, api_key="sk", max_retries=0)

    first = asyncio.run(model.reply(ask()))  # left open on purpose: the loop ends with the pool in it

    async def second_loop() -> ModelResponse:
        async with model:
            return await model.reply(ask())

    second = asyncio.run(second_loop())
    gc.collect()  # the abandoned first pool warns while this test's filter is on
    assert (first.message.content, second.message.content) == ("first", "second")
    assert len(standin.requests) == 2


def test_a_missing_key_for_openais_endpoint_fails_when_the_model_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for options in ({}, {"base_url": "https://API.openai.com/v1"}):
        with pytest.raises(podium.UsageError, match="uses OpenAI's endpoint, which needs an API key"):
            OpenAIModel("gpt-4o", **options)
    assert OpenAIModel("gpt-4o", api_key="sk-test").api_key == "sk-test"
    assert OpenAIModel("llama3", base_url="http://localhost:11434/v1").api_key is None  # local servers need none
    assert OpenAIModel("gpt-4o", azure_endpoint="https://x.openai.azure.com", api_version="2024-10-21").name == "gpt-4o"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert OpenAIModel("gpt-4o").name == "gpt-4o"


async def test_missing_and_repeated_call_ids_become_unique(standin: StandIn, make_model: MakeModel) -> None:
    """Journal keys never rest on ids, but a history with one id twice is refused by strict providers."""
    paris, oslo = ("", "get_weather", '{"city": "Paris"}'), ("", "get_weather", '{"city": "Oslo"}')
    standin.script(
        completion(tool_calls=[paris, oslo]),
        completion(tool_calls=[paris]),
        completion(tool_calls=[("dup", "get_weather", "{}"), ("dup", "get_time", "{}")]),
        stream([], [paris, oslo]),
    )
    model = make_model()
    request = ModelRequest(messages=[HumanMessage(content="Weather?")], tools=[WEATHER, CLOCK])
    replies = [(await model.reply(request)).message for _ in range(3)]
    done = (await collect(model, request))[-1]
    assert isinstance(done, Done)
    ids = [c.id for m in [*replies, done.response.message] for c in m.tool_calls]
    assert len(ids) == 7 and len(set(ids)) == 7 and all(ids)
    assert replies[2].tool_calls[0].id == "dup"  # a given id is kept; only its repeat is renamed
