"""The kit's six checks. Each raises AssertionError with a report naming what differs and where.

The checks that evaluate (missing, ties, reference, judged rows) run on a `Bench` of generated hard
collections; `check_measure` runs all six and shares one bench between them.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from ..columns import Columns
from ..compile import measure_sql
from ..errors import SpecError
from ..measure import Measure
from ..python_measure import Query
from ..registry import ResolvedMeasure, get_registry
from .bench import TIES_REVERSED, Bench, Values
from .install import installed
from .report import Mismatch, aggregate, fail, same

__all__ = [
    "check_judged_rows",
    "check_measure",
    "check_missing",
    "check_names",
    "check_params",
    "check_reference",
    "check_ties",
    "wrong_value",
]

#: reference(params, query) -> the value of the query (None: no value, left out of the mean)
Reference = Callable[[Any, Query], Any]

UNKNOWN_PARAMETER = "no_such_parameter"
#: A measure that needs every row: evaluated beside it, irpipe must rank every row (the full plan).
NEEDS_EVERY_ROW = "Unjudged@1"
#: Settings under which the judged-rows plan is compared with the full plan. Only the defaults:
#: a measure reads the same columns under any setting, and irpipe's own tests cover the rest.
JUDGED_ROWS_SETTINGS: tuple[dict[str, Any], ...] = ({},)
JUDGED_ROWS_FORMS = {
    "judged_rows": "only judged rows ranked",
    "dense": "every row ranked, as for a batch of mostly judged queries",
}


# -- the metric strings under check ---------------------------------------------------------------
@dataclass(frozen=True)
class Metrics:
    """Metric strings resolved: (string for the spec, its measures) each; a string whose measures
    were all named before is dropped, so that no measure is listed twice."""

    groups: tuple[tuple[str, tuple[ResolvedMeasure, ...]], ...]

    @property
    def spec(self) -> tuple[str, ...]:
        return tuple(text for text, _ in self.groups)

    @property
    def resolved(self) -> tuple[ResolvedMeasure, ...]:
        return tuple(r for _, found in self.groups for r in found)

    def where(self, keep: Callable[[ResolvedMeasure], bool]) -> Metrics:
        """The groups all of whose measures `keep` accepts."""
        return Metrics(tuple(g for g in self.groups if all(keep(r) for r in g[1])))


def resolve_metrics(measure: type[Measure], metrics: Sequence[str]) -> Metrics:
    """Each metric string resolved by the current registry, each checked to name `measure`."""
    if isinstance(metrics, str) or not metrics:
        raise ValueError(f"metrics must be a non-empty list of metric strings, not {metrics!r}")
    groups, seen = [], set()
    for text in metrics:
        found = resolve(measure, text)
        new = tuple(r for r in found if r.canonical not in seen)
        seen.update(r.canonical for r in new)
        if len(new) == len(found):
            groups.append((text, new))
        else:  # some named before: name only the new ones, by their canonical strings
            groups += [(r.canonical, (r,)) for r in new]
    return Metrics(tuple(groups))


def resolve(measure: type[Measure], text: str, params: dict | None = None) -> list[ResolvedMeasure]:
    """`text` resolved, failing unless it resolves to this very measure class."""
    try:
        found = get_registry().resolve(text, params)
    except SpecError as exc:
        raise AssertionError(f"metric {text!r} does not resolve: {exc}") from None
    for r in found:
        if type(r.measure) is not measure:
            raise AssertionError(
                f"metric {text!r} names {type(r.measure).__name__} ({r.canonical}), "
                f"not {measure.__name__}"
            )
    return found


# -- 1. parameters --------------------------------------------------------------------------------
def check_params(measure: type[Measure], metrics: Sequence[str]) -> None:
    """Starting from the parameters of each metric string: an unknown parameter, a value of a wrong
    type and a missing required parameter are refused with SpecError (irpipe's strict pydantic),
    and the measure compiles given its required parameters alone."""
    with installed(measure):
        for r in resolve_metrics(measure, metrics).resolved:
            base = _base_params(measure, r)
            _refuses(
                measure,
                {**base, UNKNOWN_PARAMETER: 1},
                f"the unknown parameter {UNKNOWN_PARAMETER!r}",
            )
            for key, field in measure.Params.model_fields.items():
                wrong = wrong_value(field.annotation)
                if wrong is not None:
                    _refuses(
                        measure, {**base, key: wrong}, f"{key}={wrong!r}, a {type(wrong).__name__}"
                    )
            for key in _required(measure):
                _refuses_without(measure, base, key)
            _compiles(measure, {key: base.get(key) for key in _required(measure)})


def _base_params(measure: type[Measure], r: ResolvedMeasure) -> dict[str, Any]:
    """The metric's parameters as a dict, checked to resolve to the same parameters again."""
    base = r.params.model_dump()
    again = resolve(measure, measure.name, base)
    if [a.params for a in again] != [r.params]:
        raise AssertionError(
            f"{r.canonical}: its parameters {base} given to {measure.name} resolve to "
            f"{[a.canonical for a in again]}; model_dump() must give back what validates to them"
        )
    return base


def _refuses(measure: type[Measure], params: dict[str, Any], what: str) -> None:
    if _resolved_or_refused(measure, params, what):
        raise AssertionError(
            f"{measure.__name__} accepted {what} ({params}); its Params must refuse it: derive "
            "Params from pipeline.api.MeasureParams (strict types, unknown parameters forbidden)"
        )


def _resolved_or_refused(measure: type[Measure], params: dict[str, Any], what: str) -> list:
    """The measure resolved with `params`, or [] if irpipe refused them with SpecError."""
    try:
        return get_registry().resolve(measure.name, params)
    except SpecError:
        return []
    except Exception as exc:
        raise AssertionError(
            f"{measure.__name__}: {what} raised {type(exc).__name__} ({exc}) instead of irpipe's "
            "SpecError; derive Params from pipeline.api.MeasureParams"
        ) from exc


def _required(measure: type[Measure]) -> list[str]:
    """`required`, and the Params fields without a default."""
    fields = measure.Params.model_fields
    return list(
        dict.fromkeys([*measure.required, *(k for k, f in fields.items() if f.is_required())])
    )


def _refuses_without(measure: type[Measure], base: dict[str, Any], key: str) -> None:
    params = {k: v for k, v in base.items() if k != key}
    found = _resolved_or_refused(measure, params, f"no {key!r}")
    # irpipe's own P, R, ... take trec_eval's default cutoffs instead (P is P@5 ... P@1000)
    if found and not all(getattr(r.params, key, None) is not None for r in found):
        names = [r.canonical for r in found]
        raise AssertionError(
            f"{measure.__name__} resolved without its required parameter {key!r} to {names}; "
            f"list it in `required` (or give the Params field no default)"
        )


def _compiles(measure: type[Measure], params: dict[str, Any]) -> None:
    """Every other parameter at its default, the measure's SQL must compile (a parameter it
    cannot do without belongs in `required`)."""
    for r in resolve(measure, measure.name, params):
        for part in ("per_query", "missing", "empty"):
            try:
                measure_sql([r], Columns(), part)
            except Exception as exc:
                raise AssertionError(
                    f"{r.canonical}, given only its required parameters {params}, does not "
                    f"compile: its {part} raised {type(exc).__name__}: {exc}; list the parameters "
                    "it cannot do without in `required`"
                ) from exc


_PROBES: tuple[Any, ...] = ("1", 1, [1], {"1": 1})


def wrong_value(annotation: Any) -> Any:
    """A value whose type the annotation does not accept (such as "1" for an int, which lax
    validation would convert), or None when it accepts anything."""
    accepted = _types(annotation)
    if object in accepted:
        return None
    return next((p for p in _PROBES if type(p) not in accepted), None)


def _types(annotation: Any) -> set[type]:
    """The Python types a field annotation accepts, as far as the probes need (object: any)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_types(a) for a in args))
    if origin is typing.Literal:
        return {type(v) for v in args}
    if origin is typing.Annotated:
        return _types(args[0])
    if origin is not None:
        return {origin} if isinstance(origin, type) else {object}
    if annotation is None or annotation is type(None):
        return {type(None)}
    if not isinstance(annotation, type) or annotation is object:
        return {object}
    return {float, int} if annotation is float else {annotation}  # strict floats take ints


# -- 2. names -------------------------------------------------------------------------------------
def check_names(measure: type[Measure], metrics: Sequence[str]) -> None:
    """Each metric's canonical name resolves to the same canonical name and parameters, and each
    alias resolves to the measure with its preset parameters."""
    with installed(measure):
        found = resolve_metrics(measure, metrics).resolved
        for r in found:
            _round_trip(measure, r)
        for alias, preset in measure.aliases.items():
            _alias_resolves(measure, alias, preset, found[0])


def _round_trip(measure: type[Measure], r: ResolvedMeasure) -> None:
    try:
        again = get_registry().resolve(r.canonical)
    except SpecError as exc:
        raise AssertionError(
            f"the canonical name {r.canonical!r} does not resolve: {exc}"
        ) from None
    if [(type(a.measure), a.canonical, a.params) for a in again] != [
        (measure, r.canonical, r.params)
    ]:
        got = "; ".join(f"{a.canonical} with {a.params!r}" for a in again)
        raise AssertionError(
            f"the canonical name {r.canonical!r} (parameters {r.params!r}) resolves to {got}: a "
            "canonical name must give back the same measure and parameters (is a parameter "
            "excluded from model_dump, or changed again by a validator?)"
        )


def _alias_resolves(measure: type[Measure], alias: str, preset: dict, r: ResolvedMeasure) -> None:
    given = {k: v for k, v in r.params.model_dump(exclude_defaults=True).items() if k not in preset}
    via_alias = resolve(measure, alias, given)
    via_name = resolve(measure, measure.name, {**given, **preset})
    if [(a.canonical, a.params) for a in via_alias] != [(a.canonical, a.params) for a in via_name]:
        raise AssertionError(
            f"alias {alias!r} with {given} resolves to {[a.canonical for a in via_alias]}, but "
            f"{measure.name} with its preset {preset} to {[a.canonical for a in via_name]}"
        )


# -- the checks on data ---------------------------------------------------------------------------
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
    """The reference's value, as a float (or None, or text for a text measure)."""
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


def _check_missing(bench, measure, reference, metrics: Metrics, tolerance: float) -> None:
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


def _check_reference(bench, measure, reference, metrics: Metrics, tolerance: float) -> None:
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
    bench, values: Values, expected: dict, r: ResolvedMeasure, run: str, tolerance: float
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
    claimed = metrics.where(lambda r: r.measure.judged_only_ok(r.params))
    if not measure.judged_rows_suffice or not claimed.groups:
        return
    for settings in JUDGED_ROWS_SETTINGS:
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


# -- all six --------------------------------------------------------------------------------------
def check_measure(
    measure: type[Measure],
    reference: Reference,
    metrics: Sequence[str],
    *,
    collections: int = 30,
    seed: int = 0,
    tolerance: float = 1e-9,
    ties: bool = True,
) -> None:
    """Every check of the kit, in order: parameters, names, missing and emptied queries, ties, the
    reference, the judged-rows plan. `ties=False` compares with the reference on collections
    without score ties (the ties check still uses ties: it needs no reference)."""
    with installed(measure), ExitStack() as stack:
        check_params(measure, metrics)
        check_names(measure, metrics)
        resolved = resolve_metrics(measure, metrics)
        tied = stack.enter_context(Bench(collections, seed, ties=True))
        bench = tied if ties else stack.enter_context(Bench(collections, seed, ties=False))
        _check_missing(bench, measure, reference, resolved, tolerance)
        _check_ties(tied, measure, resolved, tolerance)
        _check_reference(bench, measure, reference, resolved, tolerance)
        _check_judged_rows(tied, measure, resolved, tolerance)
