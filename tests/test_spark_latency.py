"""Runs' times on the Spark engine (`runs.NAME.latency`): each query's median time, the Latency
statistics and QPS the same doubles as on DuckDB on generated times; every bad latency file
refused in the DuckDB engine's words, file and line; part files and Parquet; a gate on p95
latency failing a slower build as on DuckDB. Spark runs as in test_engine_spark.py (the `spark`
fixture in conftest.py; helpers in spark_support.py); the DuckDB engine's own tests of the same
inputs are tests/test_latency.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import collection_spec, irpipe_inprocess
from spark_support import same_error, same_tables, spec_file
from test_latency import BAD_LATENCY, one_run_spec

from pipeline.errors import InputDataError
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate
from pipeline.synthetic_latency import generate_latency, write_latency

#: every statistic of runs' times (pipeline/metrics/latency.py)
STATS = ("median", "p90", "p95", "p99", "max")
LATENCY_METRICS = ["Latency", *(f"Latency(stat={s})" for s in STATS), "QPS"]


def timed_spec(tmp_path: Path, seed: int, runs: int = 6) -> dict:
    """A generated collection (`collection_spec`) whose runs have generated times
    (`pipeline.synthetic_latency`), every other run's in microseconds under PISA's header: up to
    four repetitions a query (medians), some queries untimed, times tied between queries and
    between a query's repetitions; the last run answers one query, timed once."""
    data = generate(seed, queries=30, runs=runs)
    last = f"run{runs - 1}"
    qid = next(q for q, docs in data.runs[last].items() if set(docs) & set(data.qrels.get(q, ())))
    data.runs[last] = {qid: data.runs[last][qid]}
    spec = collection_spec(tmp_path, data, [*LATENCY_METRICS, "nDCG@10"], spark={"partitions": 3})
    for i, (name, run) in enumerate(data.runs.items()):
        times = generate_latency(seed + i, list(run), 4.0 * (i + 1), repetitions=4, untimed=0.2)
        qids = list(times)
        for a, b in zip(qids[:6:2], qids[1:6:2], strict=False):
            times[b] = list(times[a])  # queries of equal times
        if qids:
            times[qids[-1]] = times[qids[-1]][:1] * 3  # repetitions of equal times
        if name == last:
            times = {qid: times.get(qid, [7.5])[:1]}
        write_latency(times, tmp_path / f"{name}.latency", ("ms", "usec")[i % 2])
        spec["runs"][name]["latency"] = f"{name}.latency"
    return spec


def test_runs_times_give_the_same_latency_and_qps(spark, tmp_path):
    """Ten runs' generated times (`timed_spec`: milliseconds and PISA's microseconds,
    repetitions, ties, untimed queries, a run of one query) on three shards: each query's median time, and the
    mean, median, percentiles, max and QPS over them, the same doubles as on DuckDB; at scale
    (`spark.per_query`), the statistics computed on the workers too."""
    spec = timed_spec(tmp_path, 3, runs=10)
    same_tables(spec, tmp_path)
    spec["spark"]["per_query"] = str(tmp_path / "per_query")
    same_tables(spec, tmp_path, ("aggregate",))


def test_bad_latency_files_are_refused_in_the_same_words(spark, tmp_path):
    """Each bad latency file of tests/test_latency.py (a time that is not a number, negative,
    infinite; a short line; a second header; queries the run does not answer, the first named
    whichever shard holds it, at scale too; no time at all): the DuckDB engine's error, file and
    line."""
    for latency, said in BAD_LATENCY:
        path = one_run_spec(tmp_path, latency)
        same_error(path, re.escape(said))
    scale = {**yaml.safe_load(path.read_text()), "spark": {"per_query": str(tmp_path / "pq")}}
    latency, said = next(case for case in BAD_LATENCY if "does not answer" in case[1])
    same_error(spec_file(one_run_spec(tmp_path, latency), scale), re.escape(said))


def test_latency_in_part_files_and_parquet(spark, tmp_path):
    """A latency input of part files names the part and line of a query its run does not
    answer; as Parquet (`qid`, `ms`), good times give DuckDB's values, a negative one is a bad
    row."""
    spec = {
        **yaml.safe_load(one_run_spec(tmp_path, "").read_text()),
        "settings": {"engine": "spark"},
    }
    (tmp_path / "r.latency").unlink()
    (tmp_path / "r.latency").mkdir()
    for i, part in enumerate(("q1 3\nq2 4\n", "# q9\nq2 2\nq9 1\n")):
        (tmp_path / "r.latency" / f"part-{i}").write_text(part)
    with pytest.raises(InputDataError, match=r"r.latency/part-1:3: query 'q9' is timed, and"):
        evaluate(spec_file(tmp_path / "spec.yaml", spec), write=False)
    spec["runs"]["r"]["latency"] = "r.parquet"
    for second, said in ((1.25, None), (-1.0, "r.parquet: a row .*the time must not be negative")):
        duckdb.sql(f"COPY (SELECT * FROM (VALUES ('q1', 3.5), ('q2', {second})) t(qid, ms)) "
                   f"TO '{tmp_path / 'r.parquet'}' (FORMAT parquet)")  # fmt: skip
        if said is None:
            same_tables(spec, tmp_path, ("aggregate",))
            continue
        with pytest.raises(InputDataError, match=said):
            evaluate(spec_file(tmp_path / "spec.yaml", spec), write=False)


def test_a_gate_on_p95_latency_fails_on_spark_as_on_duckdb(spark, tmp_path):
    """One ranking timed by two builds, the candidate's times 30% longer: a gate on
    Latency(stat=p95) against the release fails the candidate on Spark as on DuckDB (exit 5,
    the same report of the checks); within a larger max_drop it passes on both."""
    data = generate(5, queries=30, runs=1)
    fast = generate_latency(1, list(data.runs["run0"]), 10.0, repetitions=3)
    write_latency(fast, tmp_path / "fast.latency", "usec")
    write_latency({q: [t * 1.3 for t in ts] for q, ts in fast.items()}, tmp_path / "slow.latency")
    spec = collection_spec(tmp_path, data, ["nDCG@10", "Latency(stat=p95)"])
    spec["runs"] = {name: {"path": "run0.txt", "collection": "c", "latency": f"{speed}.latency"}
                    for name, speed in (("release", "fast"), ("candidate", "slow"))}  # fmt: skip
    for drop, code in ((0.5, 5), (1e6, 0)):
        spec["gates"] = [{"metric": "Latency(stat='p95')", "max_drop": drop,
                          "against": {"run": "release"}}]  # fmt: skip
        spec_file(tmp_path / "spec.yaml", spec)
        said = [irpipe_inprocess("run", "--engine", engine, "spec.yaml", cwd=tmp_path)
                for engine in ("duckdb", "spark")]  # fmt: skip
        assert [s.returncode for s in said] == [code, code], said[1].stderr
        assert said[1].stdout == said[0].stdout  # the summary: the same values
        assert _checks(said[1].stderr) == _checks(said[0].stderr)
        assert ("candidate" in "".join(_checks(said[1].stderr))) == bool(code)


def _checks(printed: str) -> list[str]:
    """The lines of a run's report of its checks that name the gate's metric."""
    return [line for line in printed.splitlines() if "Latency(stat='p95')" in line]
