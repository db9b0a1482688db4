"""Checks 3 to 6, on data: missing and emptied queries, ties, the reference, the judged-rows plan.

Each runs on a `Bench` of generated hard collections and raises AssertionError with a report
naming what differs and where (`report`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pipeline.contract.columns import Columns
from pipeline.contract.measure import Measure
from pipeline.contract.python_measure import Query
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.testing.bench import TIES_REVERSED, Bench, Values
from pipeline.testing.install import installed
from pipeline.testing.metrics import Metrics, resolve_metrics
from pipeline.testing.report import Mismatch, aggregate, fail, same

__all__ = ["Reference", "check_judged_rows", "check_missing", "check_reference", "check_ties"]

#: reference(params, query) -> the value of the query (None: no value, left out of the mean)
Reference = Callable[[Any, Query], Any]

#: A measure that needs every row: evaluated beside it, irpipe must rank every row (the full plan).
NEEDS_EVERY_ROW = "Unjudged@1"
#: Settings under which the judged-rows plan is compared with the full plan. Only the defaults:
#: a measure reads the same columns under any setting, and irpipe's own tests cover the rest.
JUDGED_ROWS_SETTINGS: tuple[dict[str, Any], ...] = ({},)
JUDGED_ROWS_FORMS = {
    "judged_rows": "only judged rows ranked",
    "dense": "every row ranked, as for a batch of mostly judged queries",
}


def got_value(values: Values, r: ResolvedMeasure, run: str, qid: str) -> Any:
    """irpipe's value of one query (its text for a text measure)."""
    try:
        value, text = values.per_query[run, qid, r.label]
    except KeyError:
        raise AssertionError(f"irpipe gave no row for {r.label}, run {run}, qid {qid}") from None
    return text if r.measure.kind == "text" else value


def compare(
    values: Values,
    metrics: Metrics,
    pairs: Sequence[tuple[str, str]],
    expected: Callable[[ResolvedMeasure, str, str], Any],
    tolerance: float,
) -> tuple[list[Mismatch], int]:
    """(mismatches, values compared) of irpipe's values against `expected(r, run, qid)`."""
    mismatches = []
    for r in metrics.resolved:
        for run, qid in pairs:
            got, want = got_value(values, r, run, qid), expected(r, run, qid)
            if not same(got, want, tolerance):
                mismatches.append(Mismatch(r.label, run, qid, want, got))
    return mismatches, len(metrics.resolved) * len(pairs)


def call(reference: Reference, r: ResolvedMeasure, query: Query, where: str) -> Any:
    """The reference's value, as a float (or None, or text for a text measure). The query's
    `level` is the measure's relevance level, as the executor gives it to a PythonMeasure."""
    query = query._replace(level=Columns().level(r.params))  # the spec's relevance_level is 1
    try:
        value = reference(r.params, query)
    except Exception as exc:
        raise AssertionError(
            f"the reference raised {type(exc).__name__}: {exc} (metric {r.label}, {where}, "
            f"grades {query.grades.tolist()}, qrels {query.qrels.tolist()})"
        ) from exc
    return value if value is None or isinstance(value, str) else float(value)


def _everywhere(bench: Bench, runs: Sequence[str] | None = None) -> list[tuple[str, str]]:
    return [(run, qid) for run in runs or bench.runs for qid in bench.qrels]


# -- 3. missing and emptied queries ---------------------------------------------------------------
#: (settings, which queries, what they are): queries whose ranking is empty
EMPTY_CASES: tuple[tuple[dict[str, Any], Callable[[Bench, str, str], bool], str], ...] = (
    ({}, lambda b, run, qid: not b.answered(run, qid), "queries the run lacks"),
    ({"max_docs": 0}, lambda b, run, qid: True, "rankings emptied by max_docs: 0"),
    (
        {"judged_only": True},
        lambda b, run, qid: b.answered(run, qid) and b.judged_retrieved(run, qid) == 0,
        "rankings emptied by judged_only: true (nothing judged retrieved)",
    ),
)


def check_missing(
    measure: type[Measure],
    reference: Reference,
    metrics: Sequence[str],
    *,
    collections: int = 30,
    seed: int = 0,
    tolerance: float = 1e-9,
) -> None:
    """The value of a query the run lacks, and of a ranking that -M 0 or -J empties, is the
    reference's value on an empty ranking (with the query's qrels)."""
    with installed(measure), Bench(collections, seed) as bench:
        _check_missing(bench, measure, reference, resolve_metrics(measure, metrics), tolerance)


def _check_missing(
    bench: Bench, measure: type[Measure], reference: Reference, metrics: Metrics, tolerance: float
) -> None:
    def empty(r: ResolvedMeasure, run: str, qid: str) -> Any:
        return call(reference, r, bench.empty(qid), f"an empty ranking of qid {qid}")

    for settings, chosen, what in EMPTY_CASES:
        pairs = [(run, qid) for run, qid in _everywhere(bench) if chosen(bench, run, qid)]
        mismatches, total = compare(
            bench.values(metrics.spec, settings), metrics, pairs, empty, tolerance
        )
        fail(
            f"{measure.__name__} on {what} (settings {settings}) is not the reference's value on "
            "an empty ranking",
            mismatches,
            total,
            bench,
            hint="irpipe takes it from the measure's `missing` (a query the run lacks) and `empty` "
            "(a ranking -M or -J emptied; `missing` by default)",
        )


# -- 4. ties --------------------------------------------------------------------------------------
def check_ties(
    measure: type[Measure],
    metrics: Sequence[str],
    *,
    collections: int = 30,
    seed: int = 0,
    tolerance: float = 1e-9,
) -> None:
    """Reversing the file order of each group of rows with tied scores (ranks renumbered in the
    new order) changes no value under the default ordering (score, then docno, descending)."""
    with installed(measure), Bench(collections, seed, ties=True) as bench:
        _check_ties(bench, measure, resolve_metrics(measure, metrics), tolerance)


def _check_ties(bench: Bench, measure: type[Measure], metrics: Metrics, tolerance: float) -> None:
    values = bench.values(metrics.spec)

    def as_generated(r: ResolvedMeasure, run: str, qid: str) -> Any:
        return got_value(values, r, run.removesuffix(TIES_REVERSED), qid)

    reversed_runs = [run for run in bench.run_names if run.endswith(TIES_REVERSED)]
    pairs = _everywhere(bench, reversed_runs)
    mismatches, total = compare(values, metrics, pairs, as_generated, tolerance)
    fail(
        f"{measure.__name__} changes when tied rows are reversed in the run file",
        mismatches,
        total,
        bench,
        names=("as generated", "tied rows reversed"),
        hint="read `rank` (irpipe's ordering: score, then docno, descending), never the file's rank "
        "column or the order in which rows arrive",
    )


# -- 5. the reference -----------------------------------------------------------------------------
def check_reference(
    measure: type[Measure],
    reference: Reference,
    metrics: Sequence[str],
    *,
    collections: int = 30,
    seed: int = 0,
    tolerance: float = 1e-9,
    ties: bool = True,
) -> None:
    """Every query's value, and each run's aggregate, equals the reference's on the rankings sorted
    as irpipe sorts them, on `collections` generated hard collections."""
    with installed(measure), Bench(collections, seed, ties) as bench:
        _check_reference(bench, measure, reference, resolve_metrics(measure, metrics), tolerance)


def _check_reference(
    bench: Bench, measure: type[Measure], reference: Reference, metrics: Metrics, tolerance: float
) -> None:
    values, expected = bench.values(metrics.spec), {}

    def want(r: ResolvedMeasure, run: str, qid: str) -> Any:
        query = bench.query(run, qid)
        expected[r.label, run, qid] = call(reference, r, query, f"run {run}, qid {qid}")
        return expected[r.label, run, qid]

    mismatches, total = compare(values, metrics, _everywhere(bench), want, tolerance)
    fail(f"{measure.__name__} differs from the reference", mismatches, total, bench)
    for r in metrics.resolved:
        if r.measure.aggregator != "none" and r.measure.kind == "number":
            for run in bench.runs:
                _check_mean(bench, values, expected, r, run, tolerance)


def _check_mean(
    bench: Bench, values: Values, expected: dict, r: ResolvedMeasure, run: str, tolerance: float
) -> None:
    want = aggregate((expected[r.label, run, q] for q in bench.qrels), r.measure.aggregator)
    got = values.aggregate.get((run, r.label), (None, 0))
    if not (same(got[0], want[0], tolerance) and got[1] == want[1]):
        raise AssertionError(
            f"{type(r.measure).__name__}: the {r.measure.aggregator} of {r.label} over run {run}'s "
            f"queries is {got[0]!r} over {got[1]} queries; the reference's values give "
            f"{want[0]!r} over {want[1]}"
        )


# -- 6. the judged-rows plan ----------------------------------------------------------------------
def check_judged_rows(
    measure: type[Measure],
    metrics: Sequence[str],
    *,
    collections: int = 30,
    seed: int = 0,
    tolerance: float = 1e-9,
) -> None:
    """If the measure claims `judged_rows_suffice`, its values are the same whether irpipe ranks
    only judged rows, every row of a mostly judged batch, or the full ranking (evaluated beside a
    measure that needs every row). Nothing to check otherwise."""
    with installed(measure), Bench(collections, seed, ties=True) as bench:
        _check_judged_rows(bench, measure, resolve_metrics(measure, metrics), tolerance)


def _check_judged_rows(
    bench: Bench, measure: type[Measure], metrics: Metrics, tolerance: float
) -> None:
    if not measure.judged_rows_suffice:
        return
    claimed = metrics.where(lambda r: r.measure.judged_only_ok(r.params))  # parameters may not
    for settings in JUDGED_ROWS_SETTINGS if claimed.groups else ():
        ranked_fully = values_of(bench.values((*claimed.spec, NEEDS_EVERY_ROW), settings))
        for plan, form in JUDGED_ROWS_FORMS.items():
            got = bench.values(claimed.spec, settings, plan)
            pairs = _everywhere(bench, bench.run_names)
            mismatches, total = compare(got, claimed, pairs, ranked_fully, tolerance)
            fail(
                f"{measure.__name__} claims judged_rows_suffice, but the judged-rows plan ({form}) "
                f"and the full ranking disagree (settings {settings})",
                mismatches,
                total,
                bench,
                names=("full ranking", "judged-rows plan"),
                hint="judged_rows_suffice = True promises that the value depends only on where "
                "judged documents rank, on query facts and on c.num_ret(), and that `missing` is "
                "the value when nothing judged is retrieved; if the measure reads unjudged rows, "
                "set it to False",
            )


def values_of(values: Values) -> Callable[[ResolvedMeasure, str, str], Any]:
    """`expected` for `compare`: the values of another evaluation."""

    def expected(r: ResolvedMeasure, run: str, qid: str) -> Any:
        return got_value(values, r, run, qid)

    return expected


def check_data(
    tied: Bench,
    bench: Bench,
    measure: type[Measure],
    reference: Reference,
    metrics: Metrics,
    tolerance: float,
) -> None:
    """Checks 3 to 6 in order. Those that compare with the reference run on `bench`; ties and
    judged rows, which compare irpipe with itself, on `tied` (collections with score ties)."""
    _check_missing(bench, measure, reference, metrics, tolerance)
    _check_ties(tied, measure, metrics, tolerance)
    _check_reference(bench, measure, reference, metrics, tolerance)
    _check_judged_rows(tied, measure, metrics, tolerance)
