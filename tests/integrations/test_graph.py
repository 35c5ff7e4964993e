"""``podium graph APP``: Mermaid drawings of the examples and of each orchestration's shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from podium import Agent, AgentResult, HumanMessage, ReactAgent, RunContext
from podium.cli import cli
from podium.graph import mermaid
from podium.orchestration.master import MasterAgent
from podium.orchestration.supervisor import create_swarm
from podium.testing import FunctionModel

MODEL = FunctionModel(lambda messages, request: "ok")


def lookup(key: str) -> str:
    """Look a key up."""
    return key


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(Path(__file__).parents[2])
    return CliRunner()


def test_the_faang_supervisor_is_drawn_with_its_workers_and_their_tools(runner: CliRunner) -> None:
    drawn = runner.invoke(cli, ["graph", "faang"])
    assert drawn.exit_code == 0, drawn.output
    assert drawn.output == (
        "flowchart TD\n"
        '    n1["supervisor<br/><i>supervisor</i>"]\n'
        '    n2["research_expert<br/><i>ReAct agent</i>"]\n'
        '    n3(["web_search"])\n'
        "    n2 --> n3\n"
        "    n1 -->|transfer_to_research_expert| n2\n"
        '    n4["math_expert<br/><i>ReAct agent</i>"]\n'
        '    n5(["add"])\n'
        "    n4 --> n5\n"
        '    n6(["multiply"])\n'
        "    n4 --> n6\n"
        "    n1 -->|transfer_to_math_expert| n4\n"
    )


def test_a_task_tree_and_the_master_agents_tools(runner: CliRunner) -> None:
    tasks = runner.invoke(cli, ["graph", "tasks-demo"]).output
    assert '    n1["coordinator<br/><i>task</i>"]\n' in tasks
    assert "    n1 -->|sub-task| n2\n" in tasks and "    n6 -->|sub-task| n7\n" in tasks
    assert '    n5(["divide"])\n    n2 --> n5\n' in tasks
    assert '    n8(["get_weather"])\n    n7 --> n8\n' in tasks
    master = runner.invoke(cli, ["graph", "smart-investigator"]).output
    assert master.splitlines()[1:] == [
        '    n1["smart_investigator<br/><i>master agent</i>"]',
        '    n2(["DeclineLetterAssistance"])',
        "    n1 --> n2",
        '    n3(["SmartStrategy"])',
        "    n1 --> n3",
    ]
    missing = runner.invoke(cli, ["graph", "no-such-app"])
    assert missing.exit_code == 2 and "no app 'no-such-app'" in missing.output


def test_a_master_agent_with_agents_and_a_swarm() -> None:
    helper = ReactAgent("helper", MODEL, [lookup], description="Helps.")
    master = MasterAgent([helper, helper.as_tool(name="ask_helper"), lookup], name="desk")
    assert mermaid(master).splitlines()[1:] == [
        '    n1["desk<br/><i>master agent</i>"]',
        '    n2["helper<br/><i>ReAct agent</i>"]',
        '    n3(["lookup"])',
        "    n2 --> n3",
        "    n1 --> n2",
        '    n4(["ask_helper"])',
        "    n1 --> n4",
        '    n5(["lookup"])',
        "    n1 --> n5",
    ]
    alice, bob = ReactAgent("alice", MODEL), ReactAgent("bob", MODEL, [lookup])
    swarm = create_swarm([alice, bob], default_active_agent="alice")
    assert mermaid(swarm).splitlines()[1:] == [
        '    n1["swarm<br/><i>swarm</i>"]',
        '    n2["alice<br/><i>ReAct agent</i>"]',
        '    n3["bob<br/><i>ReAct agent</i>"]',
        '    n4(["lookup"])',
        "    n3 --> n4",
        "    n1 -->|starts| n2",
        "    n1 --> n3",
        "    n2 -.->|transfer_to_bob| n3",
        "    n3 -.->|transfer_to_alice| n2",
    ]


def test_an_app_without_a_model_is_drawn_with_a_stand_in(tmp_path: Path) -> None:
    source = tmp_path / "bare.py"
    source.write_text(
        "from podium import ReactAgent\nfrom podium.app import App\n"
        'app = App(name="bare", build=lambda model: ReactAgent("bare-one", model))\n'
    )
    from podium.graph import draw_app

    assert draw_app(str(source)) == 'flowchart TD\n    n1["bare-one<br/><i>ReAct agent</i>"]\n'


def test_quotes_in_an_agents_name_are_escaped() -> None:
    class Quoted(Agent):
        name = 'bare "one"'

        async def invoke(self, ctx: RunContext[Any], input: HumanMessage) -> AgentResult:
            return AgentResult(output="")

    assert mermaid(Quoted()) == 'flowchart TD\n    n1["bare #quot;one#quot;<br/><i>Quoted</i>"]\n'


def test_a_plan_agent_is_drawn_with_its_specialists(runner: CliRunner) -> None:
    drawn = runner.invoke(cli, ["graph", "plan-service"]).output.splitlines()
    assert drawn[1] == '    n1["plan-service<br/><i>plan and execute</i>"]'
    assert drawn[2] == '    n2["HrAgent<br/><i>ReAct agent</i>"]'
    steps = [line for line in drawn if "|steps for " in line]
    assert len(steps) == 7 and all(line.startswith("    n1 -->|steps for ") for line in steps)
    assert sum(1 for line in drawn if line.endswith('"])')) == 159  # every stand-in tool once, and each cannot_do_step
