"""Reports (pipeline/compare/marks.py, pipeline/outputs/report.py): the table for a paper in Markdown,
LaTeX and HTML, its bold and its marks checked against the comparison table, LaTeX compiled where
a TeX engine is installed, and the same marks in the console summary."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from pipeline import SpecError
from pipeline.console.draw import print_results
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

# Names with every character LaTeX, Markdown and HTML treat specially.
NAMES = ["bm25_k1", "dense&rerank", "50%cut{x}", "<big>#1|$"]
METRICS = ["AP", "P@10", "nDCG@10", "NumRelRet"]


def report_spec(directory: Path, compare: dict | None = None, runs: int = 4) -> Path:
    generated = generate(11, queries=40, runs=runs, float32_ties=False,
                         skill=tuple(2.0 * r for r in range(runs)))  # fmt: skip
    write_qrels(generated.qrels, directory / "qrels.txt")
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "runs": {}, "metrics": METRICS,
            "outputs": [{"path": f"out/report{s}", "level": "report"} for s in (".md", ".tex", ".html")]}  # fmt: skip
    spec["outputs"] += [{"path": "out/pivot.md"}, {"path": "out/report.csv", "level": "report"}]
    for name, run in zip(NAMES, generated.runs.values(), strict=False):
        write_run(run, directory / f"{len(spec['runs'])}.trec")
        spec["runs"][name] = {"path": f"{len(spec['runs'])}.trec", "collection": "c"}
    if compare is not None:
        spec["compare"] = compare
    (directory / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return directory / "spec.yaml"


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """A report comparing with the first run, where some differences are below min_difference."""
    directory = tmp_path_factory.mktemp("report")
    compare = {"baseline": NAMES[0], "tests": ["t", "randomization"], "min_difference": 0.1,
               "samples": 5000}  # fmt: skip
    evaluation = evaluate(report_spec(directory, compare))
    return directory / "out", evaluation


def expected_marks(evaluation, test: str = "t", min_difference: float = 0.1,
                   baseline: str = NAMES[0], letter: str = "") -> dict:  # fmt: skip
    """The mark of each (run, metric): its comparison with `baseline`, by `test` (every metric
    here is better higher): ▲ better, ▼ worse, △ ▽ when the difference is below min_difference,
    followed by the baseline's `letter`."""
    rows = evaluation.con.execute(
        "SELECT run, metric, significant, difference FROM comparison "
        "WHERE test = ? AND baseline = ?",
        [test, baseline],
    ).fetchall()
    return {(run, metric): _mark(significant, diff, min_difference) + letter * significant
            for run, metric, significant, diff in rows}  # fmt: skip


def _mark(significant: bool, difference: float, min_difference: float) -> str:
    if not significant:
        return ""
    if abs(difference) < min_difference:
        return "△" if difference > 0 else "▽"
    return "▲" if difference > 0 else "▼"


def best_runs(evaluation) -> set:
    values = {}
    for run, _, metric, value, _ in evaluation.aggregate():
        values.setdefault(metric, {})[run] = value
    return {(max(v, key=v.get), m) for m, v in values.items() if m != "NumRelRet"}


def test_markdown_report_bold_and_marks_follow_the_comparisons(reported):
    out, evaluation = reported
    lines = (out / "report.md").read_text().splitlines()
    assert lines[0] == "### collection c, 40 queries"
    assert lines[2] == "| run | AP | P@10 | nDCG@10 | NumRelRet |"
    marks, best = expected_marks(evaluation), best_runs(evaluation)
    assert {"▲", "△"} <= set(marks.values())  # the data exercises both kinds of mark
    for name, line in zip(NAMES, lines[4:8], strict=True):
        cells = line.split(" | ")[1:]
        for metric, cell in zip(METRICS, cells, strict=True):
            assert cell.startswith("**") == ((name, metric) in best), (name, metric, cell)
            assert cell.rstrip(" |").endswith(marks.get((name, metric), "") or tuple("0123456789*"))
    legend = "\n".join(lines[9:])
    assert (
        "▲ significantly better than bm25\\_k1, ▼ significantly worse (higher is better" in legend
    )
    assert (
        "paired t-test, Holm-corrected" in legend and "△ ▽ significantly better or worse" in legend
    )
    assert "alpha = 0.05" in legend and "min\\_difference = 0.1" in legend


def test_markdown_escapes_names(reported):
    text = (reported[0] / "report.md").read_text()
    assert "| \\<big\\>#1\\|$ |" in text and "| dense&rerank |" in text


def test_the_suffix_md_is_a_pivot_at_level_aggregate(reported):
    lines = (reported[0] / "pivot.md").read_text().splitlines()
    assert lines[0] == "| run | collection | AP | P@10 | nDCG@10 | NumRelRet |"


def test_a_table_writer_writes_the_report_table(reported):
    lines = (reported[0] / "report.csv").read_text().splitlines()
    assert lines[0] == "collection,run,metric,value,n_queries,best,mark,baseline"
    assert len(lines) == 1 + 4 * 4 and all(line.endswith(",bm25_k1") for line in lines[1:])


def latex_rows(text: str) -> list[list[str]]:
    body = text[text.index("\\midrule") + len("\\midrule") : text.index("\\bottomrule")]
    return [re.split(r"(?<!\\)&", row) for row in body.split("\\\\") if row.strip()]


def test_latex_report_structure(reported):
    """What compiling checks, checked without TeX: environments balanced, booktabs rules, a
    cell per column in every row, specials escaped, bold and marks as LaTeX commands."""
    out, evaluation = reported
    text = (out / "report.tex").read_text()
    for environment in ("table", "tabular"):
        assert text.count(f"\\begin{{{environment}}}") == text.count(f"\\end{{{environment}}}") == 1
    assert [text.count(rule) for rule in ("\\toprule", "\\midrule", "\\bottomrule")] == [1, 1, 1]
    assert "\\begin{tabular}{lrrrr}" in text
    assert text.count("{") - text.count("\\{") == text.count("}") - text.count("\\}")
    rows = latex_rows(text)
    assert [len(row) for row in rows] == [5] * 4
    assert [row[0].strip() for row in rows] == [
        "bm25\\_k1", "dense\\&rerank", "50\\%cut\\{x\\}",
        "\\textless{}big\\textgreater{}\\#1\\textbar{}\\$"]  # fmt: skip
    marks = expected_marks(evaluation)
    for name, row in zip(NAMES, rows, strict=True):
        for metric, cell in zip(METRICS, row[1:], strict=True):
            mark = {"▲": "\\textsuperscript{$\\blacktriangle$}",
                    "△": "\\textsuperscript{$\\vartriangle$}"}  # fmt: skip
            assert cell.strip().endswith(mark.get(marks.get((name, metric), ""), "")), cell
    assert "\\caption{Collection c, 40 queries. Bold: the best run" in text


ENGINES = [engine for engine in ("pdflatex", "lualatex") if shutil.which(engine)]


@pytest.mark.skipif(not ENGINES, reason="no TeX engine (pdflatex, lualatex) installed; "
                    "test_latex_report_structure checks the LaTeX without one")  # fmt: skip
def test_latex_report_compiles(reported, tmp_path):
    (tmp_path / "report.tex").write_text((reported[0] / "report.tex").read_text())
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{amssymb}\n"
        "\\begin{document}\n"
        "\\input{report.tex}\n\\end{document}\n"
    )
    command = [ENGINES[0], "-interaction=nonstopmode", "-halt-on-error", "paper.tex"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:]
    assert (tmp_path / "paper.pdf").stat().st_size > 1000


class Cells(HTMLParser):
    """Each table row's cells as (text, bold, superscript)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[list]] = []
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.open.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append(["", False, ""])

    def handle_endtag(self, tag):
        self.open.pop()

    def handle_data(self, data):
        if self.rows and self.open and self.open[-1] in ("td", "th", "b", "sup"):
            cell = self.rows[-1][-1]
            if self.open[-1] == "sup":
                cell[2] += data
            else:
                cell[0] += data
                cell[1] |= self.open[-1] == "b"


def test_html_report_cells(reported):
    out, evaluation = reported
    parser = Cells()
    parser.feed((out / "report.html").read_text())
    header, *rows = parser.rows
    assert [cell[0] for cell in header] == ["run", *METRICS]
    marks, best = expected_marks(evaluation), best_runs(evaluation)
    assert [row[0][0] for row in rows] == NAMES  # escaped and read back
    for name, row in zip(NAMES, rows, strict=True):
        for metric, (_, bold, sup) in zip(METRICS, row[1:], strict=True):
            assert bold == ((name, metric) in best) and sup == marks.get((name, metric), "")


def test_a_report_without_comparisons_has_bold_and_no_marks(tmp_path):
    evaluate(report_spec(tmp_path))
    text = (tmp_path / "out/report.md").read_text()
    assert "**" in text and not set("▲▼△▽") & set(text)
    assert text.rstrip().endswith("Bold: the best run of each metric in its collection.")


def test_without_a_baseline_marks_compare_with_the_first_run(tmp_path):
    evaluation = evaluate(report_spec(tmp_path, {"tests": ["sign", "t"], "correction": "bh"}))
    text = (tmp_path / "out/report.md").read_text()
    assert "▲ significantly better than bm25\\_k1, ▼ significantly worse" in text
    assert "sign test, Benjamini-Hochberg" in text
    marks = expected_marks(evaluation, "sign", 0.0)
    lines = text.splitlines()[4:8]
    for name, line in zip(NAMES, lines, strict=True):
        assert line.count("▲") == sum(marks.get((name, m)) == "▲" for m in METRICS)


def test_the_console_summary_shows_the_marks(reported):
    _, evaluation = reported
    for terminal, dagger in ((True, "▲"), (False, "+")):
        out = io.StringIO()
        console = Console(file=out, width=120, force_terminal=terminal, color_system=None)
        print_results(evaluation.aggregate(), evaluation.plan.metrics, [], console,
                      evaluation.significance())  # fmt: skip
        text = out.getvalue()
        assert f"{dagger} significantly better than bm25_k1, " in text
        marks = expected_marks(evaluation)
        line = next(line for line in text.splitlines() if line.startswith(NAMES[3]))
        expected = sum(marks.get((NAMES[3], m)) == "▲" for m in METRICS)
        assert line.count(dagger) - line.count(f"~{dagger}") == expected > 0  # ~+: small


@pytest.fixture(scope="module")
def two_baselines(tmp_path_factory):
    """A report against the best run (the others are worse) and the worst (they are better)."""
    directory = tmp_path_factory.mktemp("baselines")
    compare = {"baseline": [NAMES[3], NAMES[0]], "tests": ["t"], "min_difference": 0.1}
    evaluation = evaluate(report_spec(directory, compare))
    return directory / "out", evaluation


def two_baseline_marks(evaluation) -> dict:
    """Each (run, metric)'s marks: against baseline a (NAMES[3]), then b (NAMES[0]); the pair of
    the two baselines is one row, read either way."""
    a = expected_marks(evaluation, baseline=NAMES[3], letter="a")
    b = expected_marks(evaluation, baseline=NAMES[0], letter="b")
    flipped = {"▲": "▼", "▼": "▲", "△": "▽", "▽": "△"}
    for metric in METRICS:
        mark = a.get((NAMES[0], metric), "")
        b[NAMES[3], metric] = (flipped[mark[0]] + "b") if mark else ""
    return {key: a.get(key, "") + b.get(key, "") for key in {*a, *b}}


def test_marks_say_which_way_and_which_baseline_in_every_format(two_baselines):
    out, evaluation = two_baselines
    marks = two_baseline_marks(evaluation)
    shown = set("".join(marks.values()))
    assert {"▲", "▼", "a", "b"} <= shown  # better than b and worse than a, both in the data
    table = evaluation.con.execute("SELECT run, metric, mark, baseline FROM report").fetchall()
    assert {(run, metric): mark for run, metric, mark, _ in table} == marks
    assert {baseline for *_, baseline in table} == {f"{NAMES[3]}, {NAMES[0]}"}
    lines = (out / "report.md").read_text().splitlines()
    for name, line in zip(NAMES, lines[4:8], strict=True):
        for metric, cell in zip(METRICS, line.split(" | ")[1:], strict=True):
            assert cell.rstrip(" |").endswith(marks[name, metric] or tuple("0123456789*"))
    legend = (out / "report.md").read_text()
    assert "▲x significantly better than baseline x, ▼x significantly worse, for the baselines " \
           "a = \\<big\\>#1\\|$, b = bm25\\_k1" in legend  # fmt: skip
    cells = Cells()
    cells.feed((out / "report.html").read_text())
    for name, row in zip(NAMES, cells.rows[1:], strict=True):
        assert [sup for _, _, sup in row[1:]] == [marks[name, m] for m in METRICS]
    tex = (out / "report.tex").read_text()
    assert "\\textsuperscript{$\\blacktriangledown$a}" in tex
    assert "\\textsuperscript{$\\blacktriangle$b}" in tex


def test_the_console_shows_which_way_on_a_terminal_and_off_it(two_baselines):
    _, evaluation = two_baselines
    marks = two_baseline_marks(evaluation)
    for terminal, worse in ((True, "▼a"), (False, "-a")):
        out = io.StringIO()
        console = Console(file=out, width=200, force_terminal=terminal, color_system=None)
        print_results(evaluation.aggregate(), evaluation.plan.metrics, [], console,
                      evaluation.significance())  # fmt: skip
        line = next(line for line in out.getvalue().splitlines() if line.startswith(NAMES[0]))
        shown = line.count(worse) - line.count(f"~{worse}")  # ~-a: worse, but by little
        assert shown == sum("▼a" in marks[NAMES[0], m] for m in METRICS) > 0


@pytest.mark.parametrize(("suffix", "level", "message"), [
    (".tex", "aggregate", r"outputs\.0\.level: a \.tex output cannot be level 'aggregate' \(\.tex writes: report\); level aggregate is written to: \.csv"),
    (".html", "query", r"outputs\.0\.level: a \.html output cannot be level 'query' \(\.html writes: report\)"),
    (".trec_eval", "comparison", r"a \.trec_eval output cannot be level 'comparison' \(\.trec_eval writes: query, aggregate\); level comparison is written to: \.csv, .*\.md"),
])  # fmt: skip
def test_a_suffix_is_refused_at_a_level_it_does_not_write(tmp_path, suffix, level, message):
    path = report_spec(tmp_path, {"baseline": NAMES[0]})
    spec = yaml.safe_load(path.read_text())
    spec["outputs"] = [{"path": f"out/x{suffix}", "level": level}]
    path.write_text(yaml.safe_dump(spec))
    with pytest.raises(SpecError, match=message):
        evaluate(path)


def test_writers_share_a_suffix_by_level_and_only_by_level():
    """A plugin may write `.tex` at a level the report does not (its own LaTeX of the aggregate
    table); one writing `.md` at level report would take the report's suffix and fails."""
    from pipeline.api import Writer, hookimpl
    from pipeline.errors import PluginWarning
    from pipeline.host import manager as plugins

    def plugin(suffix: str, level: str):
        class Plugged(Writer):
            suffixes, levels = (suffix,), (level,)

            def write(self, con, table, path, manifest):
                path.write_text(table)

        class Plugin:
            @hookimpl
            def register_writers(self):
                return [Plugged]

        return Plugin()

    pm = plugins.create_plugin_manager()
    pm.register(plugin(".tex", "aggregate"), name="tex_table")
    pm.register(plugin(".md", "report"), name="md_report")
    with pytest.warns(PluginWarning, match=r"md_report.*claim the same suffix '\.md'"):
        pm.check_plugins()
    assert [state.plugin for state in pm.failures()] == ["md_report"]
