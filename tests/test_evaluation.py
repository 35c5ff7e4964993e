"""``podium eval``: conversations as data, checked turn by turn, in process and one process per turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from podium.cli import cli
from podium.errors import UsageError
from podium.evaluation import Conversation, TurnSpec, load_conversations, run_eval

ROOT = Path(__file__).parents[1]
SEED = ROOT / "evals" / "smart_investigator" / "seed.json"


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PODIUM_STORE", str(tmp_path / "cli.db"))
    return CliRunner()


def write(tmp_path: Path, data: object, name: str = "c.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_shipped_eval_sets_load_and_hold_at_least_forty_conversations() -> None:
    si = load_conversations([ROOT / "evals" / "smart_investigator"])
    clinic = load_conversations([ROOT / "evals" / "clinic_desk"])
    assert len(si) + len(clinic) >= 40 and len(clinic) >= 15
    assert len({c.name for c in si + clinic}) == len(si) + len(clinic)  # names are unique


async def test_the_seed_conversation_holds_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    report = await run_eval("smart-investigator", load_conversations([SEED]))
    assert report.score == 1.0 and report.results[0].passed_turns == 8
    assert report.table().endswith("score: 1/1 conversations (100%)")


async def test_every_kind_of_unmet_expectation_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    wrong = TurnSpec(
        human="I want to craft a declined letter.",
        tools=["SmartStrategy"],
        not_tools=["DeclineLetterAssistance"],
        decision="refuse",
        asks=["Home or Motor"],
        not_asks=["claim id"],
        says=["Letter generated"],
        not_says=["claim id"],
        stack=[],
    )
    nothing = TurnSpec(human="never mind", tools=[], asks=["anything"])
    ran = TurnSpec(human="I want to craft a declined letter.", tools=[])
    report = await run_eval("smart-investigator", [Conversation(name="wrong", turns=[wrong, nothing, ran])])
    result = report.results[0]
    assert not result.passed and result.passed_turns == 0 and report.score == 0.0
    text = "\n".join(result.failures)
    for part in [
        "expected ['SmartStrategy'] to run, ran ['DeclineLetterAssistance']",
        "['DeclineLetterAssistance'] should not run",
        "expected decision 'refuse', got ['route']",
        "the question lacks 'Home or Motor'",
        "the question should not contain 'claim id'",
        "not shown: 'Letter generated'",
        "shown but should not be: 'claim id'",
        "expected the stack [], got ['DeclineLetterAssistance']",
        "turn 2 'never mind': expected a question, the turn ended without one",
        "turn 3 'I want to craft a declined letter.': no tool should run, ran ['DeclineLetterAssistance']",
    ]:
        assert part in text
    data = report.to_dict()
    assert data["passed"] == 0 and data["turns"] == 3 and data["results"][0]["failures"] == result.failures


async def test_one_process_per_turn_gives_the_same_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PODIUM_BLOCK_MODEL_REQUESTS", "1")
    monkeypatch.delenv("PODIUM_MODEL", raising=False)
    data = {"name": "two", "turns": [
        {"human": "I want to craft a declined letter.", "tools": ["DeclineLetterAssistance"], "asks": "claim id"},
        {"human": "My id is 123ABH", "tools": ["DeclineLetterAssistance"], "asks": "Home or Motor",
         "stack": ["DeclineLetterAssistance"]},
        {"human": "Motor", "says": ["Letter generated", "123ABH"], "stack": [], "decision": "refuse"},
    ]}  # fmt: skip
    conversations = load_conversations([write(tmp_path, data)])
    isolated = await run_eval("smart-investigator", conversations, isolated=True)
    inline = await run_eval("smart-investigator", conversations)
    assert isolated.to_dict() == inline.to_dict()
    assert isolated.results[0].passed_turns == 2
    assert isolated.results[0].failures == ["turn 3 'Motor': expected decision 'refuse', got ['route']"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"turns": []}, "non-empty 'turns' list"),
        ({"turns": [{"text": "hi"}]}, "a turn is an object with a 'human' string"),
        ({"turns": [{"human": "hi", "tool": "X"}]}, "unknown keys ['tool']"),
        ({"turns": [{"human": "hi", "asks": 3}]}, "'asks' must be a string or a list of strings"),
        ([], "no conversations found"),
    ],
)
def test_bad_conversation_files_get_clear_errors(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_conversations([write(tmp_path, data)])


def test_unreadable_files_and_shorthand_turns(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read conversations"):
        load_conversations([tmp_path / "missing.json"])
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="cannot read conversations"):
        load_conversations([tmp_path / "bad.json"])
    [one] = load_conversations(
        [write(tmp_path, {"conversations": [{"turns": ["hello", {"human": "x", "stack": "A"}]}]})]
    )
    assert one.name == "c-1" and one.turns[0] == TurnSpec(human="hello") and one.turns[1].stack == ["A"]


def test_the_command_prints_a_table_or_json_and_exits_by_score(runner: CliRunner, tmp_path: Path) -> None:
    ok = runner.invoke(cli, ["eval", "smart-investigator", str(SEED)])
    assert ok.exit_code == 0, ok.output
    assert "seed-demo" in ok.output and "pass" in ok.output and "score: 1/1 conversations (100%)" in ok.output
    failing = write(
        tmp_path, {"name": "f", "turns": [{"human": "I want to commit fraud.", "tools": ["SmartStrategy"]}]}
    )
    bad = runner.invoke(cli, ["eval", "smart-investigator", str(SEED), str(failing), "--json"])
    assert bad.exit_code == 1
    report = json.loads(bad.output)
    assert report["passed"] == 1 and report["conversations"] == 2 and report["score"] == 0.5
    missing = runner.invoke(cli, ["eval", "no-such-app", str(SEED)])
    assert missing.exit_code == 2 and "no app 'no-such-app'" in missing.output


async def test_an_approval_tool_counts_in_the_turn_it_runs_not_the_turn_it_asks(tmp_path: Path) -> None:
    from podium import AIMessage, Message, ModelRequest, ReactAgent, ToolMessage, tool
    from podium.testing import FunctionModel, tool_call

    @tool(approval=True)
    def refund(amount: float) -> str:
        """Refund an amount.

        Args:
            amount: how much.
        """
        return f"refunded {amount}"

    def reply(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=messages[-1].content)
        return AIMessage(tool_calls=[tool_call("refund", {"amount": 99.5})])

    conversations = tmp_path / "refunds.json"
    conversations.write_text(
        json.dumps(
            [
                {"name": "approved", "turns": [
                    {"human": "refund please", "tools": [], "asks": "May I call refund"},
                    {"human": "approve", "tools": ["refund"], "says": "refunded 99.5"},
                ]},
                {"name": "rejected", "turns": [
                    {"human": "refund please", "tools": []},
                    {"human": "no, not needed", "tools": [], "says": "rejected this call of refund"},
                ]},
            ]
        )
    )  # fmt: skip
    agent = ReactAgent("refunds", FunctionModel(reply), [refund])
    report = await run_eval("trip", load_conversations([conversations]), agent=agent)
    assert [r.passed for r in report.results] == [True, True], report.table()
