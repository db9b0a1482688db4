"""The C/W/L framework's expected utility, in SQL over the canonical ranking (Moffat, Bailey,
Scholer and Thomas, TOIS 2017; cwl_eval, Azzopardi, Thomas and Moffat, SIGIR 2019).

A user reads position 1, and reads on from position i to i+1 with probability C(i); W(i), the
share of attention position i gets, is the chance of reaching it, normalised:

    P(0) = 1,  P(i) = C(1) ... C(i),  W(i) = P(i-1) / (P(0) + ... + P(N-1))
    EU   = W(1) g(1) + ... + W(N) g(N)

over N = max_depth positions, as cwl_eval computes it: the ranking cut at N, or padded to N with
documents that gain 0 (the worst case, the value) or 1 (the best case). Unjudged documents gain
the same. The residual is the best case minus the worst. A query without a ranking is all
padding: 0, and a residual of 1.

The positions past the end of the ranking (the tail) have no row: each measure sums them in
closed form, or as a sum over a list of positions (`tail_sum`), from the state the ranking ends
in. Running products over the ranking are window columns (`running_product`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ...api import Columns, Measure, Need, double
from .gains import BEST, WORST, Case, CWLParams

__all__ = [
    "CWLMeasure",
    "Product",
    "depth_reached",
    "running_product",
    "tail_sum",
    "within",
]


class CWLMeasure(Measure[Any]):
    """A C/W/L measure: its expected utility per query (the worst case, as cwl_eval's EU column),
    or with `residual`, the best case minus that (cwl_eval -r's ResEU column)."""

    Params = CWLParams

    def needs(self, p: Any, c: Columns) -> tuple[Need, ...]:
        cases = (WORST, BEST) if p.residual else (WORST,)
        return tuple(need for case in cases for need in self.case_needs(p, case))

    def case_needs(self, p: Any, case: Case) -> tuple[Need, ...]:
        """The derived columns the expected utility of `case` reads (none by default)."""
        return ()

    def per_query(self, p: Any, c: Columns) -> str:
        return self.residual(p) if p.residual else self.expected_utility(p, WORST)

    def expected_utility(self, p: Any, case: Case) -> str:
        """SQL aggregate: the expected utility of the ranking when unjudged documents and the
        padding gain as `case` says."""
        raise NotImplementedError

    def residual(self, p: Any) -> str:
        """SQL aggregate: the best case's expected utility minus the worst's."""
        return f"({self.expected_utility(p, BEST)} - {self.expected_utility(p, WORST)})"

    def better_for(self, p: Any) -> str | None:
        # A residual says how much the judgments leave unknown: no run is better for it.
        return None if p.residual else self.better

    def missing(self, p: Any, c: Columns) -> str:
        # No ranking: N positions of padding, which gain 0 in the worst case and 1 in the best
        # (the weights sum to 1).
        return "1" if p.residual else "0"


def within(p: CWLParams) -> str:
    """Predicate: the row is within cwl_eval's depth (`max_depth`)."""
    return f"(rank <= {int(p.max_depth)})"


def depth_reached(p: CWLParams) -> str:
    """Aggregate: how many positions the ranking fills, n' = min(ranking's length, max_depth);
    the tail is positions n'+1 ... max_depth. (Every row is ranked: the measures that read this
    do not claim `judged_rows_suffice`.)"""
    return f"count(*) FILTER (WHERE {within(p)})"


def tail_sum(first: str, last: str, term: Callable[[str], str]) -> str:
    """SQL: term(j) summed over the positions j = first ... last (0 when first > last)."""
    terms = f"list_transform(range({first}, ({last}) + 1), lambda cwl_j: {term('cwl_j')})"
    return f"coalesce(list_sum({terms}), {double(0)})"


class Product(NamedTuple):
    """A running product over the ranking, as two columns: how many factors so far are 0, and
    the product of the others (so that the product before a row is known without a second
    pass)."""

    zeros: Need
    nonzero: Need
    factor: str

    def before(self) -> str:
        """SQL: the product of the factors of the rows above this one (1 at rank 1)."""
        own_zero = f"CAST({self.factor} = 0 AS INTEGER)"
        own = f"(CASE WHEN {self.factor} = 0 THEN {double(1)} ELSE {self.factor} END)"
        return f"(CASE WHEN {self.zeros} - {own_zero} > 0 THEN {double(0)} ELSE {self.nonzero} / {own} END)"


def running_product(name: str, factor: str, requires: tuple[Need, ...] = ()) -> Product:
    """The running product of `factor` (SQL over a row) down the ranking. Over the row columns
    alone it is a window column of the first pass; over window columns (`requires`), of the
    second, ordered by rank."""
    kind, window = ("rank_window", "by_rank") if requires else ("window", "ranking")
    zeros = f"CAST(sum(CAST({factor} = 0 AS INTEGER)) OVER {window} AS BIGINT)"
    nonzero = f"product(CASE WHEN {factor} = 0 THEN {double(1)} ELSE {factor} END) OVER {window}"
    return Product(
        Need(f"{name}_zeros", kind, zeros, requires),
        Need(f"{name}_nonzero", kind, nonzero, requires),
        factor,
    )
