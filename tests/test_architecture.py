"""The layout rules of CONTRIBUTING.md, checked on the source: data flows one way through the
stages, no import cycle between modules or packages, and long modules say why they are long."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "sentprobe"
#: Stages, earliest first; a module may import only from its own stage or earlier ones.
STAGES = [
    {"errors", "registry", "io", "parallel", "progress"},
    {"datasets"},
    {"annotation"},
    {"generation"},
    {"encoders"},
    {"training"},
    {"probes"},
    {"evaluation"},
    {"analysis", "reporting"},
    {"cli", "__main__"},
]
MAX_LINES = 450
#: A module longer than MAX_LINES starts its docstring's last line with this, saying why.
LONG_REASON = "Long because"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def imports(name: str) -> set[str]:
    """The sentprobe modules ``name`` imports (at any depth of its code)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in MODULES else target)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: imports(name) for name in MODULES}


def stage(name: str) -> int | None:
    parts = name.split(".")
    if len(parts) < 2:
        return None  # the package's lazy top-level API
    return next((i for i, names in enumerate(STAGES) if parts[1] in names), None)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_belongs_to_a_stage():
    assert [m for m in MODULES if m != "sentprobe" and stage(m) is None] == []


def test_no_import_from_a_later_stage():
    upward = [
        f"{a} -> {b}"
        for a, targets in GRAPH.items()
        for b in sorted(targets)
        if stage(a) is not None and stage(b) is not None and stage(b) > stage(a)
    ]
    assert upward == []


def test_no_module_import_cycle():
    assert cycles(GRAPH) == []


def test_no_package_import_cycle():
    def package(m: str) -> str:
        return ".".join(m.split(".")[:2])

    graph: dict[str, set[str]] = {}
    for a, targets in GRAPH.items():
        for b in targets:
            if package(a) != package(b):
                graph.setdefault(package(a), set()).add(package(b))
    assert cycles(graph) == []


def test_cycle_finder_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_long_modules_say_why(name):
    text = MODULES[name].read_text(encoding="utf-8")
    if text.count("\n") <= MAX_LINES:
        return
    doc = ast.get_docstring(ast.parse(text)) or ""
    assert LONG_REASON in doc, f"{name} has over {MAX_LINES} lines and no '{LONG_REASON} ...'"


def test_progress_bars_come_from_sentprobe_progress():
    """A bare tqdm writes carriage-return frames into log files; sentprobe.progress does not."""
    direct = [
        name
        for name, path in MODULES.items()
        if name != "sentprobe.progress"
        and any(
            isinstance(node, (ast.Import, ast.ImportFrom))
            and any(
                (getattr(node, "module", None) or alias.name).split(".")[0] == "tqdm"
                for alias in node.names
            )
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    ]
    assert direct == []
