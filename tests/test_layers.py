"""The package's import layers: no module imports a higher layer, and no two modules import each other.

Every import counts, wherever it is written: at module level, inside a function (a lazy import), or under
``TYPE_CHECKING``. Each is a dependency a reader has to follow, and a cycle through any of them is a cycle in the
design. The layers, lowest first, are listed in ``LAYERS``; docs/architecture.md draws the same picture.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import podium

SOURCE = Path(podium.__file__).parent

LAYERS: list[tuple[str, ...]] = [
    (
        "podium.errors",
        "podium._codec",
        "podium._handoff",
        "podium._ids",
        "podium._spelling",
        "podium.human",
        "podium.messages",
        "podium.events",
    ),
    ("podium.tools", "podium._tool_schema", "podium._tool_thread", "podium._eager"),
    ("podium.models",),
    ("podium.store",),
    ("podium.runtime",),
    ("podium.agents",),
    ("podium.orchestration",),
    (
        "podium.app",
        "podium.settings",
        "podium.cli",
        "podium.evaluation",
        "podium.integrations",
        "podium.server",
        "podium.mcp",
        "podium.tracing",
        "podium.graph",
        "podium.testing",
        "podium.__main__",
        "podium",
    ),
]
"""Each layer may import its own and lower layers only."""

INDEPENDENT: tuple[str, ...] = (
    "podium.orchestration.master",
    "podium.orchestration.supervisor",
    "podium.orchestration.tasks",
)
"""Orchestrations that never import one another (shared code goes a layer down)."""


def _module_name(root: Path, path: Path, package: str) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def _imports(module: str, is_package: bool, tree: ast.AST, known: set[str]) -> set[str]:
    """The package's modules ``module`` imports (``from a import b`` counts as ``a.b`` when that is a module)."""
    found: set[str] = set()
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            prefix = ".".join(base[: len(base) - node.level + 1]) if node.level else ""
            name = ".".join(p for p in (prefix, node.module or "") if p)
            targets = [f"{name}.{alias.name}" if f"{name}.{alias.name}" in known else name for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import a.b.c` of an attribute path: its nearest module
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Each module of the package under ``root`` and the package's modules it imports."""
    files = {_module_name(root, path, package): path for path in sorted(root.rglob("*.py"))}
    known = set(files)
    return {
        name: _imports(name, path.name == "__init__.py", ast.parse(path.read_text(encoding="utf-8")), known)
        for name, path in files.items()
    }


def _owner(module: str, prefixes: Iterable[str]) -> str | None:
    """The longest of ``prefixes`` that ``module`` is or lies under."""
    matches = [p for p in prefixes if module == p or module.startswith(p + ".")]
    return max(matches, key=len) if matches else None


def layer_of(module: str, layers: list[tuple[str, ...]]) -> int:
    """The index of the layer ``module`` belongs to (the longest matching prefix decides)."""
    prefixes = {prefix: index for index, layer in enumerate(layers) for prefix in layer}
    owner = _owner(module, prefixes)
    if owner is None:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")
    return prefixes[owner]


def violations(graph: dict[str, set[str]], layers: list[tuple[str, ...]], independent: tuple[str, ...]) -> list[str]:
    """Every import of a higher layer, every import between independent packages, and every cycle."""
    found: list[str] = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if layer_of(target, layers) > layer_of(module, layers):
                found.append(f"{module} imports {target}, a higher layer")
            mine, theirs = _owner(module, independent), _owner(target, independent)
            if mine and theirs and mine != theirs:
                found.append(f"{module} imports {target}: {mine} and {theirs} are independent")
    found.extend(f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(graph))
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules that import each other (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_the_package_keeps_its_layers_and_has_no_cycles() -> None:
    graph = import_graph(SOURCE, "podium")
    assert "podium.runtime.context" in graph and "podium.tools" in graph["podium.runtime.context"]
    assert violations(graph, LAYERS, INDEPENDENT) == []


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_a_wrong_import_is_reported(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "__init__.py": "",
            "errors.py": "",
            "messages.py": "from .errors import x\n",
            "tools.py": "def f():\n    from pkg.models.base import Model\n",  # lazy, still counted
            "models/__init__.py": "from pkg.models.base import Model\n",
            "models/base.py": "from pkg import tools\n",
            "orchestration/__init__.py": "",
            "orchestration/a/__init__.py": "",
            "orchestration/a/x.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.orchestration.b.y import Y\n",
            "orchestration/b/__init__.py": "",
            "orchestration/b/y.py": "from ..a import x\n",
        },
    )
    layers = [("pkg.errors", "pkg.messages"), ("pkg.tools",), ("pkg.models",), ("pkg.orchestration", "pkg")]
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.messages"] == {"pkg.errors"}
    assert graph["pkg.models"] == {"pkg.models.base"}
    assert graph["pkg.models.base"] == {"pkg.tools"}
    found = violations(graph, layers, ("pkg.orchestration.a", "pkg.orchestration.b"))
    assert found == [
        "pkg.orchestration.a.x imports pkg.orchestration.b.y: pkg.orchestration.a and pkg.orchestration.b are independent",
        "pkg.orchestration.b.y imports pkg.orchestration.a.x: pkg.orchestration.b and pkg.orchestration.a are independent",
        "pkg.tools imports pkg.models.base, a higher layer",
        "import cycle: pkg.models.base -> pkg.tools",
        "import cycle: pkg.orchestration.a.x -> pkg.orchestration.b.y",
    ]


def test_a_module_outside_every_layer_is_reported() -> None:
    try:
        layer_of("elsewhere.module", LAYERS)
    except AssertionError as exc:
        assert "belongs to no layer" in str(exc)
    else:
        raise AssertionError("a module outside the layers was accepted")
