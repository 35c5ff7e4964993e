"""Settings from the environment and podium.toml, and opening stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium import MemoryStore, Settings, SQLiteStore, UsageError, open_store
from podium.models.openai import OpenAIModel


def test_environment_configures_a_real_model() -> None:
    settings = Settings.load(
        env={"PODIUM_MODEL": "m1", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "PODIUM_TIMEOUT": "5"}
    )
    model = settings.model_or_none()
    assert isinstance(model, OpenAIModel)
    assert (model.name, model.base_url, model.timeout) == ("m1", "http://127.0.0.1:9/v1", 5.0)
    assert Settings.load(env={}).model_or_none() is None


def test_settings_file_is_read_and_the_environment_wins(tmp_path: Path) -> None:
    file = tmp_path / "podium.toml"
    file.write_text('[podium]\nmodel = "from-file"\nmax_retries = 4\ndata_dir = "/srv/podium"\n')
    settings = Settings.load(env={"PODIUM_SETTINGS": str(file), "PODIUM_MODEL": "from-env"})
    assert (settings.model, settings.max_retries, settings.data_dir) == ("from-env", 4, Path("/srv/podium"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[podium]\nmodle = 'x'\n", "unknown keys modle"),
        ("[podium\n", "not valid TOML"),
        ("store = 'memory'\n", r"store must be under the \[podium\] table"),  # not silently the default store
    ],
)
def test_bad_settings_file_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "podium.toml"
    file.write_text(text)
    with pytest.raises(UsageError, match=message):
        Settings.load(env={}, file=file)


def test_bad_values_are_clear_errors() -> None:
    with pytest.raises(UsageError, match="bad setting"):
        Settings.load(env={"PODIUM_TIMEOUT": "soon"})
    with pytest.raises(UsageError, match="needs a model name"):
        OpenAIModel("")


async def test_open_store_variants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert isinstance(open_store("memory"), MemoryStore)
    default = open_store(settings=Settings(data_dir=tmp_path / "d"))
    assert isinstance(default, SQLiteStore) and default.path == str(tmp_path / "d" / "podium.db")
    url = open_store(f"sqlite:///{tmp_path}/u.db")  # tmp_path is absolute: four slashes in all
    assert isinstance(url, SQLiteStore) and url.path == f"{tmp_path}/u.db"
    relative = open_store("sqlite:///relative.db", settings=Settings())
    assert isinstance(relative, SQLiteStore) and relative.path == "relative.db"
    for store in (default, url, relative):
        await store.close()
    with pytest.raises(UsageError, match="unsupported store"):
        open_store("postgres://db/podium")
