"""Settings from the environment or a ``podium.toml`` file: which model, which store.

Environment variables win over the file. ``PODIUM_MODEL`` alone switches every example from its offline replay
to a real model; ``PODIUM_BASE_URL`` and ``PODIUM_API_KEY`` point it at any OpenAI-compatible endpoint.

==========================  ===============================================  ======================
variable                    meaning                                          default
==========================  ===============================================  ======================
``PODIUM_MODEL``            model (or Azure deployment) name                 none: offline replay
``PODIUM_BASE_URL``         endpoint base URL (``OPENAI_BASE_URL`` too)      OpenAI's
``PODIUM_API_KEY``          key (``OPENAI_API_KEY`` too)                     none
``PODIUM_AZURE_ENDPOINT``   Azure OpenAI endpoint (selects the Azure client) none
``PODIUM_API_VERSION``      Azure API version                                none
``PODIUM_TIMEOUT``          seconds a model request may take in all          60
                            (a streamed reply included)
``PODIUM_MAX_TOKENS``       default cap on a reply's length (tokens), for    1024
                            requests that set none
``PODIUM_MAX_RETRIES``      retries of 429s, timeouts and 5xx                2
``PODIUM_TOOL_FORMAT``      ``native`` tool calls, or ``text`` (JSON in the   native
                            reply, tools described in the prompt)
``PODIUM_CLASSIFIER``       the master agent's classifier: ``router``,      router offline, else
                            ``llm`` or ``hybrid`` (apps building it with     hybrid
                            ``classifier_for``)
``PODIUM_DATA_DIR``         folder of the SQLite store                       ``~/.podium``
``PODIUM_STORE``            ``memory``, a path, ``sqlite:///rel.db``,        the data dir's file
                            ``postgresql://user:pw@host/db``
``PODIUM_DURABILITY``       ``full`` (commits survive a power cut) or        ``full``
                            ``process`` (they survive a process crash)
==========================  ===============================================  ======================

``Settings(...)`` made directly is checked as ``Settings.load()`` checks what it reads (wrong types, blank values,
numbers out of range, unknown choices, endpoints that are not http(s) URLs are a ``UsageError``).
:func:`open_store` without settings reads and checks only the settings the store uses.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podium.errors import UsageError

if TYPE_CHECKING:
    from podium.models.base import Model
    from podium.store.base import Durability, Store

__all__ = ["Settings", "open_store"]

_FIELDS = {
    "model": ("PODIUM_MODEL",),
    "base_url": ("PODIUM_BASE_URL", "OPENAI_BASE_URL"),
    "api_key": ("PODIUM_API_KEY", "OPENAI_API_KEY"),
    "azure_endpoint": ("PODIUM_AZURE_ENDPOINT", "AZURE_OPENAI_ENDPOINT"),
    "api_version": ("PODIUM_API_VERSION", "OPENAI_API_VERSION"),
    "timeout": ("PODIUM_TIMEOUT",),
    "max_tokens": ("PODIUM_MAX_TOKENS",),
    "max_retries": ("PODIUM_MAX_RETRIES",),
    "classifier": ("PODIUM_CLASSIFIER",),
    "tool_format": ("PODIUM_TOOL_FORMAT",),
    "data_dir": ("PODIUM_DATA_DIR",),
    "store": ("PODIUM_STORE",),
    "durability": ("PODIUM_DURABILITY",),
}


@dataclass(slots=True, kw_only=True)
class Settings:
    """Where the model and the store are."""

    model: str | None = None
    """Model name; ``None`` means offline (examples replay their cassettes)."""
    base_url: str | None = None
    """OpenAI-compatible endpoint."""
    api_key: str | None = None
    """API key."""
    azure_endpoint: str | None = None
    """Azure OpenAI endpoint."""
    api_version: str | None = None
    """Azure API version."""
    timeout: float = 60.0
    """Seconds a model request may take in all, a streamed reply included."""
    max_tokens: int = 1024
    """Default cap on a reply's length, in tokens, for requests that set none (``ModelSettings.max_tokens``)."""
    max_retries: int = 2
    """Retries of rate limits, timeouts and server errors."""
    classifier: str | None = None
    """The master agent's intent classifier, ``router``, ``llm`` or ``hybrid``; ``None``: the router offline, the
    hybrid with a real model (see ``podium.orchestration.master.classifier_for``)."""
    tool_format: str = "native"
    """How the model calls tools: ``native`` (the API's field) or ``text`` (JSON in its reply, for models and servers
    without tool calling; see ``podium.models.text_tools``)."""
    data_dir: Path = Path("~/.podium")
    """Folder of the default SQLite store."""
    store: str | None = None
    """``memory``, a database path, ``sqlite:///path`` or ``postgresql://...``; default: ``data_dir/podium.db``."""
    durability: Durability = "full"
    """What a committed write survives: ``full`` (fsync at every commit: a power cut) or ``process`` (a crash of
    the process; a power cut may lose the last commits). See :class:`~podium.store.sqlite.SQLiteStore`."""

    def __setattr__(self, name: str, value: Any) -> None:
        """Check a field's value as :meth:`load` checks what it reads (the one place settings are checked), when the
        settings are made (``Settings(...)``, ``dataclasses.replace``) and whenever a field is set afterwards.

        Raises:
            UsageError: a value of the wrong type (``store=5``, ``timeout="60"``), a blank one (``model=" "``,
                ``store=""``), one out of range (a timeout of zero or less, a negative retry count), an unknown
                choice (``durability="fast"``), or an endpoint that is not an http(s) URL.
        """
        if name in _FIELDS:
            value = _checked(name, value, "", text=False)
        object.__setattr__(self, name, value)

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, file: str | os.PathLike[str] | None = None) -> Settings:
        """Read ``podium.toml`` (``[podium]`` table; ``PODIUM_SETTINGS`` names another file), then the environment.

        A file named by ``file`` or ``PODIUM_SETTINGS`` must exist; ``podium.toml`` in the current folder is read
        when present. Numbers are read from text (``PODIUM_TIMEOUT=30``); every value is then checked as
        ``Settings(...)`` checks it.

        Raises:
            UsageError: a named settings file that is missing or unreadable, a file that is not valid TOML, an
                unknown key, a value of the wrong type (``store = 5``), a blank value (``PODIUM_MODEL=' '``), an
                endpoint that is not an http(s) URL, or a value out of range (a negative timeout or retry count).
        """
        return cls(**_read(env, file, tuple(_FIELDS)))

    def model_or_none(self) -> Model | None:
        """The configured real model, or ``None`` when no ``model`` is set."""
        if not self.model:
            return None
        from podium.models.openai import OpenAIModel

        return OpenAIModel(
            self.model,
            base_url=self.base_url,
            api_key=self.api_key,
            azure_endpoint=self.azure_endpoint,
            api_version=self.api_version,
            timeout=self.timeout,
            max_retries=self.max_retries,
            max_tokens=self.max_tokens,
            tool_format="text" if self.tool_format == "text" else "native",
        )


def _read_file(path: Path, named_by: str) -> dict[str, Any]:
    """The ``[podium]`` table of a settings file, checked for unknown keys."""
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"settings file {path} (named by {named_by}) does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"cannot read settings file {path}: {reason}") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"settings file {path} is not valid TOML: {exc}") from None
    outside = sorted(key for key in document if key in _FIELDS)
    if outside:  # "store = ..." above any table would otherwise be silently ignored
        raise UsageError(
            f"settings file {path}: {', '.join(outside)} must be under the [podium] table (put [podium] above it)"
        )
    table = document.get("podium", {})
    if not isinstance(table, dict):
        raise UsageError(f"settings file {path}: 'podium' must be a table ([podium] with keys below it)")
    unknown = sorted(set(table) - set(_FIELDS))
    if unknown:
        raise UsageError(f"settings file {path}: unknown keys {', '.join(unknown)}; known: {', '.join(_FIELDS)}")
    return table


def _read(env: Mapping[str, str] | None, file: str | os.PathLike[str] | None, names: tuple[str, ...]) -> dict[str, Any]:
    """The settings ``names`` from the settings file and the environment (which wins), read and checked; the others
    are neither read nor checked (opening a store needs its own settings only, whatever the model's are).

    Raises:
        UsageError: as :meth:`Settings.load` says, for the settings named.
    """
    env = os.environ if env is None else env
    found: dict[str, Any] = {}
    named = file or env.get("PODIUM_SETTINGS")
    path = Path(named or "podium.toml")
    if named or path.is_file():
        table = _read_file(path, "the caller" if file else "PODIUM_SETTINGS" if named else "")
        found.update({key: (value, f" (in {path})") for key, value in table.items() if key in names})
    for name in names:
        for variable in _FIELDS[name]:
            if env.get(variable):
                found[name] = (env[variable], "")
                break
    return {name: _checked(name, value, where, text=True) for name, (value, where) in found.items()}


def _checked(name: str, value: Any, where: str, *, text: bool) -> Any:
    """``value`` as setting ``name`` holds it, checked; ``text``: a number may be given as text (read from the
    environment or a file) and is converted. ``where`` says where the value came from, for the message.

    Raises:
        UsageError: the value does not fit the setting.
    """
    if name in ("store", "data_dir"):
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if value is None and name == "store":
            return None
        if not isinstance(value, str):
            raise UsageError(
                f"bad setting {name}{where}: expected text or a path, not {type(value).__name__} {value!r}"
            )
    kind = _NUMBERS.get(name, str)
    if kind is not str:
        return _number(name, value, where, kind, text=text)
    if value is None and name not in ("tool_format", "durability", "data_dir"):
        return None
    if not isinstance(value, str):
        raise UsageError(f"bad setting {name}{where}: expected text, not {type(value).__name__} {value!r}")
    if not value.strip():  # empty, or a space: a mistake, not a name (unset it instead; an empty variable is unset)
        raise UsageError(f"bad setting {name}{where}: {value!r} is blank; give a value, or leave it unset")
    if name in _CHOICES and value not in _CHOICES[name]:
        words = _CHOICES[name]
        raise UsageError(f"bad setting {name}{where}: {value!r}; choose {', '.join(words[:-1])} or {words[-1]}")
    if name in ("base_url", "azure_endpoint"):
        _check_url(name, value)
    return Path(value) if name == "data_dir" else value


def _number(name: str, value: Any, where: str, kind: type, *, text: bool) -> Any:
    """``value`` as the number setting ``name`` holds (``kind``: int or float), in its range."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float) if text else (int, float)):
        raise UsageError(f"bad setting {name}{where}: expected a number, not {type(value).__name__} {value!r}")
    try:
        number = kind(value)
    except (ValueError, OverflowError):
        raise UsageError(f"bad setting {name}{where}: {value!r} is not {_WORDS[kind]}") from None
    if kind is int and isinstance(value, float) and number != value:
        raise UsageError(f"bad setting {name}{where}: {value!r} is not {_WORDS[kind]}")
    least, strict = _LEAST[name]
    if not math.isfinite(number) or number < least or (strict and number == least):
        raise UsageError(f"bad setting {name}{where}: {value!r} is out of range; {_RANGES[name]}")
    return number


_CHOICES = {
    "classifier": ("router", "llm", "hybrid"),
    "tool_format": ("native", "text"),
    "durability": ("full", "process"),
}
"""The settings that take one of a few words, and the words (as a message lists them)."""


def _check_url(name: str, value: str) -> None:
    """Refuse an endpoint that is not an ``http://`` or ``https://`` URL with a host, when settings are read (the first
    model call would report it as a connection that broke off).

    Raises:
        UsageError: the scheme is not http or https, or there is no host.
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value.strip())
        has_host = bool(parts.hostname)
    except ValueError:  # a malformed port or bracket
        parts, has_host = None, False
    if parts is None or parts.scheme.lower() not in ("http", "https") or not has_host:
        raise UsageError(
            f"bad setting {name}: {value!r} is not an http:// or https:// URL with a host "
            f"(like http://localhost:11434/v1)"
        )


_NUMBERS: dict[str, type] = {"timeout": float, "max_tokens": int, "max_retries": int}
_WORDS = {float: "a number", int: "a whole number"}
_LEAST = {"timeout": (0, True), "max_tokens": (1, False), "max_retries": (0, False)}  # (bound, excluded)
_RANGES = {
    "timeout": "seconds must be more than zero",
    "max_tokens": "it must be at least 1",
    "max_retries": "it must be 0 or more",
}


def open_store(
    spec: str | os.PathLike[str] | None = None, *, settings: Settings | None = None, read_only: bool = False
) -> Store:
    """Open a store: ``"memory"``, a SQLite file path, ``sqlite:///path``, or by default the settings' store.

    A ``postgresql://user:password@host/db`` URL opens a :class:`~podium.store.postgres.PostgresStore` (needs the
    ``postgres`` extra); it connects on first use. SQLite and PostgreSQL stores get the settings' ``durability``.
    ``read_only`` opens an existing SQLite file for reading only (see :class:`~podium.store.sqlite.SQLiteStore`); it
    changes nothing for the other stores.

    Without ``settings``, only the settings the store needs are read and checked: ``store`` and ``data_dir`` when
    no ``spec`` is given, ``durability`` for a SQLite or PostgreSQL store. A bad model setting in the environment
    (``PODIUM_TIMEOUT=-1``) is reported by what uses it, not by opening a store.

    Raises:
        UsageError: a store that is neither text nor a path (``open_store(5)``; nothing is created), a bare number
            (``PODIUM_STORE=5``, ``--store 5``: write ``./5`` for a file of that name), an unsupported URL scheme, or
            an empty path; a bad ``store``, ``data_dir`` or ``durability`` setting (when read).
        StoreError: a malformed ``postgresql://`` URL, or (``read_only``) no SQLite file at the path.
    """

    def setting(name: str) -> Any:
        if settings is not None:
            return getattr(settings, name)
        return getattr(Settings(**_read(None, None, (name,))), name)

    target = _store_target(spec, setting)
    if target == "memory":
        from podium.store.memory import MemoryStore

        return MemoryStore()
    if target.startswith("postgresql://"):
        from podium.store.postgres import PostgresStore

        return PostgresStore(target, durability=setting("durability"))  # connects on first use
    if "://" in target:
        scheme, _, rest = target.partition("://")
        if scheme != "sqlite":
            raise UsageError(
                f"unsupported store {target!r}: use 'memory', a file path, sqlite:///path or postgresql://..."
            )
        target = rest[1:] if rest.startswith("/") else rest  # sqlite:///relative.db, sqlite:////absolute.db
    if not target.strip():
        raise UsageError("the store path is empty: use 'memory', a file path, sqlite:///path or postgresql://...")
    from podium.store.sqlite import SQLiteStore

    return SQLiteStore(Path(target).expanduser(), durability=setting("durability"), read_only=read_only)


def _store_target(spec: object, setting: Callable[[str], Any]) -> str:
    """The store ``spec`` names as text, else the settings' store, else the data folder's ``podium.db``.

    Raises:
        UsageError: ``spec``, the ``store`` or the ``data_dir`` setting is neither text nor a path (a number, say,
            which would otherwise become a file of that name).
    """
    if spec is None:
        spec, named_by = setting("store"), "the store setting"
        if spec is None:
            folder = _as_text(setting("data_dir"), "the data_dir setting", "a folder")
            return str(Path(folder).expanduser() / "podium.db")
    else:
        named_by = "the store"
    target = _as_text(spec, named_by, _STORES)
    if target.strip().isdigit():  # PODIUM_STORE=5 is the text of store = 5, refused in a settings file: same here
        raise UsageError(
            f"{named_by} is a bare number, {target!r}, not a store: use {_STORES} (./{target.strip()} for a file "
            "of that name)"
        )
    return target


_STORES = "'memory', a file path, sqlite:///path or postgresql://..."


def _as_text(value: object, named_by: str, expected: str) -> str:
    """``value`` (text or an ``os.PathLike`` of text) as text.

    Raises:
        UsageError: anything else, naming ``named_by`` and what it should be (``expected``).
    """
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise UsageError(f"{named_by} must be text or a path ({expected}), not {type(value).__name__} {value!r}")
    return value
