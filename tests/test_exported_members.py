"""The package's ``__all__`` lists exactly its public names, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

import podium


def test_all_matches_public_members() -> None:
    public = {
        name
        for name, value in vars(podium).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert set(podium.__all__) == public | {"__version__"}
    for name in podium.__all__:
        assert getattr(podium, name) is not None


@pytest.mark.parametrize("module", ["podium", "podium.orchestration.tasks", "podium.orchestration.supervisor"])
def test_import_does_not_load_heavy_dependencies(module: str) -> None:
    heavy = ("openai", "pydantic", "typer", "rich", "httpx")
    code = f"import sys, {module}; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_result_tool_is_there_when_asked_for() -> None:
    from podium.orchestration import tasks
    from podium.orchestration.tasks import ResultTool, tools

    assert ResultTool is tasks.ResultTool is tools.ResultTool
    with pytest.raises(AttributeError):
        tasks.NoSuchName  # noqa: B018
    with pytest.raises(AttributeError):
        tools.NoSuchName  # noqa: B018


def test_subpackages_export_what_they_list() -> None:
    import podium.orchestration
    import podium.orchestration.master.routing

    for package in (podium.orchestration, podium.orchestration.master.routing):
        for name in package.__all__:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
