"""Settings from the environment and podium.toml, and opening stores."""

from __future__ import annotations

import re
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
    # settings refuse it when made, as Settings.load() does
    with pytest.raises(UsageError, match=f"bad setting store: expected text or a path, not {type(store).__name__}"):
        Settings(store=store, data_dir=tmp_path / "d")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=f"bad setting data_dir: expected text or a path, not {type(store).__name__}"):
        Settings(data_dir=store)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []  # no file named 5 (or anything else)


async def test_a_store_given_as_a_path_or_a_text_data_dir_opens(tmp_path: Path) -> None:
    by_path = open_store(tmp_path / "p.db", settings=Settings())
    in_folder = open_store(settings=Settings(data_dir=str(tmp_path / "d")))  # type: ignore[arg-type]
    assert isinstance(by_path, SQLiteStore) and by_path.path == str(tmp_path / "p.db")
    assert isinstance(in_folder, SQLiteStore) and in_folder.path == str(tmp_path / "d" / "podium.db")
    for store in (by_path, in_folder):
        await store.close()


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"PODIUM_MODEL": "m", "PODIUM_BASE_URL": "notaurl"}, "bad setting base_url: 'notaurl' is not an http"),
        ({"PODIUM_MODEL": "m", "OPENAI_BASE_URL": "localhost:11434/v1"}, "bad setting base_url: 'localhost:11434/v1'"),
        ({"PODIUM_BASE_URL": "ftp://models.example/v1"}, "bad setting base_url: 'ftp://models.example/v1'"),
        ({"PODIUM_BASE_URL": "http:///v1"}, "bad setting base_url: 'http:///v1' is not an http"),
        ({"PODIUM_BASE_URL": "http://[::1/v1"}, r"bad setting base_url: 'http://\[::1/v1'"),
        ({"PODIUM_AZURE_ENDPOINT": "my-resource.openai.azure.com"}, "bad setting azure_endpoint"),
        ({"PODIUM_MODEL": " "}, "bad setting model: ' ' is blank; give a value, or leave it unset"),
        ({"PODIUM_MODEL": "\t\n"}, "bad setting model: .* is blank"),
        ({"PODIUM_API_KEY": "  "}, "bad setting api_key: .* is blank"),
        ({"PODIUM_STORE": " "}, "bad setting store: .* is blank"),
    ],
)
def test_settings_that_cannot_work_are_refused_when_read(variables: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        Settings.load(env=variables)


@pytest.mark.parametrize(
    "url", ["http://localhost:11434/v1", "https://api.example.com/v1", "http://127.0.0.1:18610/v1", "HTTP://[::1]:8/v1"]
)
def test_http_endpoints_are_taken(url: str) -> None:
    assert Settings.load(env={"PODIUM_MODEL": "m", "PODIUM_BASE_URL": url}).base_url == url


def test_an_endpoint_in_a_settings_file_is_checked_too(tmp_path: Path) -> None:
    file = tmp_path / "podium.toml"
    file.write_text('[podium]\nbase_url = "127.0.0.1:8080"\n')
    with pytest.raises(UsageError, match=r"bad setting base_url: '127\.0\.0\.1:8080' is not an http"):
        Settings.load(env={}, file=file)


@pytest.mark.parametrize("store", ["5", "0", " 42 ", "2024"])
def test_a_store_that_is_a_bare_number_is_refused_as_in_a_settings_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"the store setting is a bare number, .*\(\./\d+ for a file of that name\)"):
        open_store(settings=Settings.load(env={"PODIUM_STORE": store}))
    with pytest.raises(UsageError, match="the store is a bare number"):
        open_store(store, settings=Settings())
    assert list(tmp_path.iterdir()) == []  # no file named 5


async def test_a_file_named_by_a_number_is_still_reachable(tmp_path: Path) -> None:
    for spec in (f"{tmp_path}/5", "sqlite:///" + str(tmp_path / "5"), str(tmp_path / "5.db")):
        store = open_store(spec, settings=Settings())
        assert isinstance(store, SQLiteStore)
        await store.close()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"timeout": -1}, "bad setting timeout: -1 is out of range"),
        ({"timeout": 0}, "bad setting timeout: 0 is out of range"),
        ({"timeout": float("nan")}, "bad setting timeout: nan is out of range"),
        ({"timeout": "60"}, "bad setting timeout: expected a number, not str '60'"),
        ({"timeout": True}, "bad setting timeout: expected a number, not bool"),
        ({"max_tokens": 0}, "bad setting max_tokens: 0 is out of range"),
        ({"max_tokens": 2.5}, "bad setting max_tokens: 2.5 is not a whole number"),
        ({"max_retries": -3}, "bad setting max_retries: -3 is out of range"),
        ({"durability": "bogus"}, "bad setting durability: 'bogus'; choose full or process"),
        ({"tool_format": "xml"}, "bad setting tool_format: 'xml'; choose native or text"),
        ({"classifier": "smart"}, "bad setting classifier: 'smart'; choose router, llm or hybrid"),
        ({"store": 5}, "bad setting store: expected text or a path, not int 5"),
        ({"data_dir": None}, "bad setting data_dir: expected text or a path, not NoneType"),
        ({"model": " "}, "bad setting model: ' ' is blank"),
        ({"model": ""}, "bad setting model: '' is blank"),
        ({"store": ""}, "bad setting store: '' is blank"),
        ({"model": 5}, "bad setting model: expected text, not int 5"),
        ({"base_url": "localhost:11434/v1"}, "bad setting base_url: 'localhost:11434/v1' is not an http"),
    ],
)
def test_settings_made_directly_are_checked_as_loaded_ones(fields: dict[str, object], message: str) -> None:
    import dataclasses

    with pytest.raises(UsageError, match=re.escape(message)):
        Settings(**fields)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=re.escape(message)):
        dataclasses.replace(Settings(), **fields)


def test_a_field_set_afterwards_is_checked_too() -> None:
    settings = Settings(timeout=5)
    with pytest.raises(UsageError, match="bad setting timeout: expected a number, not str 'soon'"):
        settings.timeout = "soon"  # type: ignore[assignment]
    with pytest.raises(UsageError, match="bad setting store: expected text or a path, not int 5"):
        settings.store = 5  # type: ignore[assignment]
    assert settings.timeout == 5 and settings.store is None  # nothing was set
    settings.data_dir = "/srv/podium"  # type: ignore[assignment]
    assert settings.data_dir == Path("/srv/podium")  # converted as when made


def test_an_empty_variable_is_unset_not_blank() -> None:
    assert Settings.load(env={"PODIUM_STORE": "", "PODIUM_MODEL": ""}).store is None


def test_settings_made_directly_take_what_load_takes() -> None:
    made = Settings(timeout=5, max_tokens=3, max_retries=0, data_dir="/srv/podium", durability="process")  # type: ignore[arg-type]
    assert (made.timeout, made.data_dir, made.durability) == (5, Path("/srv/podium"), "process")
    loaded = Settings.load(
        env={
            "PODIUM_TIMEOUT": "5",
            "PODIUM_MAX_TOKENS": "3",
            "PODIUM_MAX_RETRIES": "0",
            "PODIUM_DATA_DIR": "/srv/podium",
            "PODIUM_DURABILITY": "process",
        }
    )
    assert loaded == made


@pytest.mark.parametrize(
    "variables",
    [
        {"PODIUM_TIMEOUT": "-1"},
        {"PODIUM_MAX_RETRIES": "many"},
        {"PODIUM_MAX_TOKENS": "0"},
        {"PODIUM_MODEL": " "},
        {"PODIUM_BASE_URL": "notaurl"},
        {"PODIUM_CLASSIFIER": "smart"},
        {"PODIUM_TOOL_FORMAT": "xml"},
        {"PODIUM_DATA_DIR": " "},
    ],
)
async def test_opening_a_store_reads_only_the_settings_it_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    for variable, value in variables.items():
        monkeypatch.setenv(variable, value)
    assert isinstance(open_store("memory"), MemoryStore)
    store = open_store(tmp_path / "explicit.db")
    assert isinstance(store, SQLiteStore)
    await store.close()
    with pytest.raises(UsageError, match="bad setting"):  # the podium command and Settings.load() check them all
        Settings.load()


def test_opening_a_store_checks_the_settings_it_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODIUM_DURABILITY", "fast")
    assert isinstance(open_store("memory"), MemoryStore)  # a memory store has no durability
    with pytest.raises(UsageError, match="bad setting durability: 'fast'"):
        open_store(tmp_path / "x.db")
    monkeypatch.delenv("PODIUM_DURABILITY")
    monkeypatch.setenv("PODIUM_STORE", "5")
    with pytest.raises(UsageError, match="the store setting is a bare number"):
        open_store()
    assert list(tmp_path.iterdir()) == []
