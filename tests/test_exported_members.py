"""The package's ``__all__`` lists exactly its public names, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys
import types

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


def test_import_does_not_load_heavy_dependencies() -> None:
    code = "import sys, podium; print(sorted(m for m in ('openai', 'pydantic', 'typer', 'rich', 'httpx') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_subpackages_export_what_they_list() -> None:
    import podium.orchestration
    import podium.orchestration.master.routing

    for package in (podium.orchestration, podium.orchestration.master.routing):
        for name in package.__all__:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
