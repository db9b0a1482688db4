"""The console summary of `irpipe run` (pipeline/console/layout.py lays it out, pipeline/console/draw.py draws it):
it fits the terminal, cuts no number or name, marks the best run, and says what was written."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from conftest import irpipe_inprocess
from rich.console import Console

from pipeline.console.draw import print_results
from pipeline.console.layout import HEADER_FOLD, split_columns
from pipeline.formatting import format_value
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

LONG = [
    {"metric": "nDCG", "k": 20, "gain": "exponential"},
    {"metric": "AP", "variant": "interpolated_11pt"},
]
METRICS = ["AP", "P@10", "nDCG@10", "RR", "Bpref", "NumRelRet", *LONG]


@pytest.fixture
def runs_spec(tmp_path, write_spec):
    """A spec over a generated collection with `runs` runs named like TREC's, and its metrics."""

    def write(runs: int, metrics: list, collections: int = 1, num_docs=None, **extra) -> Path:
        spec = {"collections": {}, "runs": {}, "metrics": metrics, **extra}
        for c in range(collections):
            generated = generate(20 + c, queries=15, runs=runs, float32_ties=False)
            write_qrels(generated.qrels, tmp_path / f"qrels{c}.txt")
            spec["collections"][f"c{c}"] = {"qrels": f"qrels{c}.txt", "num_docs": num_docs}
            for i, run in enumerate(generated.runs.values()):
                name = f"input.sys{i:02d}rob0{c}"
                write_run(run, tmp_path / name, tag=name)
                spec["runs"][f"robust0{c}/sys{i:02d}"] = {"path": name, "collection": f"c{c}"}
        return write_spec(spec)

    return write


def summary(spec: Path, width: int = 80, terminal: bool = False, outputs=()) -> tuple[str, list]:
    """The summary as printed to a console of `width` columns, and the aggregate rows."""
    evaluation = evaluate(spec, write=False)
    out = io.StringIO()
    colors = "standard" if terminal else None  # what rich picks by itself for a file or a pipe
    console = Console(file=out, width=width, force_terminal=terminal, color_system=colors)
    print_results(evaluation.aggregate(), evaluation.plan.metrics, list(outputs), console=console)
    return out.getvalue(), evaluation.aggregate()


def _value_in(line: str, text: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", line) is not None


def test_twenty_runs_at_80_columns_cut_no_number_and_no_name(runs_spec):
    text, rows = summary(runs_spec(20, METRICS))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in text and text.isascii() and "\x1b" not in text
    for run, _, metric, value, _ in rows:
        own = [line for line in lines if line.startswith(f"{run} ")]
        assert own, f"run {run} is not printed in full"
        shown = format_value(value, metric == "NumRelRet")
        assert any(_value_in(line, shown) for line in own), (run, metric, shown)


def test_runs_are_rows_when_they_outnumber_metrics_and_columns_otherwise(runs_spec):
    many_runs, _ = summary(runs_spec(6, ["AP", "P@10"]))
    assert re.search(r"^run +AP +P@10", many_runs, re.MULTILINE)
    few_runs, _ = summary(runs_spec(2, ["AP", "P@10", "RR"]))
    assert re.search(r"^metric +robust00/sys00 +robust00/sys01", few_runs, re.MULTILINE)


def test_a_wide_table_is_split_and_repeats_the_run_column(runs_spec):
    text, _ = summary(runs_spec(12, METRICS), width=60)
    headers = [line for line in text.splitlines() if line.startswith("run ")]
    assert len(headers) >= 2
    assert all(len(line) <= 60 for line in text.splitlines())


def test_the_best_run_of_each_metric_is_marked(runs_spec):
    text, rows = summary(runs_spec(5, ["AP", "NumRelRet", "SearchLength", "RR", "P@10"]))
    values = {(run, metric): value for run, _, metric, value, _ in rows}
    best = max(values[r, "AP"] for r, m in values if m == "AP")
    for (run, metric), value in values.items():
        line = next(line for line in text.splitlines() if line.startswith(f"{run} "))
        marked = _value_in(line, f"{format_value(value, metric == 'NumRelRet')}*")
        if metric == "AP":
            assert marked == (format_value(value) == format_value(best)), run
        elif metric in ("NumRelRet", "SearchLength"):  # a count; a mean over different queries
            assert not marked
    legend = " ".join(text.split())
    assert "* best run of the collection" in legend
    assert "not compared: NumRelRet, SearchLength" in legend


def test_lower_is_better_marks_the_lowest(runs_spec):
    out, rows = summary(runs_spec(3, ["Fallout@10", "AP"], num_docs=1000))
    lowest = min(v for _, _, m, v, _ in rows if m == "Fallout@10")
    assert re.search(rf"{format_value(lowest)}\*", out)
    assert "(lowest for Fallout@10)" in " ".join(out.split())


def test_each_collection_has_its_own_table_and_its_own_best(runs_spec):
    text, rows = summary(runs_spec(3, ["AP", "P@10"], collections=2))
    assert "collection c0, 15 queries" in text and "collection c1, 15 queries" in text
    c0, c1 = text.split("collection c1")
    for part, collection in ((c0, "c0"), (c1, "c1")):
        best = max(v for _, c, m, v, _ in rows if c == collection and m == "AP")
        assert f"{format_value(best)}*" in part


def test_different_query_counts_are_shown_and_not_compared(runs_spec):
    text, rows = summary(runs_spec(4, ["AP", "P@10"], settings={"queries": "intersection"}))
    assert len({n for *_, n in rows}) > 1  # the generator leaves queries out of some runs
    assert "queries" in text.splitlines()[1] and "*" not in text


def test_a_terminal_gets_bold_best_values(runs_spec):
    text, _ = summary(runs_spec(3, ["AP"]), terminal=True)
    assert re.search(r"\x1b\[1m\d\.\d{4}\*\x1b\[0m", text)


def test_the_summary_names_the_files_written(runs_spec, tmp_path):
    outputs = [tmp_path / "out" / "summary.csv", tmp_path / "out" / "per_query.parquet"]
    text, _ = summary(runs_spec(2, ["AP"]), outputs=outputs)
    written = (
        f"Wrote 2 files (each with its <file>.manifest.json):\n  {outputs[0]}\n  {outputs[1]}\n"
    )
    assert text.endswith(written)
    text, _ = summary(runs_spec(2, ["AP"]))
    assert "No outputs in the spec, so no file was written" in text


def test_the_cli_prints_plain_text_to_a_pipe_at_its_width(runs_spec, tmp_path):
    spec = runs_spec(20, METRICS, outputs=[{"path": "out/summary.csv"}])
    result = irpipe_inprocess("run", spec.name, cwd=tmp_path, COLUMNS="80")
    assert result.returncode == 0, result.stderr
    assert result.stdout.isascii() and "\x1b" not in result.stdout and "…" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert result.stdout.endswith(
        "Wrote 1 file (and its <file>.manifest.json):\n  out/summary.csv\n"
    )


@pytest.mark.parametrize(
    ("key", "columns", "width", "expected"),
    [
        (10, [(2, 6), (4, 6)], 40, (10, [[(0, 6), (1, 6)]])),  # fits: natural widths
        (10, [(30, 6), (4, 6)], 40, (10, [[(0, 18), (1, 6)]])),  # folded, then widened
        (10, [(2, 6)] * 5, 30, (10, [[(0, 6), (1, 6)], [(2, 6), (3, 6)], [(4, 6)]])),
        (50, [(2, 6)] * 2, 40, (13, [[(0, 6), (1, 6)]])),  # a long name folds to a third
        (10, [(2, 30)], 20, (10, [[(0, 30)]])),  # a value wider than the room is never cut
    ],
)
def test_split_columns(key, columns, width, expected):
    assert split_columns(key, columns, width, gap=3) == expected
    assert HEADER_FOLD == 12
