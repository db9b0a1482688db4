"""Latency beside effectiveness: runs' per-query times (`runs.NAME.latency`, milliseconds or
PISA's microseconds, repetitions counting their median) and the Latency and QPS metrics, against
numpy on generated times with ties, repetitions, untimed queries and queries the run lacks; the
input errors naming file and line; a gate on Latency(stat=p95) failing a slower run."""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest
import yaml
from conftest import collection_spec, irpipe_inprocess

from pipeline.synthetic import generate
from pipeline.synthetic_latency import generate_latency, write_latency

STATS = {
    "median": np.median,
    "p90": lambda v: np.percentile(v, 90),
    "p95": lambda v: np.percentile(v, 95),
    "p99": lambda v: np.percentile(v, 99),
    "max": np.max,
}
METRICS = ["Latency", *(f"Latency(stat={s})" for s in STATS), "QPS"]


def _timed(tmp_path, seed: int, units=("ms", "usec")):
    """A generated collection whose runs have generated times (repetitions, untimed queries,
    ties copied between queries), written beside its spec; and each run's times as numpy
    computes each query's (the median of its repetitions, in milliseconds)."""
    data = generate(seed, queries=40, runs=len(units))
    spec = collection_spec(tmp_path, data, METRICS, outputs=[
        {"path": "out/q.tsv", "level": "query"}, {"path": "out/a.tsv", "level": "aggregate"}])  # fmt: skip
    expected = {}
    for (name, run), unit in zip(data.runs.items(), units, strict=True):
        times = generate_latency(seed, list(run), 20.0, repetitions=4, untimed=0.2)
        qids = list(times)
        for a, b in zip(qids[:6:2], qids[1:6:2], strict=True):
            times[b] = list(times[a])  # queries of equal times
        write_latency(times, tmp_path / f"{name}.latency", unit)
        spec["runs"][name]["latency"] = f"{name}.latency"
        scale = 1000.0 if unit == "usec" else 1.0
        expected[name] = {
            q: np.median([round(t * scale) / scale if scale > 1 else t for t in ts])
            for q, ts in times.items()
            if q in data.qrels
        }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    return data, expected


def _rows(path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.mark.parametrize("seed", [3, 8])
def test_latency_statistics_are_numpys(tmp_path, seed):
    """Each query's latency is numpy's median of its timings (usec read as ms / 1000), none
    for a query untimed or unanswered; median, percentiles and max equal numpy's bit for bit,
    the mean and QPS to 1e-12; n_queries counts the timed queries."""
    data, expected = _timed(tmp_path, seed)
    result = irpipe_inprocess("run", "--quiet", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    per_query = {(r["run"], r["qid"]): r["value"] for r in _rows(tmp_path / "out/q.tsv")
                 if r["metric"] == "Latency"}  # fmt: skip
    for name, times in expected.items():
        for qid in data.qrels:
            shown = per_query[name, qid]
            assert (float(shown) if shown else None) == times.get(qid), (name, qid)
    found = {(r["run"], r["metric"]): r for r in _rows(tmp_path / "out/a.tsv")}
    for name, times in expected.items():
        values = np.array([times[q] for q in sorted(times)])
        for stat, compute in STATS.items():
            row = found[name, f"Latency(stat='{stat}')"]
            assert float(row["value"]) == compute(values), (name, stat)
            assert int(row["n_queries"]) == len(values)
        assert float(found[name, "Latency"]["value"]) == pytest.approx(values.mean(), rel=1e-12)
        qps = len(values) / (values.sum() / 1000)
        assert float(found[name, "QPS"]["value"]) == pytest.approx(qps, rel=1e-12)


def one_run_spec(tmp_path, latency: str, run: str = "q1 Q0 d1 1 2.0 r\nq2 Q0 d1 1 1.0 r\n"):
    """spec.yaml (its path) of one run `r` of queries q1 and q2 timed by `latency`, the text of
    r.latency, with its aggregate Latency(stat=p95) as an output."""
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d1 1\n")
    (tmp_path / "r.txt").write_text(run)
    (tmp_path / "r.latency").write_text(latency)
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "metrics": ["Latency(stat=p95)"],
            "runs": {"r": {"path": "r.txt", "collection": "c", "latency": "r.latency"}},
            "outputs": [{"path": "out/a.tsv", "level": "aggregate"}]}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    return tmp_path / "spec.yaml"


def _one_run(tmp_path, latency: str, run: str = "q1 Q0 d1 1 2.0 r\nq2 Q0 d1 1 1.0 r\n"):
    one_run_spec(tmp_path, latency, run)
    return irpipe_inprocess("run", "--quiet", "spec.yaml", cwd=tmp_path)


#: bad latency files, and what the error says (test_spark_inputs.py: the same on Spark)
BAD_LATENCY = [
    ("q1 3.5\nq2 abc\n", "r.latency:2: the time must be a number, found 'abc'"),
    ("q1 3.5\nq2 -1\n", "r.latency:2: the time must not be negative, found '-1'"),
    ("q1 x\nq2 -1\n", "r.latency:1: the time must be a number, found 'x'"),  # every query's
    ("q1 inf\n", "r.latency:1: the time must be a finite number, found 'inf'"),
    ("q1\n", "r.latency:1: expected 2 fields (qid time), found 1"),
    ("qid usec\nq1 3\nqid ms\n", "r.latency:3: the time must be a number, found 'ms'"),
    ("q1 3\n# q9 4\nq9 4\n", "r.latency:3: query 'q9' is timed, and run 'r' does not answer"),
    ("q1 3\nq9 4\nq8 2\nq8 1\n", "r.latency:3: query 'q8' is timed, and run 'r' does not answer"),
    ("# nothing\n", "r.latency: no data"),
]


@pytest.mark.parametrize(("latency", "said"), BAD_LATENCY)
def test_bad_latency_files_are_refused_by_line(tmp_path, latency, said):
    """A time that is not a number, negative, infinite; a short line; a second header of
    another unit; a query the run does not answer; no time at all: exit 3 naming the file and
    line, nothing written."""
    result = _one_run(tmp_path, latency)
    assert result.returncode == 3, result.stderr
    assert said in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_header_names_microseconds(tmp_path):
    """`qid usec` (PISA's) reads each time as microseconds; without it, milliseconds."""
    assert _one_run(tmp_path, "qid\tusec\nq1 1500\nq2 2500\n").returncode == 0
    (row,) = _rows(tmp_path / "out/a.tsv")
    assert float(row["value"]) == np.percentile([1.5, 2.5], 95)


def test_a_latency_metric_needs_a_timed_run(tmp_path):
    """Latency without any runs.NAME.latency is a spec error naming the metric (exit 2)."""
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2.0 r\n")
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "metrics": ["QPS"],
            "runs": {"r": {"path": "r.txt", "collection": "c"}}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("validate", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "metric 'QPS' reads the runs' per-query times, and no run gives them" in result.stderr


def test_a_gate_on_p95_fails_a_run_that_got_slower(tmp_path):
    """The same ranking timed twice, the second build slower at the tail: a gate on
    Latency(stat=p95) against the first fails the second (exit 5); within max_drop it passes."""
    data = generate(5, queries=30, runs=1)
    (run,) = data.runs.values()
    fast = generate_latency(1, list(run), 10.0)
    slow = {q: [t * 1.3 for t in ts] for q, ts in fast.items()}
    write_latency(fast, tmp_path / "fast.latency")
    write_latency(slow, tmp_path / "slow.latency")
    spec = collection_spec(tmp_path, data, ["nDCG@10", "Latency(stat=p95)"])
    spec["runs"] = {
        "release": {"path": "run0.txt", "collection": "c", "latency": "fast.latency"},
        "candidate": {"path": "run0.txt", "collection": "c", "latency": "slow.latency"},
    }
    for drop, code in ((0.5, 5), (1e6, 0)):
        spec["gates"] = [{"metric": "Latency(stat='p95')", "max_drop": drop,
                          "against": {"run": "release"}}]  # fmt: skip
        (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
        result = irpipe_inprocess("run", "spec.yaml", cwd=tmp_path)
        assert result.returncode == code, result.stdout + result.stderr
        if code:
            assert "candidate" in result.stdout + result.stderr


def test_the_python_door_reads_a_frames_latency_column(tmp_path):
    """A run frame's `latency_ms` (one value per query, NaN where untimed) gives the values of
    the same times in a latency file; `{"path": ..., "latency": ...}` as in a spec too; to_spec
    writes a spec whose run gives the same aggregate."""
    import pandas as pd

    from pipeline import evaluate

    data, _ = _timed(tmp_path, 11, units=("ms",))  # the qrels and the run's file
    name, run = next(iter(data.runs.items()))
    timed = {q: ts[0] for q, ts in generate_latency(11, list(run), 20.0, untimed=0.2).items()}
    write_latency({q: [t] for q, t in timed.items()}, tmp_path / "once.latency")
    rows = [(q, d, s, timed.get(q, np.nan)) for q, docs in run.items() for d, s in docs.items()]
    frame = pd.DataFrame(rows, columns=["qid", "docno", "score", "latency_ms"])
    qrels = str(tmp_path / "qrels.txt")
    by_frame = evaluate(qrels=qrels, runs={name: frame}, metrics=METRICS)
    by_file = evaluate(qrels=qrels, runs={name: {"path": str(tmp_path / f"{name}.txt"),
                                                 "latency": str(tmp_path / "once.latency")}},
                       metrics=METRICS)  # fmt: skip
    assert by_frame.aggregate().equals(by_file.aggregate())
    p95 = by_frame.aggregate().set_index("metric").loc["Latency(stat='p95')", "value"]
    assert p95 == np.percentile([t for q, t in sorted(timed.items()) if q in data.qrels], 95)
    by_frame.to_spec(tmp_path / "again")
    again = evaluate(str(tmp_path / "again" / "spec.yaml"))
    assert again.aggregate().equals(by_frame.aggregate())


@pytest.mark.parametrize(
    ("times", "said"),
    [
        ([3.0, 4.0], "latency\\['x'\\]: query '1' has 2 values of latency_ms"),
        ([-1.0, -1.0], "latency\\['x'\\]: row 1: the time must not be negative"),
        ([np.inf, np.inf], "latency\\['x'\\]: row 1: the time must be a finite number"),
    ],
)
def test_a_frames_latency_is_one_finite_time_per_query(times, said):
    """Two values of latency_ms in one query's rows, a negative or an infinite one: an input
    error naming the input (and its row)."""
    import pandas as pd

    from pipeline import evaluate
    from pipeline.errors import InputDataError

    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0],
                          "latency_ms": times})  # fmt: skip
    with pytest.raises(InputDataError, match=said):
        evaluate(qrels={"1": {"a": 1}}, runs={"x": frame}, metrics=["Latency"])


def test_times_given_in_python_are_for_the_duckdb_engine(tmp_path):
    """A run's times as a table given in Python, on engine spark: a spec error naming the key,
    as for any input given in Python (the Spark engine reads files where they live), before
    Spark starts."""
    import pandas as pd

    from pipeline import evaluate
    from pipeline.errors import SpecError

    one_run_spec(tmp_path, "q1 3\n")
    times = pd.DataFrame({"qid": ["q1"], "ms": [3.0]})
    run = {"path": str(tmp_path / "r.txt"), "latency": times}
    said = "runs.r.latency: memory://latency/r is read in Python and evaluated by the duckdb engine"
    with pytest.raises(SpecError, match=re.escape(said)):
        evaluate(qrels=str(tmp_path / "qrels.txt"), runs={"r": run}, metrics=["Latency"],
                 engine="spark")  # fmt: skip
