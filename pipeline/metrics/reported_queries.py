"""Which queries a defining tool reports, for the variants that equal it (not a plugin: helpers).

trec_eval's measures give every query a value, and the `queries` setting picks the ones averaged.
gdeval.pl (`nDCG` and `ERR` with `variant='gdeval'`) prints a line only for a query whose qrels hold
a grade above 0, and averages those lines: by default only the queries the run answers, with `-c`
every such query of the qrels, a query the run lacks scoring 0. Its variants follow `queries` as
ndeval's measures do: `qrels` (the default) is `gdeval.pl -c`, `intersection` gdeval.pl's default.
rbp_eval (`RBP` with `variant='rbp_eval'`) prints one for every query the run answers that the
qrels judge, whatever the `queries` setting. A query the tool does not print has no value here
(NULL): it is left out of the mean, and `n_queries` counts the queries averaged, as the tool's
mean does.
"""

from __future__ import annotations

from typing import Any

from ..api import Columns, Need

__all__ = [
    "answered",
    "gdeval_empty",
    "gdeval_missing",
    "gdeval_needs",
    "gdeval_reported",
    "answered_needs",
    "judged_topic",
    "judged_topic_needs",
]


def answered_needs(c: Columns) -> tuple[Need, ...]:
    """What `answered` reads: the ranking's length (0 when the run lacks the query)."""
    return (c.num_ret(),)


def answered(c: Columns, value: str) -> str:
    """A `missing` value: `value` for a query the run answered without retrieving a judged
    document, no value for a query the run lacks."""
    return f"(CASE WHEN {c.num_ret()} > 0 THEN {value} END)"


def judged_topic_needs(c: Columns) -> tuple[Need, ...]:
    """What `judged_topic` reads: the number of judgments with a grade above 0."""
    return (c.num_rel(1),)


def judged_topic(c: Columns, value: str, aggregate: bool = True) -> str:
    """`value` for a query whose qrels hold a grade above 0, else no value (gdeval.pl's `seen`);
    `aggregate`: `value` is a per-query aggregate (else an expression over the query's facts)."""
    positive = f"any_value({c.num_rel(1)})" if aggregate else c.num_rel(1)
    return f"(CASE WHEN {positive} > 0 THEN {value} END)"


# gdeval.pl's variant of a measure with a `variant` parameter (nDCG, ERR): the queries it prints
# a line for, 0 for an emptied ranking of such a query, and no value for any other. Each measure
# keeps its own methods (their `p` is its Params) and hands them these.
def gdeval_needs(p: Any, c: Columns) -> tuple[Need, ...]:
    """What the gdeval variant reads besides the measure's own needs."""
    return judged_topic_needs(c) if p.variant == "gdeval" else ()


def gdeval_reported(p: Any, c: Columns, value: str) -> str:
    """The per-query `value`, left without a value where gdeval.pl prints no line."""
    return judged_topic(c, value) if p.variant == "gdeval" else value


def gdeval_missing(p: Any, c: Columns) -> str:
    """The `missing` value: under gdeval, 0 for a judged topic (one the run lacks is averaged
    under `queries: qrels`, gdeval.pl -c, and left out under `intersection`), else none."""
    return gdeval_empty(p, c)


def gdeval_empty(p: Any, c: Columns) -> str:
    """The `empty` value: under gdeval, 0 for a judged topic, else none."""
    return judged_topic(c, "0", aggregate=False) if p.variant == "gdeval" else "0"
