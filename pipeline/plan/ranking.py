"""The canonical ranking as SQL: every run row (or only its judged rows) with its rank, its judgment,
its query's facts and the running values measures ask for. Pure, no I/O; `compile` embeds it.

Two plans give the same rows for the rows they keep:
  full        every row, ordered by one window per (run, query) (`ordering` setting); a large
              batch in slices of whole queries (`pipeline.plan.slices`): memory holds one slice
  judged      only the rows the qrels judge, when every measure depends only on where those rank
              (`Measure.judged_rows_suffice`). A judged row's rank is the number of rows ordered at
              or before it: counted with a join on the query when a query has few judged rows
              (comparisons ~ rows x judged), found by sorting the query when it has many
              (~ rows x log2 rows, each step dearer: `COUNTED`). Either way nothing is sorted
              but what must be.
  given       the judged-rows plan's rows, over rows ranked before they reach the engine
              (`RANKED_ROWS`: the Python door's loop ranks one run's table in Arrow, where
              DuckDB's fixed cost per operator outweighs a 5,000-row sort; `given_sql`).

A metric with `judged_only=true` reads the condensed ranking beside the full plan's: its judged
rows (grade >= 0), ranked again by their rank in the ranking (after `max_docs`, as trec_eval -M
then -J), with the derived columns of those metrics built over it (`condensed_sql`). It is a
second window over the ranking's judged rows, not a second reading of the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.contract.columns import IdealAtRank, Requirements
from pipeline.plan import subtopic_tables
from pipeline.spec import Settings

__all__ = [
    "ORDERINGS",
    "SortKey",
    "COUNTED",
    "DENSE_SHARE",
    "at_or_before",
    "condensed_sql",
    "mostly_judged",
    "order_by",
    "ordering",
    "RANKED_ROWS",
    "given_sql",
    "ranked_sql",
    "ranking_length",
    "select_list",
]


@dataclass(frozen=True)
class SortKey:
    """One key of an ordering: a column of the run's rows, maybe cast, and its direction."""

    column: str
    descending: bool
    cast: str | None = None

    def expr(self, table: str = "") -> str:
        """The key's SQL, its column qualified by `table` when given."""
        column = f"{table}.{self.column}" if table else self.column
        return f"CAST({column} AS {self.cast})" if self.cast else column


_SCORE, _DOCNO = SortKey("score", True), SortKey("docno", True)
ORDERINGS: dict[str, tuple[SortKey, ...]] = {
    "trec_eval": (_SCORE, _DOCNO),
    "trec_eval-9": (SortKey("score", True, "FLOAT"), _DOCNO),  # 9.x stored scores as C float
    "rank": (SortKey("file_rank", False), _SCORE, _DOCNO),
}


def ordering(settings: Settings) -> tuple[SortKey, ...]:
    """The sort keys of the `ordering` setting (trec_eval's under its compatibility mode)."""
    if settings.ordering == "trec_eval" and settings.compatibility == "trec_eval-9":
        return ORDERINGS["trec_eval-9"]
    return ORDERINGS[settings.ordering]


def order_by(keys: tuple[SortKey, ...]) -> str:
    """The keys as an ORDER BY list."""
    return ", ".join(f"{k.expr()} {'DESC' if k.descending else 'ASC'}" for k in keys)


def at_or_before(keys: tuple[SortKey, ...], row: str, other: str) -> str:
    """Predicate: `row` is ordered at or before `other` (lexicographic over the keys), led by
    the first key's weak comparison: a join counting the rows before each judged row then
    rejects most pairs by one number before it compares any docno."""
    predicate = ""
    for i, key in reversed(list(enumerate(keys))):
        first = ">" if key.descending else "<"
        a, b = key.expr(row), key.expr(other)
        if i == len(keys) - 1:
            predicate = f"{a} {first}= {b}"
        else:
            predicate = f"{a} {first} {b} OR ({a} = {b} AND ({predicate}))"
    if len(keys) == 1:
        return predicate
    a, b = keys[0].expr(row), keys[0].expr(other)
    return f"{a} {'>' if keys[0].descending else '<'}= {b} AND ({predicate})"


def select_list(columns: dict[str, str]) -> str:
    """`,\\n expr AS name` for each column: the tail of a SELECT list."""
    return "".join(f",\n        {expr} AS {name}" for name, expr in columns.items())


# A run's rows as both plans read them; `rank` is the file's column, `file_rank` in the ranking.
_RUN_ROWS = "(SELECT run, qid, docno, score, rank AS file_rank FROM run_rows)"
_RELV = "CASE WHEN q.rel < 0 THEN -2 ELSE q.rel END"  # negative judgments are -2, as in trec_eval


def ranked_sql(
    req: Requirements,
    settings: Settings,
    judged_rows: bool = False,
    condensed: Requirements | None = None,
    facts: tuple[str, ...] = (),
) -> str:
    """CTEs ending in `ranked`: the ranking with every column the measures read; with
    `condensed` (the needs of the metrics over it) the condensed ranking too, `ranked_condensed`,
    whose rows carry the query's `facts` (the columns of the table facts)."""
    keys = ordering(settings)
    body = (
        _judged_ranking(req, settings, keys) if judged_rows else _full_ranking(req, settings, keys)
    )
    subtopics = subtopic_tables.ranking_ctes(req)
    ranked = f"{body}{subtopics},\nranked AS ({_with_rank_columns(req)}\n)"
    if condensed is None:
        return ranked
    return f"{ranked},\n{condensed_sql(condensed, facts, keys)}"


#: the table of a run's rows ranked before they reach the engine (the Python door's loop: an
#: `Evaluator` call), each with its `rank` in the ordering and its query's `retrieved` rows
RANKED_ROWS = "ranked_rows"


def given_sql(req: Requirements, settings: Settings) -> str:
    """CTEs ending in `ranked` over the judged rows of `RANKED_ROWS`, whose ranks are given:
    the judged-rows plan's rows, with the rank each row was given in place of the one it
    would count or sort for (nothing is ranked again)."""
    cut = "" if settings.max_docs is None else f"WHERE j.rank <= {int(settings.max_docs)}"
    length = _length(req, ranking_length(settings, "j.retrieved"))
    body = f"""judged AS (
    SELECT r.run, r.qid, r.docno, r.score, r.file_rank, r.rank, r.retrieved, runs.collection,
        {_RELV} AS relv
    FROM {RANKED_ROWS} r
    JOIN runs USING (run)
    JOIN qrels q ON q.collection = runs.collection AND q.qid = r.qid AND q.docno = r.docno
),
windowed AS (
    SELECT j.run, j.docno, j.score, j.file_rank, f.*, j.relv, j.rank{length}{select_list(req.of_kind("window"))}
    FROM judged j
    JOIN facts f ON f.collection = j.collection AND f.qid = j.qid
    {cut}
    WINDOW ranking AS (PARTITION BY j.run, j.collection, j.qid ORDER BY j.rank
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)"""
    subtopics = subtopic_tables.ranking_ctes(req)
    return f"{body}{subtopics},\nranked AS ({_with_rank_columns(req)}\n)"


def condensed_sql(req: Requirements, facts: tuple[str, ...], keys: tuple[SortKey, ...]) -> str:
    """CTEs ending in `ranked_condensed`: the judged rows of `windowed`, ranked again in their
    order (`keys`: the ordering's), with the columns `req` needs built over that ranking (see the
    module docstring)."""
    kept = ", ".join(("run", "collection", "qid", "docno", "score", "file_rank", "relv", *facts))
    length = _length(req, "count(*) OVER (PARTITION BY run, collection, qid)")
    columns = _ties(req, keys, "full_rank ASC") | req.of_kind("window")
    subtopics = subtopic_tables.ranking_ctes(req, "condensed_windowed")
    return f"""condensed_rows AS (SELECT {kept}, rank AS full_rank FROM windowed WHERE relv >= 0),
condensed_windowed AS (
    SELECT *, row_number() OVER ranking AS rank{length}{select_list(columns)}
    FROM condensed_rows
    WINDOW ranking AS (PARTITION BY run, collection, qid ORDER BY full_rank
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
){subtopics},
ranked_condensed AS ({_with_rank_columns(req, "condensed_windowed")}
)"""


def _full_ranking(req: Requirements, settings: Settings, keys: tuple[SortKey, ...]) -> str:
    """Every row, joined to its judgment and facts, ranked and windowed in one pass."""
    length = _length(req, "count(*) OVER (PARTITION BY run, collection, qid)")
    ties = _ties(req, keys, order_by(keys))
    judged = "WHERE relv >= 0" if settings.judged_only else ""
    source = "joined"
    if settings.max_docs is not None:  # -M cuts the ranking before -J drops unjudged documents
        source = f"""(SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY run, collection, qid ORDER BY
            {order_by(keys)}) AS pre_rank FROM joined) WHERE pre_rank <= {int(settings.max_docs)})"""
    timed = {name: f"t.{sql}" for name, sql in req.of_kind("latency").items()}
    # A run's time for a query, where a metric reads it (`Columns.query_ms`).
    times = "\n    LEFT JOIN query_latency t ON t.run = r.run AND t.qid = r.qid" if timed else ""
    # Documents missing from the qrels are -1, as in trec_eval.
    return f"""joined AS (
    SELECT r.run, r.docno, r.score, r.file_rank, f.*, coalesce({_RELV}, -1) AS relv{select_list(timed)}
    FROM {_RUN_ROWS} r
    JOIN runs USING (run)
    JOIN facts f ON f.collection = runs.collection AND f.qid = r.qid
    LEFT JOIN qrels q ON q.collection = runs.collection AND q.qid = r.qid AND q.docno = r.docno{times}
),
windowed AS (
    SELECT *, row_number() OVER ranking AS rank{length}{select_list(ties | req.of_kind("window"))}
    FROM {source} {judged}
    WINDOW ranking AS (PARTITION BY run, collection, qid ORDER BY {order_by(keys)}
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)"""


def _judged_ranking(req: Requirements, settings: Settings, keys: tuple[SortKey, ...]) -> str:
    """Only the judged rows, each with its rank in the whole ranking (see the module docstring)."""
    cut = "" if settings.max_docs is None else f"WHERE p.rank <= {int(settings.max_docs)}"
    length = _length(req, ranking_length(settings, "pr.retrieved"))
    return f"""judged AS (
    SELECT r.*, runs.collection, {_RELV} AS relv
    FROM {_RUN_ROWS} r
    JOIN runs USING (run)
    JOIN qrels q ON q.collection = runs.collection AND q.qid = r.qid AND q.docno = r.docno
),
sorted_queries AS (  -- counting costs ~ rows x judged, sorting ~ rows x log2(rows) x COUNTED
    SELECT run, collection, qid
    FROM judged JOIN present USING (run, qid)
    GROUP BY run, collection, qid
    HAVING count(*) > {COUNTED} * log2(any_value(present.retrieved))
),
positions AS (
    SELECT j.run, j.collection, j.qid, j.docno, count(*) AS rank
    FROM (SELECT * FROM judged ANTI JOIN sorted_queries USING (run, collection, qid)) j
    JOIN {_RUN_ROWS} r ON r.run = j.run AND r.qid = j.qid AND ({at_or_before(keys, "r", "j")})
    GROUP BY j.run, j.collection, j.qid, j.docno
    UNION ALL
    SELECT run, collection, qid, docno,
        row_number() OVER (PARTITION BY run, collection, qid ORDER BY {order_by(keys)})
    FROM (SELECT * FROM {_RUN_ROWS} JOIN sorted_queries USING (run, qid))
),
windowed AS (
    SELECT j.run, j.docno, j.score, j.file_rank, f.*, j.relv, p.rank{length}{select_list(req.of_kind("window"))}
    FROM judged j
    JOIN positions p USING (run, collection, qid, docno)
    JOIN facts f ON f.collection = j.collection AND f.qid = j.qid
    JOIN present pr ON pr.run = j.run AND pr.qid = j.qid
    {cut}
    WINDOW ranking AS (PARTITION BY j.run, j.collection, j.qid ORDER BY p.rank
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)"""


#: How many judged rows a query may have, per log2 of its ranking's length, for the judged-rows
#: plan to count their ranks rather than sort the query: DuckDB compares a pair of rows in a
#: join several times faster than a sort (a window) moves a row one step. Measured on 1,000-row
#: rankings of a 7M-line run: counting 15 judged rows a query takes half the time of sorting
#: every row, 30 two thirds, 60 one and a half times (the crossover near 4 x log2(1000) = 40).
COUNTED = 3
#: The share of a batch's rows in queries the judged-rows plan would sort anyway (more judged rows
#: than COUNTED x log2 of the ranking's length) above which ranking every row (the full plan) is
#: cheaper.
DENSE_SHARE = 0.5


def mostly_judged() -> str:
    """SQL over a bound list of run names: whether most rows of those runs are in queries with
    many judgments (a TREC track's pooled qrels), as opposed to a few (MS MARCO's). The qrels'
    judgments of a query stand in for the judged rows it retrieves, an upper bound."""
    return f"""
WITH judged AS (SELECT collection, qid, count(*) AS n FROM qrels GROUP BY ALL)
SELECT coalesce(sum(p.retrieved) FILTER (WHERE j.n > {COUNTED} * log2(p.retrieved))
                > {float(DENSE_SHARE)!r} * sum(p.retrieved), false)
FROM present p JOIN runs USING (run)
LEFT JOIN judged j ON j.collection = runs.collection AND j.qid = p.qid
WHERE list_contains(?, p.run)"""


def ranking_length(settings: Settings, retrieved: str) -> str:
    """SQL length of a ranking of `retrieved` documents once -M cuts it."""
    if settings.max_docs is None:
        return retrieved
    return f"least({retrieved}, {int(settings.max_docs)})"


def _ties(req: Requirements, keys: tuple[SortKey, ...], order: str) -> dict[str, str]:
    """The tie columns measures read (`Columns.tie_first`, `tie_size`): a row's tie is the rows
    of its query with its first sort key (the score, or the file's rank under `ordering: rank`);
    its first rank is the row's rank less the rows of the tie ordered before it (by `order`)."""
    tie = f"PARTITION BY run, collection, qid, {keys[0].expr()}"
    built = {
        "first": f"row_number() OVER ranking - row_number() OVER ({tie} ORDER BY {order}) + 1",
        "size": f"count(*) OVER ({tie})",
    }
    return {name: built[sql] for name, sql in req.of_kind("tie").items()}


def _length(req: Requirements, expr: str) -> str:
    """The `num_ret` column, if a measure reads it."""
    return f",\n        {expr} AS num_ret" if req.has("length") else ""


def _with_rank_columns(req: Requirements, source: str = "windowed") -> str:
    """`source` with the values that need the rank: a second ordered window, the ideal
    ranking's columns at each rank, and the columns over each row's subtopics."""
    columns, joins = subtopic_tables.ranking_columns(req, source)
    columns |= req.of_kind("rank_window")
    if not columns and not req.ideal_lists:
        return f"\n    SELECT * FROM {source}"
    for tag in req.ideal_lists:
        for part in IdealAtRank.PARTS:
            columns[f"ideal_{tag}_{part}"] = f"i_{tag}.{part}"
        joins += f"""
    LEFT JOIN ideal_{tag} i_{tag}
        ON i_{tag}.collection = w.collection AND i_{tag}.qid = w.qid AND i_{tag}.pos = w.rank"""
    return f"""
    SELECT w.*{select_list(columns)}
    FROM {source} w{joins}
    WINDOW by_rank AS (PARTITION BY w.run, w.collection, w.qid ORDER BY w.rank
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"""
