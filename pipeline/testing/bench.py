"""The kit's hard collections, evaluated by irpipe and ranked again in Python for references.

`collections` collections from `pipeline.synthetic.generate` (seeds seed, seed+1, ...) are merged
into one (each query id prefixed by its seed) and written once, as TREC files, in a temporary
directory: one qrels file and each run twice, as generated and with the rows of every group of tied
scores in reverse file order (ranks renumbered). Evaluations go through the real path (a YAML spec,
`pipeline.run.evaluation.validate`, `pipeline.engines.duckdb.executor.execute`), so one evaluation covers every
collection; each is cached by (metrics, settings, plan).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from pathlib import Path
from typing import Any

import yaml

from pipeline.contract.python_measure import Query
from pipeline.plan.sql_plan import SqlPlan
from pipeline.synthetic import generate, write_qrels, write_run

__all__ = ["KIT_SHAPE", "NUM_DOCS", "TIES_REVERSED", "Bench", "Values"]

#: How each collection is generated: `generate(seed, ties=..., **KIT_SHAPE)`.
KIT_SHAPE: dict[str, Any] = {"queries": 12, "runs": 2, "max_grade": 4, "extremes": True}
#: The collection's size (`num_docs` in the spec), for measures that read it.
NUM_DOCS = 100
#: The suffix of a run's copy whose tied rows are in reverse file order.
TIES_REVERSED = "-ties-reversed"
#: The plans an evaluation can be forced to: as irpipe chooses, or the two forms of the judged-rows
#: plan (only judged rows ranked; every row ranked, for batches of mostly judged queries)
PLANS = ("chosen", "judged_rows", "dense")


@dataclass(frozen=True)
class Values:
    """An evaluation's tables: per_query[(run, qid, metric)] = (value, text) and
    aggregate[(run, metric)] = (value, n_queries)."""

    per_query: dict[tuple[str, str, str], tuple[float | None, str | None]]
    aggregate: dict[tuple[str, str], tuple[float | None, int]]


class Bench:
    """The hard collections in a temporary directory (closed by `close` or `with`)."""

    def __init__(self, collections: int = 30, seed: int = 0, ties: bool = True) -> None:
        if collections < 1:
            raise ValueError(f"collections must be at least 1, not {collections}")
        self.ties = ties
        self.qrels: dict[str, dict[str, int]] = {}
        self.runs: dict[str, dict[str, dict[str, float]]] = {}
        self.origin: dict[str, tuple[int, str]] = {}  # merged qid -> (seed, generated qid)
        for s in range(seed, seed + collections):
            self._merge(s, generate(s, ties=ties, **KIT_SHAPE))
        self._dir = tempfile.TemporaryDirectory(prefix="irpipe-kit-")
        self.path = Path(self._dir.name)
        self._write()
        self._cache: dict[tuple, Values] = {}
        self._queries: dict[tuple[str, str], Query] = {}

    def __enter__(self) -> Bench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the files."""
        self._dir.cleanup()

    def _merge(self, seed: int, collection: Any) -> None:
        for qid, judged in collection.qrels.items():
            self.qrels[f"{seed}-{qid}"] = judged
            self.origin[f"{seed}-{qid}"] = (seed, qid)
        for name, run in collection.runs.items():
            merged = self.runs.setdefault(name, {})
            for qid, scores in run.items():
                merged[f"{seed}-{qid}"] = scores
                self.origin.setdefault(f"{seed}-{qid}", (seed, qid))

    def _write(self) -> None:
        write_qrels(self.qrels, self.path / "qrels.txt")
        for name, run in self.runs.items():
            write_run(run, self.path / f"{name}.trec", tag=name)
            _write_ties_reversed(run, self.path / f"{name}{TIES_REVERSED}.trec", tag=name)

    @property
    def run_names(self) -> list[str]:
        """Every run of the spec: each generated run, then its copy with tied rows reversed."""
        return [*self.runs, *(f"{name}{TIES_REVERSED}" for name in self.runs)]

    # -- irpipe's side ---------------------------------------------------------------------------
    def values(
        self,
        metrics: Sequence[str],
        settings: Mapping[str, Any] | None = None,
        plan: str = "chosen",
    ) -> Values:
        """The tables of evaluating every run with `metrics` under `settings`, by `plan` (PLANS)."""
        key = (tuple(metrics), tuple(sorted((settings or {}).items())), plan)
        if key not in self._cache:
            self._cache[key] = self._evaluate(list(metrics), dict(settings or {}), plan)
        return self._cache[key]

    def _evaluate(self, metrics: list[str], settings: dict[str, Any], plan: str) -> Values:
        from pipeline.engines.duckdb.executor import execute
        from pipeline.run.preflight import validate

        con = execute(forced(validate(self._spec(metrics, settings)).sql, plan))
        try:
            rows = con.execute("SELECT run, qid, metric, value, text FROM per_query").fetchall()
            means = con.execute("SELECT run, metric, value, n_queries FROM aggregate").fetchall()
        finally:
            con.close()
        return Values(
            {(r, q, m): (v, t) for r, q, m, v, t in rows}, {(r, m): (v, n) for r, m, v, n in means}
        )

    def _spec(self, metrics: list[str], settings: dict[str, Any]) -> Path:
        runs = {name: {"path": f"{name}.trec", "collection": "kit"} for name in self.run_names}
        spec = {
            "collections": {"kit": {"qrels": "qrels.txt", "num_docs": NUM_DOCS}},
            "runs": runs,
            "settings": settings,
            "metrics": metrics,
        }
        path = self.path / f"spec{len(self._cache)}.yaml"
        path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        return path

    # -- the reference's side --------------------------------------------------------------------
    def ranking(self, run: str, qid: str) -> list[tuple[str, float, int]]:
        """(docno, score, grade) of a run's ranking for a query, in irpipe's default order (score
        descending, then docno descending bytewise); the grade is -1 for a document the qrels do
        not judge, -2 for a negative judgment."""
        docs = self.runs[run.removesuffix(TIES_REVERSED)].get(qid, {})
        judged = self.qrels.get(qid, {})
        ordered = sorted(docs.items(), key=lambda item: item[0].encode(), reverse=True)
        ordered.sort(key=lambda item: item[1], reverse=True)  # stable: ties stay by docno
        return [(docno, score, _grade(judged.get(docno))) for docno, score in ordered]

    def query(self, run: str, qid: str) -> Query:
        """The query as a reference receives it (`pipeline.api.Query`)."""
        if (run, qid) not in self._queries:
            grades = [grade for _, _, grade in self.ranking(run, qid)]
            self._queries[run, qid] = make_query(grades, self.qrels.get(qid, {}).values())
        return self._queries[run, qid]

    def empty(self, qid: str) -> Query:
        """The query with an empty ranking: what a reference receives for a query the run lacks."""
        return make_query([], self.qrels.get(qid, {}).values())

    def answered(self, run: str, qid: str) -> bool:
        """Whether the run retrieves anything for the query."""
        return qid in self.runs[run.removesuffix(TIES_REVERSED)]

    def judged_retrieved(self, run: str, qid: str) -> int:
        """How many retrieved documents have a grade >= 0 (judged_only keeps them)."""
        return sum(grade >= 0 for _, _, grade in self.ranking(run, qid))


def forced(plan: SqlPlan, how: str) -> SqlPlan:
    """The plan as compiled ("chosen"), or with the judged-rows plan's ranking forced to one form:
    only judged rows ("judged_rows") or every row ("dense", for mostly judged batches)."""
    if how == "chosen":
        return plan
    ranking = plan.runs.ranking
    if ranking.dense is None:
        raise ValueError("the plan ranks every row: there is no judged-rows plan to force")
    if how == "judged_rows":
        forced = replace(ranking, dense=None)
    else:
        forced = replace(ranking, statement=ranking.dense, dense=None)
    return replace(plan, runs=replace(plan.runs, ranking=forced))


def make_query(grades: Sequence[int], qrels: Any, level: int = 1) -> Query:
    """A `Query` of ranked grades, the query's qrels grades (sorted highest first here) and a
    relevance level."""
    import numpy as np

    ranked = np.asarray(list(grades), dtype=np.int64)
    judged = np.asarray(sorted(qrels, reverse=True), dtype=np.int64)
    return Query(ranked, ranked >= 0, judged, level)


def _grade(judgment: int | None) -> int:
    """trec_eval's relevance value of a retrieved document (see `Columns`)."""
    if judgment is None:
        return -1
    return -2 if judgment < 0 else judgment


def _write_ties_reversed(run: dict[str, dict[str, float]], path: Path, tag: str) -> None:
    """The run as `write_run` writes it, but each group of tied rows in reverse order, and the
    rank column renumbered in the new file order: only where tied rows sit in the file changes."""
    lines = []
    for qid, docs in run.items():
        ordered = sorted(docs.items(), key=lambda item: -item[1])
        groups = groupby(ordered, key=lambda item: item[1])
        rows = [row for _, group in groups for row in reversed(list(group))]
        lines += [f"{qid} Q0 {d} {i} {s!r} {tag}" for i, (d, s) in enumerate(rows, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
