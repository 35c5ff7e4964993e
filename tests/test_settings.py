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


@pytest.mark.parametrize("store", [5, 2.5, True, b"x.db", ["x.db"]])
def test_a_store_that_is_not_text_or_a_path_is_refused_before_anything_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: object
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(data_dir=tmp_path / "d")
    with pytest.raises(UsageError, match=f"the store must be text or a path .*not {type(store).__name__}"):
        open_store(store, settings=settings)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="the store setting must be text or a path"):
        open_store(settings=Settings(store=store, data_dir=tmp_path / "d"))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="the data_dir setting must be text or a path"):
        open_store(settings=Settings(data_dir=store))  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []  # no file named 5 (or anything else)


async def test_a_store_given_as_a_path_or_a_text_data_dir_opens(tmp_path: Path) -> None:
    by_path = open_store(tmp_path / "p.db", settings=Settings())
    in_folder = open_store(settings=Settings(data_dir=str(tmp_path / "d")))  # type: ignore[arg-type]
    assert isinstance(by_path, SQLiteStore) and by_path.path == str(tmp_path / "p.db")
    assert isinstance(in_folder, SQLiteStore) and in_folder.path == str(tmp_path / "d" / "podium.db")
    for store in (by_path, in_folder):
        await store.close()
