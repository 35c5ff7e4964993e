"""What is particular to the PostgreSQL store: connection errors, schema versions, leases across connections,
lost connections, and the runtime end to end on it. The conformance suite runs on it through the ``store`` fixture.

Tests that need a server take the ``postgres_schema`` fixture, which skips without ``PODIUM_TEST_POSTGRES_URL``.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections import Counter
from typing import Any
from urllib.parse import quote

import pytest

from podium import (
    AIMessage,
    Expectation,
    Message,
    ModelRequest,
    ReactAgent,
    RunContext,
    Runtime,
    SideChannel,
    StoreCorrupt,
    StoreError,
    ThreadBusy,
    ToolMessage,
    UsageError,
    open_store,
)
from podium.store._pgschema import MIGRATIONS
from podium.store.base import new_owner
from podium.testing import FunctionModel, tool_call

psycopg = pytest.importorskip("psycopg")

from podium.store.postgres import PostgresStore  # noqa: E402 - needs psycopg, checked just above

Schema = tuple[str, str]


def _sql(url: str, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on its own connection (a second client, as another process would be)."""
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(query, params)
        return cursor.fetchall() if cursor.description else []


# errors that need no server


async def test_unreachable_server_is_a_store_error_that_names_it_without_the_password() -> None:
    store = PostgresStore("postgresql://podium:s3cret@127.0.0.1:1/podiumdb", connect_timeout=2)
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL at podium@127\.0\.0\.1:1/podiumdb") as info:
        await store.get_thread("t")
    assert "s3cret" not in str(info.value)
    with pytest.raises(StoreError, match="cannot connect"):  # the store stays usable: it tries again
        await PostgresStore.connect("postgresql://podium:s3cret@127.0.0.1:1/podiumdb")
    await store.close()


@pytest.mark.parametrize("url", ["postgresql://podium:s3cret@[::1/db", "nonsense", "postgresql://h/db?bogus=1"])
def test_malformed_url_is_a_store_error_without_the_password(url: str) -> None:
    with pytest.raises(StoreError, match="bad PostgreSQL URL") as info:
        open_store(url) if url.startswith("postgresql://") else PostgresStore(url)
    assert "s3cret" not in str(info.value)


async def test_open_store_takes_postgresql_urls_and_connects_on_first_use() -> None:
    store = open_store("postgresql://podium@127.0.0.1:1/podiumdb")  # nothing listens there: no error yet
    assert isinstance(store, PostgresStore) and store.description == "podium@127.0.0.1:1/podiumdb"
    with pytest.raises(StoreError, match="cannot connect"):
        await store.list_threads()
    await store.close()
    with pytest.raises(StoreError, match="is closed"):
        await store.list_threads()


# with a server


async def test_wrong_password_is_a_store_error_without_it(postgres_schema: Schema) -> None:
    url, _ = postgres_schema
    bad = psycopg.conninfo.make_conninfo(url, password="not-the-password-42")
    with pytest.raises(StoreError, match="password authentication failed") as info:
        await PostgresStore.connect(bad)
    assert "not-the-password-42" not in str(info.value)


async def test_open_store_url_with_search_path_works_end_to_end(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    _sql(url, f'CREATE SCHEMA "{schema}"')
    joiner = "&" if "?" in url else "?"
    store = open_store(f"{url}{joiner}options={quote(f'-csearch_path={schema}')}")
    await store.create_thread("t", {"app": "x"})
    await store.close()
    assert _sql(url, f'SELECT id, metadata FROM "{schema}".threads') == [("t", '{"app":"x"}')]


async def test_schema_is_created_versioned_and_opened_again_without_changes(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    stores = await asyncio.gather(*(PostgresStore.connect(url, schema=schema) for _ in range(4)))  # racing migrators
    await stores[0].create_thread("t")
    for store in stores:
        assert [t.id for t in await store.list_threads()] == ["t"]
        await store.close()
    assert _sql(url, f'SELECT version FROM "{schema}".podium_schema') == [(len(MIGRATIONS),)]
    tables = _sql(url, "SELECT table_name FROM information_schema.tables WHERE table_schema=%s ORDER BY 1", (schema,))
    assert [t[0] for t in tables] == [
        "api_keys",
        "events",
        "leases",
        "podium_schema",
        "run_queue",
        "runs",
        "state",
        "threads",
    ]


async def test_schema_of_a_newer_podium_is_refused_and_left_alone(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    store = await PostgresStore.connect(url, schema=schema)
    await store.create_thread("kept")
    await store.close()
    _sql(url, f'UPDATE "{schema}".podium_schema SET version = 99')
    with pytest.raises(StoreCorrupt, match="schema version 99, newer than this Podium knows"):
        await PostgresStore.connect(url, schema=schema)
    assert _sql(url, f'SELECT id FROM "{schema}".threads') == [("kept",)]


async def test_schema_holding_other_tables_of_the_same_names_is_refused(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    _sql(url, f'CREATE SCHEMA "{schema}"')
    _sql(url, f'CREATE TABLE "{schema}".threads (name TEXT)')
    with pytest.raises(StoreCorrupt, match="already has tables threads but no podium_schema table"):
        await PostgresStore.connect(url, schema=schema)
    assert _sql(url, "SELECT count(*) FROM information_schema.tables WHERE table_schema=%s", (schema,)) == [(1,)]


async def test_events_keep_text_jsonb_would_refuse(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    store = await PostgresStore.connect(url, schema=schema)
    await store.create_thread("t")
    text = 'nul \x00 byte, emoji 🎈, quote " and backslash \\'
    await store.append_events("t", [SideChannel(text=text, run_id="r", seq=1)])
    [event] = await store.read_events("t")
    assert isinstance(event, SideChannel) and event.text == text
    await store.close()


async def test_two_connections_exclude_each_other_on_a_lease(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    stores = [await PostgresStore.connect(url, schema=schema) for _ in range(6)]
    await stores[0].create_thread("t")
    owners = [new_owner(f"o{i}") for i in range(len(stores))]
    outcomes = await asyncio.gather(*(s.acquire_thread("t", o, 60) for s, o in zip(stores, owners, strict=True)))
    winners = [o for o, holder in zip(owners, outcomes, strict=True) if holder is None]
    assert len(winners) == 1 and all(h in (None, winners[0]) for h in outcomes)
    loser = next(i for i, o in enumerate(owners) if o != winners[0])
    assert await stores[loser].acquire_thread("t", owners[loser], 60) == winners[0]
    await stores[owners.index(winners[0])].release_thread("t", winners[0])
    assert await stores[loser].acquire_thread("t", owners[loser], 60) is None
    for store in stores:
        await store.close()


async def test_lease_of_another_host_holds_until_it_expires_by_the_server_clock(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    a, b = PostgresStore(url, schema=schema), PostgresStore(url, schema=schema)
    await a.create_thread("t")
    remote = "another-host-than-" + socket.gethostname() + ":1:x"  # its pid cannot be checked from here
    assert await a.acquire_thread("t", remote, 60) is None
    assert await b.acquire_thread("t", new_owner("me"), 60) == remote
    _sql(url, f'UPDATE "{schema}".leases SET expires = extract(epoch FROM clock_timestamp()) - 1')
    assert await b.acquire_thread("t", new_owner("me"), 60) is None
    await a.close()
    await b.close()


async def test_runs_through_two_connections_never_interleave(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    a, b = await PostgresStore.connect(url, schema=schema), await PostgresStore.connect(url, schema=schema)
    replying, go = asyncio.Event(), asyncio.Event()

    async def echo(messages: list[Message], request: ModelRequest) -> str:
        replying.set()  # the run holds the thread by now
        await go.wait()
        return f"echo: {messages[-1].content}"

    agent = ReactAgent("echo", FunctionModel(echo))
    first = asyncio.create_task(Runtime(a).run(agent, "one", thread_id="t"))
    await replying.wait()
    with pytest.raises(ThreadBusy):
        await Runtime(b).run(agent, "two", thread_id="t")
    go.set()
    assert (await first).status == "completed"
    assert (await Runtime(b).run(agent, "two", thread_id="t")).status == "completed"
    assert [m.content for m in await Runtime(a).messages("t")] == ["one", "echo: one", "two", "echo: two"]
    await a.close()
    await b.close()


async def test_lost_connection_fails_the_call_then_reconnects(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    name = f"podium-{schema}"
    store = await PostgresStore.connect(f"{url}{'&' if '?' in url else '?'}application_name={name}", schema=schema)
    await store.create_thread("t")
    killed = _sql(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name=%s", (name,))
    assert killed and all(row == (True,) for row in killed)  # every connection of the store's pool
    with pytest.raises(StoreError, match="will reconnect"):
        await store.get_thread("t")
    assert (thread := await store.get_thread("t")) is not None and thread.id == "t"
    await store.close()


async def test_a_cancelled_call_leaves_the_store_usable(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    store = await PostgresStore.connect(url, schema=schema)
    await store.create_thread("t")

    async def sleep_in_a_transaction(conn: Any) -> None:
        async with conn.transaction():
            await conn.execute("SELECT pg_sleep(30)")

    call = asyncio.create_task(store._run(sleep_in_a_transaction))
    await asyncio.sleep(0.2)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await store.acquire_thread("t", new_owner("me"), 60) is None
    await store.close()


def _approving_agent(calls: Counter[str]) -> ReactAgent:
    async def delete(ctx: RunContext[Any], path: str) -> str:
        """Delete a file once the human agrees."""
        calls["tool"] += 1
        answer = await ctx.ask(f"Delete {path}?", expectation=Expectation(type="choice", options=["yes", "no"]))
        return f"deleted {path}" if answer == "yes" else f"kept {path}"

    def model(messages: list[Message], request: ModelRequest) -> AIMessage:
        calls["model"] += 1
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(content=f"done: {messages[-1].content}")
        return AIMessage(tool_calls=[tool_call("delete", {"path": "draft.txt"}, id="c1")])

    return ReactAgent("janitor", FunctionModel(model), [delete])


async def test_react_run_interrupt_and_resume_in_a_new_process_end_to_end(postgres_schema: Schema) -> None:
    url, schema = postgres_schema
    before: Counter[str] = Counter()
    store = await PostgresStore.connect(url, schema=schema)
    result = await Runtime(store).run(_approving_agent(before), "tidy up", thread_id="t")
    await store.close()
    assert result.status == "interrupted" and [i.prompt for i in result.interrupts] == ["Delete draft.txt?"]
    assert before == {"model": 1, "tool": 1}

    after: Counter[str] = Counter()  # a new store, runtime and agent: as a new process would have
    store = PostgresStore(url, schema=schema)
    runtime = Runtime(store)
    status, pending = await runtime.pending("t")
    assert status == "interrupted" and [p.id for p in pending] == [result.interrupts[0].id]
    resumed = await runtime.resume(_approving_agent(after), "t", "yes")
    assert (resumed.status, resumed.output) == ("completed", "done: deleted draft.txt")
    assert after == {"model": 1, "tool": 1}  # the first model call was replayed from the journal
    history = [(m.kind, m.content) for m in await runtime.messages("t")]
    assert history == [
        ("human", "tidy up"),
        ("ai", ""),
        ("tool", "deleted draft.txt"),
        ("ai", "done: deleted draft.txt"),
    ]
    runs = await store.list_runs("t")
    assert [r.status for r in runs] == ["completed"] and runs[0].result is not None
    assert runs[0].result["output"] == "done: deleted draft.txt"
    assert _sql(url, f'SELECT count(*) FROM "{schema}".leases') == [(0,)]  # released
    await store.close()


def test_only_the_password_field_is_redacted_from_messages() -> None:
    """A one-letter password must not garble the message (nor reveal itself by where the masks fall)."""
    from podium.store.postgres import _redact

    text = 'connecting postgresql://app:p@db.example:5432/shop failed; password=p host=db.example; "peppers"'
    assert (
        _redact(text)
        == 'connecting postgresql://app:***@db.example:5432/shop failed; password=*** host=db.example; "peppers"'
    )


async def test_a_short_password_leaves_the_connection_error_readable() -> None:
    store = PostgresStore("postgresql://podium:p@127.0.0.1:1/podiumdb", connect_timeout=2)
    with pytest.raises(StoreError) as info:
        await store.get_thread("t")
    await store.close()
    assert str(info.value).startswith("cannot connect to PostgreSQL at podium@127.0.0.1:1/podiumdb: ")
    assert "***" not in str(info.value)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "5", None])
def test_a_wait_timeout_that_is_not_a_positive_number_of_seconds_is_refused(bad: Any) -> None:
    with pytest.raises(UsageError, match="wait_timeout must be a number of seconds above zero"):
        PostgresStore("postgresql://podium@127.0.0.1:1/podiumdb", wait_timeout=bad)


class _Proxy:
    """A TCP relay to the test server that can be taken down (its connections cut, new ones refused) and back up:
    the database as the store sees it while it is down."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._streams: list[asyncio.StreamWriter] = []

    async def up(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._streams:
            writer.transport.abort()
        self._streams.clear()
        await self._server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self._streams += [writer, up_writer]

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except OSError:
                pass
            finally:
                sink.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


@pytest.mark.parametrize("wait_timeout", [None, 1.0])
async def test_calls_fail_within_the_wait_timeout_while_the_server_is_down_then_work_again(
    postgres_schema: Schema, wait_timeout: float | None
) -> None:
    """While the database cannot be reached a call fails with a clear StoreError after ``wait_timeout`` (5 s by
    default), not half a minute later; once it is back, calls work again at once (the pool does not wait out a
    reconnection backoff grown during the outage)."""
    url, schema = postgres_schema
    info = psycopg.conninfo.conninfo_to_dict(url)
    proxy = _Proxy(str(info.get("host") or "127.0.0.1"), int(info.get("port") or 5432))
    await proxy.up()
    through = psycopg.conninfo.make_conninfo(url, host="127.0.0.1", port=proxy.port)
    options = {} if wait_timeout is None else {"wait_timeout": wait_timeout}
    store = await PostgresStore.connect(through, schema=schema, **options)
    await store.create_thread("t")
    await proxy.down()
    went_down = time.monotonic()

    errors: list[tuple[float, str]] = []
    while not errors or "no connection within" not in errors[-1][1]:  # (a broken pooled connection fails at once)
        began = time.monotonic()
        with pytest.raises(StoreError) as failed:
            await store.get_thread("t")
        errors.append((time.monotonic() - began, str(failed.value)))
        assert len(errors) < 5
    took, message = errors[-1]
    limit = wait_timeout or 5.0
    assert limit - 0.1 < took < limit + 2
    assert f"no connection within {limit:g} s (wait_timeout): the server does not answer" in message

    while time.monotonic() - went_down < 10:  # a longer outage, with calls coming in
        with pytest.raises(StoreError):
            await store.get_thread("t")
    await proxy.up()  # the same port: the pool reconnects
    back = time.monotonic()
    thread = await store.get_thread("t")
    assert thread is not None and thread.id == "t"
    assert time.monotonic() - back < 3
    await store.close()
    await proxy.down()
