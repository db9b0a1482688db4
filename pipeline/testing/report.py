"""Comparing values, and the kit's failure reports: what differs, where, on which ranking, and how
to get that collection again."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pipeline.testing.bench import KIT_SHAPE, Bench

__all__ = ["Mismatch", "aggregate", "fail", "same"]

#: Mismatches shown in a report (all are counted).
SHOWN = 5
#: Ranked documents shown per mismatch.
SHOWN_RANKS = 15


@dataclass(frozen=True)
class Mismatch:
    """One value that differs: metric label, run, merged qid, the value wanted and the one got."""

    metric: str
    run: str
    qid: str
    expected: Any
    got: Any


def same(got: Any, expected: Any, tolerance: float) -> bool:
    """Equal within `tolerance` (relative or absolute); NaN equals NaN, None (no value) None."""
    if got is None or expected is None:
        return got is None and expected is None
    if isinstance(got, str) or isinstance(expected, str):
        return got == expected
    got, expected = float(got), float(expected)
    if math.isnan(got) or math.isnan(expected):
        return math.isnan(got) and math.isnan(expected)
    return math.isclose(got, expected, rel_tol=tolerance, abs_tol=tolerance)


def aggregate(values: Iterable[Any], aggregator: str) -> tuple[float | None, int]:
    """(value, n_queries) of per-query values as irpipe aggregates them (no value is left out)."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return None, 0
    if aggregator == "sum":
        return math.fsum(present), len(present)
    if aggregator == "gmean":  # floored at 1e-5, as trec_eval
        logs = [math.log(max(v, 1e-5)) for v in present]  # max(nan, x) is nan, as in DuckDB
        return math.exp(math.fsum(logs) / len(present)), len(present)
    return math.fsum(present) / len(present), len(present)


def fail(
    title: str,
    mismatches: list[Mismatch],
    total: int,
    bench: Bench,
    names: tuple[str, str] = ("expected", "got"),
    hint: str = "",
) -> None:
    """Raise AssertionError reporting the mismatches (if any) among `total` compared values."""
    if not mismatches:
        return
    lines = [f"{title}: {len(mismatches)} of {total} values differ"]
    for m in mismatches[:SHOWN]:
        lines += describe(m, bench, names)
    if len(mismatches) > SHOWN:
        lines.append(f"  ... and {len(mismatches) - SHOWN} more")
    if hint:
        lines.append(hint)
    shape = ", ".join(f"{k}={v!r}" for k, v in {**KIT_SHAPE, "ties": bench.ties}.items())
    lines.append(f"(a collection seed S is pipeline.synthetic.generate(S, {shape}))")
    raise AssertionError("\n".join(lines))


def describe(m: Mismatch, bench: Bench, names: tuple[str, str]) -> list[str]:
    """Lines for one mismatch: where, both values, the ranking and the query's judgments."""
    seed, qid = bench.origin[m.qid]
    ranking = bench.ranking(m.run, m.qid)
    shown = " ".join(f"{d}:{s!r}:{g}" for d, s, g in ranking[:SHOWN_RANKS])
    more = f" ... ({len(ranking)} in all)" if len(ranking) > SHOWN_RANKS else ""
    grades = sorted(bench.qrels.get(m.qid, {}).values(), reverse=True)
    return [
        f"  metric {m.metric}, collection seed {seed}, run {m.run}, qid {qid}: "
        f"{names[0]} {m.expected!r}, {names[1]} {m.got!r}",
        f"    ranking (docno:score:grade, -1 unjudged, -2 judged negative): {shown or '(empty)'}{more}",
        f"    qrels grades: {grades}",
    ]
