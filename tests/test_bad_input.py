"""Bad input gets one clear error and leaves nothing behind (issue 9, item 9).

The command line is run through its real entry point (``python -m podium``): each refusal is one ``error:`` line on
stderr and exit status 2, and no data folder, database file or thread appears. The Python API raises a typed
:class:`PodiumError` before anything is created.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from podium import (
    AIMessage,
    HumanMessage,
    Limits,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    Settings,
    SQLiteStore,
    StoreError,
    ToolMessage,
    UsageError,
    open_store,
)
from podium.testing import FunctionModel, ScriptedModel, tool_call

ROOT = Path(__file__).parents[1]


def podium(
    tmp_path: Path, *args: str, stdin: bytes = b"", timeout: float = 60, **env: str
) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, "PODIUM_DATA_DIR": str(tmp_path / "data"), **env}
    return subprocess.run(
        [sys.executable, "-m", "podium", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env=environment,
        timeout=timeout,
    )


def refused(result: subprocess.CompletedProcess[bytes], *words: str) -> str:
    """The one ``error:`` line of a refused command (exit status 2, no traceback)."""
    err = result.stderr.decode()
    lines = [line for line in err.splitlines() if not line.startswith("app ")]  # chat names the app's file first
    assert result.returncode == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for word in words:
        assert word in lines[0]
    return lines[0]


def _settings_file(tmp_path: Path, text: str) -> Path:
    file = tmp_path / "settings.toml"
    file.write_text(text)
    return file


BAD_SETTINGS = [
    ("[podium]\nstore = 5\n", "bad setting store (in"),
    ("[podium]\ntimeout = [1, 2]\n", "bad setting timeout (in"),
    ("podium = 5\n", "'podium' must be a table"),
    ("[podium]\ntimeout = -1\n", "timeout"),
    ("[podium]\nmax_retries = -2\n", "max_retries"),
    ("[podium]\ndata_dir = 3\n", "bad setting data_dir"),
    ("[podium]\ntimeout = true\n", "expected a number"),
    ("[podium]\nmax_tokens = 2.5\n", "not a whole number"),
    ("[podium]\nmax_tokens = inf\n", "not a whole number"),
]


@pytest.mark.parametrize(("text", "words"), BAD_SETTINGS)
def test_a_settings_file_with_wrong_types_is_refused(tmp_path: Path, text: str, words: str) -> None:
    file = _settings_file(tmp_path, text)
    with pytest.raises(UsageError, match=words.replace("(", r"\(").replace("[", r"\[")):
        Settings.load(env={"PODIUM_SETTINGS": str(file)})


def test_the_command_refuses_a_bad_settings_file_and_creates_nothing(tmp_path: Path) -> None:
    for text, words in BAD_SETTINGS[:3]:
        file = _settings_file(tmp_path, text)
        refused(podium(tmp_path, "threads", PODIUM_SETTINGS=str(file)), words)
    assert not (tmp_path / "data").exists()


def test_a_missing_settings_file_is_an_error_not_ignored(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"absent.toml \(named by PODIUM_SETTINGS\) does not exist"):
        Settings.load(env={"PODIUM_SETTINGS": str(tmp_path / "absent.toml")})
    with pytest.raises(UsageError, match=r"named by the caller"):
        Settings.load(env={}, file=tmp_path / "absent.toml")
    (tmp_path / "folder.toml").mkdir()
    with pytest.raises(UsageError, match="cannot read settings file"):
        Settings.load(env={}, file=tmp_path / "folder.toml")
    (tmp_path / "latin1.toml").write_bytes(b"[podium]\nmodel = '\xe9'\n")
    with pytest.raises(UsageError, match="cannot read settings file"):
        Settings.load(env={}, file=tmp_path / "latin1.toml")
    refused(podium(tmp_path, "threads", PODIUM_SETTINGS=str(tmp_path / "absent.toml")), "does not exist")
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    ("variable", "value"),
    [("PODIUM_TIMEOUT", "-1"), ("PODIUM_TIMEOUT", "0"), ("PODIUM_TIMEOUT", "nan"), ("PODIUM_MAX_RETRIES", "-1")],
)
def test_negative_timeouts_and_retries_are_refused_in_settings(tmp_path: Path, variable: str, value: str) -> None:
    with pytest.raises(UsageError, match="out of range"):
        Settings.load(env={variable: value})
    refused(podium(tmp_path, "threads", **{variable: value}), "out of range")
    assert not (tmp_path / "data").exists()


def test_settings_within_range_still_load() -> None:
    settings = Settings.load(env={"PODIUM_TIMEOUT": "0.5", "PODIUM_MAX_RETRIES": "0", "PODIUM_MAX_TOKENS": "3"})
    assert (settings.timeout, settings.max_retries, settings.max_tokens) == (0.5, 0, 3)


@pytest.mark.parametrize(
    "limits",
    [
        {"timeout": -1},
        {"timeout": 0},
        {"timeout": float("nan")},
        {"timeout": "5"},
        {"max_model_calls": -1},
        {"max_tokens": -5},
        {"max_tokens": True},
    ],
)
def test_limits_that_cannot_be_met_are_refused(limits: dict[str, Any]) -> None:
    with pytest.raises(UsageError, match="Limits"):
        Limits(**limits)


def test_runtime_options_out_of_range_are_refused() -> None:
    with pytest.raises(UsageError, match="lease_ttl"):
        Runtime(lease_ttl=-1)
    with pytest.raises(UsageError, match="busy_poll"):
        Runtime(busy_poll=-0.5)
    assert Limits(max_model_calls=0, timeout=1).max_model_calls == 0


@pytest.mark.parametrize(
    "args",
    [
        ["threads", "--limit", "-1"],
        ["threads", "--bogus"],
        ["serve", "--workers", "0"],
        ["chat"],
    ],
)
def test_a_command_line_that_does_not_parse_is_one_error_line(tmp_path: Path, args: list[str]) -> None:
    line = refused(podium(tmp_path, *args))
    assert f"see python -m podium {args[0]} --help" in line
    assert not (tmp_path / "data").exists()


def _jwks_files(tmp_path: Path) -> tuple[Path, Path]:
    """A JSON file that is not a key set, and a key set with no key."""
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "empty.json").write_text('{"keys": []}')
    (tmp_path / "key.pem").write_text("-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n")
    return tmp_path / "list.json", tmp_path / "empty.json"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--log-level", "loud"], "unknown log level 'loud'"),
        (["--port", "99999"], "'--port'"),
        (["--port", "-1"], "'--port'"),
        (["--lease-ttl", "inf"], "'--lease-ttl'"),
        (["--jwks", "/nonexistent/jwks.json"], "cannot read the JWKS file /nonexistent/jwks.json"),
        (["--jwks", "{tmp}/list.json"], "is not a key set"),
        (["--jwks", "{tmp}/empty.json"], "is not a key set"),
        (["--jwt-public-key", "{tmp}/key.pem"], "key.pem: the JWT public key is not an RSA public key in PEM"),
        (["--workers", "2"], "--workers 2 needs a PostgreSQL store"),
    ],
)
def test_serve_refuses_bad_options_before_it_listens_or_makes_a_store(
    tmp_path: Path, args: list[str], words: str
) -> None:
    _jwks_files(tmp_path)
    store = tmp_path / "s.db"
    options = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    refused(podium(tmp_path, "serve", "trip", "--port", "0", "--store", str(store), *options, timeout=20), words)
    assert not list(tmp_path.glob("s.db*"))  # neither the file nor its -wal and -shm
    assert not (tmp_path / "data").exists()


def test_threads_takes_a_limit_larger_than_the_store_counts(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    assert podium(tmp_path, "chat", "trip", "--store", store, stdin=b"Weather in Paris\n").returncode == 0
    listed = podium(tmp_path, "threads", "--limit", str(2**70), "--store", store)
    assert listed.returncode == 0, listed.stderr.decode()
    assert len(listed.stdout.decode().splitlines()) == 1


def test_a_store_folder_that_cannot_be_created_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(StoreError, match="cannot create the folder"):
        SQLiteStore(tmp_path / "a-file" / "sub" / "podium.db")
    refused(podium(tmp_path, "keys", "list", "--store", str(tmp_path / "a-file" / "x.db")), "cannot create the folder")
    with pytest.raises(StoreError, match="is a folder, not a database file"):
        SQLiteStore(tmp_path)
    # a database that cannot be opened leaves no folder it made for it
    with pytest.raises(StoreError, match="cannot open"):
        SQLiteStore(tmp_path / "new" / "deeper" / ("x" * 300))
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    ("store", "words"),
    [("", "store path is empty"), ("sqlite://", "store path is empty"), ("mysql://h/db", "unsupported store")],
)
def test_bad_store_urls_are_refused(tmp_path: Path, store: str, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        open_store(store, settings=Settings())
    refused(podium(tmp_path, "threads", "--store", store), words)
    assert not (tmp_path / "data").exists()


def test_unknown_app_names_are_one_error_line(tmp_path: Path) -> None:
    refused(podium(tmp_path, "chat", "no_such_app", "--store", str(tmp_path / "s.db")), "no app 'no_such_app'")
    assert not (tmp_path / "s.db").exists()


# the runtime ------------------------------------------------------------------------------------------------------
def _asker() -> ReactAgent:
    async def confirm(ctx: RunContext[Any], what: str) -> str:
        """Ask the human to confirm ``what``."""
        return await ctx.ask(f"confirm {what}?")

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content="answer: " + messages[-1].content)
        return AIMessage(tool_calls=[tool_call("confirm", {"what": "it"}, id="c0")])

    return ReactAgent("asker", FunctionModel(model), [confirm])


async def test_a_lone_surrogate_is_refused_before_the_thread_exists(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    runtime = Runtime(store)
    agent = ReactAgent("x", ScriptedModel([]))
    try:
        with pytest.raises(UsageError, match=r"lone surrogate '\\ud800' at position 3"):
            await runtime.run(agent, "hi \ud800", thread_id="t")
        with pytest.raises(UsageError, match="lone surrogate"):
            await runtime.send(agent, "hi \udcff", thread_id="t")
        with pytest.raises(UsageError, match="the input message"):
            await runtime.run(agent, HumanMessage(content="hi", name="\ud800"), thread_id="t")
        with pytest.raises(UsageError, match="thread_id"):
            await runtime.run(agent, "hi", thread_id="t\ud800")
        assert await store.list_threads() == []
    finally:
        await store.close()


def test_the_command_refuses_undecodable_input_and_stores_no_thread(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    result = podium(
        tmp_path, "chat", "trip", "--store", str(db), stdin=b"hi \xff\xfe\n", PYTHONIOENCODING="utf-8:surrogateescape"
    )
    refused(result, "lone surrogate")

    async def threads() -> list[Any]:
        store = SQLiteStore(db)
        try:
            return await store.list_threads()
        finally:
            await store.close()

    assert asyncio.run(threads()) == []


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (42, "must be text, or a dict of texts by interrupt id, not int 42"),
        (["yes"], "not list"),
        ({"asker/c0@3#1": 5}, "must be text, not int"),
        ({1: "yes"}, "keyed by interrupt id"),
        ({}, "are empty"),
        ("y\ud800", "lone surrogate"),
    ],
)
async def test_resume_refuses_an_answer_that_is_not_text(tmp_path: Path, answer: Any, words: str) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    runtime = Runtime(store)
    agent = _asker()
    try:
        assert (await runtime.run(agent, "go", thread_id="t")).status == "interrupted"
        before = await store.read_events("t")
        with pytest.raises(UsageError, match=words.replace("[", r"\[")):
            await runtime.resume(agent, "t", answer)
        assert await store.read_events("t") == before
        assert (await store.last_run("t")).status == "interrupted"  # type: ignore[union-attr]
        done = await runtime.resume(agent, "t", "yes")  # a good answer still works
        assert (done.status, done.output) == ("completed", "answer: yes")
    finally:
        await store.close()


@pytest.mark.parametrize(
    "options",
    [{"if_busy": "later"}, {"busy_timeout": -1}, {"thread_id": ""}, {"thread_id": 7}, {"run_id": "  "}],
)
async def test_bad_call_options_are_refused_before_anything_is_created(tmp_path: Path, options: dict[str, Any]) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    runtime = Runtime(store)
    agent = _asker()
    try:
        for call in (runtime.run, runtime.send):
            with pytest.raises(UsageError):
                await call(agent, "go", **{"thread_id": "t", **options})
        assert await store.list_threads() == []
        await runtime.run(agent, "go", thread_id="t")
        rest = {k: v for k, v in options.items() if k != "thread_id"}
        with pytest.raises(UsageError):
            await runtime.resume(agent, options.get("thread_id", "t"), "yes", **rest)
        assert (await store.last_run("t")).status == "interrupted"  # type: ignore[union-attr]
    finally:
        await store.close()
