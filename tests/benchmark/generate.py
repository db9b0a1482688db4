"""Deterministic MS MARCO-dev-like benchmark data (fixed seed, numpy); never committed.

`rows` run lines = queries × 1,000 documents (7M ≈ MS MARCO dev's 6,980 queries). Docnos look like
`D1234567`; qrels are graded 0–3 with a few judgments per query: some judged documents are not
retrieved, most retrieved ones are unjudged. About 5% of rows tie on score with their neighbour.

Pooled qrels (`write_pooled_qrels`) judge the same run's queries as a TREC pool would: about 15
documents a query, most of them from the top of the ranking, graded 0-3 with a few negatives.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

DEPTH = 1000
SIZES = {"1M": 1_000_000, "3.5M": 3_500_000, "7M": 6_980_000, "14M": 13_960_000}


def write_collection(
    directory: Path, rows: int, runs: int = 1, seed: int = 42
) -> tuple[Path, list[Path]]:
    """Write qrels.txt and run{i}.trec into `directory` (skipped if already there); return paths."""
    directory.mkdir(parents=True, exist_ok=True)
    queries = rows // DEPTH
    qrels = directory / "qrels.txt"
    run_paths = [directory / f"run{i}.trec" for i in range(runs)]
    rng = np.random.default_rng(seed)
    offsets = rng.integers(1_000_000, 9_000_000, size=queries)
    steps = rng.integers(1, 900, size=queries)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    if not qrels.exists():
        _write(con, _qrels_table(rng, offsets, steps), qrels)
    for i, path in enumerate(run_paths):
        if not path.exists():
            _write(
                con,
                _run_table(np.random.default_rng(seed + 1 + i), offsets, steps, f"run{i}"),
                path,
            )
    return qrels, run_paths


#: Pooled judgments a query: from the top POOL_TOP positions (before dedup), and from anywhere.
POOL_TOP, POOL_DRAWS, DEEP_DRAWS = 60, (9, 18), (0, 7)


def write_pooled_qrels(directory: Path, rows: int, seed: int = 42) -> Path:
    """pooled_qrels.txt beside write_collection's run files of the same `rows` and `seed`."""
    path = directory / "pooled_qrels.txt"
    if not path.exists():
        rng = np.random.default_rng(seed)  # the run's offsets and steps, drawn as it drew them
        offsets = rng.integers(1_000_000, 9_000_000, size=rows // DEPTH)
        steps = rng.integers(1, 900, size=rows // DEPTH)
        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")
        _write(con, _pooled_table(np.random.default_rng(seed + 1000), offsets, steps), path)
    return path


def _pooled_table(rng, offsets, steps) -> pa.Table:
    """Each query's pool: positions near the top of its ranking (the run shuffles positions by
    at most 50 ranks), a few from anywhere (some never retrieved); top ones more often relevant."""
    queries = len(offsets)
    top = rng.integers(*POOL_DRAWS, size=queries)
    deep = rng.integers(*DEEP_DRAWS, size=queries)
    judged = top + deep
    qid = np.repeat(np.arange(queries) * 3 + 2, judged)
    first = np.repeat(np.cumsum(judged) - judged, judged)
    is_top = np.arange(qid.size) - first < np.repeat(top, judged)
    position = np.where(
        is_top, rng.integers(0, POOL_TOP, size=qid.size), rng.integers(0, 1300, size=qid.size)
    )
    docno = _docnos(np.repeat(offsets, judged), np.repeat(steps, judged), position)
    grades = [-1, 0, 1, 2, 3]
    grade = np.where(
        is_top,
        rng.choice(grades, p=[0.03, 0.37, 0.3, 0.17, 0.13], size=qid.size),
        rng.choice(grades, p=[0.03, 0.82, 0.15, 0.0, 0.0], size=qid.size),
    )
    return pa.table(
        {"qid": qid, "iter": np.zeros(qid.size, dtype=int), "docno": docno, "rel": grade}
    )


def _docnos(offsets: np.ndarray, steps: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    # Distinct within a query: offset + rank × step with rank < 1000 and step ≥ 1.
    return offsets + ranks * steps


def _run_table(rng, offsets, steps, tag: str) -> pa.Table:
    queries = len(offsets)
    qid = np.repeat(np.arange(queries) * 3 + 2, DEPTH)
    rank0 = np.tile(np.arange(DEPTH), queries)
    # Each run shuffles the document order locally (a permutation per query), so runs differ.
    keys = rank0 + rng.uniform(0, 50, size=rank0.size)
    slot = np.lexsort((keys, np.repeat(np.arange(queries), DEPTH))) % DEPTH
    docno = _docnos(np.repeat(offsets, DEPTH), np.repeat(steps, DEPTH), slot)
    score = np.round(40.0 - rank0 * 0.025 + rng.normal(0, 0.002, size=rank0.size), 4)
    tied = rng.random(rank0.size) < 0.05
    tied[rank0 == 0] = False
    score[tied] = score[np.flatnonzero(tied) - 1]
    return pa.table(
        {
            "qid": qid,
            "q0": np.full(qid.size, "Q0"),
            "docno": np.char.add("D", docno.astype(str)),
            "rank": rank0 + 1,
            "score": score,
            "tag": np.full(qid.size, tag),
        }
    )


def _qrels_table(rng, offsets, steps) -> pa.Table:
    queries = len(offsets)
    judged = rng.integers(1, 7, size=queries)
    qid = np.repeat(np.arange(queries) * 3 + 2, judged)
    # Judged documents: uniform over 1,300 positions, so about 23% are never retrieved (>= 1000).
    position = rng.integers(0, 1300, size=qid.size)
    docno = _docnos(np.repeat(offsets, judged), np.repeat(steps, judged), position)
    grade = rng.choice([0, 1, 1, 2, 3], size=qid.size)
    table = pa.table(
        {"qid": qid, "iter": np.zeros(qid.size, dtype=int), "docno": docno, "rel": grade}
    )
    return table


def _write(con: duckdb.DuckDBPyConnection, table: pa.Table, path: Path) -> None:
    con.register("t", table)
    columns = "*" if "q0" in table.column_names else "qid, iter, 'D' || docno, rel"
    # Judged positions can repeat within a query; keep one judgment per (qid, docno).
    source = "t" if "q0" in table.column_names else "(SELECT DISTINCT ON (qid, docno) * FROM t)"
    temp = path.with_suffix(path.suffix + ".tmp")
    con.execute(
        f"COPY (SELECT {columns} FROM {source}) TO ? (FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '')",
        [str(temp)],
    )
    con.unregister("t")
    temp.rename(path)
