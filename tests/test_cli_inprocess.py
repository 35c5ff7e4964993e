"""The CLI in-process (typer's runner), for what the subprocess tests cannot see: options and listings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from podium.cli import cli
from podium.events import Expectation

CASSETTE = str(
    Path(__file__).parents[1] / "examples" / "cassettes" / "trip.json"
)  # not replayed: the app has its model


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(Path(__file__).parents[1])
    monkeypatch.setenv("PODIUM_STORE", str(tmp_path / "cli.db"))
    return CliRunner()


def test_chat_threads_and_history(runner: CliRunner) -> None:
    chat = runner.invoke(
        cli, ["chat", "trip"], input="What's the weather in Lisbon?\nSave a note: umbrella for Paris\nno\n"
    )
    assert chat.exit_code == 0, chat.output
    assert "trip_helper> Today in Lisbon: 24 °C, sunny." in chat.output
    assert "? Save this note to your trip notebook: 'umbrella for Paris'? [yes / no]" in chat.output
    assert "trip_helper> Fine, I did not save it." in chat.output
    listing = runner.invoke(cli, ["threads"])
    thread = listing.output.split("\t")[0]
    assert listing.exit_code == 0 and listing.output.strip().endswith("trip_helper")
    history = runner.invoke(cli, ["history", thread])
    events = [json.loads(line) for line in history.output.splitlines()]
    assert [e["status"] for e in events if e["kind"] == "run_ended"] == ["completed", "interrupted", "completed"]
    missing = runner.invoke(cli, ["history", "nope"])
    assert missing.exit_code == 2 and "no thread 'nope'" in missing.output


def test_app_by_file_path_and_bad_store(runner: CliRunner, tmp_path: Path) -> None:
    ok = runner.invoke(
        cli, ["chat", "examples/trip.py", "--jsonl", "--store", "memory"], input="Compare Paris and Oslo\n"
    )
    assert ok.exit_code == 0
    assert any(json.loads(line).get("output", "").startswith("Side by side") for line in ok.stdout.splitlines())
    bad = runner.invoke(cli, ["threads", "--store", "mysql://x"])
    assert bad.exit_code == 2 and "unsupported store" in bad.output


def test_a_conversation_whose_run_stops_at_a_limit_exits_1(runner: CliRunner, tmp_path: Path) -> None:
    looping = tmp_path / "looping_app.py"
    looping.write_text(
        "from podium import ReactAgent\n"
        "from podium.app import App\n"
        "from podium.testing import FunctionModel, tool_call\n\n\n"
        "def ping() -> str:\n"
        '    """Ping."""\n'
        '    return "pong"\n\n\n'
        'model = FunctionModel(lambda messages, request: __import__("podium").AIMessage(tool_calls=[tool_call("ping")]))\n'
        f'app = App(name="looping", build=lambda _: ReactAgent("looping", model, [ping], max_steps=2), cassette={CASSETTE!r})\n'
    )
    chat = runner.invoke(cli, ["chat", str(looping), "--jsonl", "--store", "memory"], input="go\n")
    ended = [json.loads(line) for line in chat.output.splitlines() if '"run_ended"' in line]
    assert [e["status"] for e in ended] == ["limit_exceeded"]
    assert chat.exit_code == 1


def test_chat_shows_a_supervisor_s_answer_once_and_no_hand_back_bookkeeping(runner: CliRunner) -> None:
    question = "what's the combined headcount of the FAANG companies in 2024?"
    chat = runner.invoke(cli, ["chat", "faang", "--store", "memory"], input=question + "\n")
    assert chat.exit_code == 0, chat.output
    answer = "The combined headcount of the FAANG companies in 2024 is 1,977,586."
    replies = [line for line in chat.output.splitlines() if re.match(r"\w+> ", line)]
    assert replies == [f"supervisor> {answer}"]  # the top-level agent's answer, once
    assert "Transferring back" not in chat.output and "transfer_back_to_supervisor" not in chat.output
    assert "  research_expert: The individual headcounts" in chat.output  # a worker's report, indented
    assert f"  math_expert: {answer}" in chat.output
    # --jsonl keeps every event, the bookkeeping too
    jsonl = runner.invoke(cli, ["chat", "faang", "--jsonl", "--store", "memory"], input=question + "\n")
    said = [json.loads(line) for line in jsonl.output.splitlines() if line.startswith("{")]
    backs = [e for e in said if e["kind"] == "message" and e["message"]["metadata"].get("handoff_back")]
    assert len(backs) == 4  # two experts, each an AI message and its tool result


def test_the_chat_shows_how_to_answer_a_tool_approval(capsys: pytest.CaptureFixture[str]) -> None:
    from podium.cli import _Printer
    from podium.events import Expectation, Interrupt, InterruptRaised

    asked = Interrupt(id="k", path=("banker", "c1"), prompt="May I call transfer?", expectation=Expectation.approval())
    _Printer(jsonl=False)(InterruptRaised(interrupt=asked))
    shown = capsys.readouterr().out
    assert "? May I call transfer? [approve, reject (or 'reject: <why>') or 'edit: <the arguments as JSON>']" in shown


@pytest.mark.parametrize(
    ("prompt", "expectation", "shown"),
    [
        ("Which colour?", Expectation(type="choice", options=["red", "blue"]), "? Which colour? [red / blue]"),
        (
            "Pickup?",
            Expectation(type="choice", options=["pharmacy pickup", "home delivery"]),
            "? Pickup? [pharmacy pickup / home delivery]",
        ),
        ("Save it?", Expectation(type="choice", options=["yes", "no"]), "? Save it? [yes / no]"),
        (
            "Save it to the notebook?",
            Expectation(type="choice", options=["yes", "no"]),
            "? Save it to the notebook? [yes / no]",
        ),  # no in notebook
        (
            "Which colour? (Please answer red or blue.)",
            Expectation(type="choice", options=["red", "blue"]),
            "? Which colour? (Please answer red or blue.)",
        ),
        ("Red or Blue?", Expectation(type="choice", options=["red", "blue"]), "? Red or Blue?"),
        (
            "May I call refund? (Please answer " + Expectation.approval().hint() + ".)",
            Expectation.approval(),
            "? May I call refund? (Please answer " + Expectation.approval().hint() + ".)",
        ),
        ("Your name?", None, "? Your name?"),
    ],
)
def test_a_question_shows_how_to_answer_once_with_choices_as_the_http_endpoints_write_them(
    capsys: pytest.CaptureFixture[str], prompt: str, expectation: Expectation | None, shown: str
) -> None:
    from podium.cli import _Printer
    from podium.events import Interrupt, InterruptRaised

    asked = Interrupt(id="k", path=("a", "c1"), prompt=prompt, expectation=expectation)
    _Printer(jsonl=False)(InterruptRaised(interrupt=asked))
    assert capsys.readouterr().out.rstrip("\n") == shown


@pytest.mark.parametrize(
    "problem",
    [
        'connection failed: connection to server at "127.0.0.1", port 1 failed: Connection refused\n\tIs the server '
        "running on that host and accepting TCP/IP connections?",
        "cannot open the database\n\n  the disk is full",
    ],
)
def test_an_unreachable_store_is_one_line_and_no_thread_is_named(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, problem: str
) -> None:
    from podium import MemoryStore, StoreError

    class Unreachable(MemoryStore):
        async def get_thread(self, thread_id: str) -> None:
            raise StoreError(problem)

    monkeypatch.setattr("podium.cli.open_store", lambda spec, settings: Unreachable())
    chat = runner.invoke(cli, ["chat", "trip"], input="What's the weather in Lisbon?\n")
    assert chat.exit_code == 2
    assert "continue later" not in chat.output and "thread " not in chat.output
    assert chat.output.splitlines()[-1] == "error: " + " ".join(problem.split())
