"""Fused runs as SQL: the rows of a fused run computed from its inputs' rows once they are loaded
in `run_rows` (the inputs share a batch, `with_fusions`), inserted beside them as one more run.
Pure, no I/O.

Each input's ranking is ordered as any run's is (the `ordering` setting: trec_eval's score
descending, docno descending), cut to `depth`, its scores normalized per query (`NORMS`), then
its documents combined per query (`METHODS`). A document an input lacks adds nothing to a sum
and is not counted by MNZ/ANZ/MIN/MAX/MED, except under Borda (method or normalization), where
every input ranks every candidate of the query, the ones it lacks sharing its remaining points
(ranx's definitions). The fused run's rank is its order by score descending, docno descending.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from pipeline.inputs.format import Load
from pipeline.plan.in_order import aggregates_in_order
from pipeline.plan.ranking import SortKey, order_by
from pipeline.spec.fusion import FUSION_METHODS
from pipeline.sql import Statement

__all__ = ["Fusion", "QueryWeights", "fusion_statement", "kept_rows", "with_fusions"]

EPSILON = "1e-9"  # the smallest denominator, as ranx's normalizations take it

# Each normalization of an input's score per query (window `w`: one input, one query), or of its
# position `pos` there (`n` documents; `c` candidates: the documents any input has for the query).
NORMS = {
    "none": "score",
    "min-max": f"(score - min(score) OVER w) / greatest(max(score) OVER w - min(score) OVER w, {EPSILON})",
    "max": f"score / greatest(max(score) OVER w, {EPSILON})",
    "sum": f"(score - min(score) OVER w) / greatest(sum(score) OVER w - min(score) OVER w * count(*) OVER w, {EPSILON})",
    "z-score": f"(score - avg(score) OVER w) / greatest(stddev_pop(score) OVER w, {EPSILON})",
    "rank": "1 - (pos - 1) / count(*) OVER w",
    "borda": "CASE WHEN present THEN 1 - (pos - 1) / c ELSE 0.5 - (n - 1) / (2 * c) END",
}  # fmt: skip

# Each method: the fused score of a document from its inputs' rows (`x` the normalized score,
# `pos` the position, `weight` the input's weight), aggregated per (qid, docno).
METHODS = {
    "combsum": "sum(x)",
    "combmnz": "sum(x) * count(*)",
    "combanz": "sum(x) / count(*)",
    "combmax": "max(x)",
    "combmin": "min(x)",
    "combmed": "median(x)",
    "wsum": "sum(weight * x)",
    "wmnz": "sum(x) * sum(weight)",
    "rrf": "sum(weight / ({k} + pos))",
    "isr": "sum(1 / (pos * pos)) * count(*)",
    "log_isr": "sum(1 / (pos * pos)) * ln(count(*))",
    "borda": "sum(CASE WHEN present THEN c - pos + 1 ELSE (c - n + 1) / 2 END)",
}
#: the methods and normalizations that give every input every candidate of the query
EVERY_CANDIDATE = ("borda",)


@dataclass(frozen=True)
class QueryWeights:
    """Each query's weight of each input (by its position in the inputs), in three columns."""

    qids: tuple[str, ...]
    positions: tuple[int, ...]
    weights: tuple[float, ...]


@dataclass(frozen=True)
class Fusion:
    """A fused run: its name, its inputs (run names), and the statements that insert its rows
    into `run_rows` once its inputs are there (then copy them into the tables its `run` outputs
    write, `written`)."""

    name: str
    inputs: tuple[str, ...]
    statements: tuple[Statement, ...]
    written: bool = False
    #: with weights chosen by cross-validation (`tune`): its statement for given query weights
    retuned: Callable[[QueryWeights], Statement] | None = None

    def tuned(self, weights: QueryWeights) -> Fusion:
        """The fused run with each query's weights of its inputs chosen (see `QueryWeights`)."""
        assert self.retuned is not None
        return replace(self, statements=(self.retuned(weights), *self.statements[1:]))


def fusion_statement(
    name: str,
    inputs: list[tuple[str, float]],
    method: str,
    norm: str,
    k: int,
    depth: int | None,
    keys: tuple[SortKey, ...],
    by_query: QueryWeights | None = None,
    ranks: bool = False,
) -> Statement:
    """The INSERT of the fused run `name`'s rows (every value bound, the SQL built from the
    closed lists of methods and normalizations). `by_query`: each query's own weights of the
    inputs (a tuned run); a query without them takes the inputs' weights. `ranks`: each row
    gets its rank in the fused run (the `ordering: rank` setting ranks by it)."""
    values = ", ".join("(?, ?, ?)" for _ in inputs)
    params: list = [v for i, (run, weight) in enumerate(inputs) for v in (run, float(weight), i)]
    tuned, weight, joined = "", "i.weight", ""
    if by_query is not None:
        tuned = ("tuned AS (SELECT unnest(?::VARCHAR[]) AS qid, unnest(?::INTEGER[]) AS position, "
                 "unnest(?::DOUBLE[]) AS weight),")  # fmt: skip
        params += [list(by_query.qids), list(by_query.positions), list(by_query.weights)]
        weight = "coalesce(t.weight, i.weight)"
        joined = "LEFT JOIN tuned t ON t.position = i.position AND t.qid = r.qid"
    cut = f"QUALIFY pos <= {int(depth)}" if depth is not None else ""
    every = method in EVERY_CANDIDATE or norm in EVERY_CANDIDATE
    # Only what the method and normalization read is computed: a position needs a sort of each
    # input's query, the counts a window, the rank of the fused run another sort.
    pos = not FUSION_METHODS[method] or depth is not None or norm in ("rank", "borda")
    position = f"row_number() OVER (PARTITION BY i.position, r.qid ORDER BY {order_by(keys)})"
    sql = f"""
INSERT INTO run_rows
WITH inputs(run, weight, position) AS (VALUES {values}),
{tuned}
ranked AS (
    SELECT i.position, {weight} AS weight, r.qid, r.docno, r.score,
        {position if pos else "NULL::BIGINT"} AS pos
    FROM (SELECT run, qid, docno, score, rank AS file_rank FROM run_rows) r JOIN inputs i USING (run)
    {joined}
    {cut}),
{_candidates(every, method == "borda" or norm in ("rank", "borda"))},
normed AS (
    SELECT *, {NORMS[norm]} AS x FROM scored WINDOW w AS ({_ONE_INPUT})),
{_fused(method, k)}
SELECT ?, qid, docno, {_FUSED_RANK if ranks else "NULL::BIGINT"}, score, true
FROM fused"""
    return Statement(sql, [*params, name])


#: One input's query, its rows in docno order: a window's sum over it adds them in that order (a
#: window without an order adds them as threads deliver them, changing the last bits).
_ONE_INPUT = "PARTITION BY position, qid ORDER BY docno ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"


def _in_input_order(method: str) -> str:
    """A method's aggregate adding a document's inputs in spec order, the same bits every time."""
    return aggregates_in_order(method, "position")


#: the fused run's rank, by its score (an `ordering: rank` spec ranks by it; a file written shows it)
_FUSED_RANK = "row_number() OVER (PARTITION BY qid ORDER BY score DESC, docno DESC)"


def kept_rows(table: str, name: str) -> Statement:
    """A copy of the fused run's rows, which a `run` output writes once the evaluation is done
    (`run_rows` is dropped batch by batch)."""
    return Statement(
        f"CREATE TABLE {table} AS SELECT run, qid, docno, {_FUSED_RANK} AS rank, score "
        "FROM run_rows WHERE run = ?",
        [name],
    )


def _candidates(every: bool, counts_read: bool) -> str:
    """`scored`: each input's rows with `n` (its documents for the query) and `c` (the
    query's candidates), where they are read; under Borda also a row for every candidate it
    lacks (`present` false)."""
    counts = """counted AS (
    SELECT *, count(*) OVER (PARTITION BY position, qid) AS n,
        count(DISTINCT docno) OVER (PARTITION BY qid) AS c
    FROM ranked)"""
    if not every and not counts_read:
        return "scored AS (SELECT *, true AS present FROM ranked)"
    if not every:
        return f"{counts},\nscored AS (SELECT *, true AS present FROM counted)"
    return f"""{counts},
per_input AS (SELECT DISTINCT position, weight, qid, n, c FROM counted),
candidates AS (SELECT DISTINCT qid, docno FROM ranked),
scored AS (
    SELECT p.position, p.weight, d.qid, d.docno, r.score, r.pos, p.n, p.c,
        r.docno IS NOT NULL AS present
    FROM per_input p JOIN candidates d USING (qid)
    LEFT JOIN ranked r ON r.position = p.position AND r.qid = d.qid AND r.docno = d.docno)"""


def _fused(method: str, k: int) -> str:
    """`fused`: each candidate's fused score. Condorcet compares every pair of a query's
    candidates: a document scores the candidates a majority of inputs rank below it, less those
    a majority rank above it (Copeland's count; a document an input lacks is below every one it
    has), which orders by pairwise majority wherever that order has no cycle."""
    if method != "condorcet":
        return f"""fused AS (
    SELECT qid, docno, {_in_input_order(METHODS[method].format(k=int(k)))} AS score
    FROM normed GROUP BY qid, docno)"""
    return """documents AS (SELECT DISTINCT qid, docno FROM ranked),
grid AS (
    SELECT d.qid, d.docno, i.position, coalesce(r.pos, 9223372036854775807) AS p
    FROM documents d CROSS JOIN inputs i
    LEFT JOIN ranked r ON r.position = i.position AND r.qid = d.qid AND r.docno = d.docno),
votes AS (
    SELECT a.qid, a.docno, b.docno AS other,
        count(*) FILTER (WHERE a.p < b.p) - count(*) FILTER (WHERE b.p < a.p) AS margin
    FROM grid a JOIN grid b ON b.qid = a.qid AND b.position = a.position AND b.docno <> a.docno
    GROUP BY ALL),
fused AS (
    SELECT d.qid, d.docno, coalesce(sum(sign(v.margin)), 0) AS score
    FROM documents d LEFT JOIN votes v USING (qid, docno) GROUP BY ALL)"""


def with_fusions(batches: list[list[Load]], fusions: tuple[Fusion, ...]) -> list[list[Load]]:
    """The batches, those holding inputs of one fused run merged (in spec order): a fused run's
    rows are computed from its inputs' rows, which must be loaded together."""
    merged = [list(batch) for batch in batches]
    for fusion in fusions:
        holding = [b for b in merged if any(load.name in fusion.inputs for load in b)]
        if len(holding) > 1:
            first = holding[0]
            for other in holding[1:]:
                first.extend(other)
                merged.remove(other)
    return merged
