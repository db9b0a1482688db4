"""Spec + registry -> Plan: the SQL that loads the files and computes every measure. Pure, no I/O.

The plan's shape, for every run and measure at once:
  facts      per (collection, query): counts and ideal DCGs from the qrels, one GROUP BY
  ranked     every run row (or only the judged ones, when that suffices), ranked by the `ordering`
             setting, joined to its judgment and its query's facts, with every running count the
             measures need from one window (`ranking.py`)
  wide       per (run, query) over ranked: one aggregate expression per measure, one GROUP BY
  per_query  the query set (`queries` setting) in long form: run, collection, qid, metric, value
  aggregate  per (run, metric): the measure's aggregator over the query set, and n_queries
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .batches import batched
from .columns import Columns, Need, Requirements, flatten
from .errors import PluginError, SpecError
from .python_measure import PythonMeasure
from .ranking import mostly_judged, ranked_sql, ranking_length, select_list
from .readers import (
    TABLES,
    Load,
    Statement,
    general_lines,
    insert_lines,
    qrels_format,
    run_format,
)
from .registry import Registry, ResolvedMeasure
from .spec import LoadedSpec, Settings

__all__ = [
    "aggregate_sql",
    "Plan",
    "Ranking",
    "compile_plan",
    "resolve_metrics",
]


@dataclass(frozen=True)
class Plan:
    """Everything needed to evaluate a spec, in order: the `qrels` loads and `statements` (tables
    of names, query facts); then, one batch of runs at a time, its loads, `per_batch` and its
    `ranking` (rank it into `wide`, then drop its rows, so memory holds one batch); then `finish`
    (per-query and aggregate tables)."""

    qrels: list[Load]
    batches: list[list[Load]]
    statements: list[Statement]
    per_batch: list[Statement]  # after a batch is loaded, before it is ranked (none by default)
    ranking: Ranking
    finish: list[Statement]
    metrics: list[ResolvedMeasure]
    memory_limit: str | None = None  # DuckDB's memory_limit for the connection (`settings`)
    #: (ordinal, measure) of each metric computed in Python once every batch is ranked
    python: tuple[tuple[int, ResolvedMeasure], ...] = ()

    @property
    def loads(self) -> list[Load]:
        """Every input file: the qrels, then the runs in spec order."""
        return [*self.qrels, *(load for batch in self.batches for load in batch)]

    def sql_text(self) -> str:
        """The whole plan as SQL text, parameters shown in comments (`irpipe compile`)."""
        parts = [_show(s) for s in TABLES]
        parts += [_show_load([load]) for load in self.qrels]
        parts += [_show(s) for s in self.statements]
        for batch in self.batches:
            parts += [_show_load(batch), *(_show(s) for s in self.per_batch)]
            parts += _show_ranking(self.ranking, batch)
        parts += [_show(s) for s in self.finish]
        return "\n\n".join(parts) + "\n"


@dataclass(frozen=True)
class Ranking:
    """How a loaded batch is ranked into `wide`, then dropped: `statement`, or `dense` (the full
    plan) when the judged-rows plan is chosen but the batch's queries are mostly judged, where
    sorting every row once is cheaper than finding judged rows' ranks (`ranking.mostly_judged`)."""

    statement: Statement
    dense: Statement | None = None
    after: tuple[Statement, ...] = (Statement("DROP TABLE run_rows"), TABLES[1])

    def test(self, batch: list[Load]) -> Statement | None:
        """SQL whose one value says whether the batch takes `dense`, or None if there is no choice."""
        return None if self.dense is None else Statement(mostly_judged(), [[r.name for r in batch]])


def _show_ranking(ranking: Ranking, batch: list[Load]) -> list[str]:
    parts = [_show(ranking.statement)]
    test = ranking.test(batch)
    if test is not None:
        parts = [f"-- if this is false:\n{_show(test)}", *parts]
        parts.append(f"-- else, the batch's queries being mostly judged:\n{_show(ranking.dense)}")
    return [*parts, *(_show(s) for s in ranking.after)]


def _show_load(loads: list[Load]) -> str:
    general = "-- for each file with lines the fast pass cannot split, as for the first:"
    return f"{_show(insert_lines(loads))}\n\n{general}\n{_show(general_lines(loads[0]))}"


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
    c = columns_of(loaded.spec.settings)
    for m in resolved:
        for need in Requirements(declared_needs(m, c)).fields:
            for name in sorted(used):
                if getattr(loaded.spec.collections[name], need) is None:
                    raise SpecError(
                        f"{loaded.where('collections', name)}: {m.label} needs '{need}' "
                        f"for collection '{name}'; add {need}: <value> to it"
                    )


def columns_of(settings: Settings) -> Columns:
    """The columns measures are compiled against, under these settings."""
    return Columns(settings.relevance_level, settings.compatibility)


def declared_needs(m: ResolvedMeasure, c: Columns) -> tuple[Need, ...]:
    """What a measure declares it reads, with what those are built from."""
    try:
        return flatten(m.measure.needs(m.params, c))
    except PluginError as exc:
        raise PluginError(f"{m.label}: {exc}") from None


def measure_sql(metrics: list[ResolvedMeasure], c: Columns, part: str) -> list[tuple[str, str]]:
    """(SQL, kind) of one part of each measure (`per_query`, `missing`, `empty`), each reading
    only the columns it declared."""
    out = []
    for m in metrics:
        bound = c.bound(declared_needs(m, c), f"metric {m.label!r} ({type(m.measure).__name__})")
        out.append((getattr(m.measure, part)(m.params, bound), m.measure.kind))
    return out


def compile_plan(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], sizes: dict[Path, int] | None = None
) -> Plan:
    """The plan for a validated spec and its resolved metrics; `sizes` (bytes of each input file,
    when known) decide how runs are batched."""
    spec = loaded.spec
    settings = spec.settings
    qrels = [
        Load(c.qrels, name, qrels_format(settings.input)) for name, c in spec.collections.items()
    ]
    runs_format = run_format(settings.input, settings.ordering == "rank")
    runs = [Load(r.path, n, runs_format, r.collection) for n, r in spec.runs.items()]
    c = columns_of(settings)
    req = Requirements(flatten(declared_needs(m, c) for m in metrics))
    values = measure_sql(metrics, c, "per_query")
    missing = measure_sql(metrics, c, "missing")
    # -J and -M 0 can empty a ranking the run did give; trec_eval evaluates it as empty.
    can_empty = settings.judged_only or settings.max_docs == 0
    empty = measure_sql(metrics, c, "empty") if can_empty else None
    # When only judged documents' positions matter, only judged rows are ranked; a query with no
    # judged document retrieved then has its `missing` value (over the ranking's length).
    judged_rows = not can_empty and all(m.measure.judged_only_ok(m.params) for m in metrics)
    wide = _wide_sql(values, ranked_sql(req, settings, judged_rows), req)
    dense = _wide_sql(values, ranked_sql(req, settings), req) if judged_rows else None
    bogus = settings.missing_queries == "trec_eval_c" and settings.query_set == "qrels"
    statements = [
        *_name_tables(loaded, metrics),
        Statement(_facts_sql(req)),
        *([Statement("CREATE TABLE bogus (run VARCHAR, qid VARCHAR)")] if bogus else []),
        *(Statement(_ideal_sql(tag, gain)) for tag, gain in req.ideal_lists.items()),
        Statement(f"CREATE TABLE wide AS {wide} LIMIT 0"),  # run_rows is still empty here
    ]
    ranking = Ranking(
        Statement(f"INSERT INTO wide {wide}"),
        Statement(f"INSERT INTO wide {dense}") if dense else None,
    )
    finish = [
        Statement(
            _per_query_sql(
                missing,
                settings.query_set,
                empty,
                can_empty or judged_rows,
                _unjudged_length(req, settings, judged_rows),
                bogus,
            )
        ),
        Statement(aggregate_sql(bogus)),
    ]
    batches = batched(runs, sizes or {})
    python = tuple((i, m) for i, m in enumerate(metrics) if isinstance(m.measure, PythonMeasure))
    per_batch = BOGUS_ROWS if bogus else []
    return Plan(
        qrels,
        batches,
        statements,
        per_batch,
        ranking,
        finish,
        metrics,
        settings.memory_limit,
        python,
    )


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


def _facts_sql(req: Requirements) -> str:
    return f"""
CREATE TABLE facts AS
WITH judged AS (
    SELECT q.*, col.num_docs{select_list(req.of_kind("judged_window"))}
    FROM qrels q JOIN collections col USING (collection)
)
SELECT collection, qid{select_list(req.of_kind("fact"))}
FROM judged
GROUP BY collection, qid"""


def _ideal_sql(tag: str, gain: str) -> str:
    """The ideal ranking of each query: judged documents with positive gain, by gain descending."""
    return f"""
CREATE TABLE ideal_{tag} AS
WITH ordered AS (
    SELECT collection, qid, g, row_number() OVER (PARTITION BY collection, qid ORDER BY g DESC) AS pos
    FROM (SELECT collection, qid, {gain} AS g FROM qrels WHERE rel >= 0) WHERE g > 0
),
prefix AS (
    SELECT *, sum(g / log2(pos + 1)) OVER up AS idcg, sum(greatest(g, 1)) OVER up AS cost,
        lead(g) OVER up IS DISTINCT FROM g AS change
    FROM ordered
    WINDOW up AS (PARTITION BY collection, qid ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT *,
    coalesce(sum(CASE WHEN change THEN 1 / idcg ELSE 0 END) OVER later, 0) AS tail,
    coalesce(sum(CASE WHEN change THEN 1 ELSE 0 END) OVER later, 0) AS tail_count
FROM prefix
WINDOW later AS (PARTITION BY collection, qid ORDER BY pos DESC
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"""


def _wide_sql(values: list[tuple[str, str]], ranked: str, req: Requirements) -> str:
    columns = {f"m{i}": _typed(expr, kind) for i, (expr, kind) in enumerate(values)}
    columns |= req.of_kind("grades")  # lists for the Python path
    return f"""
WITH {ranked}
SELECT run, collection, qid{select_list(columns)}
FROM ranked
GROUP BY run, collection, qid"""


def _typed(expr: str, kind: str) -> str:
    return f"CAST({expr} AS {'VARCHAR' if kind == 'text' else 'DOUBLE'})"


def _unjudged_length(req: Requirements, settings: Settings, judged_rows: bool) -> str | None:
    """SQL `num_ret` of a query without a row in `wide` (if a measure reads it): the run's
    ranking when only judged rows were kept; else that query has no ranking."""
    if not req.has("length"):
        return None
    return ranking_length(settings, "coalesce(p.retrieved, 0)") if judged_rows else "0"


def _per_query_sql(
    missing: list,
    query_set: str,
    empty: list | None,
    by_presence: bool,
    length: str | None,
    bogus: bool = False,
) -> str:
    """Every expected query in long form. A query without a row in `wide` gets the measure's
    `missing` value, or its `empty` value (when given) if the run has it but -J or -M emptied it.
    `by_presence`: `wide` may lack answered queries, so the intersection is taken on `present`.
    `length`: the `num_ret` of a query without a row in `wide` (None if no measure reads it).
    `bogus`: queries the run lacked were ranked as trec_eval -c ranks them; reset by name."""
    present = "EXISTS (SELECT 1 FROM present p WHERE p.run = e.run AND p.qid = e.qid)"
    columns = {}
    for i, (expr, kind) in enumerate(missing):
        absent = _typed(expr, kind)
        if empty is not None:
            absent = f"CASE WHEN {present} THEN {_typed(empty[i][0], kind)} ELSE {absent} END"
        columns[f"m{i}"] = f"CASE WHEN w.qid IS NULL THEN {absent} ELSE w.m{i} END"
    # The intersection is taken on the run as given, before -J, -M or the judged-rows plan.
    intersection = query_set == "intersection"
    join = "JOIN" if intersection and not by_presence else "LEFT JOIN"
    where = f"WHERE {present}" if intersection and by_presence else ""
    num_ret = "" if length is None else f", {length} AS num_ret"
    lengths = "" if length is None else " LEFT JOIN present p ON p.run = runs.run AND p.qid = f.qid"
    # Both columns always: the table's shape never depends on which metrics a spec names.
    picks = {kind: _pick(missing, kind) for kind in _COLUMN}
    if bogus:
        picks = {kind: _reset_bogus(kind, pick) for kind, pick in picks.items()}
    cells = "".join(f",\n    {pick} AS {_COLUMN[kind]}" for kind, pick in picks.items())
    flag = _BOGUS_FLAG if bogus else ""
    return f"""
CREATE TABLE per_query AS
WITH expected AS (
    SELECT runs.ordinal, runs.run, f.*{num_ret}
    FROM runs JOIN facts f USING (collection){lengths}
),
filled AS (
    SELECT e.ordinal, e.run, e.collection, e.qid{flag}{select_list(columns)}
    FROM expected e {join} wide w ON w.run = e.run AND w.qid = e.qid
    {where}
)
SELECT f.run, f.collection, f.qid, m.metric{cells}
FROM filled f CROSS JOIN metrics m
ORDER BY f.ordinal, f.qid, m.ordinal"""


_COLUMN = {"number": "value", "text": "text"}


def _pick(missing: list[tuple[str, str]], kind: str) -> str:
    """The column of each metric's ordinal, for the metrics of one kind."""
    whens = " ".join(f"WHEN {i} THEN f.m{i}" for i, (_, k) in enumerate(missing) if k == kind)
    return f"CASE m.ordinal {whens} END" if whens else _typed("NULL", kind)


# trec_eval -c evaluates a query missing from the run as a one-document ranking that is not in
# the pool; doing the same gives its values by construction. The batch's runs are in run_rows.
BOGUS_DOCNO = "ceci_nest_pas_un_docno"
BOGUS_ROWS = [
    Statement("""
CREATE OR REPLACE TEMP TABLE batch_bogus AS
SELECT r.run, f.qid
FROM (SELECT DISTINCT run FROM run_rows) r JOIN runs USING (run) JOIN facts f USING (collection)
ANTI JOIN present p ON p.run = r.run AND p.qid = f.qid"""),
    Statement("INSERT INTO bogus SELECT * FROM batch_bogus"),
    Statement(
        "INSERT INTO run_rows SELECT run, qid, ?, 1, 1.0, true FROM batch_bogus", [BOGUS_DOCNO]
    ),
    # The bogus ranking makes the query answered, as trec_eval evaluates it (-J can empty it).
    Statement("INSERT INTO present SELECT run, qid, 1 FROM batch_bogus"),
]
_BOGUS_FLAG = (
    ",\n        EXISTS (SELECT 1 FROM bogus b WHERE b.run = e.run AND b.qid = e.qid) AS bogus"
)
#: trec_eval -c then resets these values of a bogus query, by exact name (a quirk it has)
RESET_BY_NAME = ("num_ret", "utility", "rbp_resid")


def _reset_bogus(kind: str, pick: str) -> str:
    if kind == "text":
        return f"CASE WHEN f.bogus AND m.metric = 'relstring' THEN '' ELSE {pick} END"
    names = ", ".join(f"'{name}'" for name in RESET_BY_NAME)
    reset = f"m.metric IN ({names}) OR starts_with(m.metric, 'unj')"
    return f"CASE WHEN f.bogus AND ({reset}) THEN 0 ELSE {pick} END"


def aggregate_sql(bogus: bool = False) -> str:
    """The aggregate table; with trec_eval -c's bogus rankings, `num_rel` is the number of qrels
    lines with a grade > 0, whatever the relevance level (trec_eval's summary does this)."""
    value = _AGGREGATED
    if bogus:
        num_rel = "(SELECT count(*) FROM qrels q WHERE q.collection = p.collection AND q.rel > 0)"
        value = f"CASE WHEN p.metric = 'num_rel' THEN {num_rel} ELSE {value} END"
    return f"""
CREATE TABLE aggregate AS
SELECT p.run, p.collection, p.metric, {value} AS value, count(p.value) AS n_queries
FROM per_query p
JOIN metrics m USING (metric)
JOIN runs USING (run)
WHERE m.aggregator <> 'none'
GROUP BY runs.ordinal, p.run, p.collection, p.metric, m.ordinal, m.aggregator
ORDER BY runs.ordinal, m.ordinal"""


# trec_eval sums in query order; so does this, so that means print the same to the last digit.
_AGGREGATED = """CASE m.aggregator
        WHEN 'sum' THEN sum(p.value ORDER BY p.qid)
        WHEN 'gmean' THEN exp(sum(ln(greatest(p.value, 1e-5)) ORDER BY p.qid) / count(p.value))
        ELSE sum(p.value ORDER BY p.qid) / count(p.value)
    END"""
