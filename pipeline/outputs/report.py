"""The report writers (`level: report`): the table for a paper, in Markdown, LaTeX or HTML.

One table per collection (values compare only on the same queries): one row per run, one column
per metric, 4 decimals (counts as integers), each metric's best value in bold, and the marks of
`pipeline.compare.marks` (▲ better, ▼ worse; △, ▽ significant but small; a baseline's letter with
several) after values that differ significantly from a reference run; a legend says what bold and
each mark mean, with the test, the correction and alpha. They read the
`report` table (`pipeline.compare.marks.report_table`) and the manifest.

`.md` is also the pivot writer of the other levels: a writer names the levels it writes
(`Writer.levels`), and one naming a level takes its suffixes at that level.
"""

from __future__ import annotations

import html
import re
from abc import abstractmethod
from dataclasses import dataclass, field

from pipeline.contract.writer import Writer
from pipeline.formatting import format_value
from pipeline.hookspecs import hookimpl
from pipeline.spec.levels import REPORT_LEVELS
from pipeline.sql import quote_identifier

JOIN = ", "  # how the report table joins a collection's references (`compare.marks.JOIN`)

__all__ = ["HtmlReport", "LatexReport", "MarkdownReport", "ReportWriter"]

BOLD_LEGEND = "Bold: the best run of each metric in its collection."


@dataclass
class Grid:
    """One collection's part of the report."""

    collection: str
    runs: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str], tuple[str, bool, str]] = field(default_factory=dict)
    queries: set[int] = field(default_factory=set)
    #: what the rows are (runs; a suite's table: its collections), and a title of its own
    key: str = "run"
    heading: str | None = None

    @property
    def title(self) -> str:
        if self.heading is not None:
            return self.heading
        low, high = min(self.queries), max(self.queries)
        counted = f"{low}" if low == high else f"{low}-{high}"
        return f"collection {self.collection}, {counted} queries"


class ReportWriter(Writer):
    """A report: `render` lays out the grids and the legend in the writer's format."""

    levels = REPORT_LEVELS

    def write(self, con, table, path, manifest):
        grids, lines = load(con, table, manifest)
        path.write_text(self.render(grids, lines), encoding="utf-8")

    @abstractmethod
    def render(self, grids: list[Grid], lines: list[str]) -> str:
        """The report's text: the grids, then the legend's lines."""


def load(con, table: str, manifest: dict) -> tuple[list[Grid], list[str]]:
    """The report table's grids (collections, runs and metrics in order) and the legend."""
    sums = {m["label"] for m in manifest["metrics"] if m["aggregator"] == "sum"}
    grids: dict[str, Grid] = {}
    references: dict[str, tuple[str, ...]] = {}
    query = f"SELECT collection, run, metric, value, n_queries, best, mark, baseline FROM {quote_identifier(table)}"  # fmt: skip
    for collection, run, metric, value, n, best, mark, baseline in con.execute(query).fetchall():
        grid = grids.setdefault(collection, Grid(collection))
        grid.runs += [] if run in grid.runs else [run]
        grid.metrics += [] if metric in grid.metrics else [metric]
        grid.cells[run, metric] = (format_value(value, metric in sums), best, mark)
        grid.queries.add(n)
        if baseline is not None:
            references[collection] = tuple(baseline.split(JOIN))
    suites = manifest.get("suites", {})
    found = [grid for name, grid in grids.items() if name not in suites]
    found += [beir for name in suites if name in grids for beir in suite_grids(grids, name, suites)]
    lines = [BOLD_LEGEND]
    if suites:
        lines.append(SUITE_LEGEND)
    if "compare" in manifest and references:
        from pipeline.compare.marks import legend  # only a report of comparisons has marks

        lines += legend(manifest["compare"], references)
    return found, lines


SUITE_LEGEND = (
    "A suite's table (BEIR's): its collections as rows, runs as columns, and last the mean of "
    "the collections' means; its marks compare the means, paired by collection."
)


def suite_grids(grids: dict[str, Grid], suite: str, suites: dict[str, list[str]]) -> list[Grid]:
    """A suite's tables, one per metric: the suite's collections as rows, then its mean; the
    suite's runs as columns (BEIR's table)."""
    means, members = grids[suite], suites[suite]
    found = []
    for metric in means.metrics:
        rows = [*members, MEAN_ROW]
        grid = Grid(suite, rows, list(means.runs), key="collection",
                    heading=f"suite {suite}, {metric}: {len(members)} collections and their mean")  # fmt: skip
        for row in rows:
            source = means if row == MEAN_ROW else grids.get(row)
            for run in means.runs:
                cell = source.cells.get((run, metric)) if source is not None else None
                if cell is not None:
                    grid.cells[row, run] = cell
        found.append(grid)
    return found


MEAN_ROW = "mean"


class MarkdownReport(ReportWriter):
    """GitHub-flavoured Markdown: a heading and a table per collection, the legend below."""

    suffixes = (".md", ".markdown")

    def render(self, grids, lines):
        out = []
        for grid in grids:
            out += [f"### {_md(grid.title)}", "", _md_row([grid.key, *grid.metrics])]
            out.append("|---|" + "---:|" * len(grid.metrics))
            for run in grid.runs:
                cells = [_md_cell(grid.cells.get((run, m))) for m in grid.metrics]
                out.append(_md_row([_md(run), *cells], escape=False))
            out.append("")
        return "\n".join(out + [f"{_md(line)}  " for line in lines]) + "\n"


def _md(text: str) -> str:
    return re.sub(r"([\\`*_|<>\[\]])", r"\\\1", text).replace("\n", " ")


def _md_row(cells, escape: bool = True) -> str:
    return "| " + " | ".join(_md(c) if escape else c for c in cells) + " |"


def _md_cell(cell) -> str:
    if cell is None:
        return ""
    text, best, mark = cell
    return (f"**{text}**" if best else text) + mark


class LatexReport(ReportWriter):
    """A booktabs `table` per collection, its caption the title and the legend; for `\\input`
    in a paper whose preamble loads booktabs."""

    suffixes = (".tex",)

    def render(self, grids, lines):
        caption = " ".join(_tex(line) for line in lines)
        out = [
            "% irpipe report: needs \\usepackage{booktabs} and \\usepackage{amssymb} (the "
            "marks) in the preamble"
        ]
        for grid in grids:
            out += ["\\begin{table}", "  \\centering",
                    f"  \\caption{{{_tex(grid.title[0].upper() + grid.title[1:])}. {caption}}}",
                    f"  \\begin{{tabular}}{{l{'r' * len(grid.metrics)}}}", "    \\toprule",
                    "    " + " & ".join(_tex(h) for h in [grid.key.title(), *grid.metrics]) + " \\\\",
                    "    \\midrule"]  # fmt: skip
            for run in grid.runs:
                cells = [_tex_cell(grid.cells.get((run, m))) for m in grid.metrics]
                out.append("    " + " & ".join([_tex(run), *cells]) + " \\\\")
            out += ["    \\bottomrule", "  \\end{tabular}", "\\end{table}", ""]
        return "\n".join(out)


# TeX's specials; the significance marks of `pipeline.compare.marks` (amssymb's triangles) as
# superscripts in a legend.
_MARKS = {"▲": r"$\blacktriangle$", "▼": r"$\blacktriangledown$", "△": r"$\vartriangle$",
          "▽": r"$\triangledown$"}  # fmt: skip
_TEX = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "%": r"\%",
        "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",  # OT1 prints < > as ¡ ¿
        **{mark: f"\\textsuperscript{{{tex}}}" for mark, tex in _MARKS.items()}}  # fmt: skip


def _tex(text: str) -> str:
    return "".join(_TEX.get(c, c) for c in text)


def _tex_cell(cell) -> str:
    """The value, bold if best, and its whole mark (symbols and letters) as one superscript."""
    if cell is None:
        return ""
    text, best, mark = cell
    shown = f"\\textbf{{{text}}}" if best else text
    if not mark:
        return shown
    return shown + "\\textsuperscript{" + "".join(_MARKS.get(c) or _tex(c) for c in mark) + "}"


class HtmlReport(ReportWriter):
    """A small standalone HTML page: a captioned table per collection, the legend below."""

    suffixes = (".html", ".htm")

    def render(self, grids, lines):
        out = [_HTML_HEAD]
        for grid in grids:
            heads = "".join(f"<th>{html.escape(h)}</th>" for h in [grid.key, *grid.metrics])
            out += [f"<table>\n<caption>{html.escape(grid.title)}</caption>",
                    f"<thead><tr>{heads}</tr></thead>", "<tbody>"]  # fmt: skip
            for run in grid.runs:
                cells = "".join(_html_cell(grid.cells.get((run, m))) for m in grid.metrics)
                out.append(f"<tr><td>{html.escape(run)}</td>{cells}</tr>")
            out += ["</tbody>", "</table>"]
        out += [f"<p>{html.escape(line)}</p>" for line in lines]
        return "\n".join([*out, "</body>", "</html>"]) + "\n"


_HTML_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>irpipe report</title>
<style>
table { border-collapse: collapse; margin: 1em 0; }
caption { text-align: left; font-weight: bold; }
th, td { padding: 0.2em 0.8em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 1px solid; }
</style>
</head>
<body>"""


def _html_cell(cell) -> str:
    if cell is None:
        return "<td></td>"
    text, best, mark = cell
    shown = f"<b>{text}</b>" if best else text
    return f"<td>{shown}<sup>{html.escape(mark)}</sup></td>" if mark else f"<td>{shown}</td>"


@hookimpl
def register_writers() -> list[type[Writer]]:
    return [MarkdownReport, LatexReport, HtmlReport]
