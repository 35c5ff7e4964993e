"""Authentication over real HTTP: API keys (hashed at rest), JWTs (HS256, RS256 by key, JWKS file and URL), scopes,
dev mode only on loopback, and ``podium keys``."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.server.conftest import example_apps, live_server
from typer.testing import CliRunner

from podium.cli import cli
from podium.errors import UsageError
from podium.server.auth import AuthConfig, is_loopback, key_digest, new_api_key, startup_auth
from podium.store.sqlite import SQLiteStore


def _store_with_keys(path: Path, *specs: tuple[str, list[str]]) -> list[str]:
    """Add a key per ``(user, scopes)`` to the SQLite store at ``path``; their secrets."""

    async def add() -> list[str]:
        store = SQLiteStore(path)
        secrets = []
        for user, scopes in specs:
            secret, key = new_api_key(f"{user}-key", user=user, scopes=scopes)
            await store.add_api_key(key)
            secrets.append(secret)
        await store.close()
        return secrets

    return asyncio.run(add())


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A server requiring API keys; its URL and keys for alice (read, run), bob (read) and an admin."""
    path = tmp_path / "s.db"
    secrets = _store_with_keys(path, ("alice", ["read", "run"]), ("bob", ["read"]), ("root", ["admin"]))
    with live_server(example_apps("trip"), SQLiteStore(path), auth=AuthConfig()) as url:
        yield url, secrets


def test_requests_without_valid_credentials_get_401_with_json_detail(keyed: tuple[str, list[str]]) -> None:
    url, _ = keyed
    for headers in (
        {},
        {"Authorization": "Bearer pdm_nope_nope"},
        {"X-Api-Key": "wrong"},
        {"Authorization": "Basic x"},
    ):
        response = httpx.post(f"{url}/assistants/search", json={}, headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"] == "Bearer"
        assert isinstance(response.json()["detail"], str)


def test_api_keys_in_either_header_act_as_their_user_and_scopes(keyed: tuple[str, list[str]]) -> None:
    url, (alice, bob, root) = keyed
    for headers in ({"Authorization": f"Bearer {alice}"}, {"X-Api-Key": alice}):
        response = httpx.post(f"{url}/assistants/search", json={}, headers=headers)
        assert response.status_code == 200 and [a["assistant_id"] for a in response.json()] == ["trip"]
    denied = httpx.get(f"{url}/metrics", headers={"X-Api-Key": bob})
    assert denied.status_code == 403 and "'admin' scope" in denied.json()["detail"]
    assert httpx.get(f"{url}/metrics", headers={"X-Api-Key": root}).status_code == 200
    assert (
        httpx.post(f"{url}/assistants/search", json={}, headers={"X-Api-Key": root}).status_code == 200
    )  # admin reads


def test_a_revoked_key_stops_working_and_the_secret_is_not_stored(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    (secret,) = _store_with_keys(path, ("carol", ["read"]))
    assert all(secret.encode() not in f.read_bytes() for f in tmp_path.iterdir() if f.name.startswith("s.db"))
    store = SQLiteStore(path)
    with live_server(example_apps("trip"), store, auth=AuthConfig()) as url:
        assert httpx.post(f"{url}/assistants/search", json={}, headers={"X-Api-Key": secret}).status_code == 200
        found = asyncio.run(store.find_api_key(key_digest(secret)))
        assert found is not None and found.user == "carol"
        CliRunner().invoke(cli, ["keys", "revoke", found.id, "--store", str(path)])
        assert httpx.post(f"{url}/assistants/search", json={}, headers={"X-Api-Key": secret}).status_code == 401


def _token(key: Any, algorithm: str = "HS256", headers: dict[str, Any] | None = None, **claims: Any) -> str:
    return jwt.encode({"exp": int(time.time()) + 300, **claims}, key, algorithm=algorithm, headers=headers)


def _status(url: str, token: str, path: str = "/assistants/search") -> int:
    headers = {"Authorization": f"Bearer {token}"}
    if path == "/metrics":
        return httpx.get(f"{url}{path}", headers=headers).status_code
    return httpx.post(f"{url}{path}", json={}, headers=headers).status_code


def test_hs256_tokens_carry_the_user_and_scopes(tmp_path: Path) -> None:
    secret = "s3cret-of-at-least-32-bytes-for-hs256!"
    config = AuthConfig(jwt_secret=secret, audience="podium", issuer="https://issuer.test")
    claims = {"aud": "podium", "iss": "https://issuer.test"}
    with live_server(example_apps("trip"), SQLiteStore(tmp_path / "s.db"), auth=config) as url:
        assert _status(url, _token(secret, sub="dana", scope="read", **claims)) == 200
        assert _status(url, _token(secret, sub="dana", **claims)) == 200  # no scope claim: read and run
        assert _status(url, _token(secret, sub="dana", scope="read", **claims), "/metrics") == 403
        assert _status(url, _token(secret, sub="dana", scopes=["admin"], **claims), "/metrics") == 200
        assert _status(url, _token(secret, sub="dana", scope="run", **claims)) == 403  # run does not read
        assert _status(url, _token("another-secret-of-at-least-32-bytes!!", sub="dana", **claims)) == 401
        assert _status(url, _token(secret, sub="dana", aud="other", iss=claims["iss"])) == 401
        assert _status(url, _token(secret, **claims)) == 401  # no sub
        expired = jwt.encode({"sub": "dana", "exp": int(time.time()) - 60, **claims}, secret, algorithm="HS256")
        assert _status(url, expired) == 401
        assert _status(url, "not-a-jwt") == 401


@pytest.fixture(scope="module")
def rsa_keys() -> tuple[Any, str, dict[str, Any]]:
    """A private RSA key, its public key as PEM, and a JWKS holding it (``kid`` "k1")."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    return private, pem.decode(), {"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]}


def test_rs256_tokens_verified_by_a_public_key_or_a_jwks_file(tmp_path: Path, rsa_keys: tuple[Any, str, Any]) -> None:
    private, pem, jwks = rsa_keys
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (tmp_path / "jwks.json").write_text(json.dumps(jwks))
    for config in (AuthConfig(jwt_public_key=pem), AuthConfig(jwks=str(tmp_path / "jwks.json"))):
        with live_server(example_apps("trip"), SQLiteStore(tmp_path / "s.db"), auth=config) as url:
            assert _status(url, _token(private, "RS256", {"kid": "k1"}, sub="erin")) == 200
            assert _status(url, _token(other, "RS256", {"kid": "k1"}, sub="erin")) == 401
            assert _status(url, _token("an-hs256-secret-of-32-bytes-or-more", sub="erin")) == 401  # not RS256


def test_a_key_source_that_cannot_verify_anything_is_refused_when_the_config_is_made(
    tmp_path: Path, rsa_keys: tuple[Any, str, Any]
) -> None:
    (tmp_path / "jwks.json").write_text(json.dumps(rsa_keys[2]))
    assert AuthConfig(jwks=str(tmp_path / "jwks.json")).jwt
    (tmp_path / "bad.json").write_text('{"keys": []}')
    with pytest.raises(UsageError, match="is not a key set"):
        AuthConfig(jwks=str(tmp_path / "bad.json"))
    with pytest.raises(UsageError, match="cannot read the JWKS file"):
        AuthConfig(jwks=str(tmp_path / "missing.json"))
    with pytest.raises(UsageError, match="not an RSA public key in PEM"):
        AuthConfig(jwt_public_key="ssh-rsa AAAA not pem")
    with pytest.raises(UsageError, match="not an RSA public key in PEM"):
        AuthConfig(jwt_public_key="-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")


def test_rs256_tokens_verified_by_a_jwks_url(tmp_path: Path, rsa_keys: tuple[Any, str, Any]) -> None:
    private, _, jwks = rsa_keys
    body = json.dumps(jwks).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    jwks_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=jwks_server.serve_forever, daemon=True).start()
    try:
        config = AuthConfig(jwks=f"http://127.0.0.1:{jwks_server.server_address[1]}/jwks.json")
        with live_server(example_apps("trip"), SQLiteStore(tmp_path / "s.db"), auth=config) as url:
            assert _status(url, _token(private, "RS256", {"kid": "k1"}, sub="erin")) == 200
            assert _status(url, _token(private, "RS256", {"kid": "unknown"}, sub="erin")) == 401
    finally:
        jwks_server.shutdown()
        jwks_server.server_close()


def test_auth_config_refuses_ambiguous_or_unknown_settings() -> None:
    with pytest.raises(UsageError, match="one JWT key source"):
        AuthConfig(jwt_secret="a", jwks="b")
    with pytest.raises(UsageError, match="unknown scopes"):
        AuthConfig(default_scopes=frozenset({"write"}))
    with pytest.raises(UsageError, match="bad scopes"):
        new_api_key("x", scopes=["write"])
    with pytest.raises(UsageError, match="needs a name"):
        new_api_key(" ")


async def test_dev_mode_only_on_loopback_when_nothing_is_configured(tmp_path: Path) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("[::1]")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2") and not is_loopback("example.com")
    store = SQLiteStore(tmp_path / "s.db")
    config, said = await startup_auth(AuthConfig(), store, "127.0.0.1")
    assert config.dev_user == "local" and said.startswith("dev mode")
    with pytest.raises(UsageError, match=r"refusing to serve on '0\.0\.0\.0' without authentication"):
        await startup_auth(AuthConfig(), store, "0.0.0.0")
    with pytest.raises(UsageError, match="only allowed on a loopback"):
        await startup_auth(AuthConfig.dev(), store, "10.0.0.1")
    config, said = await startup_auth(AuthConfig(jwt_secret="x"), store, "0.0.0.0")
    assert config.dev_user is None and said == "authentication: JWT bearer tokens"
    _, key = new_api_key("ci")
    await store.add_api_key(key)
    config, said = await startup_auth(AuthConfig(), store, "0.0.0.0")
    assert config.dev_user is None and said == "authentication: API keys"
    await store.revoke_api_key(key.id)
    with pytest.raises(UsageError):  # a revoked key is no key
        await startup_auth(AuthConfig(), store, "0.0.0.0")
    await store.close()


def test_dev_mode_ends_once_a_key_is_created_while_the_server_runs(tmp_path: Path) -> None:
    """``podium keys create`` against a server in dev mode (its store, another process's connection): within a
    couple of seconds the server asks for credentials, /mcp (one user, dev mode only) included, without a restart."""
    path = tmp_path / "s.db"
    config, _ = asyncio.run(startup_auth(AuthConfig(), SQLiteStore(path), "127.0.0.1"))
    assert config.dev_user == "local"
    with live_server(example_apps("trip"), SQLiteStore(path), auth=config) as url:
        assert httpx.post(f"{url}/threads", json={}).status_code == 200
        assert httpx.get(f"{url}/info").json()["auth"] == "dev"
        (secret,) = _store_with_keys(path, ("alice", ["read", "run"]))
        deadline = time.monotonic() + 5
        while httpx.post(f"{url}/threads", json={}).status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        refused = httpx.post(f"{url}/threads", json={})
        assert refused.status_code == 401 and "credentials required" in refused.json()["detail"]
        assert time.monotonic() < deadline - 2  # noticed within about a second or two
        keyed = httpx.post(f"{url}/threads", json={}, headers={"Authorization": f"Bearer {secret}"})
        assert keyed.status_code == 200 and keyed.json()["thread_id"]
        assert httpx.get(f"{url}/threads/search", headers={"X-Api-Key": "pdm_x_y"}).status_code == 401
        assert httpx.get(f"{url}/info").json()["auth"] == "api_keys"
        mcp = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert mcp.status_code == 404 and "dev mode" in mcp.json()["detail"]


def test_dev_mode_asked_for_in_python_stays_dev_mode(tmp_path: Path) -> None:
    """``create_app(..., auth=AuthConfig.dev())`` (and the default) is dev mode whatever keys the store holds."""
    path = tmp_path / "s.db"
    _store_with_keys(path, ("alice", ["read", "run"]))
    with live_server(example_apps("trip"), SQLiteStore(path), auth=AuthConfig.dev()) as url:
        assert httpx.post(f"{url}/threads", json={}).status_code == 200
        time.sleep(1.5)
        assert httpx.post(f"{url}/threads", json={}).status_code == 200


def test_serve_on_a_public_address_without_auth_refuses_to_start(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        cli, ["serve", "trip", "--host", "0.0.0.0", "--port", "0", "--store", str(tmp_path / "s.db")]
    )
    assert done.exit_code == 2
    assert "refusing to serve on '0.0.0.0' without authentication" in done.output


def test_podium_keys_create_list_revoke(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    runner = CliRunner()
    created = runner.invoke(cli, ["keys", "create", "ci", "--user", "alice", "--scope", "read", "--store", store])
    assert created.exit_code == 0, created.output
    secret = created.stdout.strip().splitlines()[0]
    assert secret.startswith("pdm_") and "not shown again" in created.stderr
    again = runner.invoke(cli, ["keys", "create", "ci", "--store", store])
    assert again.exit_code == 2 and "a valid key named 'ci' exists" in again.output
    listed = runner.invoke(cli, ["keys", "list", "--store", store]).stdout.strip().split("\t")
    assert listed[1:4] == ["ci", "alice", "read"] and listed[-1] == "valid" and secret not in "\t".join(listed)
    assert runner.invoke(cli, ["keys", "revoke", "ci", "--store", store]).stdout.startswith(f"revoked {listed[0]}")
    assert runner.invoke(cli, ["keys", "list", "--store", store]).stdout.strip().endswith("revoked")
    missing = runner.invoke(cli, ["keys", "revoke", "ci", "--store", store])
    assert missing.exit_code == 2 and "no valid API key" in missing.output
    bad = runner.invoke(cli, ["keys", "create", "x", "--scope", "write", "--store", store])
    assert bad.exit_code == 2 and "bad scopes" in bad.output
