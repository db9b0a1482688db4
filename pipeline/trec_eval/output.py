"""trec_eval's text output: `%-22s\\t%s\\t%6.4f`, counts as integers, NaN as `-nan`, fixed order."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

__all__ = ["print_report", "runid_of"]


def print_report(con, selected, options, runid: str, before: list[str]) -> None:
    """Per-topic rows (-q) then the summary (unless -n, or a topic was missing: `before` holds it,
    and only topics sorting before it are printed, as trec_eval has printed them when it stops)."""
    values = {(q, m): (v, t) for q, m, v, t in _per_query(con)}
    qids = sorted({q for q, _ in values})
    if before:
        qids = [q for q in qids if q < before[0]]
    lines = []
    if options.per_query:
        for qid in qids:
            lines += [
                _line(s, name, qid, *values[qid, name])
                for s in selected
                for name, *_ in s.outputs
                if s.measure.per_query
            ]
    if options.summary and not before:
        lines += _summary(con, selected, options, runid)
    print("".join(lines), end="")


def _per_query(con):
    columns = [c[0] for c in con.execute("DESCRIBE per_query").fetchall()]
    text = "text" if "text" in columns else "NULL"
    return con.execute(f"SELECT qid, metric, value, {text} FROM per_query").fetchall()


def _summary(con, selected, options, runid: str) -> list[str]:
    totals = dict(con.execute("SELECT metric, value FROM aggregate").fetchall())
    if (
        options.complete and "num_rel" in totals
    ):  # trec_eval -c: qrels lines with rel > 0, ignoring -l
        totals["num_rel"] = con.execute("SELECT count(*) FROM qrels WHERE rel > 0").fetchone()[0]
    lines = []
    for s in selected:
        if s.measure.name == "runid":
            lines.append(f"{'runid':<22}\tall\t{runid}\n")
        elif s.measure.summary:
            lines += [_line(s, name, "all", totals[name], None) for name, *_ in s.outputs]
    return lines


def _line(selected, name: str, qid: str, value, text) -> str:
    if selected.measure.name == "relstring":
        return f"{name:<22}\t{qid}\t'{text or ''}'\n"
    if selected.measure.integer:
        return f"{name:<22}\t{qid}\t{int(value)}\n"
    return f"{name:<22}\t{qid}\t{_number(value)}\n"


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
