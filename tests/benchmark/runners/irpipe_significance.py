"""The cost of comparing runs, apart from evaluating them: every pair of R runs on M metrics and
Q queries, compared by the randomization test (and any other tests asked for).

Per-query values are generated (a beta-distributed "skill" per run, plus noise, some values tied
on a grid as P@10's are), loaded into an in-memory DuckDB as irpipe's `per_query` and `runs`
tables, and compared by `compare_runs`, the step `irpipe run` takes after evaluating: values out
of DuckDB, every comparison, the corrections, the `comparison` table written back.

Usage: irpipe_significance.py [RUNS METRICS QUERIES SAMPLES TESTS]   (default 100 5 50 100000
randomization). Prints the seconds compare_runs took (wall and CPU) and the number of
comparisons.
"""

from __future__ import annotations

import sys
import time

import duckdb
import numpy as np

from pipeline.compare.plan import ComparePlan
from pipeline.compare.table import compare_runs


def per_query(runs: int, metrics: int, queries: int, seed: int = 2026) -> np.ndarray:
    """values[metric, run, query] in [0, 1]; every other metric on a grid of tenths (ties)."""
    rng = np.random.default_rng(seed)
    skill = rng.beta(2, 5, size=(1, runs, 1))
    difficulty = rng.beta(2, 2, size=(1, 1, queries))
    noise = rng.normal(0, 0.15, size=(metrics, runs, queries))
    values = np.clip(skill + difficulty - 0.5 + noise, 0, 1)
    values[::2] = np.round(values[::2] * 10) / 10
    return values


def database(values: np.ndarray) -> duckdb.DuckDBPyConnection:
    """irpipe's `runs` and `per_query` tables holding `values`."""
    metrics, runs, queries = values.shape
    con = duckdb.connect()
    con.execute("CREATE TABLE runs AS SELECT unnest(range($n)) AS ordinal, 'run' || ordinal AS run, 'c' AS collection", {"n": runs})  # fmt: skip
    m, r, q = (a.ravel().tolist() for a in np.indices(values.shape))
    con.execute(
        "CREATE TABLE per_query AS SELECT 'run' || unnest($r) AS run, 'c' AS collection, "
        "lpad(unnest($q)::VARCHAR, 3, '0') AS qid, 'M' || unnest($m) AS metric, "
        "unnest($v) AS value, NULL::VARCHAR AS text",
        {"r": r, "q": q, "m": m, "v": values.ravel().tolist()},
    )
    return con


def main(runs=100, metrics=5, queries=50, samples=100_000, tests="randomization") -> None:
    values = per_query(int(runs), int(metrics), int(queries))
    con = database(values)
    names = tuple(f"run{i}" for i in range(int(runs)))
    plan = ComparePlan(None, tuple(tests.split(",")), "holm", 0.05, int(samples), 0, None,
                       tuple((f"M{i}", "mean") for i in range(int(metrics))), (("c", names),))  # fmt: skip
    start, cpu = time.perf_counter(), time.process_time()
    compare_runs(con, plan, "compare")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = con.execute("SELECT count(*) FROM comparison").fetchone()[0]
    print(f"seconds {seconds:.3f}\ncpu {cpu:.3f}\ncomparisons {rows}")


if __name__ == "__main__":
    main(*sys.argv[1:])
