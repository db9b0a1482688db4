"""The reading pass: every whitespace layout C's isspace separates (and so trec_eval) is split in
one pass over all files of a batch, into the fields Python's split finds, and nothing is ever
truncated silently."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import InputDataError
from pipeline.inputs.format import Load
from pipeline.inputs.formats import run_format
from pipeline.inputs.loaded_tables import INPUT_TABLES
from pipeline.inputs.text_lines import insert_lines
from pipeline.plan.batches import BATCH_BYTES, batched
from pipeline.run.evaluation import evaluate

FIELDS = ["7", "Q0", "doc-1", "3", "2.5e-1", "tag"]
# What real tools write between fields: a tab, a space, runs of either, a mix; \v and \f are C's too.
SEPARATOR = st.text(alphabet=" \t", min_size=1, max_size=8)
ODD_SEPARATOR = st.text(alphabet=" \t\v\f", min_size=1, max_size=12)


def _rows(path: Path, statement_of) -> list[tuple]:
    """Load one run file with a pass and return its rows (run, qid, docno, rank, score, ok)."""
    con = duckdb.connect()
    for statement in INPUT_TABLES:
        con.execute(statement.sql)
    statement = statement_of(Load(path, "r", run_format(), ("c",)))
    con.execute(statement.sql, statement.params)
    return con.execute("SELECT * FROM run_rows ORDER BY qid, docno").fetchall()


def _write_lines(path: Path, separators: list[str], lead: str, trail: str) -> None:
    line = lead + "".join(f + s for f, s in zip(FIELDS, [*separators, ""], strict=True)) + trail
    path.write_text(line + "\n" + "\t".join(FIELDS).replace("doc-1", "doc-2") + "\n")


def _read(path: Path) -> list[tuple]:
    return _rows(path, lambda load: insert_lines([load]))


def _split(path: Path) -> list[tuple]:
    """The rows as Python's split (any run of whitespace; here, of C's) reads the lines."""
    # split("\n"), not splitlines(): that breaks lines at \v and \f too
    lines = [line.split() for line in path.read_text().split("\n") if line.strip()]
    return sorted(("r", f[0], f[2], int(f[3]), float(f[4]), True) for f in lines)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(SEPARATOR, min_size=5, max_size=5),
    st.sampled_from(["", " ", "\t", " \t  "]),
    st.sampled_from(["", " ", "\t  "]),
)
def test_tabs_spaces_and_runs_of_them_are_read_in_one_pass(
    tmp_path_factory, separators, lead, trail
):
    path = tmp_path_factory.mktemp("ws") / "run.txt"
    _write_lines(path, separators, lead, trail)
    read = _read(path)
    assert read == _split(path)
    assert [row[1:5] for row in read] == [("7", "doc-1", 3, 0.25), ("7", "doc-2", 3, 0.25)]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(ODD_SEPARATOR, min_size=5, max_size=5),
    st.sampled_from(["", " \v", "\f\t"]),
    st.sampled_from(["", "\v", " \f "]),
)
def test_odd_layouts_are_read_as_c_separates_them(tmp_path_factory, separators, lead, trail):
    """\\v, \\f and runs of any length of separators, leading and trailing ones too."""
    path = tmp_path_factory.mktemp("odd") / "run.txt"
    _write_lines(path, separators, lead, trail)
    assert _read(path) == _split(path)


def test_a_long_run_of_spaces_still_evaluates(evaluate_trec):
    qrels = "1 0 a 1\n1 0 b 0\n"
    run = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n"
    expected, _ = evaluate_trec(qrels, run, ["AP", "NumRet"])
    got, _ = evaluate_trec(qrels, run.replace(" ", " " * 20), ["AP", "NumRet"])
    assert got == expected


@pytest.mark.parametrize(
    "line",
    ["1 Q0 b 2 1.0 t\x1fjunk", "1 Q0 b\x1f 2 1.0 t", "1 Q0 b 2 1.0 t\x1f", "1\x1f\x1fQ0 b 2 1.0 t"],
)
def test_a_unit_separator_is_an_error_never_a_cut_line(tmp_path, write_spec, line):
    """0x1F is the reader's delimiter: a line holding it must be reported, not silently cut.
    (Files are written directly: Python's strip() would remove the 0x1F.)"""
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n")
    (tmp_path / "run.txt").write_text(f"1 Q0 a 1 2.0 t\n{line}\n")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": ["AP"],
    }
    with pytest.raises(InputDataError, match=r"run.txt:2: the control character 0x1F"):
        evaluate(write_spec(spec), write=False)


def test_literal_backslash_x1f_is_ordinary_text(evaluate_trec):
    """An earlier reader used the four characters \\x1f as its delimiter and cut such lines."""
    per_query, _ = evaluate_trec("1 0 a\\x1f 1\n", "1 Q0 b 1 3.0 t\n1 Q0 a\\x1f 2 2.0 t\n", ["RR"])
    assert per_query[("1", "RR")] == 0.5


def test_many_runs_in_one_batch_equal_runs_evaluated_alone(tmp_path, write_spec):
    """One statement loads every run of a batch; each run's numbers are those it has alone."""
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 c 2\n2 0 b 1\n")
    runs = {}
    for i in range(12):
        docs = ["a", "b", "c", "d"][i % 4 :] + ["a", "b", "c", "d"][: i % 4]
        lines = [
            f"{q}{' ' * (1 + i % 3)}Q0\t{d} {r} {9 - r} r{i}"
            for q in "12"
            for r, d in enumerate(docs)
        ]
        (tmp_path / f"input.r{i}").write_text("\n".join(lines) + "\n")
        runs[f"r{i}"] = {"path": f"input.r{i}", "collection": "c"}
    metrics = ["AP", "nDCG@3", "P@2", "NumRet"]
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "metrics": metrics}
    together = evaluate(write_spec({**spec, "runs": runs}), write=False).aggregate()
    assert len(evaluate(write_spec({**spec, "runs": runs}), write=False).sql.runs.batches) == 1
    alone = [
        row
        for name, run in runs.items()
        for row in evaluate(write_spec({**spec, "runs": {name: run}}), write=False).aggregate()
    ]
    assert together == alone


def test_runs_are_batched_by_size_in_spec_order():
    fmt = run_format()
    loads = [Load(Path(f"r{i}"), f"r{i}", fmt, ("c",)) for i in range(5)]
    sizes = {
        Path("r0"): BATCH_BYTES // 2,
        Path("r1"): BATCH_BYTES // 2,
        Path("r2"): 2 * BATCH_BYTES,
        Path("r3"): 10,
    }
    assert [[load.name for load in b] for b in batched(loads, sizes)] == [
        ["r0", "r1"],
        ["r2"],
        ["r3", "r4"],
    ]


def test_a_bad_file_in_a_batch_is_named_whatever_its_place(tmp_path, write_spec):
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n")
    runs = {}
    for i in range(4):
        text = "1 Q0 a 1 2.0 t\n" if i != 2 else "1 Q0 a 1 2.0 t\n1 Q0 b 2 oops t\n"
        (tmp_path / f"r{i}.trec").write_text(text)
        runs[f"r{i}"] = {"path": f"r{i}.trec", "collection": "c"}
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "runs": runs, "metrics": ["AP"]}
    with pytest.raises(
        InputDataError, match=r"r2.trec:2: the score must be a number, found 'oops'"
    ):
        evaluate(write_spec(spec), write=False)
