"""Chat apps: what ``podium chat <app>`` runs.

An app is a module with an ``app = App(...)`` attribute: a name, a function building the agent from a model, and
the cassette that lets it run offline (with, optionally, a model answering offline what the cassette cannot, such as
a rule-based stand-in). ``podium chat NAME`` takes ``NAME.py`` (``-`` read as ``_``) of the importable
``examples`` package, else of the ``examples/`` folder of the current folder (never of a parent folder, where anyone
could have planted one), a path to a ``.py`` file, or ``package.module[:attribute]`` (found in the current folder
first, as ``python -m`` finds it). The loaded app's ``source`` says which file it came from.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from podium.errors import UsageError

if TYPE_CHECKING:
    from podium.agents.base import Agent
    from podium.models.base import Model
    from podium.settings import Settings

__all__ = ["App", "build_agent", "example_names", "load_app", "no_examples_hint"]


@dataclass(slots=True, kw_only=True)
class App:
    """A runnable chat application."""

    name: str
    """The app's name."""
    build: Callable[[Model], Agent]
    """Builds the agent around a model."""
    cassette: Path | None = None
    """Recorded replies that make the app run offline (used when no model is configured). An app whose agent calls
    no model (a master agent with the offline router) needs neither this nor :attr:`offline_fallback`."""
    offline_fallback: Model | None = None
    """Answers offline what the cassette does not hold, or holds only after another conversation (a rule-based
    stand-in, say, so any input gets an answer offline): the ``fallback`` of the cassette's
    :class:`~podium.models.replay.ReplayModel`, or the offline model itself without a cassette. Without one, a turn
    the cassette cannot answer fails with :class:`~podium.errors.CassetteError`. Unused when a real model is
    configured."""
    welcome: str = ""
    """Shown when a new conversation starts."""
    source: Path | None = None
    """The file the app was loaded from (set by :func:`load_app`)."""

    def model(self, settings: Settings) -> Model:
        """The configured real model, or offline the replay of the app's cassette (falling back on
        :attr:`offline_fallback`), or the fallback alone; with neither, an offline model with nothing recorded
        (:class:`~podium.models.replay.NothingRecorded`): an app that calls no model (a master agent routing offline)
        runs, and the first request of one that does fails saying what to configure (a :class:`UsageError`).
        """
        real = settings.model_or_none()
        if real is not None:
            return real
        from podium.models.replay import NothingRecorded, ReplayModel

        if self.cassette is None:
            if self.offline_fallback is not None:
                return self.offline_fallback
            return NothingRecorded(
                f"app {self.name!r} has no cassette for offline use and no offline_fallback: set PODIUM_MODEL (with "
                "PODIUM_BASE_URL and PODIUM_API_KEY for your endpoint) to use a real model, or give the App a "
                "cassette= or an offline_fallback= model"
            )
        return ReplayModel(self.cassette, fallback=self.offline_fallback)


def _examples_dirs() -> list[Path]:
    """The examples folder: the importable ``examples`` package's, else ``examples/`` of the current folder."""
    module = sys.modules.get("examples")
    if module is not None:
        locations = list(getattr(module, "__path__", ()))
    else:
        spec = importlib.util.find_spec("examples")
        locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if locations:
        return [Path(locations[0]).resolve()]
    here = Path.cwd().resolve() / "examples"
    return [here] if here.is_dir() else []


def _where(path: Path, exc: BaseException) -> str:
    """``path``, with the line of it where ``exc`` was raised (the last frame in that file) when there is one."""
    target = path.resolve()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename and Path(frame.filename).resolve() == target:
            return f"{path}:{frame.lineno}"
    return str(path)


def _said(exc: BaseException) -> str:
    """The exception's type and the first line of its text."""
    detail = str(exc).splitlines()[0] if str(exc) else ""
    return type(exc).__name__ + (f": {detail}" if detail else "")


def _failure(path: Path, exc: BaseException) -> UsageError:
    """One line for an app file that failed to import: the file (and its line that raised) and the exception."""
    return UsageError(f"cannot load the app file {_where(path, exc)}: {_said(exc)}")


def build_agent(app: App, model: Model) -> Agent:
    """``app.build(model)``; what the app's own code raises while building (a wrong argument, a name refused) becomes
    one :class:`UsageError` naming the app, its file and line, and the exception (chained, for the traceback).

    Raises:
        UsageError: the build raised.
    """
    try:
        return app.build(model)
    except Exception as exc:
        where = f" ({_where(app.source, exc)})" if app.source is not None else ""
        raise UsageError(f"cannot build app {app.name!r}{where}: {_said(exc)}") from exc


def _load_file(path: Path) -> ModuleType:
    """The file as a module; its folder goes on ``sys.path`` (as for ``python file.py``) so it can import siblings."""
    name = f"podium_app_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path}")
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise _failure(path, exc) from exc
    return module


def _load_example(folder: Path, stem: str) -> ModuleType:
    """``examples/<stem>.py`` as the module ``examples.<stem>`` when the folder is a package, so examples can share
    code with ``from examples.<other> import ...`` (and tests importing them get the same module)."""
    if not (folder / "__init__.py").is_file():
        return _load_file(folder / f"{stem}.py")
    root = str(folder.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        return importlib.import_module(f"{folder.name}.{stem}")
    except Exception as exc:
        raise _failure(folder / f"{stem}.py", exc) from exc


def example_names() -> list[str]:
    """The example apps ``podium chat`` finds by name (see the module's docstring for where it looks)."""
    return sorted({p.stem.replace("_", "-") for d in _examples_dirs() for p in d.glob("*.py") if p.stem != "__init__"})


_HOW_TO_NAME = "name an app file (path/to/app.py) or a module (module:attribute)"


def no_examples_hint() -> str:
    """What to do when no example is found by name: where the examples are, and the other ways to name an app."""
    return f"the examples ship in the repository's examples/ folder: run from the repository root, or {_HOW_TO_NAME}"


def _not_found(spec: str) -> UsageError:
    """No app named ``spec``: the examples that are found, or where they are, and the other ways to name one."""
    names = example_names()
    if names:
        return UsageError(f"no app {spec!r}; the examples here are {', '.join(names)}; or {_HOW_TO_NAME}")
    return UsageError(f"no app {spec!r} and no examples/ folder here; {no_examples_hint()}")


def _import_module(module_name: str) -> ModuleType:
    """The module ``module_name``, found (as by ``python -m``) in the current folder first, then on ``sys.path``."""
    here = str(Path.cwd())
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if module_name == missing or module_name.startswith(f"{missing}."):  # the app's module, not one it imports
            raise UsageError(
                f"cannot import app module {module_name!r}: no module {missing!r} in the current folder "
                f"({here}) or on the import path"
            ) from None
        raise UsageError(f"cannot import app module {module_name!r}: {exc}") from None
    except ImportError as exc:
        raise UsageError(f"cannot import app module {module_name!r}: {exc}") from None
    except Exception as exc:
        raise UsageError(f"cannot import app module {module_name!r}: {type(exc).__name__}: {exc}") from exc


def load_app(spec: str) -> App:
    """Find and load the app named by ``spec``.

    Raises:
        UsageError: nothing found (a ``.py`` file that does not exist, an unknown name or module), or the module has
            no ``App``.
    """
    attribute = "app"
    module: ModuleType | None = None
    path = Path(spec)
    if spec.endswith(".py"):
        if not path.is_file():
            reason = "is a folder" if path.is_dir() else "does not exist"
            raise UsageError(f"no app file {spec}: it {reason} (in {Path.cwd()})")
        module = _load_file(path)
    else:
        stem = spec.replace("-", "_")
        for folder in _examples_dirs():
            candidate = folder / f"{stem}.py"
            if candidate.is_file():
                module = _load_example(folder, stem)
                break
        if module is None and (":" in spec or "." in spec):
            module_name, _, attribute = spec.partition(":")
            attribute = attribute or "app"
            if not module_name:
                raise UsageError(f"no module named in {spec!r}: write module:attribute (like team:app)")
            module = _import_module(module_name)
    if module is None:
        raise _not_found(spec)
    found = getattr(module, attribute, None)
    if not isinstance(found, App):
        raise UsageError(f"{spec!r} has no App named {attribute!r}")
    where = getattr(module, "__file__", None)
    found.source = Path(where).resolve() if where else None
    return found
