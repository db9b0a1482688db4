"""Memory stays bounded: a 1.1M-line run evaluates under a DuckDB memory limit with spilling turned
off, so that any step holding much more than the run's rows (a sort of every row at once, a hash
table of every (run, qid, docno), the full ranking chosen for sparse judgments) fails here instead
of doubling the peak of a 7M-line run unnoticed. No time is measured: the limit is DuckDB's own
accounting, the same on every machine.

Two shapes: MS MARCO's (a few judgments a query: only judged rows are ranked) and a TREC track's
pooled qrels (hundreds a query: every row is sorted, in slices of queries)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import yaml

from pipeline import SpecError
from pipeline.engines.duckdb import executor as execute
from pipeline.run.evaluation import evaluate

QUERIES, DEPTH = 1000, 1100  # 1.1M run lines: ranked in full, three slices (SLICE_ROWS 2^19)
# (judged documents per query: ranks whose documents the qrels judge, memory limit) per shape;
# each limit is below what the shape took before its fix.
SHAPES = {
    # judged rows ranked: needs 90MB; ranked in full, as before the fix, over 150MB
    "sparse": ("r % 331 = 7", "100MB"),
    # every row sorted in two slices: needs 195MB; all at once, as before the fix, 225MB
    "pooled": ("r <= 300 AND hash(d) % 5 <> 0", "210MB"),
}


def _write(directory: Path, judged: str) -> Path:
    """A 1.1M-line run (ties on every 20th score) and qrels judging the documents `judged` picks
    (`r` the rank, `d` the docno), plus 3 relevant documents a query that no run retrieved."""
    con = duckdb.connect()
    rows = f"""SELECT q::VARCHAR AS qid, 'D' || (q * 7919 + r * 104729) % 100000000 AS d, r,
        round(100 - r * 0.05 + CASE WHEN r % 20 = 0 THEN 0.05 ELSE 0 END, 2) AS score
        FROM range({QUERIES}) a(q), range(1, {DEPTH} + 1) b(r)"""
    run, qrels = directory / "run.txt", directory / "qrels.txt"
    con.execute(f"COPY (SELECT qid, 'Q0', d, r, score, 'bm25' FROM ({rows})) TO '{run}' "
                "(DELIMITER ' ', HEADER false, QUOTE '')")  # fmt: skip
    con.execute(f"""COPY (SELECT qid, 0, d, hash(d) % 3 FROM ({rows}) WHERE {judged}
        UNION ALL SELECT q::VARCHAR, 0, 'unretrieved' || i, 1 FROM range({QUERIES}) a(q), range(3) b(i))
        TO '{qrels}' (DELIMITER ' ', HEADER false, QUOTE '')""")  # fmt: skip
    return directory


def _spec(directory: Path, limit: str) -> Path:
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": ["AP", "P@10", "R@100", "RR", "nDCG@10"],
        "settings": {"memory_limit": limit},
    }
    path = directory / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture
def without_spilling(monkeypatch):
    """DuckDB's limit as a hard one: with no temporary directory, nothing spills to disk."""
    connection = execute.connection

    def hard(memory_limit: str | None, threads: int | None = None) -> duckdb.DuckDBPyConnection:
        con = connection(memory_limit, threads)
        con.execute("SET temp_directory = ''")
        return con

    monkeypatch.setattr(execute, "connection", hard)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_million_line_run_evaluates_within_its_memory_limit(shape, tmp_path, without_spilling):
    judged, limit = SHAPES[shape]
    done = evaluate(_spec(_write(tmp_path, judged), limit), write=False)
    values = {metric: (value, n) for _, _, metric, value, n in done.aggregate()}
    assert {n for _, n in values.values()} == {QUERIES}
    assert 0 < values["AP"][0] < 1 and 0 < values["nDCG@10"][0] < 1  # judged documents ranked


def test_the_limit_binds_without_spilling(tmp_path, without_spilling):
    """The premise: with spilling off, too small a limit fails (else the tests above prove
    nothing)."""
    spec = _spec(_write(tmp_path, SHAPES["sparse"][0]), "40MB")
    with pytest.raises(SpecError, match="40MB is too little for DuckDB"):
        evaluate(spec, write=False)
