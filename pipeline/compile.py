"""Spec + registry -> Plan: the SQL that loads the files and computes every measure. Pure, no I/O.

The plan's shape, for every run and measure at once:
  facts      per (collection, query): counts and ideal DCGs from the qrels, one GROUP BY
  ranked     every run row, ordered once (the `ordering` setting), joined to its judgment and its
             query's facts, with every running count the measures need from one window
  wide       per (run, query) over ranked: one aggregate expression per measure, one GROUP BY
  per_query  the query set (`queries` setting) in long form: run, collection, qid, metric, value
  aggregate  per (run, metric): the measure's aggregator over the query set, and n_queries
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SpecError
from .metrics.base import Columns
from .readers import TABLES, Load, Statement, load_qrels, load_run
from .registry import Registry, ResolvedMeasure
from .spec import LoadedSpec

__all__ = ["Plan", "compile_plan", "resolve_metrics"]

ORDERINGS = {
    "trec_eval": "r.score DESC, r.docno DESC",
    "trec_eval-9": "CAST(r.score AS FLOAT) DESC, r.docno DESC",  # 9.x stored scores as C float
    "rank": "r.file_rank ASC, r.score DESC, r.docno DESC",
}


@dataclass(frozen=True)
class Plan:
    """Everything needed to evaluate a spec: loads (with their checks) and the measure SQL."""

    loads: list[Load]
    statements: list[Statement]
    metrics: list[ResolvedMeasure]

    def sql_text(self) -> str:
        """The whole plan as SQL text, parameters shown in comments (`irpipe compile`)."""
        parts = [_show(s) for s in TABLES]
        for load in self.loads:
            parts += [
                _show(load.fast),
                f"-- if {load.path.name} has lines the fast pass cannot split:",
            ]
            parts.append(_show(load.general))
        parts += [_show(s) for s in self.statements]
        return "\n\n".join(parts) + "\n"


def _show(statement: Statement) -> str:
    sql = "\n".join(line.rstrip() for line in statement.sql.strip("\n").splitlines())
    params = f"-- parameters: {statement.params!r}\n" if statement.params else ""
    return f"{params}{sql};"


def resolve_metrics(loaded: LoadedSpec, registry: Registry) -> list[ResolvedMeasure]:
    """Every metric entry of the spec, resolved and expanded, with errors naming file and key."""
    resolved: list[ResolvedMeasure] = []
    for i, item in enumerate(loaded.spec.metrics):
        try:
            resolved += registry.resolve(item.metric, item.params, item.label)
        except SpecError as exc:
            raise SpecError(f"{loaded.where('metrics', i)}: {exc}") from None
    _check_labels(loaded, resolved)
    _check_needs(loaded, resolved)
    return resolved


def _check_labels(loaded: LoadedSpec, resolved: list[ResolvedMeasure]) -> None:
    seen: set[str] = set()
    for m in resolved:
        if m.label in seen:
            raise SpecError(
                f"{loaded.where('metrics')}: metric '{m.label}' is listed twice; "
                "remove one or give it a different label"
            )
        seen.add(m.label)


def _check_needs(loaded: LoadedSpec, resolved: list[ResolvedMeasure]) -> None:
    used = {run.collection for run in loaded.spec.runs.values()}
    for m in resolved:
        for need in m.measure.needs:
            for name in sorted(used):
                if getattr(loaded.spec.collections[name], need) is None:
                    raise SpecError(
                        f"{loaded.where('collections', name)}: {m.label} needs '{need}' "
                        f"for collection '{name}'; add {need}: <value> to it"
                    )


def compile_plan(loaded: LoadedSpec, metrics: list[ResolvedMeasure]) -> Plan:
    """The plan for a validated spec and its resolved metrics."""
    spec = loaded.spec
    settings = spec.settings
    mode, use_rank = settings.input, settings.ordering == "rank"
    loads = [load_qrels(name, c.qrels, mode) for name, c in spec.collections.items()]
    loads += [load_run(n, r.path, r.collection, mode, use_rank) for n, r in spec.runs.items()]
    c = Columns(settings.relevance_level, settings.compatibility)
    values = [m.measure.per_query(m.params, c) for m in metrics]
    missing = [m.measure.missing(m.params, c) for m in metrics]
    ordering = settings.ordering
    if ordering == "trec_eval" and settings.compatibility == "trec_eval-9":
        ordering = "trec_eval-9"
    statements = [
        *_name_tables(loaded, metrics),
        Statement(_facts_sql(c)),
        Statement(_wide_sql(values, _ranked_sql(c, ORDERINGS[ordering]))),
        Statement(_per_query_sql(missing, settings.query_set)),
        Statement(_AGGREGATE_SQL),
    ]
    return Plan(loads, statements, metrics)


def _name_tables(loaded: LoadedSpec, metrics: list[ResolvedMeasure]) -> list[Statement]:
    """Names from the spec enter the database as bound values, never as SQL text."""
    spec = loaded.spec
    runs = [(i, name, r.collection) for i, (name, r) in enumerate(spec.runs.items())]
    collections = [(name, c.num_docs) for name, c in spec.collections.items()]
    rows = [(i, m.label, m.measure.aggregator, m.canonical) for i, m in enumerate(metrics)]
    return [
        *_table("runs", "ordinal INTEGER, run VARCHAR, collection VARCHAR", runs),
        *_table("collections", "collection VARCHAR, num_docs BIGINT", collections),
        *_table(
            "metrics",
            "ordinal INTEGER, metric VARCHAR, aggregator VARCHAR, canonical VARCHAR",
            rows,
        ),
    ]


def _table(name: str, columns: str, rows: list[tuple]) -> list[Statement]:
    width = len(columns.split(","))
    placeholders = ", ".join("(" + ", ".join("?" * width) + ")" for _ in rows)
    params = [value for row in rows for value in row]
    return [
        Statement(f"CREATE TABLE {name} ({columns})"),
        Statement(f"INSERT INTO {name} VALUES {placeholders}", params),
    ]


def _select_list(columns: dict[str, str]) -> str:
    return "".join(f",\n        {expr} AS {name}" for name, expr in columns.items())


def _facts_sql(c: Columns) -> str:
    return f"""
CREATE TABLE facts AS
WITH judged AS (
    SELECT q.*, col.num_docs{_select_list(c.judged_windows)}
    FROM qrels q JOIN collections col USING (collection)
)
SELECT collection, qid{_select_list(c.facts)}
FROM judged
GROUP BY collection, qid"""


def _ranked_sql(c: Columns, ordering: str) -> str:
    # Negative judgments become -2 and documents missing from the qrels -1, as in trec_eval.
    return f"""
SELECT *, row_number() OVER ranking AS rank{_select_list(c.windows)}
FROM (
    SELECT r.run, r.docno, r.score, r.rank AS file_rank, f.*,
        coalesce(CASE WHEN q.rel < 0 THEN -2 ELSE q.rel END, -1) AS relv
    FROM run_rows r
    JOIN runs USING (run)
    JOIN facts f ON f.collection = runs.collection AND f.qid = r.qid
    LEFT JOIN qrels q ON q.collection = runs.collection AND q.qid = r.qid AND q.docno = r.docno
) r
WINDOW ranking AS (PARTITION BY run, qid ORDER BY {ordering}
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"""


def _wide_sql(values: list[str], ranked: str) -> str:
    columns = {f"m{i}": f"CAST({expr} AS DOUBLE)" for i, expr in enumerate(values)}
    return f"""
CREATE TABLE wide AS
WITH ranked AS ({ranked}
)
SELECT run, collection, qid{_select_list(columns)}
FROM ranked
GROUP BY run, collection, qid"""


def _per_query_sql(missing: list[str], query_set: str) -> str:
    columns = {
        f"m{i}": f"CASE WHEN w.qid IS NULL THEN CAST({expr} AS DOUBLE) ELSE w.m{i} END"
        for i, expr in enumerate(missing)
    }
    join = "LEFT JOIN" if query_set == "qrels" else "JOIN"
    names = ", ".join(columns)
    return f"""
CREATE TABLE per_query AS
WITH expected AS (
    SELECT runs.ordinal, runs.run, f.* FROM runs JOIN facts f USING (collection)
),
filled AS (
    SELECT e.ordinal, e.run, e.collection, e.qid{_select_list(columns)}
    FROM expected e {join} wide w ON w.run = e.run AND w.qid = e.qid
),
long AS (SELECT * FROM filled UNPIVOT INCLUDE NULLS (value FOR col IN ({names})))
SELECT l.run, l.collection, l.qid, m.metric, l.value
FROM long l JOIN metrics m ON 'm' || m.ordinal = l.col
ORDER BY l.ordinal, l.qid, m.ordinal"""


# trec_eval sums in query order; so does this, so that means print the same to the last digit.
_AGGREGATE_SQL = """
CREATE TABLE aggregate AS
SELECT p.run, p.collection, p.metric,
    CASE m.aggregator
        WHEN 'sum' THEN sum(p.value ORDER BY p.qid)
        WHEN 'gmean' THEN exp(sum(ln(greatest(p.value, 1e-5)) ORDER BY p.qid) / count(p.value))
        ELSE sum(p.value ORDER BY p.qid) / count(p.value)
    END AS value,
    count(p.value) AS n_queries
FROM per_query p
JOIN metrics m USING (metric)
JOIN runs USING (run)
GROUP BY runs.ordinal, p.run, p.collection, p.metric, m.ordinal, m.aggregator
ORDER BY runs.ordinal, m.ordinal"""
