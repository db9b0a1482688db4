"""trec_eval's text format as a writer: `%-22s\\t%s\\t%6.4f`, counts as integers, NaN as `-nan`.

`irpipe trec-eval` prints with `render`, laid out as trec_eval lays out its measures; a spec output
named `*.trec_eval` is laid out from the metrics' definitions (`layout`): per-query lines at level
`query` (trec_eval -q), then each run's summary, its first line the run's name as `runid`.
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.contract.writer import Writer
from pipeline.hookspecs import hookimpl

__all__ = ["Line", "TrecEvalWriter", "layout", "render", "runid_of"]


@dataclass(frozen=True)
class Line:
    """How one metric (by label) prints: per-topic rows, an `all` row, as an integer or quoted
    text. The label `runid` prints the run's tag in the summary."""

    label: str
    per_query: bool = True
    summary: bool = True
    integer: bool = False
    text: bool = False


RUNID = Line("runid", per_query=False)


def layout(metrics: list[dict]) -> list[Line]:
    """trec_eval's layout for metric definitions (a manifest's `metrics`): sums are counts printed
    as integers, text has no summary, and neither a geometric mean nor the query count has
    per-topic rows (trec_eval prints gm_map and num_q in the summary only)."""
    lines = [RUNID]
    for m in metrics:
        aggregator = m["aggregator"]
        per_query = aggregator != "gmean" and m["metric"] != "NumQ"
        text = m.get("kind") == "text"
        lines.append(Line(m["label"], per_query, aggregator != "none", aggregator == "sum", text))
    return lines


class TrecEvalWriter(Writer):
    """trec_eval's text output, one block per run."""

    suffixes = (".trec_eval",)
    levels = ("query", "aggregate")

    def write(self, con, table, path, manifest):
        lines = layout(manifest["metrics"])
        path.write_text(render(con, lines, per_query=table == "per_query"), encoding="utf-8")


def render(
    con,
    lines: list[Line],
    per_query: bool = False,
    summary: bool = True,
    before: str | None = None,
    runid: Callable[[str], str] = str,
) -> str:
    """The text of every run: per-topic rows (if `per_query`), then the summary (if `summary`).
    `before`: a topic the run lacked, where trec_eval stops: only topics sorting before it are
    printed, and no summary. `runid`: the tag printed for a run's name."""
    rows = con.execute("SELECT run, qid, metric, value, text FROM per_query").fetchall()
    totals = con.execute("SELECT run, metric, value FROM aggregate").fetchall()
    runs = [run for (run,) in con.execute("SELECT run FROM runs ORDER BY ordinal").fetchall()]
    values = {(r, q, m): (v, t) for r, q, m, v, t in rows}
    text = []
    for run in runs:
        qids = sorted({q for r, q, _ in values if r == run and (before is None or q < before)})
        if per_query:
            text += [
                _line(x, q, *values[run, q, x.label]) for q in qids for x in lines if x.per_query
            ]
        if summary and before is None:
            done = {m: v for r, m, v in totals if r == run}
            text += [_summary(x, done, runid(run)) for x in lines if x.summary]
    return "".join(text)


def _summary(line: Line, totals: dict, runid: str) -> str:
    if line is RUNID or line.label == "runid":
        return f"{'runid':<22}\tall\t{runid}\n"
    return _line(line, "all", totals[line.label], None)


def _line(line: Line, qid: str, value, text) -> str:
    if line.text:
        return f"{line.label:<22}\t{qid}\t'{text or ''}'\n"
    if line.integer:
        return f"{line.label:<22}\t{qid}\t{int(value)}\n"
    return f"{line.label:<22}\t{qid}\t{_number(value)}\n"


def _number(value: float) -> str:
    # x86 computes 0/0 as a negative NaN, which glibc prints as -nan.
    return "  -nan" if value is None or math.isnan(value) else f"{value:6.4f}"


def runid_of(path: Path) -> str:
    """The run tag of the last data line in file order, as trec_eval reports it."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        tail = _tail(handle) if opener is open else handle.read()
    for line in reversed(tail.splitlines()):
        fields = line.split()
        if len(fields) >= 6 and not fields[0].startswith(b"#"):
            return fields[5].decode("utf-8", "replace")
    return ""


def _tail(handle, size: int = 1 << 16) -> bytes:
    handle.seek(0, 2)
    end = handle.tell()
    handle.seek(max(0, end - size))
    return handle.read()


@hookimpl
def register_writers() -> list[type[Writer]]:
    return [TrecEvalWriter]
