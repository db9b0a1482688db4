"""The SQL of the columns over subtopic judgments that diversity measures declare
(`pipeline.contract.subtopics`). Pure, no I/O; `tables` and `ranking` embed it.

Before any run is read (`setup`), per relevance level and per ideal ranking:
  subtopic_relevant_L   the (collection, qid, subtopic, docno) pairs relevant at level L, each
                        with `nrel`, the documents relevant to its subtopic
  div_ideal_*           ndeval's greedy ideal ranking (`ideal_sql`), as rows (pos, gain)
and the facts they give each query, joined into `facts` (`facts_with_subtopics`). Around the
ranking (`ranking_ctes`, `ranking_columns`): each ranked row joined to its relevant subtopics,
each pair with `seen` (the documents ranked above covering that subtopic), aggregated back per
row into the columns declared, 0 for a row with no relevant subtopic.
"""

from __future__ import annotations

from pipeline.contract.columns import Requirements, grade_literal
from pipeline.contract.needs import level_tag
from pipeline.contract.subtopics import SubtopicIdeal, SubtopicNeed, novelty_factor, relevant_table
from pipeline.sql import Statement

__all__ = ["facts_with_subtopics", "ideal_sql", "ranking_columns", "ranking_ctes", "setup"]


def _row_needs(req: Requirements) -> dict[str, list[SubtopicNeed]]:
    """The per-row subtopic needs, by their level's tag (`level_tag`: the name the level's
    tables and columns carry; 1 and 1.0 are two names, each built)."""
    found: dict[str, list[SubtopicNeed]] = {}
    for need in req.needs:
        if isinstance(need, SubtopicNeed) and need.kind == "subtopic":
            found.setdefault(level_tag(need.level), []).append(need)
    return found


def _levels(req: Requirements) -> list[int | float]:
    """Every level a subtopic need reads the relevant pairs at, once per name."""
    found: dict[str, int | float] = {}
    for need in req.needs:
        if isinstance(need, SubtopicNeed | SubtopicIdeal):
            found.setdefault(level_tag(need.level), need.level)
    return list(found.values())


def setup(req: Requirements) -> list[Statement]:
    """The relevant pairs of each level, then each ideal ranking (the deepest of a level and
    alpha built, the others its first ranks)."""
    statements = [Statement(_relevant_sql(level)) for level in _levels(req)]
    ideals = [n for n in req.needs if isinstance(n, SubtopicIdeal)]
    deepest: dict[str, SubtopicIdeal] = {}
    for ideal in ideals:
        known = deepest.get(ideal.family)
        deepest[ideal.family] = ideal if known is None else max(known, ideal, key=_reach)
    statements += [Statement(f"CREATE TABLE {i} AS {ideal_sql(i)}") for i in deepest.values()]
    for ideal in ideals:
        built = deepest[ideal.family]
        if ideal != built:
            view = f"CREATE VIEW {ideal} AS SELECT * FROM {built} WHERE pos <= {int(ideal.depth)}"
            statements.append(Statement(view))
    return statements


def _reach(ideal: SubtopicIdeal) -> float:
    """How many ranks an ideal ranking holds (every one that gains: no bound)."""
    return float("inf") if ideal.depth is None else ideal.depth


def _relevant_sql(level: int | float) -> str:
    # ndeval reads every grade above 1 as 1: a pair counts once it reaches the level (a decimal
    # level, and decimal grades, under `grades: real`).
    return f"""
CREATE TABLE {relevant_table(level)} AS
SELECT collection, qid, subtopic, docno,
    count(*) OVER (PARTITION BY collection, qid, subtopic) AS nrel
FROM subtopic_qrels WHERE rel >= {grade_literal(max(level, 0))}"""


def ideal_sql(ideal: SubtopicIdeal) -> str:
    """ndeval's greedy ideal ranking as SQL, every query at once: a recursive CTE adds one rank
    per step to each query still gaining, the document of the highest novelty gain given the
    subtopics covered so far (a tie to the greatest docno, as ndeval's strcmp), until no
    document adds gain (or `depth` ranks). Documents and subtopics are numbered per query, so
    that the state is two short lists: how often each subtopic is covered, which documents are
    placed."""
    factor = novelty_factor(ideal.alpha)
    depth = "" if ideal.depth is None else f" AND g.pos < {int(ideal.depth)}"
    # ndeval's arithmetic to the last bit, so that its ties are ties here: a subtopic's gain
    # multiplied by 1 - alpha at each cover (not pow), a score summed in subtopic order.
    gains = "list_transform(d.subs, lambda s: powers.p[g.seen[s] + 1])"
    score = f"list_reduce({gains}, lambda a, b: a + b)"
    return f"""
WITH RECURSIVE products AS (
    SELECT 0 AS n, CAST(1.0 AS DOUBLE) AS g
    UNION ALL
    SELECT n + 1, g * {factor} FROM products
    WHERE n < (SELECT coalesce(max(nrel), 0) FROM {relevant_table(ideal.level)})
),
powers AS (SELECT list(g ORDER BY n) AS p FROM products),
numbered AS (
    SELECT collection, qid, docno,
        dense_rank() OVER (PARTITION BY collection, qid ORDER BY subtopic) AS s
    FROM {relevant_table(ideal.level)}
),
docs AS (
    SELECT collection, qid, docno, list(s ORDER BY s) AS subs,
        row_number() OVER (PARTITION BY collection, qid ORDER BY docno) AS idx
    FROM numbered GROUP BY collection, qid, docno
),
greedy AS (
    SELECT collection, qid, 0 AS pos, NULL::DOUBLE AS gain,
        list_transform(range(max(list_max(subs))), lambda i: 0) AS seen,
        list_transform(range(count(*)), lambda i: false) AS placed
    FROM docs GROUP BY collection, qid
    UNION ALL
    SELECT collection, qid, pos + 1, best.score,
        list_transform(range(1, len(seen) + 1),
                       lambda i: seen[i] + CAST(list_contains(best.subs, i) AS INTEGER)),
        list_transform(range(1, len(placed) + 1), lambda i: placed[i] OR i = best.idx)
    FROM (
        SELECT g.collection, g.qid, any_value(g.pos) AS pos, any_value(g.seen) AS seen,
            any_value(g.placed) AS placed,
            arg_max({{'score': {score}, 'idx': d.idx, 'subs': d.subs}},
                    {{'score': {score}, 'docno': d.docno}}) AS best
        FROM greedy g
        JOIN docs d ON d.collection = g.collection AND d.qid = g.qid AND NOT g.placed[d.idx]{depth}
        CROSS JOIN powers
        GROUP BY g.collection, g.qid
    )
    WHERE best.score > 0
)
SELECT collection, qid, pos, gain FROM greedy WHERE pos > 0"""


def facts_with_subtopics(facts: str, req: Requirements) -> str:
    """`facts` (a SELECT of one row per query) with the subtopic facts declared, each an
    aggregate over its source's rows per query, 0 for a query without any."""
    needs = [n for n in req.needs if isinstance(n, SubtopicNeed) and n.kind == "subtopic_fact"]
    if not needs:
        return facts
    sources = list(dict.fromkeys(n.source for n in needs))
    columns = "".join(f",\n    coalesce(s{sources.index(n.source)}.{n}, 0) AS {n}" for n in needs)
    joins = "".join(_fact_join(i, source, needs) for i, source in enumerate(sources))
    return f"SELECT f.*{columns}\nFROM ({facts}\n) f{joins}"


def _fact_join(i: int, source: str, needs: list[SubtopicNeed]) -> str:
    aggregates = ", ".join(f"{n.sql} AS {n}" for n in needs if n.source == source)
    return f"""
LEFT JOIN (SELECT collection, qid, {aggregates} FROM {source} GROUP BY collection, qid) s{i}
    USING (collection, qid)"""


def ranking_ctes(req: Requirements, source: str = "windowed") -> str:
    """CTEs after `source` (`windowed`, or the condensed ranking's `condensed_windowed`): per
    level, each ranked row's relevant subtopics with `seen` and `nrel`, then the declared
    columns per row (`subtopic_rows_L`, prefixed by the ranking's name)."""
    ctes = ""
    for tag, needs in _row_needs(req).items():
        columns = "".join(f",\n        {n.sql} AS {n}" for n in needs)
        novelty, rows = _cte(source, "novelty", tag), _cte(source, "subtopic_rows", tag)
        ctes += f""",
{novelty} AS (
    SELECT w.run, w.collection, w.qid, w.rank, s.subtopic, s.nrel, count(*) OVER (
            PARTITION BY w.run, w.collection, w.qid, s.subtopic ORDER BY w.rank
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS seen
    FROM {source} w JOIN {relevant_table(needs[0].level)} s
        ON s.collection = w.collection AND s.qid = w.qid AND s.docno = w.docno
),
{rows} AS (
    SELECT run, collection, qid, rank{columns}
    FROM {novelty} GROUP BY run, collection, qid, rank
)"""
    return ctes


def ranking_columns(req: Requirements, source: str = "windowed") -> tuple[dict[str, str], str]:
    """The per-row subtopic columns of the ranking over `source` ({name: SQL}, 0 for a row
    without relevant subtopics) and the joins (to `source w`) that give them. Each is read
    through the ranking's window `by_rank` (the row's own value): a join's rows come out in an
    order the threads decide, and the measures' sums over them would differ in their last bits
    from one run to the next; a window gives each query's rows in rank order, as `windowed`'s
    does for every other measure."""
    columns, joins = {}, ""
    for tag, needs in _row_needs(req).items():
        alias = f"sr_{tag}"
        columns |= {str(n): f"last_value(coalesce({alias}.{n}, 0)) OVER by_rank" for n in needs}
        joins += f"""
    LEFT JOIN {_cte(source, "subtopic_rows", tag)} {alias}
        ON {alias}.run = w.run AND {alias}.collection = w.collection AND {alias}.qid = w.qid
            AND {alias}.rank = w.rank"""
    return columns, joins


def _cte(source: str, name: str, tag: str) -> str:
    """The name of a subtopic CTE of the ranking over `source` at the level tagged `tag`: the
    condensed ranking's (`condensed_windowed`) apart from the ranking's."""
    prefix = "" if source == "windowed" else f"{source.removesuffix('_windowed')}_"
    return f"{prefix}{name}_{tag}"
