"""Soft labels (`settings: {grades: real}`): decimal grades through every reader and every metric.

Two independent checks on generated collections (`pipeline.synthetic.soft_labels`): grades that
are whole but written as decimals (`2.0`) give every built-in metric exactly the values of the
integers, under every setting that changes a query's values; truly fractional grades give what a
direct computation here gives (nDCG and its gains, the relevance level's counts, RelString). Then
the same values through every reader (TREC text, BEIR TSV, Parquet with a DOUBLE column, a frame
and a dict in the Python door), and the errors of decimals where grades are integers.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import spec_of_runs, yaml_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import evaluate as evaluate_door
from pipeline.api import PythonMeasure, RankedParams
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, soft_labels, write_beir_qrels, write_qrels, write_run
from pipeline.testing import installed

# Every built-in family: counts, cutoffs, the relevance level, graded gains and their mappings,
# the ideal ranking walked (G, nDCGRel, RnDCG), RBP's gain table, judged-only ranks, text.
METRICS = [
    "AP", "P@5", "P@10", "R@10", "RR", "Rprec", "Bpref", "infAP", "nDCG", "nDCG@10", "DCG@5",
    "IDCG", "CG@10", "RBP", "RBPResid", "Success@5", "SetP", "SetR", "SetF", "SetAP",
    "SetRelativeP", "RelativeP@5", "Utility", "NumRet", "NumRel", "NumRelRet",
    "NumNonRelJudgedRet", "NumQ", "gmAP", "gmBpref", "SearchLength", "Unjudged@10", "RelString",
    "YAAP", "BinG", "G", "nDCGRel", "RnDCG", "Fallout@10", "IPrec@0.5", "AP(rel=2)",
    "nDCG(gain='exponential')@10", "Rprec(mult=0.5)", "AP(variant='capped')@10",
    {"metric": "AP", "variant": "interpolated_11pt"},
    {"metric": "nDCG", "gain": {1: 0.5, 3: 4.0}, "label": "nDCG_mapped"},
    {"metric": "RBP", "gain": {2: 0.25, 3: 2.0}, "label": "RBP_mapped"},
    {"metric": "G", "gain": "exponential", "label": "G_exp"},
]  # fmt: skip


def _spec(tmp_path: Path, qrels: str, runs: list[str], metrics=METRICS, **more) -> Path:
    """A spec of `metrics` over the runs <name>.trec and the qrels file `qrels` (collection c)."""
    spec = spec_of_runs(runs, metrics, ".trec", qrels, {"num_docs": 5000}, **more)
    return yaml_file(tmp_path / f"{Path(qrels).stem}.yaml", spec)


def _rows(path: Path, tables: tuple[str, ...] = ("per_query",)) -> list[tuple]:
    """The rows of `tables`, in turn, from one evaluation of the spec at `path`."""
    con = evaluate(path, write=False).con
    return [
        row
        for table in tables
        for row in con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
    ]


def _same(got: list[tuple], expected: list[tuple]) -> None:
    """The same rows, bit for bit (NaN as NaN)."""
    assert len(got) == len(expected) and got, (len(got), len(expected))
    for a, b in zip(got, expected, strict=True):
        same = [x == y or (isinstance(y, float) and math.isnan(y) and math.isnan(x)) for x, y in zip(a, b, strict=True)]  # fmt: skip
        assert all(same), (a, b)


# -- whole grades written as decimals: the integers' values, exactly ----------------------------

SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "relevance_level": st.sampled_from([0, 1, 2, 3]),
        "queries": st.sampled_from(["qrels", "intersection"]),
        "missing_queries": st.just("trec_eval_c"),
        "judged_only": st.booleans(),
        "max_docs": st.sampled_from([0, 5, 15]),
        "compatibility": st.just("trec_eval-9"),
        "ordering": st.just("rank"),
        "input": st.just("lenient"),
    },
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10_000), chosen=SETTINGS, beir=st.booleans())
def test_whole_grades_read_as_real_give_every_metric_the_integers_values(
    tmp_path, seed, chosen, beir
):
    data = generate(seed, queries=14, runs=2, extremes=True)
    write_qrels(data.qrels, tmp_path / "integer.txt")
    whole = soft_labels(data.qrels, seed, whole=True)
    real = tmp_path / ("real.tsv" if beir else "real.txt")
    (write_beir_qrels if beir else write_qrels)(whole, real)
    for name, run in data.runs.items():
        write_run(run, tmp_path / f"{name}.trec")
    integer = _spec(tmp_path, "integer.txt", list(data.runs), settings=chosen)
    decimal = _spec(tmp_path, real.name, list(data.runs), settings={**chosen, "grades": "real"})
    tables = ("per_query", "aggregate")
    _same(_rows(decimal, tables), _rows(integer, tables))


def test_under_real_grades_the_qrels_hold_doubles_and_under_integer_integers(tmp_path):
    data = generate(1, queries=5, runs=1)
    write_qrels(data.qrels, tmp_path / "q.txt")
    write_run(data.runs["run0"], tmp_path / "run0.trec")
    for grades, kind in (("integer", "INTEGER"), ("real", "DOUBLE")):
        spec = _spec(tmp_path, "q.txt", ["run0"], settings={"grades": grades})
        con = evaluate(spec, write=False).con
        [(found,)] = con.execute("SELECT data_type FROM duckdb_columns() WHERE table_name = 'qrels' AND column_name = 'rel'").fetchall()  # fmt: skip
        assert found == kind


# -- fractional grades: a direct computation -----------------------------------------------------

LEVEL = 0.5
MAPPING = {0.5: 2.0, 1.0: 0.25}
DIRECT = [
    "nDCG", "nDCG@5", "DCG@10", "CG@5", "IDCG@10", "nDCG(gain='exponential')@10",
    {"metric": "nDCG", "gain": MAPPING, "label": "nDCG_mapped"}, "P@5", "P@10", "P(rel=1.5)@10",
    "R@10", "AP", "RR", "NumRel", "NumRelRet", "Success@5", "RelString",
]  # fmt: skip


def _ranking(run: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, then docno descending (bytewise)."""
    by_docno = sorted(run, key=lambda d: d.encode(), reverse=True)
    return sorted(by_docno, key=lambda d: -run[d])


def _gain(grade: float, gain) -> float:
    """A grade's gain: unjudged (None) and negative grades gain 0 unless mapped."""
    if grade is None or grade < 0:
        return 0.0
    if gain == "exponential":
        return 2.0**grade - 1 if grade > 0 else 0.0
    return gain.get(grade, grade) if isinstance(gain, dict) else grade


def _dcg(gains: list[float], k: int | None) -> float:
    return float(sum(g / np.log2(i + 2) for i, g in enumerate(gains[:k])))


def _ndcg(judged: dict, ranked: list, gain, k: int | None, normalised: bool = True) -> float:
    dcg = _dcg([_gain(judged.get(d), gain) for d in ranked], k)
    ideal = _dcg(sorted((g for g in (_gain(v, gain) for v in judged.values()) if g > 0), reverse=True), k)  # fmt: skip
    return (dcg / ideal if ideal > 0 else 0.0) if normalised else dcg


def _relevant(judged: dict, ranked: list, level: float) -> list[bool]:
    return [judged.get(d, -1) >= level for d in ranked]


def _ap(judged: dict, ranked: list, level: float) -> float:
    hits, total = 0, 0.0
    for i, relevant in enumerate(_relevant(judged, ranked, level), 1):
        hits += relevant
        total += hits / i if relevant else 0.0
    r = sum(g >= level for g in judged.values())
    return total / r if r else 0.0


def _char(grade) -> str:
    if grade is None:
        return "-"
    return "." if grade < 0 else ">" if grade >= 10 else str(math.floor(grade))


def direct(judged: dict, run: dict | None) -> dict[str, float | str]:
    """Each metric of `DIRECT` for one query, computed here (a query the run lacks ranks
    nothing: every value 0 but NumRel's)."""
    ranked = _ranking(run or {})
    relevant = _relevant(judged, ranked, LEVEL)
    num_rel = sum(g >= LEVEL for g in judged.values())
    first = next((i for i, r in enumerate(relevant, 1) if r), None)
    return {
        "nDCG": _ndcg(judged, ranked, "linear", None),
        "nDCG@5": _ndcg(judged, ranked, "linear", 5),
        "DCG@10": _ndcg(judged, ranked, "linear", 10, normalised=False),
        "CG@5": sum(_gain(judged.get(d), "linear") for d in ranked[:5]),
        "IDCG@10": _dcg(sorted((g for g in judged.values() if g > 0), reverse=True), 10),
        "nDCG(gain='exponential')@10": _ndcg(judged, ranked, "exponential", 10),
        "nDCG_mapped": _ndcg(judged, ranked, MAPPING, None),
        "P@5": sum(relevant[:5]) / 5,
        "P@10": sum(relevant[:10]) / 10,
        "P(rel=1.5)@10": sum(_relevant(judged, ranked, 1.5)[:10]) / 10,
        "R@10": sum(relevant[:10]) / num_rel if num_rel else 0.0,
        "AP": _ap(judged, ranked, LEVEL),
        "RR": 1 / first if first else 0.0,
        "NumRel": num_rel,
        "NumRelRet": sum(relevant),
        "Success@5": float(any(relevant[:5])),
        "RelString": "".join(_char(judged.get(d)) for d in ranked[:10]) if run else "",
    }


@pytest.mark.parametrize("seed", [2, 19, 77, 301, 4242])
def test_fractional_grades_give_what_a_direct_computation_gives(tmp_path, seed):
    data = generate(seed, queries=20, runs=2, extremes=True)
    qrels = soft_labels(data.qrels, seed)
    assert any(g != int(g) for docs in qrels.values() for g in docs.values())  # truly fractional
    results = evaluate_door(qrels=qrels, runs=data.runs, metrics=DIRECT,
                            settings={"grades": "real", "relevance_level": LEVEL})  # fmt: skip
    rows = results.per_query().itertuples()
    found = {(r.run, r.qid, r.metric): r.text if r.metric == "RelString" else r.value for r in rows}
    assert len(found) == len(data.runs) * len(qrels) * len(DIRECT)
    for name, run in data.runs.items():
        for qid, judged in qrels.items():
            for metric, value in direct(judged, run.get(qid)).items():
                got = found[name, qid, metric]
                assert got == value if metric == "RelString" else math.isclose(got, value, rel_tol=1e-12, abs_tol=1e-15), (name, qid, metric, got, value)  # fmt: skip


def test_the_level_compares_grades_at_the_edge():
    """A worked example at level 0.5: 0.5 is relevant, 0.49999 is not, a negative grade is a
    negative judgment, and nDCG's gains are the grades."""
    qrels = {"1": {"a": 0.5, "b": 0.49999, "c": 0.7, "d": -0.5, "e": 0.0}}
    run = {"1": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "x": 1.0}}
    metrics = ["P@5", "NumRel", "NumNonRelJudgedRet", "Unjudged@5", "nDCG", "RelString"]
    results = evaluate_door(qrels=qrels, runs=run, metrics=metrics,
                            settings={"grades": "real", "relevance_level": 0.5})  # fmt: skip
    values = {r.metric: r.text if r.metric == "RelString" else r.value for r in results.per_query().itertuples()}  # fmt: skip
    dcg = 0.5 + 0.49999 / math.log2(3) + 0.7 / 2
    ideal = 0.7 + 0.5 / math.log2(3) + 0.49999 / 2
    assert values["P@5"] == 2 / 5 and values["NumRel"] == 2
    assert values["NumNonRelJudgedRet"] == 1 and values["Unjudged@5"] == 2 / 5
    assert math.isclose(values["nDCG"], dcg / ideal, rel_tol=1e-14)
    assert values["RelString"] == "000.-"


class LevelledGain(PythonMeasure[RankedParams]):
    """A plugin's Python metric: the sum of the grades in the top k that reach the level."""

    name = "LevelledGain"
    description = "sum of the grades in the top k at or above the relevance level, in Python"
    Params = RankedParams
    cutoff = "k"

    def compute(self, p: RankedParams, query) -> float:
        top = query.grades[: p.k]
        return float(top[top >= query.level].sum())


def test_a_python_measure_sees_the_decimal_grades_and_level(tmp_path):
    data = generate(8, queries=15, runs=2, extremes=True)
    qrels = soft_labels(data.qrels, 8)
    with installed(LevelledGain):
        results = evaluate_door(qrels=qrels, runs=data.runs, metrics=["LevelledGain(rel=0.3)@5"],
                                settings={"grades": "real"})  # fmt: skip
    for row in results.per_query().itertuples():
        judged, run = qrels[row.qid], data.runs[row.run].get(row.qid, {})
        top = [judged.get(d, -1) for d in _ranking(run)[:5]]
        assert math.isclose(row.value, sum(g for g in top if g >= 0.3), rel_tol=1e-12), row


# -- every reader, both doors ---------------------------------------------------------------------


def test_every_reader_gives_the_same_values(tmp_path):
    """Soft labels as TREC text, BEIR TSV (plain and .gz, recognised by its header), Parquet of
    DOUBLE grades, a pandas frame of floats and a dict by query: one table of values."""
    data = generate(11, queries=15, runs=2, extremes=True)
    qrels = soft_labels(data.qrels, 11)
    write_qrels(qrels, tmp_path / "q.txt")
    write_beir_qrels(qrels, tmp_path / "q.tsv")
    write_beir_qrels(qrels, tmp_path / "q.tsv.gz")
    frame = pd.DataFrame([(q, d, float(g)) for q, docs in qrels.items() for d, g in docs.items()],
                         columns=["qid", "docno", "rel"])  # fmt: skip
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "q.parquet")
    assert pq.read_schema(tmp_path / "q.parquet").field("rel").type == pa.float64()
    for name, run in data.runs.items():
        write_run(run, tmp_path / f"{name}.trec")
    real = {"settings": {"grades": "real", "relevance_level": 0.5}}
    metrics = [m for m in METRICS if m != "Fallout@10"]  # the door's collections have no size
    expected = _rows(_spec(tmp_path, "q.txt", list(data.runs), metrics, **real))
    for qrels_file in ("q.tsv", "q.tsv.gz", "q.parquet"):
        _same(_rows(_spec(tmp_path, qrels_file, list(data.runs), metrics, **real)), expected)
    runs = {name: str(tmp_path / f"{name}.trec") for name in data.runs}
    for table in (frame, qrels):
        door = evaluate_door(qrels={"c": table}, runs=runs, metrics=metrics, **real)
        con = door.evaluation.con
        _same(con.execute("SELECT * FROM per_query ORDER BY ALL").fetchall(), expected)
