"""Inputs as one contract (`pipeline.inputs`): the plan reads no file, no engine names a format
or an output level, and every format module answers the questions the house asks of it."""

from __future__ import annotations

import ast
import builtins
import gzip
import io
import re
from pathlib import Path

import pytest

import pipeline
from pipeline.inputs import (
    answers,
    assignment_labels,
    assignments,
    beir,
    formats,
    nuggets,
    subtopics,
    support,
    trec_qrels,
    trec_run,
)
from pipeline.inputs.loaded_tables import LOADED_TABLES
from pipeline.inputs.row_stream import STREAM_COLUMNS, stream_columns
from pipeline.plan.compile import compile_plan
from pipeline.run import preflight
from pipeline.run.preflight import validate
from pipeline.spec import load_spec
from pipeline.spec.levels import LEVELS

PACKAGE = Path(pipeline.__file__).parent
CONFIGS = sorted((PACKAGE.parent / "configs").glob("*.yaml"))
#: what opens, reads or lists a file, as a call's name or an imported module
_FILE_CALLS = {
    "open", "read_text", "read_bytes", "write_text", "write_bytes", "exists", "is_file",
    "is_dir", "stat", "iterdir", "glob", "rglob", "mkdir", "unlink", "readline", "readlines",
}  # fmt: skip
_FILE_MODULES = {"gzip", "io", "os", "shutil", "tempfile", "zipfile", "glob"}
#: the words of the engine's own tables and columns that are also output levels' names: the
#: ranked `run`, the `query` it is per, the `aggregate` table every engine computes
_ENGINE_WORDS = {"run", "query", "aggregate"}
#: format names that are also plain English, in an engine's words about other things (pyspark
#: "does not yet fully support" pandas)
_ENGLISH_FORMATS = {"support"}


def _modules(package: str) -> list[Path]:
    return sorted((PACKAGE / package).rglob("*.py"))


def _strings(tree: ast.AST) -> list[ast.Constant]:
    """The string literals of a module, its docstrings left out (prose may name anything)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings
    ]  # fmt: skip


@pytest.mark.parametrize("path", _modules("plan"), ids=lambda p: p.name)
def test_no_plan_module_opens_a_file(path):
    """The plan is pure: no call that opens, reads or lists a file, no module that does."""
    tree = ast.parse(path.read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (
            node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
        )
    }
    calls = {
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert not imported & _FILE_MODULES, f"{path.name} imports {imported & _FILE_MODULES}"
    assert not calls & _FILE_CALLS, f"{path.name} calls {calls & _FILE_CALLS}"


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_compiling_every_example_spec_opens_no_file(config, monkeypatch):
    """Compiling the plan of each example spec (as `irpipe compile` does) opens nothing: every
    way Python opens a file fails the test while the compiler runs."""
    compiled = []

    def refuse(*args, **kwargs):
        pytest.fail(f"compiling {config.name} opened {args[:1]}")

    def compiling(*args, **kwargs):
        with pytest.MonkeyPatch.context() as closed:
            for owner, name in [(builtins, "open"), (io, "open"), (gzip, "open"), (Path, "open")]:
                closed.setattr(owner, name, refuse)
            compiled.append(compile_plan(*args, **kwargs))
        return compiled[-1]

    monkeypatch.setattr(preflight, "compile_plan", compiling)
    validate(load_spec(config, patterns="expand_or_keep"), data=False)
    assert compiled and compiled[0].qrels.loads  # something to load, none of it opened


def _named(words: set[str], package: str) -> list[str]:
    """Where a string literal of `package` holds one of `words` as a whole word."""
    found = []
    for path in _modules(package):
        for node in _strings(ast.parse(path.read_text())):
            named = set(re.findall(r"[A-Za-z_]+", node.value)) & words
            found += (
                [f"{path.relative_to(PACKAGE)}:{node.lineno}: {sorted(named)}"] if named else []
            )
    return found


def test_no_engine_names_a_format_or_a_level():
    """An engine asks the inputs' contract (`after_loading`, the loaded tables, the row stream)
    and the level records instead of naming a format, a table only some formats fill, or an
    output level."""
    partial_tables = {name for name, table in LOADED_TABLES.items() if name != table.kind}
    levels = {level.name for level in LEVELS} - _ENGINE_WORDS
    names = {*formats.QRELS_FORMATS, *partial_tables, *levels} - _ENGLISH_FORMATS
    assert _named(names, "engines") == []


def test_the_scan_finds_a_format_where_one_is_named(tmp_path, monkeypatch):
    """The scan above can fail: a module naming `beir` in its SQL is found."""
    (tmp_path / "engines").mkdir()
    (tmp_path / "engines" / "bad.py").write_text('SQL = "SELECT * FROM qrels -- beir"\n')
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path)
    assert _named({"beir"}, "engines") == ["engines/bad.py:1: ['beir']"]


@pytest.mark.parametrize("name", formats.QRELS_FORMATS)
def test_each_qrels_format_reads_into_a_declared_table(name):
    """A format's table is declared, its `select` yields that table's columns, and its rules
    begin with the ones every text file obeys."""
    fmt = formats.qrels_format(name)
    assert fmt.name == name
    assert fmt.table in LOADED_TABLES
    assert len(fmt.select.split(", ")) >= len(fmt.loaded.columns) - 1
    assert [r.problem for r in fmt.rules[:2]] == [r.problem for r in formats.run_format().rules[:2]]


def test_the_row_stream_holds_every_loaded_tables_columns_once():
    """Every column of every loaded table (the runs' times' too) is in the Spark engine's row
    stream, once."""
    columns = {c.name for table in LOADED_TABLES.values() for c in table.columns}
    assert set(stream_columns()) == columns
    assert list(STREAM_COLUMNS)[:2] == ["kind", "name"] and list(STREAM_COLUMNS)[-1] == "ok"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("query-id\tcorpus-id\tscore\n", "beir"),
        ("\ufeffquery-id corpus-id score", "beir"),
        ("1 0 doc1 1\n", "trec"),
        ("query-id corpus-id score extra\n", "trec"),
        ("", "trec"),
    ],
)
def test_a_first_line_shows_its_format(line, expected):
    assert formats.recognised_name(line) == expected


def test_after_loading_asks_each_format_once_with_its_inputs_names(tmp_path):
    """Subtopic qrels give `qrels` their highest grades, once for all their collections; other
    formats run nothing after loading."""
    from pipeline.inputs.format import Load

    loads = [
        Load(tmp_path / "a", "a", formats.qrels_format("subtopics")),
        Load(tmp_path / "b", "b", formats.qrels_format("trec")),
        Load(tmp_path / "c", "c", formats.qrels_format("subtopics")),
    ]
    [statement] = formats.after_loading(loads)
    assert statement.params == [["a", "c"]]
    assert formats.after_loading(loads[1:2]) == []


def test_the_reference_lists_every_format_with_its_fields_and_table():
    """configs/REFERENCE.md's table of input formats is the formats' modules, row for row."""
    from docblocks import code, table

    modules = [formats.qrels_format(name) for name in formats.QRELS_FORMATS]
    modules += [formats.run_format(name=name) for name in formats.RUN_FORMATS]
    rows = table("configs/REFERENCE.md", "input-formats")
    assert [code(row["format"]) for row in rows] == [[fmt.name] for fmt in modules]
    assert [code(row["table"])[0] for row in rows] == [fmt.table for fmt in modules]
    fields = [beir.COLUMNS, subtopics.FIELDS, trec_qrels.FIELDS, trec_run.FIELDS, nuggets.FIELDS,
              assignments.FIELDS, assignment_labels.FIELDS, support.FIELDS, answers.FIELDS]  # fmt: skip
    shown = {code(row["a line's fields"])[0] for row in rows}
    assert shown == {" ".join(f) if isinstance(f, tuple) else f for f in fields}
