"""Nugget scores of generated answers (the TREC RAG track's AutoNuggetizer evaluation, Pradeep et
al. 2024-2025): how much of a topic's nuggets an answer supports.

An answer's assignments are read as a run over its topic's nuggets (`pipeline.inputs.nuggets`,
`pipeline.inputs.assignments`): each nugget is a judged document whose grade is its importance
(`vital` 2, `okay` 1, another 0), and the answer's row for it scores its assignment (`support` 2,
`partial_support` 1, `not_support` 0). A nugget the answer supports counts 1, partly 0.5 (only
`support` counts, 1, under `strict`); a measure is the share of its set so supported, 0 for an
empty set. The arithmetic is nuggetizer's (`calculate_nugget_scores`) to the last bit: the
numerator and denominator are whole numbers of halves, divided once. Means over topics are
`exact_mean`, statistics.mean's (nuggetizer's `calculate_global_metrics`).
"""

from __future__ import annotations

from pydantic import Field

from ..api import Columns, Measure, MeasureParams, hookimpl

#: the grades the nuggets' importances are read as
VITAL, OKAY = 2, 1


class NuggetParams(MeasureParams):
    strict: bool = Field(
        False, description="only `support` counts (1); else `partial_support` counts 0.5 too"
    )


def _supported(p: NuggetParams, c: Columns, level: str) -> str:
    """Aggregate: the nuggets graded by `level` (SQL over `relv`) that the answer supports, in
    halves: 2 a nugget supported, 1 partly (strict: 2 only for a nugget supported)."""
    row = f"CASE WHEN {c.score} = 2 THEN 2 ELSE 0 END" if p.strict else f"CAST({c.score} AS BIGINT)"
    return f"coalesce(sum({row}) FILTER (WHERE {level}), 0)"


def _share(halves: str, count: str) -> str:
    """`halves` / (2 · `count`), one division of whole numbers; 0 where `count` is 0."""
    return f"CASE WHEN {count} = 0 THEN 0.0 ELSE CAST({halves} AS DOUBLE) / (2 * {count}) END"


class _Nugget(Measure[NuggetParams]):
    Params = NuggetParams
    reads = "assignments"
    aggregator = "exact_mean"
    judged_rows_suffice = True  # only the nuggets' rows count, and an answer without any is 0

    def missing(self, p: NuggetParams, c: Columns) -> str:
        return "0.0"  # nuggetizer scores a topic without an answer as one supporting nothing


class NuggetAll(_Nugget):
    """The share of all the topic's nuggets the answer supports (nuggetizer's all_score)."""

    name = "NuggetAll"
    description = (
        "nuggets supported / nuggets (support 1, partial_support 0.5; strict: support only)"
    )

    def needs(self, p: NuggetParams, c: Columns):
        return (c.num_rel(0),)

    def per_query(self, p: NuggetParams, c: Columns) -> str:
        return _share(_supported(p, c, c.relevant(0)), f"any_value({c.num_rel(0)})")


class NuggetVital(_Nugget):
    """The share of the topic's vital nuggets the answer supports (nuggetizer's vital_score)."""

    name = "NuggetVital"
    description = "vital nuggets supported / vital nuggets (as NuggetAll, over vital ones)"

    def needs(self, p: NuggetParams, c: Columns):
        return (c.num_rel(VITAL),)

    def per_query(self, p: NuggetParams, c: Columns) -> str:
        return _share(_supported(p, c, c.relevant(VITAL)), f"any_value({c.num_rel(VITAL)})")


class NuggetWeighted(_Nugget):
    """Vital nuggets weigh 1, okay ones 0.5: (Σ_vital s + 0.5 Σ_okay s) / (|vital| + 0.5 |okay|),
    0 where the topic has neither."""

    name = "NuggetWeighted"
    description = "(vital supported + 0.5 okay supported) / (vital + 0.5 okay)"

    def needs(self, p: NuggetParams, c: Columns):
        return (c.num_rel(OKAY), c.num_rel(VITAL))

    def per_query(self, p: NuggetParams, c: Columns) -> str:
        okay_level = f"({c.relevant(OKAY)} AND NOT {c.relevant(VITAL)})"
        vital, okay = _supported(p, c, c.relevant(VITAL)), _supported(p, c, okay_level)
        n_vital = f"any_value({c.num_rel(VITAL)})"
        n_okay = f"(any_value({c.num_rel(OKAY)}) - {n_vital})"
        # In quarters over halves: (2·vital + okay) / (2·(2·n_vital + n_okay)).
        return _share(f"(2 * {vital} + {okay})", f"(2 * {n_vital} + {n_okay})")


@hookimpl
def register_metrics():
    return [NuggetAll, NuggetVital, NuggetWeighted]
