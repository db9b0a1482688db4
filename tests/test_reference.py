"""The reference (configs/REFERENCE.md) and the other tables of the docs, checked against the code
they describe: every key of the spec's models with its default (what `irpipe schema` is made
from), every metric `irpipe metrics` lists, every output level and writer, every command and
option of `irpipe --help`, every exit code and environment variable, the layers of the house and
the install check's cases. A row missing, extra or stale fails; tables are found by their
`<!-- table: NAME -->` markers (tests/docblocks.py)."""

from __future__ import annotations

import argparse
import ast
import re
import tomllib
import typing
from collections import Counter

import pytest
import yaml
from docblocks import ROOT, code, first_code, read, region, table, tables_named
from pydantic import BaseModel

from pipeline.errors import ExitCode
from pipeline.spec.compare import TESTS
from pipeline.spec.fusion import FUSION_METHODS, NORMALIZATIONS
from pipeline.spec.globs import COMPRESSION_SUFFIXES, RUN_SUFFIXES
from pipeline.spec.levels import LEVELS, POOL_LEVELS
from pipeline.spec.models import Settings, Spec
from pipeline.spec.outputs import Output
from pipeline.spec.pools import METHODS, PoolOutput

REFERENCE = "configs/REFERENCE.md"
GUIDE = "configs/README.md"
FRONT = "README.md"
REQUIRED = "required"


# -- the spec's keys -----------------------------------------------------------------------------


def spec_models(model: type[BaseModel] = Spec, found: dict | None = None) -> dict[str, type]:
    """Every model a spec is made of, by name: Spec and each model its fields hold."""
    found = {} if found is None else found
    found[model.__name__] = model
    hints = typing.get_type_hints(model, include_extras=True)  # a model defined later, resolved
    for name in model.model_fields:
        for inner in _types_in(hints[name]):
            if issubclass(inner, BaseModel) and inner.__name__ not in found:
                spec_models(inner, found)
    return found


def _types_in(annotation) -> list[type]:
    """The classes an annotation names, through unions, containers and Annotated."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return [annotation]
    return [t for arg in typing.get_args(annotation) for t in _types_in(arg)]


def _default(field):
    """A field's default as a spec would write it (a section of defaults is `{}`)."""
    if field.is_required():
        return REQUIRED
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return {} if value == type(value)() else value.model_dump()
    return value


def _documented(cell: str):
    """The default a cell states: `required`, `none` (optionally explained), or YAML in code."""
    for word, value in ((REQUIRED, REQUIRED), ("none", None)):
        if cell == word or cell.startswith((f"{word}:", f"{word} ")):
            return value
    return yaml.safe_load(first_code(cell))


def test_every_model_of_the_spec_has_a_table():
    documented = {name for name, _ in _tables_of_models()}
    assert documented == {f"spec.{name}" for name in spec_models()}


def _tables_of_models() -> list[tuple[str, list[dict[str, str]]]]:
    names = re.findall(r"<!-- table: (spec\.\w+) -->", read(REFERENCE))
    return [(name, table(REFERENCE, name)) for name in names]


@pytest.mark.parametrize("name", sorted(spec_models()))
def test_every_key_is_in_the_reference_with_its_default(name):
    model = spec_models()[name]
    rows = table(REFERENCE, f"spec.{name}")
    assert [first_code(row["key"]) for row in rows] == list(model.model_fields), (
        f"{REFERENCE}, table spec.{name}: the keys, in the model's order"
    )
    for row in rows:
        field = model.model_fields[first_code(row["key"])]
        assert _documented(row["default"]) == _default(field), (name, row["key"], row["default"])


def test_the_front_pages_defaults_are_the_settings_defaults():
    resolved = Settings().resolved()
    rows = table(FRONT, "defaults")
    assert rows
    for row in rows:
        key = first_code(row["setting"])
        assert yaml.safe_load(first_code(row["default"])) == resolved[key], key


def test_a_glob_names_its_runs_by_the_documented_suffixes():
    listed = {span for span in code(region(REFERENCE, "run-names")) if re.fullmatch(r"\.\w+", span)}
    assert listed == set(COMPRESSION_SUFFIXES) | set(RUN_SUFFIXES)


# -- metrics -------------------------------------------------------------------------------------


def _listed_metrics(monkeypatch) -> list[tuple]:
    """The rows `irpipe metrics` prints: (name, aliases, parameters, provider, description)."""
    import pipeline.console.draw
    from pipeline.cli import commands

    rows: list[tuple] = []
    monkeypatch.setattr(pipeline.console.draw, "print_metrics", rows.extend)
    commands.metrics(argparse.Namespace(names=[], json=False))
    return [row for row in rows if row[3] == "irpipe"]


def _parameters(listed: str) -> list[str]:
    """`rel=None, k=None, beta=1.0` as the table writes it: `rel`, `k`, `beta=1.0`."""
    return [p.removesuffix("=None") for p in listed.split(", ") if p]


def test_every_metric_irpipe_metrics_lists_is_in_the_reference(monkeypatch):
    from pipeline.measures.registry import get_registry

    measures = {m.name: m for m in get_registry().measures}
    rows = {first_code(row["metric"]): row for row in table(REFERENCE, "metrics")}
    listed = _listed_metrics(monkeypatch)
    assert sorted(rows) == sorted(name for name, *_ in listed)
    for name, aliases, parameters, _, _ in listed:
        row, measure = rows[name], measures[name]
        assert code(row["also named"]) == [a for a in aliases.split(", ") if a], name
        assert code(row["parameters"]) == _parameters(parameters), name
        assert row["aggregated"] == measure.aggregator, name
        assert row["better"] == (measure.better or "—"), name
        assert row["what it is"], name


# -- outputs -------------------------------------------------------------------------------------


def test_every_level_of_the_spec_has_its_record_and_its_row_in_the_reference():
    """The spec's levels (its outputs', then its pools') are the records, in their order, and the
    reference's levels table lists exactly the records, in that order, each with its columns."""
    spec_levels = [
        *typing.get_args(Output.model_fields["level"].annotation),
        *typing.get_args(PoolOutput.model_fields["level"].annotation),
    ]
    assert spec_levels == [record.name for record in LEVELS]
    rows = table(REFERENCE, "output-levels")
    assert [first_code(row["level"]) for row in rows] == spec_levels
    for row, record in zip(rows, LEVELS, strict=True):
        if record.columns is not None:
            cell = row["columns, or what is drawn"]
            assert first_code(cell) == ", ".join(record.columns), record.name


def test_every_writer_is_in_the_reference():
    from pipeline.host.manager import get_plugin_manager

    writers = [w for found in get_plugin_manager().hook.register_writers() for w in found]
    builtin = [w for w in writers if w.__module__.startswith("pipeline.")]
    expected = Counter((tuple(sorted(w.suffixes)), tuple(sorted(w.levels))) for w in builtin)
    rows = table(REFERENCE, "writers")
    documented = Counter((tuple(sorted(code(r["suffixes"]))), tuple(sorted(code(r["levels"])))) for r in rows)  # fmt: skip
    assert documented == expected


def test_the_guides_pool_tables_are_the_code_s():
    methods = [first_code(row["method"]).split(":")[0] for row in table(GUIDE, "pool-methods")]
    assert methods == list(METHODS)
    levels = [first_code(row["level"]) for row in table(GUIDE, "pool-levels")]
    assert levels == list(POOL_LEVELS)


def test_the_guides_fusion_tables_are_the_code_s():
    methods = [m for row in table(GUIDE, "fusion-methods") for m in code(row["method"])]
    assert sorted(methods) == sorted(FUSION_METHODS)
    norms = [first_code(row["norm"]) for row in table(GUIDE, "fusion-norms")]
    assert sorted(norms) == sorted(NORMALIZATIONS)


def test_the_compare_tests_are_the_code_s():
    (row,) = [r for r in table(REFERENCE, "spec.Compare") if first_code(r["key"]) == "tests"]
    assert code(row["meaning"])[: len(TESTS)] == list(TESTS)


# -- the history ---------------------------------------------------------------------------------


def _history_schema() -> dict[str, list[str]]:
    """Each table and view of a history, with its columns, from its CREATE statements."""
    from pipeline.history.schema import HISTORY_TABLES, VIEWS

    found = {}
    for statement in HISTORY_TABLES:
        name, columns = re.match(r"CREATE TABLE \{db\}\.(\w+) \((.*)\)", statement, re.S).groups()
        found[name] = [column.split()[0] for column in columns.split(",") if column.strip()]
    for statement in VIEWS:
        name, select = re.match(r"CREATE VIEW \{db\}\.(\w+) AS\s+SELECT (.*?)\s+FROM", statement, re.S).groups()  # fmt: skip
        found[name] = [column.strip().split(".")[-1] for column in select.split(",")]
    return found


def test_every_table_of_the_history_is_in_the_reference():
    rows = table(REFERENCE, "history-tables")
    documented = {first_code(r["table"]): first_code(r["columns"]).split(", ") for r in rows}
    assert documented == _history_schema()


# -- exit codes, commands, environment ----------------------------------------------------------


def test_every_exit_code_is_documented_on_the_front_page_and_in_the_reference():
    codes = {value for name, value in vars(ExitCode).items() if not name.startswith("_")}
    found = tables_named("exit-codes")
    assert {page for page, _ in found} == {FRONT, REFERENCE}
    for page, rows in found:
        assert [int(first_code(row["code"])) for row in rows] == sorted(codes), page


def _commands() -> dict[str, argparse.ArgumentParser]:
    from pipeline.cli.parser import parser as make_parser

    parser = make_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {"irpipe": parser, **{f"irpipe {n}": p for n, p in subparsers.choices.items()}}


def _arguments(parser: argparse.ArgumentParser) -> list[list[str]]:
    """Each argument of a command, as the names any of which the reference may show it by."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        if action.option_strings:
            found.append(list(action.option_strings))
        else:
            metavar = action.metavar if isinstance(action.metavar, str) else None
            found.append([metavar or action.dest.upper()])
    return found


def _trec_eval_flags() -> list[list[str]]:
    from pipeline.trec_eval.command import USAGE

    return [[flag] for flag in re.findall(r"\[(--?\w+)", USAGE)] + [["QRELS"], ["RUN"]]


def test_every_command_and_option_is_in_the_reference():
    rows = {first_code(row["command"]): row for row in table(REFERENCE, "cli")}
    commands = _commands()
    assert sorted(rows) == sorted(commands)
    for name, parser in commands.items():
        shown = {span.split()[0] for span in code(rows[name]["arguments and options"])}
        arguments = _trec_eval_flags() if name == "irpipe trec-eval" else _arguments(parser)
        missing = [names for names in arguments if not shown & set(names)]
        assert not missing, f"{name}: the reference lacks {missing}"
        assert rows[name]["what it does"], name


def test_every_environment_variable_irpipe_reads_is_documented():
    read_in_code = {
        name
        for path in (ROOT / "pipeline").rglob("*.py")
        for name in re.findall(r"[\"'](IRPIPE_[A-Z_]+)[\"']", path.read_text(encoding="utf-8"))
    }
    documented = {first_code(row["variable"]) for row in table(REFERENCE, "environment")}
    assert read_in_code and read_in_code <= documented


def test_every_extra_is_on_the_front_page():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = set(project["optional-dependencies"]) - {"test", "bench"}
    assert {first_code(row["extra"]) for row in table(FRONT, "extras")} == extras


# -- the house and the tests ---------------------------------------------------------------------


def test_the_houses_layers_are_the_import_contract():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    contract = [{m.strip().removeprefix("pipeline.") for m in layer.split("|")} for layer in layers]
    documented = [set(code(row["layer"])) for row in table("pipeline/README.md", "layers")]
    assert documented == contract


def test_every_install_case_is_in_the_tests_readme():
    tree = ast.parse((ROOT / "tests" / "installs" / "cases.py").read_text())
    (cases,) = [
        node.value for node in tree.body
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "CASES"
    ]  # fmt: skip
    names = [key.value for key in cases.keys]
    assert [first_code(row["case"]) for row in table("tests/README.md", "install-cases")] == names
