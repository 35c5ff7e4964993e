"""Every failure a user can meet is a PodiumError; control-flow signals are public and kept apart."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import podium
import podium.errors
from podium import (
    InvalidData,
    LimitReached,
    ModelRetry,
    PodiumError,
    ReactAgent,
    Runtime,
    SQLiteStore,
    StoreCorrupt,
    Suspended,
    Tool,
    ToolArgumentsError,
    UsageError,
    event_from_dict,
    message_from_dict,
)
from podium.orchestration.master import as_master_tool
from podium.store._rows import message_from_row
from podium.testing import ScriptedModel

SIGNALS = {"ModelRetry", "QuestionDeclined", "Suspended", "LimitReached"}


def test_every_error_is_a_podium_error_and_no_signal_is() -> None:
    for name in podium.errors.__all__:
        cls = getattr(podium.errors, name)
        assert getattr(podium, name) is cls, f"{name} is not exported from podium"
        if name in SIGNALS:
            assert not issubclass(cls, PodiumError), name
        else:
            assert issubclass(cls, PodiumError), name
        assert name in (podium.errors.__doc__ or ""), f"{name} is missing from the errors.py tree"
    assert issubclass(Suspended, BaseException) and not issubclass(Suspended, Exception)
    assert issubclass(LimitReached, BaseException) and not issubclass(LimitReached, Exception)
    assert issubclass(ModelRetry, Exception)


def test_tool_arguments_error_is_a_podium_error() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(PodiumError, match="not valid JSON") as caught:
        Tool(add).validate("{not json")
    assert isinstance(caught.value, ToolArgumentsError) and isinstance(caught.value, ValueError)


def test_bad_messages_and_events_are_invalid_data() -> None:
    with pytest.raises(InvalidData, match="unknown message kind 'nope'"):
        message_from_dict({"kind": "nope"})
    with pytest.raises(InvalidData, match="unknown event kind 'nope'"):
        event_from_dict({"kind": "nope"})


def test_misusing_the_master_tools_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="cannot make a tool of 42"):
        as_master_tool(42)  # type: ignore[arg-type]


async def test_a_corrupt_stored_row_is_store_corrupt(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    store = SQLiteStore(db)
    result = await Runtime(store).run(ReactAgent("bot", ScriptedModel(["hello"])), "hi", thread_id="t")
    assert result.status == "completed"
    assert [m.kind for m in await store.load_messages("t")] == ["human", "ai"]
    await store.close()
    with sqlite3.connect(db) as raw:
        raw.execute('UPDATE events SET body=\'{"message": {"kind": "nope"}}\' WHERE kind=\'message\'')
    store = SQLiteStore(db)
    try:
        with pytest.raises(StoreCorrupt, match="a stored message cannot be read: unknown message kind 'nope'"):
            await store.load_messages("t")
        with pytest.raises(StoreCorrupt, match=r"stored event #\d+ \(message\) of run \w+ cannot be read"):
            await store.read_events("t")
    finally:
        await store.close()
    with pytest.raises(StoreCorrupt, match="cannot be read"):
        message_from_row("not json")
