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
    "__init__", "_version", "api", "digest", "entry_points", "errors", "formatting", "hookspecs",
    "interrupts", "progress", "sql", "synthetic", "synthetic_answers", "synthetic_latency",
    "synthetic_reproduction",
}  # fmt: skip
#: the packages that ask for the process-wide measure registry (`get_registry()`): the front
#: doors, and the measures that define it. Every layer below is handed the registry or what it
#: resolved; for plan, engines, compare, checks, pools and outputs, pyproject's contract on
#: pipeline.measures.registry makes that a rule of their imports.
ASKING_FOR_THE_REGISTRY = {"run", "cli", "notebook", "testing", "trec_eval", "measures"}
#: modules elsewhere that still ask for it: each is to be handed it by its caller
STILL_ASKING: set[str] = set()


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


def test_only_the_front_doors_ask_for_the_registry():
    """What validation resolves, the plan keeps: below the front doors nothing resolves a
    metric again through the global registry (an import-linter contract sees imports, not calls:
    this sees calls, wherever the name came from)."""
    asking = set()
    for path in PACKAGE.rglob("*.py"):
        calls = [node.func for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Call)]  # fmt: skip
        if any(getattr(f, "id", getattr(f, "attr", None)) == "get_registry" for f in calls):
            asking.add(".".join(("pipeline", *path.relative_to(PACKAGE).with_suffix("").parts)))
    below = {module for module in asking if module.split(".")[1] not in ASKING_FOR_THE_REGISTRY}
    assert below == STILL_ASKING


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
