"""The house's layers, checked on every run of the suite: pyproject's import-linter contracts
(`[tool.importlinter]`), no import cycle at all (an import moved into a function counts, one under
TYPE_CHECKING does not), a root of foundation modules, and subpackages that say what they are."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
from importlinter.cli import lint_imports

import pipeline

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(pipeline.__file__).parent
#: the modules at pipeline/'s root: the foundation every layer may import, and the facades
FOUNDATION = {
    "__init__", "_version", "api", "digest", "errors", "formatting", "hookspecs", "interrupts",
    "progress", "sql", "synthetic",
}  # fmt: skip


def _cycles(graph: grimp.ImportGraph) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = {stack.pop()}
            while module not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.append(component)

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_the_import_linter_contracts_are_kept(capsys):
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert code == 0, capsys.readouterr().out


def test_no_module_imports_one_that_imports_it_back():
    graph = grimp.build_graph("pipeline", exclude_type_checking_imports=True)
    assert _cycles(graph) == []


def test_a_cycle_through_an_import_inside_a_function_is_a_cycle(tmp_path, monkeypatch):
    """The check above sees what it must: an import inside a function closes a cycle, and one
    under TYPE_CHECKING does not."""
    package = tmp_path / "loop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from loop import b\n")
    (package / "b.py").write_text("def later():\n    from loop import a\n")
    (package / "c.py").write_text("from loop import a\n")
    (package / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from loop import c\n"
    )
    (package / "e.py").write_text("from loop import d\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("loop", exclude_type_checking_imports=True)
    assert _cycles(graph) == [{"loop.a", "loop.b"}]


def test_the_root_holds_the_foundation_and_the_subpackages():
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    assert modules == FOUNDATION


def test_each_subpackage_says_what_it_is_and_what_it_may_import():
    for init in sorted(PACKAGE.glob("*/**/__init__.py")):
        if "templates" in init.parts:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert "imports:" in doc.lower(), (
            f"{init.relative_to(PACKAGE)}: say what it is and may import"
        )
