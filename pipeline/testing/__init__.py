"""The conformance kit: prove a measure right the way irpipe proves its own.

    from pipeline.testing import check_measure

    def reference(p, query):  # plain Python: the definition, nothing clever
        top = query.grades[: p.k]
        return float((top >= 1).sum()) / p.k

    def test_my_precision():
        check_measure(MyPrecision, reference, ["MyP@5", "MyP@20"])

`check_measure` runs six checks (each also a function of its own, so a failure says which):

1. `check_params`: an unknown parameter, a value of a wrong type for each parameter, and a missing
   required parameter are refused with irpipe's SpecError (strict pydantic);
2. `check_names`: each metric's canonical name resolves to the same canonical name and parameters;
   each alias resolves;
3. `check_missing`: a query the run lacks, and a ranking emptied by max_docs: 0 or judged_only,
   get the reference's value on an empty ranking;
4. `check_ties`: reversing the file order of tied rows changes nothing;
5. `check_reference`: every query's value and each run's aggregate equal the reference's, on
   `collections` generated hard collections (ties, grades 0..4, negative judgments, unjudged
   documents, queries missing from runs or without relevant documents, empty rankings);
6. `check_judged_rows`: a measure claiming `judged_rows_suffice` gives the same values whichever
   plan irpipe takes.

Everything is evaluated through the real path: TREC files in a temporary directory, a YAML spec,
DuckDB. The reference receives the measure's validated parameters and a `pipeline.api.Query`: the
grades of the ranking in irpipe's order (score descending, then docno descending; -1 for a
document the qrels do not judge, -2 for a negative judgment), `judged` (grades >= 0), the query's
qrels grades, highest first, and `level`, the relevance level (the measure's `rel`, else 1: the
collections are evaluated with the default settings); an empty ranking means the run lacks the
query (or it was emptied). The collections have `num_docs` = `NUM_DOCS`. Failures raise AssertionError naming the metric,
the collection's seed, the run, the query, its ranking, and both values.

`installed(*classes)` registers measures for the evaluations inside a `with` block; the checks use
it themselves, so a plugin's tests pass whether or not the plugin is installed.

Imports: anything below the command line (it evaluates through the real path).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack

from pipeline.contract.measure import Measure
from pipeline.testing.bench import NUM_DOCS, Bench
from pipeline.testing.data import (
    Reference,
    check_data,
    check_judged_rows,
    check_missing,
    check_reference,
    check_ties,
)
from pipeline.testing.declarations import check_names, check_params
from pipeline.testing.install import installed
from pipeline.testing.metrics import resolve_metrics

__all__ = [
    "NUM_DOCS",
    "check_judged_rows",
    "check_measure",
    "check_missing",
    "check_names",
    "check_params",
    "check_reference",
    "check_ties",
    "installed",
]


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
    """Every check of the kit, in order (see the module's docstring), on one set of collections.
    `ties=False` compares with the reference on collections without score ties (the ties and
    judged-rows checks still use ties: they need no reference)."""
    with installed(measure), ExitStack() as stack:
        check_params(measure, metrics)
        check_names(measure, metrics)
        resolved = resolve_metrics(measure, metrics)
        tied = stack.enter_context(Bench(collections, seed, ties=True))
        bench = tied if ties else stack.enter_context(Bench(collections, seed, ties=False))
        check_data(tied, bench, measure, reference, resolved, tolerance)
