"""The Arrow read step of the text formats (engines/duckdb/arrow_text.py): on every layout of
whitespace, per file and per line (text_layouts.py), and every text format, it reads the same
table as the exact reader (text_lines), or leaves the file to it; and every bad input gives the
same message, word for word, whichever reader ran."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from test_bad_inputs import CASES, DATA_ERROR, good, irpipe  # noqa: F401 (good: a fixture)
from text_layouts import PER_FILE, PER_LINE, write_layout

from pipeline.engines.duckdb import arrow_text
from pipeline.engines.duckdb.arrow_text import insert_by_columns
from pipeline.engines.duckdb.steps import run_all
from pipeline.inputs.format import Format, Load
from pipeline.inputs.formats import qrels_format, run_format
from pipeline.inputs.loaded_tables import input_tables
from pipeline.inputs.text_lines import insert_lines
from pipeline.synthetic import generate, generate_subtopics


def _run_lines() -> list[list[str]]:
    run = generate(7, queries=6).runs["run0"]
    ranked = [(q, sorted(docs.items(), key=lambda item: -item[1])) for q, docs in run.items()]
    return [[q, "Q0", d, str(i), repr(s), "tag"] for q, docs in ranked for i, (d, s) in enumerate(docs, 1)]  # fmt: skip


def _qrels_lines() -> list[list[str]]:
    qrels = generate(7, queries=6).qrels
    return [[q, "0", d, str(g)] for q, docs in qrels.items() for d, g in docs.items()]


def _subtopic_lines() -> list[list[str]]:
    qrels = generate_subtopics(7).qrels
    return [
        [q, str(s), d, str(g)] for q, docs in qrels.items() for d, gs in docs.items() for s, g in gs.items()
    ]  # fmt: skip


def _beir_lines() -> list[list[str]]:
    return [["query-id", "corpus-id", "score"], *([q, d, g] for q, _, d, g in _qrels_lines())]


@pytest.fixture(autouse=True)
def small_files_read_by_arrow(monkeypatch):
    """The Arrow step reads these small files too (a batch below `_WORTH` keeps the exact
    reading, which would leave these tests nothing to compare)."""
    monkeypatch.setattr(arrow_text, "_WORTH", 0)


#: format -> (how it is read, its lines)
FORMATS = {
    "run": (run_format(), _run_lines),
    "run, lenient, ranks read": (run_format("lenient", use_rank=True), _run_lines),
    "qrels": (qrels_format(None), _qrels_lines),
    "qrels, real grades": (qrels_format(None, grades="real"), _qrels_lines),
    "beir": (qrels_format("beir"), _beir_lines),
    "subtopics": (qrels_format("subtopics"), _subtopic_lines),
}


def _connection(fmt: Format) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    run_all(con, input_tables(fmt.grades))
    return con


def _rows(con: duckdb.DuckDBPyConnection, fmt: Format) -> list[tuple]:
    return con.execute(f"SELECT * FROM {fmt.table} ORDER BY ALL").fetchall()


def _both_ways(load: Load) -> tuple[list[Load], list[tuple], list[tuple]]:
    """(what the Arrow step left to the exact reader, its rows, the exact reader's rows)."""
    fmt = load.format
    arrow, exact = _connection(fmt), _connection(fmt)
    left = insert_by_columns(arrow, [load])
    run_all(exact, [insert_lines([load])])
    return left, _rows(arrow, fmt), _rows(exact, fmt)


#: (format, layout): every layout of a file on every format; the layouts of a line, which the
#: proof refuses whatever the format, on runs and on BEIR's (whose header the reading skips)
CASES_READ = [(name, layout) for name in FORMATS for layout in PER_FILE]
CASES_READ += [(name, layout) for name in ("run", "beir") for layout in PER_LINE]


@pytest.mark.parametrize(("name", "layout"), CASES_READ)
def test_every_layout_reads_the_same_table_as_the_exact_reader(tmp_path, name, layout):
    fmt, lines = FORMATS[name]
    load = Load(write_layout(lines(), layout, tmp_path / "input.txt"), "x", fmt)
    left, arrow, exact = _both_ways(load)
    assert exact
    if layout in PER_FILE:
        assert left == [] and arrow == exact  # read by Arrow, to the same rows
    else:
        assert left == [load] and arrow == []  # left whole to the exact reader: nothing kept


@pytest.mark.parametrize("layout", ["tabs", "spaces, no final line end", "late: doubled space"])
def test_gzip_files_are_read_the_same(tmp_path, layout):
    fmt, lines = FORMATS["run"]
    load = Load(write_layout(lines(), layout, tmp_path / "run.txt.gz"), "x", fmt)
    left, arrow, exact = _both_ways(load)
    assert left == ([] if layout in PER_FILE else [load])
    assert arrow == (exact if layout in PER_FILE else [])


@pytest.mark.parametrize("piece", [32 << 20, 4096], ids=["one piece", "pieces of 4 KiB"])
def test_a_batch_keeps_its_proven_files_and_leaves_the_others(tmp_path, monkeypatch, piece):
    """A file failing past its head is set aside, the others kept; in small pieces, the rows of
    its pieces inserted before the one that fails are taken out again."""
    monkeypatch.setattr(arrow_text, "_PIECE", piece)
    fmt, lines = FORMATS["run"]
    layouts = ["tabs", "late: a tab among spaces", "spaces", "mixed"]
    loads = [
        Load(write_layout(lines(), layout, tmp_path / f"r{i}.txt"), f"r{i}", fmt)
        for i, layout in enumerate(layouts)
    ]
    con = _connection(fmt)
    assert insert_by_columns(con, loads) == [loads[1], loads[3]]
    kept = con.execute("SELECT DISTINCT run FROM run_rows ORDER BY run").fetchall()
    assert kept == [("r0",), ("r2",)]


#: the bad inputs of test_bad_inputs.py whose bad file the Arrow step reads (single-spaced text:
#: a bad line, number or duplicate, a line too long for a block), not those its head refuses
#: (binary, UTF-16, gzip's own errors, no data), whose reading is the exact one either way
_HEAD_REFUSES = ("empty", "comments", "binary", "utf16", "latin1", "gz", "nul")
BAD_DATA = [
    case
    for case in CASES
    if case.code == DATA_ERROR
    and case.id.startswith(("run_", "qrels_", "lenient_", "real_"))
    and not any(word in case.id for word in _HEAD_REFUSES)
]


@pytest.mark.parametrize("case", BAD_DATA, ids=[case.id for case in BAD_DATA])
def test_bad_inputs_give_the_same_message_either_way(good, tmp_path, monkeypatch, case):  # noqa: F811
    d = tmp_path / "case"
    shutil.copytree(good, d)
    case.change(d)
    command = [*(part.format(d=d) for part in case.command), str(d / case.target)]
    arrow = irpipe(*command)
    monkeypatch.setattr(arrow_text, "_has_pyarrow", lambda: False)  # as the core alone reads
    exact = irpipe(*command)
    assert (
        (arrow.returncode, arrow.stderr)
        == (exact.returncode, exact.stderr)
        == (
            DATA_ERROR,
            exact.stderr,
        )
    )
    assert Path(d).exists()


def test_a_batch_of_little_text_keeps_the_exact_reading(tmp_path, monkeypatch):
    """Below `_WORTH` of text, importing pyarrow would cost more than it saves."""
    monkeypatch.setattr(arrow_text, "_WORTH", 1 << 20)
    fmt, lines = FORMATS["run"]
    load = Load(write_layout(lines(), "tabs", tmp_path / "run.txt"), "x", fmt)
    assert insert_by_columns(_connection(fmt), [load]) == [load]
