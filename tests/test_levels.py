"""The output levels' records (`pipeline/spec/levels.py`) against what an evaluation does: each
table level's table has the record's columns, the stage the record names is a stage of the
evaluation, and no module outside the records compares an output's level with a level's name
(the records are asked instead). The records against the spec and the reference:
tests/test_reference.py."""

from __future__ import annotations

import ast
import random
from pathlib import Path

from pipeline.run.evaluation import evaluate
from pipeline.run.stages import stages
from pipeline.spec.levels import LEVELS, level_of
from pipeline.sql import quote_identifier
from pipeline.synthetic import write_qrels, write_run

PACKAGE = Path(__file__).resolve().parent.parent / "pipeline"
#: the modules that still compare an output's level with a level's name: none, every module asks
#: the level's record (`level_of(name)`)
STILL_COMPARING: set[str] = set()
#: the levels whose tables a spec with every section writes, as .parquet (the agreement's text
#: outputs read a view of its own)
TABLE_LEVELS = [record.name for record in LEVELS if record.columns is not None]


def _write_inputs(directory: Path) -> None:
    rng = random.Random(7)
    qrels = {f"q{q}": {f"d{d}": rng.choice([0, 1, 2]) for d in range(20)} for q in range(6)}
    other = {q: {d: rng.choice([0, 1, 2]) for d in docs} for q, docs in qrels.items()}
    write_qrels(qrels, directory / "human.txt")
    write_qrels(other, directory / "llm.txt")
    for name in ("a", "b"):
        ranked = {q: {f"d{d}": rng.random() for d in range(20)} for q in qrels}
        write_run(ranked, directory / f"{name}.trec", tag=name)


def _spec_of_every_table_level() -> dict:
    outputs = [{"path": f"out/{name}.parquet", "level": name} for name in TABLE_LEVELS]
    return {
        "collections": {"human": {"qrels": "human.txt"}, "llm": {"qrels": "llm.txt"}},
        "runs": {name: {"path": f"{name}.trec", "collection": "human"} for name in ("a", "b")},
        "metrics": ["AP", "P@10"],
        "compare": {"samples": 1000},
        "suites": {"judged": ["human"]},
        "discrimination": {"tests": ["t"]},
        "agreement": [{"reference": "human", "other": "llm"}],
        "reproduction": [{"original": ["a"], "reproduced": ["b"]}],
        "outputs": [o for o in outputs if not level_of(o["level"]).is_pool],
        "pools": {
            "round1": {
                "collection": "human",
                "method": {"depth": 5},
                "outputs": [o for o in outputs if level_of(o["level"]).is_pool],
            }
        },
    }


def test_each_table_level_s_table_has_its_record_s_columns_and_is_filled_by_its_stage(
    tmp_path, write_spec
):
    _write_inputs(tmp_path)
    evaluation = evaluate(write_spec(_spec_of_every_table_level()))
    jobs = {job.level: job for job in evaluation.plan.outputs}
    assert sorted(jobs) == sorted(TABLE_LEVELS)
    names = {stage.name for stage in stages(evaluation.plan)}
    for name, job in jobs.items():
        record = level_of(name)
        described = evaluation.con.execute(f"DESCRIBE {quote_identifier(job.table)}").fetchall()
        assert tuple(row[0] for row in described) == record.columns, name
        assert record.stage in names, name
        assert record.table in (None, job.table), name


def _compared_levels(source: str) -> list[int]:
    """The lines of `source` that compare a `level` (a name or an attribute) with a level's name
    or names."""
    names = {record.name for record in LEVELS}
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(_is_level(side) for side in sides) and any(_strings(s) & names for s in sides):
            found.append(node.lineno)
    return found


def _is_level(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "level") or (
        isinstance(node, ast.Name) and node.id == "level"
    )


def _strings(node: ast.expr) -> set[str]:
    """The strings a literal holds: itself, or the items of a tuple, list or set."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}


def test_the_check_sees_a_level_compared_with_a_name_or_names():
    source = 'if output.level == "run": pass\nif level in ("pool", "x"): pass\nif x == "run": pass'
    assert _compared_levels(source) == [1, 2]


def test_no_module_but_the_records_compares_a_level_with_its_name():
    comparing = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if _compared_levels(path.read_text(encoding="utf-8"))
    }
    assert comparing == STILL_COMPARING
