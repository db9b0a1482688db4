"""The Arrow reading of large run batches (engines/duckdb/arrow_rows.py, arrow_text.py): on
every layout of whitespace, per file and per line (text_layouts.py), it gives `run_rows` the
same rows, in the same order and types, as the exact reader (text_lines), or leaves the batch
whole to it; every bad input gives the same message, word for word, whichever reader ran; and
a spec's outputs are byte-identical either way, where statements change `run_rows` too (fused
runs, trec_eval -c's rankings, the full plan's slices, several collections)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from test_bad_inputs import CASES, DATA_ERROR, good, irpipe  # noqa: F401 (good: a fixture)
from text_layouts import PER_FILE, PER_LINE, write_layout

from pipeline.engines.duckdb import arrow_rows, arrow_text
from pipeline.engines.duckdb.arrow_rows import read_runs
from pipeline.engines.duckdb.steps import run_all
from pipeline.inputs.format import Format, Load
from pipeline.inputs.formats import qrels_format, run_format
from pipeline.inputs.loaded_tables import input_tables
from pipeline.inputs.text_lines import insert_lines
from pipeline.synthetic import generate, write_qrels


def _run_lines(seed: int = 7) -> list[list[str]]:
    run = generate(seed, queries=6).runs["run0"]
    ranked = [(q, sorted(docs.items(), key=lambda item: -item[1])) for q, docs in run.items()]
    return [[q, "Q0", d, str(i), repr(s), "tag"] for q, docs in ranked for i, (d, s) in enumerate(docs, 1)]  # fmt: skip


@pytest.fixture(autouse=True)
def small_batches_read_by_arrow(monkeypatch):
    """The Arrow reading takes these small files too (a batch below `WORTH` keeps the exact
    reading, which would leave these tests nothing to compare)."""
    monkeypatch.setattr(arrow_rows, "WORTH", 0)


#: how runs are read: strictly (the default), with the ranks checked, and leniently
FORMATS = {
    "strict": run_format(),
    "strict, ranks read": run_format(use_rank=True),
    "lenient, ranks read": run_format("lenient", use_rank=True),
}


def _connection(fmt: Format) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    run_all(con, input_tables(fmt.grades))
    return con


def _rows(con: duckdb.DuckDBPyConnection) -> tuple[list[tuple], list[tuple]]:
    """`run_rows`' rows in the order a scan gives them, and its columns' names and types."""
    rows = con.execute("SELECT * FROM run_rows").fetchall()
    return rows, con.execute("SELECT * FROM run_rows").description


def _both_ways(loads: list[Load]):
    """(the Arrow reading's `Rows` or None, its rows, the exact reader's rows)."""
    arrow, exact = _connection(loads[0].format), _connection(loads[0].format)
    rows = read_runs(arrow, loads)
    run_all(exact, [insert_lines(loads)])
    return rows, _rows(arrow), _rows(exact)


LAYOUTS = [*PER_FILE, *PER_LINE]


@pytest.mark.parametrize("piece", [16 << 20, 4096], ids=["one piece", "pieces of 4 KiB"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", FORMATS)
def test_every_layout_reads_the_same_rows_as_the_exact_reader(
    tmp_path, monkeypatch, name, layout, piece
):
    monkeypatch.setattr(arrow_text, "PIECE", piece)
    load = Load(write_layout(_run_lines(), layout, tmp_path / "run.txt"), "x", FORMATS[name])
    rows, arrow, exact = _both_ways([load])
    assert exact[0]
    if layout in PER_FILE:
        assert rows is not None and arrow == exact  # read by Arrow: the same rows, in order
    else:
        assert rows is None and arrow == ([], exact[1])  # left to the exact reader: nothing kept


@pytest.mark.parametrize("layout", ["tabs", "spaces, no final line end", "late: doubled space"])
def test_gzip_files_are_read_the_same(tmp_path, layout):
    load = Load(write_layout(_run_lines(), layout, tmp_path / "run.txt.gz"), "x", run_format())
    rows, arrow, exact = _both_ways([load])
    assert (rows is not None) == (layout in PER_FILE)
    assert arrow == (exact if layout in PER_FILE else ([], exact[1]))


def _batch(tmp_path: Path, layouts: list[str]) -> list[Load]:
    return [
        Load(write_layout(_run_lines(i), layout, tmp_path / f"r{i}.txt"), f"r{i}", run_format())
        for i, layout in enumerate(layouts)
    ]


def test_a_batch_of_proven_files_is_read_whole(tmp_path):
    loads = _batch(tmp_path, ["tabs", "spaces", "tabs, CRLF"])
    rows, arrow, exact = _both_ways(loads)
    assert rows is not None and arrow == exact
    assert {row[0] for row in arrow[0]} == {"r0", "r1", "r2"}


@pytest.mark.parametrize("piece", [16 << 20, 4096], ids=["one piece", "pieces of 4 KiB"])
def test_a_batch_with_an_unproven_file_keeps_nothing(tmp_path, monkeypatch, piece):
    """A file failing past its head leaves the whole batch to the exact reading, `run_rows`
    the empty table it was (rows can be inserted into it)."""
    monkeypatch.setattr(arrow_text, "PIECE", piece)
    loads = _batch(tmp_path, ["tabs", "spaces", "late: a tab among spaces"])
    con = _connection(run_format())
    assert read_runs(con, loads) is None
    run_all(con, [insert_lines(loads)])
    assert con.execute("SELECT count(DISTINCT run) FROM run_rows").fetchone() == (3,)


def test_a_batch_of_little_text_keeps_the_exact_reading(tmp_path, monkeypatch):
    """Below `WORTH` of text, importing pyarrow would cost more than it saves."""
    monkeypatch.setattr(arrow_rows, "WORTH", 1 << 20)
    assert read_runs(_connection(run_format()), _batch(tmp_path, ["tabs"])) is None


def test_without_pyarrow_the_exact_reading_stays(tmp_path, monkeypatch):
    monkeypatch.setattr(arrow_rows, "_has_pyarrow", lambda: False)
    assert read_runs(_connection(run_format()), _batch(tmp_path, ["tabs"])) is None


def test_qrels_are_never_read_by_arrow(tmp_path):
    path = tmp_path / "qrels.txt"
    write_qrels(generate(3).qrels, path)
    fmt = qrels_format(None)
    assert read_runs(_connection(fmt), [Load(path, "c", fmt)]) is None


def test_the_view_is_dropped_for_an_empty_table(tmp_path):
    """`drop` leaves `run_rows` an empty table of the same columns, and nothing registered."""
    loads = _batch(tmp_path, ["tabs", "spaces"])
    con = _connection(run_format())
    rows = read_runs(con, loads)
    before = _rows(con)
    rows.drop()
    assert con.execute("SELECT count(*) FROM run_rows").fetchone() == (0,)
    assert _rows(con)[1] == before[1]
    run_all(con, [insert_lines(loads[:1])])  # a table again
    registered = con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone()
    assert registered == (0,)


def test_reading_imports_no_pandas(tmp_path):
    """pyarrow's conversion of Python objects imports pandas (0.5-0.9 s of a process) where
    it is installed: the reading builds its arrays from buffers instead."""
    path = write_layout(_run_lines(), "spaces", tmp_path / "run.txt")
    code = f"""import sys, duckdb
from pathlib import Path
from pipeline.engines.duckdb import arrow_rows
from pipeline.inputs.format import Load
from pipeline.inputs.formats import run_format
from pipeline.inputs.loaded_tables import input_tables
arrow_rows.WORTH = 0
con = duckdb.connect()
for statement in input_tables():
    con.execute(statement.sql)
assert arrow_rows.read_runs(con, [Load(Path({str(path)!r}), "x", run_format())]) is not None
print("pandas" in sys.modules)"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.stdout.strip() == "False", done.stderr


#: the bad inputs of test_bad_inputs.py whose bad file is a run the Arrow reading reads
#: (single-spaced text: a bad line, number or duplicate, a line too long for a block)
BAD_DATA = [
    case for case in CASES if case.code == DATA_ERROR and case.id.startswith(("run_", "lenient_"))
]


@pytest.mark.parametrize("case", BAD_DATA, ids=[case.id for case in BAD_DATA])
def test_bad_inputs_give_the_same_message_either_way(good, tmp_path, monkeypatch, case):  # noqa: F811
    d = tmp_path / "case"
    shutil.copytree(good, d)
    case.change(d)
    command = [*(part.format(d=d) for part in case.command), str(d / case.target)]
    arrow = irpipe(*command)
    monkeypatch.setattr(arrow_rows, "_has_pyarrow", lambda: False)  # as the core alone reads
    exact = irpipe(*command)
    assert (arrow.returncode, arrow.stderr) == (exact.returncode, exact.stderr)
    assert arrow.returncode == DATA_ERROR


#: number fields each reading must read alike, by the format's own SQL: plain ones, and those
#: DuckDB's cast reads and the rules refuse, or read otherwise than they look
NUMBERS = {
    "plain": ("12", "3.25"),
    "signed rank": ("+3", "1.5"),
    "rank with an exponent": ("1e2", "-2.0"),
    "fractional rank": ("2.0", "7"),
    "score with an underscore": ("4", "1_0"),
    "infinite score": ("5", "inf"),
    "tiny score": ("6", "1e-400"),
    "negative zero": ("-0", "-0"),
    "hexadecimal rank": ("0x10", "2"),
}


@pytest.mark.parametrize("numbers", NUMBERS)
@pytest.mark.parametrize("name", FORMATS)
def test_number_fields_read_the_same_either_way(tmp_path, name, numbers):
    lines = _run_lines()
    lines[len(lines) // 2][3:5] = NUMBERS[numbers]
    load = Load(write_layout(lines, "spaces", tmp_path / "run.txt"), "x", FORMATS[name])
    rows, arrow, exact = _both_ways([load])
    assert rows is not None and arrow == exact
