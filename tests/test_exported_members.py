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
        for name in dir(podium)  # the names imported on first use included
        if not name.startswith("_") and not isinstance(getattr(podium, name), types.ModuleType)
    }
    assert set(podium.__all__) == public | {"__version__"}
    for name in podium.__all__:
        assert getattr(podium, name) is not None


@pytest.mark.parametrize("module", ["podium", "podium.orchestration.tasks", "podium.orchestration.supervisor"])
def test_import_does_not_load_heavy_dependencies(module: str) -> None:
    heavy = ("openai", "pydantic", "typer", "rich", "httpx", "psycopg", "psycopg_pool", "podium.store.postgres")
    if module == "podium":  # nor a store's driver (loaded when the store is first asked for), nor uuid
        heavy += ("sqlite3", "podium.store.sqlite", "uuid")
    code = f"import sys, {module}; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_postgres_store_is_exported_beside_the_other_stores() -> None:
    from podium import MemoryStore, PostgresStore, SQLiteStore
    from podium.store import postgres

    assert PostgresStore is postgres.PostgresStore
    assert issubclass(PostgresStore, podium.Store) and MemoryStore and SQLiteStore
    with pytest.raises(AttributeError):
        podium.NoSuchName  # noqa: B018


def test_postgres_store_without_the_extra_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"  # as if psycopg were not installed
        "import podium\n"
        "try:\n"
        "    podium.PostgresStore('postgresql://u@localhost/db')\n"
        "except podium.UsageError as exc:\n"
        "    print(exc)\n"
    )
    said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'podium[postgres]'" in said


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


def test_forward_message_tool_is_exported_beside_the_handoff_tool() -> None:
    from podium.orchestration import ForwardMessageTool, create_forward_message_tool, create_handoff_tool, supervisor

    assert create_forward_message_tool is supervisor.create_forward_message_tool
    assert create_handoff_tool is supervisor.create_handoff_tool
    assert isinstance(create_forward_message_tool("supervisor"), ForwardMessageTool)
