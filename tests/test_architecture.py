"""The layout rules of CONTRIBUTING.md, checked on the source: data flows one way through the
stages, no import cycle between modules or packages, and long modules say why they are long."""

from __future__ import annotations

import ast
import re
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


#: The one module that writes files (docs/security.md): every other module writes through it.
WRITER = "sentprobe.io"
#: Calls that write a file, a folder or an SQLite store, by the name they are called by.
_WRITING_CALLS = {
    "write_text", "write_bytes", "mkdir", "makedirs", "touch", "mkstemp", "mkdtemp",
    "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile", "TemporaryDirectory",
    "replace", "rename", "link", "symlink", "symlink_to", "hardlink_to", "copy", "copy2",
    "copyfile", "copytree", "move", "mkfifo", "chmod", "truncate", "save", "savez",
    "savez_compressed", "savetxt", "save_file", "tofile", "to_parquet", "save_to_disk",
    "save_pretrained", "savefig", "connect",
}  # fmt: skip
#: ``os.open`` flags that write.
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
#: Receivers whose ``replace``/``save``/``connect``... are not file writes: strings and frames
#: (``str.replace``, ``DataFrame.rename``, ``dataclasses.replace``), in-memory buffers.
_NOT_FILES = {"dataclasses", "re", "sig", "r", "name", "text", "part", "model", "spec"}


_MODE = re.compile(r"[rwxabt+U]+(:\w*)?")


def _mode(call: ast.Call, builtin: bool) -> str | None:
    """The mode of an ``open`` call: for the builtin ``open``, its second argument or
    ``mode=`` (a mode computed at run time counts, as it may write); for ``Path.open``,
    ``gzip.open``, ``tarfile.open``..., any literal that reads as a mode."""
    given = [k.value for k in call.keywords if k.arg == "mode"]
    if builtin:
        given += call.args[1:2]
        for arg in given:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                return arg.value
            return "<computed>"
        return None
    for arg in [*call.args[:2], *given]:
        literal = arg.value if isinstance(arg, ast.Constant) else None
        if isinstance(literal, str) and _MODE.fullmatch(literal):
            return literal
    return None


def _given_by_the_writer(tree: ast.AST) -> set[str]:
    """Names of in-memory buffers (``io.BytesIO()``) and of files the writer opened
    (``with atomic_writer(...) as f``): a library writing into them writes through io."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) in {"io.BytesIO", "BytesIO", "io.StringIO", "StringIO"}
        ):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if (
                    isinstance(call, ast.Call)
                    and ast.unparse(call.func).split(".")[-1] in {"atomic_writer", "open_partial"}
                    and isinstance(item.optional_vars, ast.Name)
                ):
                    names.add(item.optional_vars.id)
    return names


def _in_memory(node: ast.expr, buffers: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in buffers


def file_writes(source: str) -> list[str]:
    """Where ``source`` writes a file: ``open``/``Path.open``/``gzip.open``... in a writing
    mode, ``os.open`` with a writing flag, ``write_text``/``write_bytes``, temporary files and
    folders, renames, links, ``torch.save``/``np.save``/``to_parquet``/``savefig`` to a path
    (to an ``io.BytesIO`` buffer is in memory), ``sqlite3.connect``; as ``line: code``."""
    tree = ast.parse(source)
    buffers = _given_by_the_writer(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        owner = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
        writes = False
        if name in {"open", "fdopen"}:
            if owner == "os" and name == "open":
                flags = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                writes = bool(flags & _WRITE_FLAGS)
            else:
                mode = _mode(node, isinstance(func, ast.Name) or owner in {"io", "os"})
                writes = mode is not None and bool(set(mode) & set("wax+<"))
        elif name in _WRITING_CALLS and owner.split(".")[0] not in _NOT_FILES:
            if name in {"replace", "rename", "copy", "move", "truncate", "connect"}:
                # str.replace, frame.rename(...), dict.copy(): only the file-system owners
                writes = owner in {"os", "shutil", "torch", "np", "numpy", "sqlite3"}
            elif name in {"savefig", "to_parquet", "tofile", "savez", "savetxt"}:
                writes = not (node.args and _in_memory(node.args[0], buffers))
            elif name == "save":  # torch.save(obj, f), np.save(f, array)
                target = node.args[1 if owner == "torch" else 0] if node.args else None
                writes = owner in {"torch", "np", "numpy"} and not (
                    target is not None and _in_memory(target, buffers)
                )
            else:
                writes = True
        if writes:
            found.append(f"{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_only_sentprobe_io_writes_files():
    """One writer: every file sentprobe writes or appends to goes through ``sentprobe.io``,
    which creates temporary files without following links, refuses a link or a FIFO where
    it writes, keeps writes inside the folder named and keeps the umask's permissions."""
    writes = {
        name: found
        for name, path in MODULES.items()
        if name != WRITER and (found := file_writes(path.read_text(encoding="utf-8")))
    }
    assert writes == {}


@pytest.mark.parametrize(
    "planted",
    [
        'open(path, "wb")',
        'open(path, mode="a", encoding="utf-8")',
        'path.open("w")',
        'gzip.open(path, "wt")',
        "path.write_text('x')",
        "path.write_bytes(b'x')",
        "os.open(path, os.O_WRONLY | os.O_CREAT)",
        "tempfile.mkstemp(dir=folder)",
        'tarfile.open(path, "w:gz")',
        "with tempfile.TemporaryDirectory() as tmp:\n        pass",
        "folder.mkdir(parents=True)",
        "os.replace(tmp, path)",
        "torch.save(state, path)",
        "np.save(path, array)",
        "frame.to_parquet(path)",
        "sqlite3.connect(path)",
        "shutil.copy(a, b)",
    ],
)
def test_the_writer_rule_finds_a_planted_write(planted):
    assert file_writes(f"def f(path, folder, state, array, frame, a, b, tmp):\n    {planted}\n")


@pytest.mark.parametrize(
    "harmless",
    [
        'open(path, "rb")',
        "open(path, encoding='utf-8')",
        'text.replace("a", "b")',
        "dataclasses.replace(task, name='x')",
        "frame.rename(columns={})",
        "os.open(path, os.O_RDONLY | os.O_NONBLOCK)",
        "tarfile.open(path)",
        "zipfile.ZipFile(path).open(path)",
        "with atomic_writer(path) as f:\n        torch.save(path, f)",
        "buffer = io.BytesIO()\n    fig.savefig(buffer, format='png')",
    ],
)
def test_the_writer_rule_lets_reads_be(harmless):
    assert file_writes(f"def f(path, text, task, frame, fig):\n    {harmless}\n") == []
