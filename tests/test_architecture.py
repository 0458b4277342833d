"""ARCHITECTURE.md's layer table is the import rule; this test makes it executable.

Every module of the package must appear in the table (so the document stays true), and a module
may import from the rest of ``mcp_matrix`` only at its own layer or below. ``mcp_matrix.wire`` imports
nothing from the rest of the package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mcp_matrix"


def _layer_table() -> dict[str, int]:
    """Module prefix -> layer number, read from the table rows of ARCHITECTURE.md."""
    prefixes: dict[str, int] = {}
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        row = re.match(r"^\|\s*(\d+)\s[^|]*\|([^|]*)\|", line)
        if not row:
            continue
        layer = int(row.group(1))
        for name in re.findall(r"`(mcp_matrix(?:\.\w+)*)(?:\.\*)?`", row.group(2)):
            prefixes[name] = layer
    return prefixes


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer_of(module: str, table: dict[str, int]) -> int | None:
    """The layer of the longest table prefix that names ``module`` or one of its parents."""
    best = None
    for prefix, layer in table.items():
        names_it = module == prefix or module.startswith(prefix + ".")
        if names_it and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return best[1] if best else None


def _imports(path: Path, module: str) -> set[str]:
    """Absolute ``matrix`` modules imported by the file, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "mcp_matrix")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "mcp_matrix":
                continue
            # "from mcp_matrix.report import terminal" imports a submodule, not the package's names.
            names_from_package = False
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if (PACKAGE.parent / candidate.replace(".", "/")).with_suffix(".py").exists():
                    found.add(candidate)
                else:
                    names_from_package = True
            if names_from_package:
                found.add(target)
    return found


def _modules() -> list[tuple[Path, str]]:
    return [
        (p, _module_name(p))
        for p in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in p.parts and _module_name(p) != "mcp_matrix"
    ]


def test_every_module_is_in_the_layer_table():
    table = _layer_table()
    assert table, "no layer rows found in ARCHITECTURE.md"
    missing = [m for _, m in _modules() if _layer_of(m, table) is None]
    assert not missing, f"modules missing from ARCHITECTURE.md's layer table: {missing}"


def test_no_module_imports_from_a_higher_layer():
    table = _layer_table()
    violations = []
    for path, module in _modules():
        own = _layer_of(module, table)
        for imported in _imports(path, module):
            if imported == "mcp_matrix":
                continue
            theirs = _layer_of(imported, table)
            if own is not None and theirs is not None and theirs > own:
                violations.append(f"{module} (layer {own}) imports {imported} (layer {theirs})")
    assert not violations, "\n".join(violations)


def test_wire_imports_nothing_else_from_matrix():
    leaks = [
        f"{module} imports {imported}"
        for path, module in _modules()
        if module.startswith("mcp_matrix.wire")
        for imported in _imports(path, module)
        if not imported.startswith("mcp_matrix.wire")
    ]
    assert not leaks, "\n".join(leaks)


def test_the_layer_rule_catches_an_upward_import(tmp_path):
    """The checker itself must be able to fail: a layer-0 file importing layer 6 is caught."""
    table = _layer_table()
    fake = tmp_path / "mcp_matrix" / "errors.py"
    fake.parent.mkdir()
    fake.write_text("from mcp_matrix.commands.cli import main\n", encoding="utf-8")
    imported = _imports(fake, "mcp_matrix.core.errors")
    assert imported == {"mcp_matrix.commands.cli"}
    assert _layer_of("mcp_matrix.core.errors", table) < _layer_of("mcp_matrix.commands.cli", table)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in ``graph``, or None (iterative depth-first search)."""
    state: dict[str, int] = {}
    for start, children_of_start in graph.items():
        if state.get(start):
            continue
        stack = [(start, iter(sorted(children_of_start)))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child) :] + [child]
            elif not state.get(child) and child in graph:
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(graph[child]))))
    return None


def test_no_import_cycles_between_modules():
    graph = {module: set() for _, module in _modules()}
    for path, module in _modules():
        graph[module] = {m for m in _imports(path, module) if m in graph and m != module}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_live_run_is_assembled_in_matrix_api_alone():
    """``run_matrix`` is called by ``mcp_matrix.api.run`` only: the run command, ``check`` and the
    pytest plugin get their run (results, reports, progress, the gate) from there."""
    callers = sorted(
        module
        for path, module in _modules()
        if module not in ("mcp_matrix.api", "mcp_matrix.run.matrix")
        and re.search(r"\brun_matrix\b|\bRunConfig\b", path.read_text(encoding="utf-8"))
    )
    assert callers == []


def test_commands_define_no_library_classes():
    """Commands parse and print (ARCHITECTURE.md): a class there is a library value or a
    writer that belongs a layer down (the terminal streams of ``outputs`` and the argument
    parser of ``cli`` are the exceptions)."""
    found = [
        f"{module}.{node.name}"
        for path, module in _modules()
        if module.startswith("mcp_matrix.commands.")
        and module not in ("mcp_matrix.commands.outputs", "mcp_matrix.commands.cli")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    ]
    assert found == []


def test_the_package_top_level_holds_only_the_public_names():
    """The folders are the layers: a module added beside ``api.py`` would hide its layer."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "api.py", "pytest_plugin.py"]


def test_each_layer_row_names_whole_packages():
    """A layer row names packages (or the public top-level modules), so a folder is one layer."""
    table = _layer_table()
    public = {"mcp_matrix.api", "mcp_matrix.pytest_plugin", "mcp_matrix.__main__"}
    loose = [
        name
        for name in table
        if name not in public and not (PACKAGE.parent / name.replace(".", "/")).is_dir()
    ]
    assert loose == []
