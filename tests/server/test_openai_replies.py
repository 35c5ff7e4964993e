"""What an OpenAI client reads of a turn, with the official ``openai`` client over real HTTP: the reply a person
reads (the thread API's, not the task messages or the plan's records behind it), the artifacts after it in brief,
and a question with how to answer it, streamed or not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from openai import OpenAI
from tests.server.conftest import example_apps, live_server
from tests.server.test_tool_approval_http import SENT, bank_app

from podium.store.sqlite import SQLiteStore


def _say(client: OpenAI, model: str, text: str, conversation: str, *, stream: bool) -> str:
    """The reply's text to one user message of ``conversation``, read whole or from the stream's chunks."""
    said = [{"role": "user", "content": text}]
    headers = {"X-Conversation-Id": conversation}
    if not stream:
        reply = client.chat.completions.create(model=model, messages=said, extra_headers=headers)  # type: ignore[arg-type]
        return reply.choices[0].message.content or ""
    chunks = client.chat.completions.create(model=model, messages=said, extra_headers=headers, stream=True)  # type: ignore[arg-type]
    return "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[OpenAI]:
    """An ``openai`` client of a dev-mode server serving a Task app and a plan app."""
    with (
        live_server(example_apps("tasks-demo", "plan-service"), SQLiteStore(tmp_path / "s.db")) as url,
        OpenAI(base_url=f"{url}/v1", api_key="dev", max_retries=0) as client,
    ):
        yield client


@pytest.mark.parametrize("stream", [False, True])
def test_a_task_app_answers_with_its_reply_not_the_messages_of_its_tasks(served: OpenAI, stream: bool) -> None:
    """The coordinator's ``TO[calculator]: ...`` and ``DONE ...`` are messages between tasks: the thread API's reply
    is ``12 × 7 = 84.``, and so is the client's."""
    assert _say(served, "tasks-demo", "What is 12 times 7?", f"tasks-{stream}", stream=stream) == "12 × 7 = 84."


@pytest.mark.parametrize("stream", [False, True])
def test_a_plan_app_says_what_its_agents_said_and_asks_without_its_records(served: OpenAI, stream: bool) -> None:
    """The plan's records (every step's transition, as JSON) are for the plan page: the client reads the agents'
    messages, one line each, the question with how to answer it, and the plan's final reply."""
    conversation = f"plan-{stream}"
    asked = _say(served, "plan-service", "Onboard Jessica Smith, who starts next week", conversation, stream=stream)
    planned = (
        "PlannerAgent: Plan v1: 6 steps by HrAgent, TechSupportAgent. 1. HrAgent: Create the HR record of an employee"
        " for Jessica Smith, next week;"
    )
    question = (
        "Step 1 of 6 (HrAgent): Create the HR record of an employee for Jessica Smith, next week. Approve?"
        " [approve, approve all, reject, reject all, edit: <new action>, clarify: <information>, or stop]"
    )
    assert asked.startswith(planned) and asked.endswith("\n\n" + question), asked
    assert "{" not in asked and len(asked) < 1_000

    done = _say(served, "plan-service", "approve all", conversation, stream=stream)
    assert "{" not in done and "plan:" not in done and len(done) < 2_000, done
    lines = done.split("\n\n")
    assert lines[0] == "Plan completed: 6 of 6 steps done. 6 steps by HrAgent, TechSupportAgent."
    assert lines[1] == (
        "HrAgent: [demo stand-in, nothing was changed] Would create the HR record of an employee when onboarding"
        " someone who starts (employee_name=Jessica Smith, start_date=next week)."
    )
    assert len(lines) == 1 + 6  # the reply, then what each step's agent said


@pytest.mark.parametrize("stream", [False, True])
def test_an_approval_says_how_to_approve_reject_or_edit(tmp_path: Path, stream: bool) -> None:
    """A tool that needs approval asks with the expectation's hint (not only ``[approve / reject]``), and an edit
    typed as the next message runs the call with the edited arguments."""
    SENT.clear()
    with (
        live_server({"bank": bank_app()}, SQLiteStore(tmp_path / "bank.db")) as url,
        OpenAI(base_url=f"{url}/v1", api_key="dev", max_retries=0) as client,
    ):
        asked = _say(client, "bank", "pay Ada", "pay", stream=stream)
        assert asked == (
            'May I call transfer with {"amount": 100, "to": "Ada"}?'
            " [approve, reject (or 'reject: <why>') or 'edit: <the arguments as JSON>']"
        )
        done = _say(client, "bank", 'edit: {"amount": 40, "to": "Ada"}', "pay", stream=stream)
    assert SENT == [{"amount": 40, "to": "Ada"}]
    assert done.endswith("sent 40 to Ada"), done
