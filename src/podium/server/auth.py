"""Who is calling: the :class:`Principal` every route works for, and the :func:`require` dependency.

Credentials (``docs/server.md``, "Authentication"):

- **API keys** made by ``podium keys create NAME``: ``pdm_<id>_<secret>``, sent as ``Authorization: Bearer`` or
  ``X-Api-Key``. The store keeps only the SHA-256 digest of a key (a random 256-bit secret needs no slow hash).
- **JWT bearer tokens** signed with HS256 (a shared secret) or RS256 (a public key, or a JWKS file or URL). The
  ``sub`` claim is the user; ``scope`` (space-separated) or ``scopes`` (a list) the scopes, else
  :attr:`AuthConfig.default_scopes`.

Scopes: ``read`` (look), ``run`` (start and steer runs), ``admin`` (operate the server; holds every scope). No valid
credentials answer 401, a missing scope 403. Dev mode (:meth:`AuthConfig.dev`) runs every request as one local user
with every scope; ``podium serve`` allows it only on a loopback address (:func:`startup_auth`), and only while the
store holds no API key: once one is created (``podium keys create`` while the server runs) requests need credentials
(:func:`dev_principal`).
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from fastapi import HTTPException, Request

from podium.errors import UsageError
from podium.store.base import ApiKey

if TYPE_CHECKING:
    from podium.store.base import Store

__all__ = [
    "SCOPES",
    "AuthConfig",
    "Principal",
    "Scope",
    "dev_principal",
    "is_loopback",
    "key_digest",
    "new_api_key",
    "require",
    "startup_auth",
]

Scope = Literal["read", "run", "admin"]
"""What a route needs: ``read`` (look), ``run`` (create and steer runs), ``admin`` (operate the server)."""

SCOPES: frozenset[str] = frozenset({"read", "run", "admin"})
"""Every scope."""

KEY_PREFIX = "pdm_"

KEY_CHECK_INTERVAL = 1.0
"""Seconds a dev-mode server that ends at the first key (:attr:`AuthConfig.until_key`) trusts its last look at the
store: a key created while it runs is required at most this long (plus one store read) later."""

_log = logging.getLogger("podium.server")


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated caller."""

    user: str
    """The user every record created by this caller belongs to."""
    scopes: frozenset[str]
    """What the caller may do."""

    def allows(self, scope: str) -> bool:
        """Whether the caller holds ``scope`` (``admin`` holds every scope)."""
        return scope in self.scopes or "admin" in self.scopes


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthConfig:
    """How callers are authenticated: API keys from the store, JWTs, or (dev mode) nobody at all.

    Raises:
        UsageError: more than one JWT key source, an unknown scope, a public key that is not an RSA key in PEM, or a
            JWKS file that cannot be read or holds no usable key (a JWKS URL is fetched when the first token comes).
    """

    api_keys: bool = True
    """Accept the API keys recorded in the store."""
    jwt_secret: str | None = None
    """Accept HS256 tokens signed with this secret."""
    jwt_public_key: str | None = None
    """Accept RS256 tokens signed by this public key (PEM text)."""
    jwks: str | None = None
    """Accept RS256 tokens signed by a key of this JWKS: a file path or an ``http(s)://`` URL."""
    audience: str | None = None
    """The ``aud`` a token must carry, when set."""
    issuer: str | None = None
    """The ``iss`` a token must carry, when set."""
    default_scopes: frozenset[str] = frozenset({"read", "run"})
    """The scopes of a token that names none."""
    dev_user: str | None = None
    """Dev mode: every request acts as this user with every scope, no credentials asked."""
    until_key: bool = False
    """Dev mode ends once the store holds a valid API key (a key created while the server runs): requests then need
    credentials. :func:`startup_auth` chooses dev mode this way for want of keys."""
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        sources = [s for s in (self.jwt_secret, self.jwt_public_key, self.jwks) if s]
        if len(sources) > 1:
            raise UsageError("configure one JWT key source: a secret (HS256), a public key or a JWKS (RS256)")
        unknown = set(self.default_scopes) - SCOPES
        if unknown:
            raise UsageError(f"unknown scopes {sorted(unknown)}; scopes are read, run and admin")
        if self.jwt_public_key:
            _check_public_key(self.jwt_public_key)
        if self.jwks and not self.jwks.startswith(("http://", "https://")):  # a URL is fetched at the first token
            self._cache["jwks"] = _read_jwks(self.jwks)

    @classmethod
    def dev(cls, user: str = "local") -> AuthConfig:
        """Dev mode: one local user, every scope, no credentials (only for a loopback address)."""
        return cls(api_keys=False, dev_user=user)

    @property
    def jwt(self) -> bool:
        """Whether JWT bearer tokens are accepted."""
        return bool(self.jwt_secret or self.jwt_public_key or self.jwks)


def _check_public_key(pem: str) -> None:
    """Refuse a public key that is not an RSA key in PEM (else every token would be refused later, one by one)."""
    from jwt.algorithms import RSAAlgorithm

    try:
        RSAAlgorithm(RSAAlgorithm.SHA256).prepare_key(pem)
    except Exception as exc:  # pyjwt and cryptography raise several types for a key they cannot read
        raise UsageError(f"the JWT public key is not an RSA public key in PEM: {exc}") from None


def _read_jwks(path: str) -> Any:
    """The key set in the JWKS file ``path``.

    Raises:
        UsageError: the file cannot be read, or holds no usable key.
    """
    import jwt

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"cannot read the JWKS file {path}: {reason} (a JWKS is a file or an https:// URL)") from None
    try:
        return jwt.PyJWKSet.from_json(text)
    except (ValueError, TypeError, AttributeError, jwt.PyJWTError) as exc:
        raise UsageError(
            f'the JWKS file {path} is not a key set ({{"keys": [...]}} with at least one usable key): {exc}'
        ) from None


def key_digest(secret: str) -> str:
    """The stored form of an API key: the SHA-256 of its text, hexadecimal."""
    return hashlib.sha256(secret.encode()).hexdigest()


def new_api_key(name: str, *, user: str | None = None, scopes: Iterable[str] = ("read", "run")) -> tuple[str, ApiKey]:
    """A new API key: its secret text (shown once) and the record to store (which holds only a digest).

    Args:
        name: what the key is for.
        user: the user it acts as (default: ``name``).
        scopes: what it may do.

    Raises:
        UsageError: an empty name or an unknown scope.
    """
    if not name.strip():
        raise UsageError("an API key needs a name")
    wanted = sorted(set(scopes))
    unknown = set(wanted) - SCOPES
    if unknown or not wanted:
        raise UsageError(f"bad scopes {sorted(unknown) or wanted}; choose from read, run and admin")
    key_id = secrets.token_hex(6)
    secret = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    return secret, ApiKey(id=key_id, name=name, user=user or name, scopes=wanted, digest=key_digest(secret))


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``127.0.0.0/8``, ``::1``, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def startup_auth(config: AuthConfig, store: Store, host: str) -> tuple[AuthConfig, str]:
    """The auth a server on ``host`` runs with, and a line saying so for the start-up log.

    With no API key in the store and no JWT configured, a loopback address runs in dev mode.

    Raises:
        UsageError: another address without any credentials configured (the server must not start).
    """
    if config.dev_user is not None:
        if not is_loopback(host):
            raise UsageError(f"dev mode (no authentication) is only allowed on a loopback address, not {host!r}")
        return config, f"dev mode: no authentication, every request acts as user {config.dev_user!r}"
    keys = config.api_keys and any(k.revoked is None for k in await store.list_api_keys())
    if keys or config.jwt:
        what = " and ".join(w for w, on in (("API keys", keys), ("JWT bearer tokens", config.jwt)) if on)
        return config, f"authentication: {what}"
    if is_loopback(host):
        dev = AuthConfig(dev_user="local", until_key=True)
        return dev, (
            f"dev mode: no API keys or JWT configured, every request acts as user {dev.dev_user!r} "
            "(create a key with `podium keys create NAME` to require credentials: this server requires them within "
            "a second or two, no restart needed)"
        )
    raise UsageError(
        f"refusing to serve on {host!r} without authentication: create an API key (`podium keys create NAME`) "
        "or configure JWT (--jwt-secret, --jwt-public-key or --jwks), or bind a loopback address"
    )


class _Served(Protocol):
    """What :func:`dev_principal` reads and updates of a server's state."""

    auth: AuthConfig
    store: Store


async def dev_principal(state: _Served) -> Principal | None:
    """The caller of every request in dev mode (the dev user, with every scope), or ``None`` when requests need
    credentials.

    Dev mode chosen for want of keys (:attr:`AuthConfig.until_key`) ends for good once a valid API key is in the
    store: the server's auth becomes the API keys', and a log line says so. The store is read at most once per
    :data:`KEY_CHECK_INTERVAL`; requests meanwhile go by the last answer.
    """
    config = state.auth
    if config.dev_user is None:
        return None
    if config.until_key and await _a_key_exists(config, state.store):
        if state.auth is config:
            state.auth = replace(config, dev_user=None, until_key=False)
            _log.warning("dev mode ended: the store holds an API key now, so every request needs credentials")
        return None
    return Principal(user=config.dev_user, scopes=SCOPES)


async def _a_key_exists(config: AuthConfig, store: Store) -> bool:
    """Whether the store holds a valid API key, as last read (read again when that was over a second ago)."""
    cache = config._cache
    now = time.monotonic()
    if now - cache.get("keys_read_at", float("-inf")) >= KEY_CHECK_INTERVAL:
        cache["keys_read_at"] = now  # before the read: requests meanwhile use the last answer, not a read each
        cache["key_exists"] = any(k.revoked is None for k in await store.list_api_keys())
    return bool(cache.get("key_exists", False))


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(401, detail, headers={"WWW-Authenticate": "Bearer"})


def _credential(request: Request) -> str | None:
    key = request.headers.get("x-api-key")
    if key:
        return key.strip()
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


async def _from_key(config: AuthConfig, store: Store, secret: str) -> Principal:
    found = await store.find_api_key(key_digest(secret)) if config.api_keys else None
    if found is None or found.revoked is not None:
        raise _unauthorized("invalid or revoked API key")
    return Principal(user=found.user, scopes=frozenset(found.scopes))


def _jwt_key(config: AuthConfig, token: str) -> Any:
    """The key that verifies ``token`` (the JWKS key named by its ``kid``), read once per config."""
    import jwt

    if config.jwt_secret:
        return config.jwt_secret
    if config.jwt_public_key:
        return config.jwt_public_key
    assert config.jwks is not None
    if config.jwks.startswith(("http://", "https://")):
        client = config._cache.get("client")
        if client is None:
            client = config._cache["client"] = jwt.PyJWKClient(config.jwks, cache_keys=True, timeout=10)
        return client.get_signing_key_from_jwt(token).key
    keys = config._cache["jwks"]  # read when the config was made
    kid = jwt.get_unverified_header(token).get("kid")
    for key in keys.keys:
        if kid is None or key.key_id == kid:
            return key.key
    raise jwt.InvalidTokenError(f"no key {kid!r} in the JWKS")


async def _from_jwt(config: AuthConfig, token: str) -> Principal:
    import jwt

    algorithm = "HS256" if config.jwt_secret else "RS256"
    try:
        if config.jwks and config.jwks.startswith(("http://", "https://")):
            key = await asyncio.to_thread(_jwt_key, config, token)  # fetches the JWKS (then cached)
        else:
            key = _jwt_key(config, token)
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[algorithm],
            audience=config.audience,
            issuer=config.issuer,
            options={"require": ["sub"], "verify_aud": config.audience is not None},
        )
    except (jwt.PyJWTError, ValueError, json.JSONDecodeError) as exc:
        raise _unauthorized(f"invalid token: {exc}") from None
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        raise _unauthorized("invalid token: 'sub' must name the user")
    raw = claims.get("scope", claims.get("scopes"))
    if raw is None:
        scopes = config.default_scopes
    else:
        scopes = frozenset(raw.split() if isinstance(raw, str) else [s for s in raw if isinstance(s, str)])
    return Principal(user=sub, scopes=scopes & SCOPES)


async def authenticate(request: Request) -> Principal:
    """The caller of ``request``.

    Raises:
        HTTPException: 401 without valid credentials.
    """
    state = request.app.state.podium
    dev = await dev_principal(state)
    if dev is not None:
        return dev
    config: AuthConfig = state.auth
    token = _credential(request)
    if token is None:
        raise _unauthorized("credentials required: send an API key (Authorization: Bearer or X-Api-Key) or a JWT")
    if token.startswith(KEY_PREFIX):
        return await _from_key(config, state.store, token)
    if config.jwt:
        return await _from_jwt(config, token)
    raise _unauthorized("invalid API key")


def require(scope: Scope) -> Callable[[Request], Awaitable[Principal]]:
    """A FastAPI dependency answering the caller's :class:`Principal` when it holds ``scope``.

    Raises:
        HTTPException: 401 without valid credentials, 403 without ``scope``.
    """

    async def dependency(request: Request) -> Principal:
        principal = await authenticate(request)
        if not principal.allows(scope):
            raise HTTPException(
                403, f"this route needs the {scope!r} scope; the credentials hold {sorted(principal.scopes)}"
            )
        return principal

    dependency.__name__ = f"require_{scope}"
    return dependency
