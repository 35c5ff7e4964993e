"""Settings reach the choices users make (issue 17 item 6): the classifier is a setting, an app file that fails to
import is one ``error:`` line, and an app loaded by path imports its sibling modules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from podium import Settings, UsageError
from podium.app import load_app
from podium.cli import cli
from podium.models.replay import ReplayModel
from podium.models.test import ScriptedModel
from podium.orchestration.master import HybridClassifier, LLMClassifier, Router, classifier_for

ROOT = Path(__file__).parents[1]


def test_the_classifier_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from examples.smart_investigator import build

    model = ScriptedModel([])
    monkeypatch.delenv("PODIUM_CLASSIFIER", raising=False)
    assert isinstance(build(model).classifier, HybridClassifier)  # a real model: the hybrid by default
    assert isinstance(build().classifier, Router)  # offline: the router
    monkeypatch.setenv("PODIUM_CLASSIFIER", "router")
    assert isinstance(build(model).classifier, Router)
    monkeypatch.setenv("PODIUM_CLASSIFIER", "llm")
    chosen = build(model).classifier
    assert isinstance(chosen, LLMClassifier) and chosen.model is model
    with pytest.raises(UsageError, match="the llm classifier needs a model: set PODIUM_MODEL"):
        build(ReplayModel(ROOT / "examples" / "cassettes" / "smart_investigator.json"))
    monkeypatch.setenv("PODIUM_CLASSIFIER", "smart")
    with pytest.raises(UsageError, match="bad setting classifier: 'smart'; choose router, llm or hybrid"):
        Settings.load()
    with pytest.raises(UsageError, match="unknown classifier 'smart'; choose one of router, llm, hybrid"):
        classifier_for(model, "smart")
    assert Settings.load(env={"PODIUM_CLASSIFIER": "hybrid"}).classifier == "hybrid"


def test_an_app_file_that_fails_to_import_is_one_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODIUM_STORE", "memory")
    broken = tmp_path / "broken_app.py"
    broken.write_text('"""An app with a bug."""\n\nLIMIT = {"a": 1}["b"]\n')
    monkeypatch.delenv("PODIUM_DEBUG", raising=False)
    result = CliRunner().invoke(cli, ["chat", str(broken)], input="hi\n")
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [
        f"error: cannot load the app file {broken}:3: KeyError: 'b' (set PODIUM_DEBUG=1 for the traceback)"
    ]
    missing = tmp_path / "missing_dep.py"
    missing.write_text("import no_such_module_for_podium\n")
    with pytest.raises(UsageError) as raised:
        load_app(str(missing))
    assert str(raised.value) == (
        f"cannot load the app file {missing}:1: ModuleNotFoundError: No module named 'no_such_module_for_podium'"
    )


def test_an_app_loaded_by_path_imports_its_siblings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "myproject"
    folder.mkdir()
    (folder / "podium_sibling_tools.py").write_text("GREETING = 'hello from a sibling'\n")
    (folder / "bot.py").write_text(
        "from podium_sibling_tools import GREETING\n"
        "from podium.app import App\n"
        "app = App(name='bot', build=lambda model: None, welcome=GREETING)\n"
    )
    monkeypatch.chdir(tmp_path)  # the repo root: the app is named by its path
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "podium_sibling_tools", raising=False)
    assert load_app("myproject/bot.py").welcome == "hello from a sibling"


@pytest.mark.parametrize("kind", ["llm", "hybrid"])
@pytest.mark.parametrize("example", ["smart_investigator.py", "clinic_desk.py"])
def test_the_examples_load_with_any_classifier_chosen(monkeypatch: pytest.MonkeyPatch, kind: str, example: str) -> None:
    """Loading an example app builds no classifier (its welcome lists its tools whichever routes): with
    ``PODIUM_CLASSIFIER=llm`` or ``hybrid`` the app loads, and its agent, built on the model, gets that classifier."""
    monkeypatch.setenv("PODIUM_CLASSIFIER", kind)
    app = load_app(str(ROOT / "examples" / example))
    assert app.welcome.startswith("Hello, I am")
    chosen = app.build(ScriptedModel([])).classifier  # type: ignore[attr-defined]
    assert isinstance(chosen, LLMClassifier if kind == "llm" else HybridClassifier)


def _without_the_repository(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Run from ``folder`` as the installed command does: the repository (and its examples package) not importable,
    the current folder not on ``sys.path``."""
    monkeypatch.chdir(folder)
    here = {ROOT, folder.resolve()}
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p and Path(p).resolve() not in here])
    monkeypatch.delitem(sys.modules, "examples", raising=False)


def test_an_example_name_away_from_the_repository_says_where_the_examples_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without_the_repository(monkeypatch, tmp_path)
    with pytest.raises(UsageError) as raised:
        load_app("trip")
    assert str(raised.value) == (
        "no app 'trip' and no examples/ folder here; the examples ship in the repository's examples/ folder: run "
        "from the repository root, or name an app file (path/to/app.py) or a module (module:attribute)"
    )
    served = CliRunner().invoke(cli, ["serve", "--port", "0", "--store", "memory"])
    assert served.exit_code == 2
    assert served.output.startswith("error: no apps to serve: none named and no examples/ folder here; the examples")
    assert "run from the repository root" in served.output


def test_an_unknown_name_lists_the_examples_and_the_other_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(UsageError, match=r"no app 'nope'; the examples here are .*\btrip\b.*; or name an app file"):
        load_app("nope")


def test_module_attribute_is_found_in_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "podium_cwd_team.py").write_text(
        "from podium.app import App\nteam = App(name='team', build=lambda model: None)\n"
    )
    _without_the_repository(monkeypatch, tmp_path)
    monkeypatch.delitem(sys.modules, "podium_cwd_team", raising=False)
    assert load_app("podium_cwd_team:team").source == (tmp_path / "podium_cwd_team.py").resolve()
    with pytest.raises(UsageError, match="no module named in ':app': write module:attribute"):
        load_app(":app")
    with pytest.raises(UsageError) as raised:
        load_app("podium_no_such_team:app")
    assert str(raised.value) == (
        "cannot import app module 'podium_no_such_team': no module 'podium_no_such_team' in the current folder "
        f"({tmp_path}) or on the import path"
    )


def test_a_missing_app_file_is_said_to_be_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.py").mkdir()
    with pytest.raises(UsageError) as raised:
        load_app("nothere.py")
    assert str(raised.value) == f"no app file nothere.py: it does not exist (in {tmp_path})"
    with pytest.raises(UsageError, match=r"no app file folder\.py: it is a folder"):
        load_app("folder.py")


async def test_an_app_that_cannot_run_offline_names_both_ways_out_at_its_first_model_call() -> None:
    from podium import ReactAgent, Runtime
    from podium.app import App

    app = App(name="t", build=lambda model: ReactAgent("t", model, []))
    result = await Runtime().run(app.build(app.model(Settings())), "hi")
    assert result.status == "failed" and isinstance(result.error, UsageError)
    said = str(result.error)
    assert said.startswith("app 't' has no cassette for offline use and no offline_fallback")
    assert "set PODIUM_MODEL" in said and "cassette=" in said and "offline_fallback=" in said


MASTER_APP = """
from podium.app import App
from podium.orchestration.master import MasterAgent


def order_status(order_id: str) -> str:
    \"\"\"Tell the status of a customer order given its order id.\"\"\"
    return f"Order {order_id} shipped yesterday."


def opening_hours(text: str) -> str:
    \"\"\"Tell the shop's opening hours.\"\"\"
    return "We open 9:00-17:00."


app = App(name="desk", build=lambda model: MasterAgent([order_status, opening_hours], name="desk"){options})
"""


@pytest.mark.parametrize("options", ["", ", welcome='Hello from the desk'"])
def test_an_app_whose_master_agent_routes_offline_needs_no_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: str
) -> None:
    monkeypatch.setenv("PODIUM_STORE", "memory")
    monkeypatch.delenv("PODIUM_MODEL", raising=False)
    source = tmp_path / "desk_app.py"
    source.write_text(MASTER_APP.replace("{options}", options))
    result = CliRunner().invoke(cli, ["chat", str(source)], input="Where is my order?\nORD-1234\nopening hours?\n")
    assert result.exit_code == 0, result.output
    assert "error" not in result.output
    assert "? order_status needs order id: what is it?" in result.output
    assert "desk> Order ORD-1234 shipped yesterday." in result.output
    assert "desk> We open 9:00-17:00." in result.output


BUILDS = {
    "a wrong keyword": (
        "    return create_supervisor([], model=model, name='boss')\n",
        "TypeError: create_supervisor() got an unexpected keyword argument 'name'",
    ),
    "a refused name": (
        "    return ReactAgent('my agent', model, [])\n",
        "UsageError: agent name 'my agent' is not valid: use 1-64 letters, digits, '_' or '-'",
    ),
    "a bug": ("    settings = {}\n    return ReactAgent(settings['name'], model, [])\n", "KeyError: 'name'"),
}


def _app_that_fails_to_build(folder: Path, body: str) -> Path:
    source = folder / "failing_build.py"
    source.write_text(
        "from podium import ReactAgent\nfrom podium.app import App\nfrom podium.orchestration import create_supervisor"
        "\nfrom podium.testing import FunctionModel\n\n\ndef build(model):\n"
        + body
        + "\n\napp = App(name='failing', build=build, offline_fallback=FunctionModel(lambda m, r: 'hi'))\n"
    )
    return source


@pytest.mark.parametrize("case", list(BUILDS))
@pytest.mark.parametrize("command", [["chat"], ["serve", "--port", "0"]])
def test_an_app_whose_build_raises_is_one_error_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, command: list[str]
) -> None:
    monkeypatch.setenv("PODIUM_STORE", "memory")
    monkeypatch.delenv("PODIUM_DEBUG", raising=False)
    monkeypatch.delenv("PODIUM_MODEL", raising=False)
    body, said = BUILDS[case]
    source = _app_that_fails_to_build(tmp_path, body)

    def never(host: str, port: int) -> None:
        raise AssertionError("the server was about to listen: the app was not built first")

    monkeypatch.setattr("podium.cli._listen", never)
    result = CliRunner().invoke(cli, [command[0], str(source), *command[1:]], input="hi\n")
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:") or "Traceback" in line]
    line = body.count("\n") + 7  # the build's last line: the one that raised
    assert errors == [
        f"error: cannot build app 'failing' ({source.resolve()}:{line}): {said} (set PODIUM_DEBUG=1 for the traceback)"
    ]


def test_podium_debug_shows_the_traceback_before_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODIUM_STORE", "memory")
    monkeypatch.setenv("PODIUM_DEBUG", "1")
    source = _app_that_fails_to_build(tmp_path, BUILDS["a bug"][0])
    result = CliRunner().invoke(cli, ["chat", str(source)], input="hi\n")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert "Traceback (most recent call last):" in lines
    assert f'  File "{source}", line 9, in build' in lines
    assert lines[-1] == f"error: cannot build app 'failing' ({source.resolve()}:9): KeyError: 'name'"
