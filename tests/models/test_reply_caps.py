"""Issue 17, item 2: every request is bounded: a default reply cap from settings, sized per use."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests.models.openai_standin import StandIn, completion, stream

from podium import AIMessage, HumanMessage, Message, UsageError
from podium.models import ModelRequest, ModelSettings
from podium.models.openai import OpenAIModel
from podium.orchestration.master.routing import LLMClassifier
from podium.orchestration.master.routing.llm import ROUTING_MAX_TOKENS
from podium.settings import Settings
from podium.testing import FunctionModel, tool_call


@pytest.fixture
async def model(standin: StandIn) -> AsyncIterator[OpenAIModel]:
    made = Settings.load(env={"PODIUM_MODEL": "small", "PODIUM_BASE_URL": standin.base_url}).model_or_none()
    assert isinstance(made, OpenAIModel)
    yield made
    await made.aclose()


def ask(settings: ModelSettings | None = None) -> ModelRequest:
    return ModelRequest(messages=[HumanMessage(content="hi")], settings=settings or ModelSettings())


async def test_a_request_without_a_cap_gets_the_settings_default(standin: StandIn, model: OpenAIModel) -> None:
    standin.script(completion("a"), stream(["b"]), completion("c"))
    await model.reply(ask())
    [_ async for _ in model.stream(ask())]
    await model.reply(ask(ModelSettings(max_tokens=40)))  # a request's own cap wins
    assert [body["max_tokens"] for body in standin.bodies] == [1024, 1024, 40]


async def test_the_cap_comes_from_podium_max_tokens_and_none_leaves_the_server_default(standin: StandIn) -> None:
    settings = Settings.load(env={"PODIUM_MODEL": "m", "PODIUM_BASE_URL": standin.base_url, "PODIUM_MAX_TOKENS": "77"})
    assert settings.max_tokens == 77
    model = settings.model_or_none()
    uncapped = OpenAIModel("m", base_url=standin.base_url, max_tokens=None)
    standin.script(completion("a"), completion("b"))
    assert model is not None
    await model.reply(ask())
    await uncapped.reply(ask())
    await model.aclose()
    await uncapped.aclose()
    assert standin.bodies[0]["max_tokens"] == 77
    assert "max_tokens" not in standin.bodies[1]


@pytest.mark.parametrize("value", ["many", "0", "-5"])
def test_a_bad_reply_cap_is_a_clear_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="max_tokens"):
        Settings.load(env={"PODIUM_MAX_TOKENS": value})
    with pytest.raises(UsageError, match="max_tokens must be at least 1"):
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1", max_tokens=0)


def test_the_file_may_set_the_cap(tmp_path: object) -> None:
    from pathlib import Path

    file = Path(str(tmp_path)) / "podium.toml"
    file.write_text("[podium]\nmax_tokens = 300\n")
    assert Settings.load(env={}, file=file).max_tokens == 300


async def test_a_routing_decision_is_capped_far_below_an_answer() -> None:
    seen: list[ModelRequest] = []

    def route(messages: list[Message], request: ModelRequest) -> AIMessage:
        seen.append(request)
        return AIMessage(tool_calls=[tool_call("ask_human", {"text": "Which?", "rationale": "vague"})])

    from podium import MemoryStore, Runtime
    from podium.orchestration.master.agent import MasterAgent

    agent = MasterAgent([], name="m", classifier=LLMClassifier(FunctionModel(route)))
    await Runtime(MemoryStore()).send(agent, "hello", thread_id="t")
    assert [r.settings.max_tokens for r in seen] == [ROUTING_MAX_TOKENS]
    assert Settings().max_tokens > ROUTING_MAX_TOKENS
