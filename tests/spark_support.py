"""What the Spark engine's tests share (test_engine_spark.py: values; test_spark_inputs.py:
reading, URIs and bad inputs; test_spark_session.py: the session, the command line, outputs;
test_spark_latency.py: runs' times): a spec evaluated by both engines and its tables compared,
every number the same double.

Split in four files so that the suite's two workers share the Spark work (`--dist loadfile`
keeps a file on one worker); each worker starts its own Spark (the `spark` fixture, conftest.py).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from pipeline.errors import InputDataError
from pipeline.run.evaluation import evaluate

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("per_query", "aggregate")
# Every family of measure: counts, ranks, cutoffs, graded gains, the ideal ranking, judged-only
# rankings (Bpref, infAP), collection fields (Fallout), text (RelString), geometric means.
METRICS = [
    "AP", "P@5", "P@10", "R@10", "RR", "Rprec", "Bpref", "infAP", "nDCG", "nDCG@10", "DCG@5",
    "IDCG", "RBP", "RBPResid", "Success@5", "SetF", "SetAP", "Utility", "NumRet", "NumRel",
    "NumRelRet", "NumQ", "gmAP", "SearchLength", "Unjudged@10", "RelString", "YAAP", "BinG",
    "Fallout@10", "IPrec@0.5", "AP(rel=2)", "nDCG(gain='exponential')@10", "Rprec(mult=0.5)",
    {"metric": "AP", "variant": "interpolated_11pt"},
]  # fmt: skip
QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 d 1\n2 0 e 0\n"
RUN = "1 Q0 a 1 3.5 sys\n1 Q0 b 2 2.5 sys\n1 Q0 c 3 1.5 sys\n2 Q0 d 1 1 sys\n2 Q0 e 2 0.5 sys\n"


def same_tables(spec: Path | dict, tmp_path: Path | None = None, tables=TABLES) -> None:
    """`spec` evaluated by both engines gives the same rows in every table, every number the
    same double: a query's rows add in rank order on a shard as on one machine."""
    if isinstance(spec, dict):
        spec = spec_file(tmp_path / "spec.yaml", spec)
    on_duckdb = evaluate(spec, write=False, engine="duckdb").con
    on_spark = evaluate(spec, write=False, engine="spark").con
    for table in tables:
        expected = on_duckdb.execute(f"SELECT * FROM {table}").fetchall()
        got = on_spark.execute(f"SELECT * FROM {table}").fetchall()
        assert expected, f"{table} is empty: nothing was compared"
        same_rows(got, expected, table)


def same_rows(got: list[tuple], expected: list[tuple], what: str = "") -> None:
    """The same rows in the same order, every number the same double (NaN is NaN)."""
    assert [_keys(row) for row in got] == [_keys(row) for row in expected], what
    for a, b in zip(got, expected, strict=True):
        for x, y in zip(a, b, strict=True):
            if isinstance(y, float):
                assert _same(x, y), (what, a, b)


def _keys(row: tuple) -> tuple:
    """A row without its numbers."""
    return tuple(v for v in row if not isinstance(v, float))


def _same(x: float, y: float) -> bool:
    """The same double (NaN is NaN)."""
    if math.isnan(y):
        return math.isnan(x)
    return x == y


def spec_file(path: Path, spec: dict) -> Path:
    """`spec` written as YAML at `path`; returns `path`."""
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def same_error(path: Path, match: str | None = None) -> InputDataError:
    """The spec at `path` refused by both engines with the same error, of the same class (and
    matching `match`, where given): the DuckDB engine's."""
    refused = []
    for engine in ("duckdb", "spark"):
        with pytest.raises(InputDataError, match=match) as raised:
            evaluate(path, write=False, engine=engine)
        refused.append(raised.value)
    assert (type(refused[1]), str(refused[1])) == (type(refused[0]), str(refused[0]))
    return refused[0]
