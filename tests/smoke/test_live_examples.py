"""The opt-in smoke suite: every example against the real model of ``PODIUM_MODEL`` (any OpenAI-compatible endpoint).

Skipped unless ``PODIUM_MODEL`` is set, e.g. ``PODIUM_MODEL=qwen2.5:1.5b PODIUM_BASE_URL=http://localhost:11434/v1
pytest -m smoke``. Any model may answer anything, so it checks only what must hold with every model: each run ends
with a sensible typed status within its limits, nothing crashes, and a conversation resumes after a question.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from podium import Limits, MemoryStore, PodiumError, RunResult, Runtime, Settings
from podium.app import example_names, load_app
from podium.models.base import allow_model_requests

pytestmark = pytest.mark.smoke

FIRST = {
    "smart-investigator": "I want to craft a declined letter.",
    "trip": "What's the weather in Lisbon?",
    "tasks-demo": "What is 12 times 7?",
}
"""An opening message per example; the others get a general one."""
ENDINGS = ("completed", "interrupted", "failed", "limit_exceeded")
LIMITS = Limits(max_model_calls=30, timeout=600)


@pytest.fixture(autouse=True)
def _live(live_model_env: dict[str, str]) -> Iterator[None]:
    allow_model_requests(True)
    yield
    allow_model_requests(False)


def check(result: RunResult) -> None:
    """What holds with any model: a known status, an answer or a question, and a typed reason for anything else."""
    assert result.status in ENDINGS, result
    if result.status == "completed":
        assert result.output is not None
    elif result.status == "interrupted":
        assert result.interrupts and all(i.prompt for i in result.interrupts)
    elif result.status == "limit_exceeded":
        assert result.limit is not None
    else:
        assert result.reason and (result.error is None or isinstance(result.error, PodiumError)), result.reason


def answer_to(result: RunResult) -> str:
    expectation = result.interrupts[0].expectation
    if expectation is not None and expectation.options:
        return expectation.options[0]
    return "yes"


@pytest.mark.parametrize("name", example_names())
async def test_an_example_holds_up_against_the_real_model(name: str, live_model_env: dict[str, str]) -> None:
    settings = Settings.load(env=live_model_env)
    app = load_app(name)
    model = app.model(settings)
    agent = app.build(model)
    runtime = Runtime(MemoryStore())
    result = await runtime.send(agent, FIRST.get(name, "Hello! What can you do for me?"), limits=LIMITS)
    check(result)
    thread = result.thread_id
    for _ in range(3):  # answer a few questions: the conversation must resume each time
        if result.status != "interrupted":
            break
        result = await runtime.resume(agent, thread, answer_to(result), limits=LIMITS)
        check(result)
    if result.status == "completed":  # a follow-up on the same thread continues the conversation
        check(await runtime.send(agent, "Thank you. What else can you do?", thread_id=thread, limits=LIMITS))
    close = getattr(model, "aclose", None)
    if close is not None:
        await close()
