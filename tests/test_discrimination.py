"""Discriminative power (`discrimination:`): the pairs of runs each test finds significant,
against a plain loop over scipy's tests and statsmodels' corrections, through both doors; and
the achieved significance level curves (`asl_plot`), opened and checked as the other plots."""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET
from itertools import combinations

import numpy as np
import pytest
from conftest import irpipe_inprocess, yaml_file
from PIL import Image
from scipy import stats
from statsmodels.stats.multitest import multipletests

from pipeline.errors import SpecError
from pipeline.notebook import evaluate as evaluate_python
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

COLLECTIONS = ("c1", "c2")
RUNS = ("r0", "r1", "r2", "r3")
METRICS = ["AP", "nDCG@10"]
DPI = 150
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Two generated collections of four runs of spread skill (some pairs tell apart, some
    not); runs lack queries and scores tie."""
    directory = tmp_path_factory.mktemp("discrimination")
    for i, collection in enumerate(COLLECTIONS):
        drawn = generate(40 + i, queries=50, runs=4, skill=(0.0, 0.5, 10.0, 40.0))
        write_qrels(drawn.qrels, directory / f"{collection}.qrels")
        for name, run in zip(RUNS, drawn.runs.values(), strict=True):
            write_run(run, directory / f"{collection}-{name}.trec", tag=name)
    return directory


def _spec(**more) -> dict:
    return {
        "collections": {c: {"qrels": f"{c}.qrels"} for c in COLLECTIONS},
        "runs": {
            r: {"path": f"{{collection}}-{r}.trec", "collection": list(COLLECTIONS)} for r in RUNS
        },  # fmt: skip
        "metrics": METRICS,
        "discrimination": {"tests": ["t", "wilcoxon"]},
        **more,
    }


def _hand_counts(per_query: list[tuple], correction: str, alpha: float) -> dict:
    """(pairs, significant) by (collection, metric, test): every pair of runs in spec order,
    scipy's paired test, statsmodels' correction over the collection's pairs, by plain loops."""
    values: dict = {}
    for run, collection, _, metric, value in sorted(per_query, key=lambda row: row[2]):
        values.setdefault((collection, metric), {}).setdefault(run, []).append(value)
    found = {}
    for (collection, metric), runs in values.items():
        for test, p_of in (("t", _t), ("wilcoxon", _wilcoxon)):
            p = [p_of(runs[b], runs[a]) for a, b in combinations(RUNS, 2)]
            adjusted = p if correction == "none" else multipletests(p, method=correction)[1]
            found[collection, metric, test] = (len(p), sum(q <= alpha for q in adjusted))
    return found


def _t(a: list[float], b: list[float]) -> float:
    return stats.ttest_rel(a, b).pvalue


def _wilcoxon(a: list[float], b: list[float]) -> float:
    return stats.wilcoxon(a, b, zero_method="wilcox", correction=False, mode="auto").pvalue


def _rows(path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_significant_pairs_equal_a_plain_loop_over_scipy_and_statsmodels_in_both_doors(data):
    outputs = [{"path": "out/power.csv", "level": "discrimination"}]
    spec = yaml_file(data / "spec.yaml", _spec(outputs=outputs))
    outcome = irpipe_inprocess("run", spec, cwd=data)
    assert outcome.returncode == 0, outcome.stderr
    rows = _rows(data / "out" / "power.csv")
    expected = _hand_counts(evaluate(spec, write=False).per_query(), "holm", 0.05)
    assert [(r["collection"], r["metric"], r["test"]) for r in rows] == list(expected)
    for row in rows:
        pairs, significant = expected[row["collection"], row["metric"], row["test"]]
        assert (int(row["runs"]), int(row["pairs"])) == (4, pairs) == (4, 6)
        assert int(row["significant"]) == significant
        assert float(row["share"]) == significant / pairs
        assert (row["correction"], float(row["alpha"])) == ("holm", 0.05)
    assert 0 < sum(int(r["significant"]) for r in rows) < sum(int(r["pairs"]) for r in rows)
    python = evaluate_python(
        qrels={c: data / f"{c}.qrels" for c in COLLECTIONS},
        runs={r: {"path": {c: data / f"{c}-{r}.trec" for c in COLLECTIONS}} for r in RUNS},
        metrics=METRICS, discrimination={"tests": ["t", "wilcoxon"]},
    )  # fmt: skip
    found = python.discrimination(to="rows")
    assert [tuple(map(str, row)) for row in found] == [tuple(r.values()) for r in rows]


def test_the_section_s_correction_and_alpha_decide_what_is_significant(data):
    spec = _spec(discrimination={"tests": ["t"], "alpha": 0.2, "correction": "bh"})
    evaluation = evaluate(yaml_file(data / "bh.yaml", spec), write=False)
    expected = _hand_counts(evaluation.per_query(), "fdr_bh", 0.2)
    rows = evaluation.rows("discrimination")
    assert rows and all(row[3] == "bh" for row in rows)
    assert {(c, m, t): (pairs, k) for c, m, t, _, _, _, pairs, k, _ in rows} == {
        key: value for key, value in expected.items() if key[2] == "t"
    }


def test_the_pairs_table_holds_each_family_s_p_values_sorted(data):
    spec = _spec(discrimination={"tests": ["t"], "correction": "none"})
    evaluation = evaluate(yaml_file(data / "pairs.yaml", spec), write=False)
    rows = evaluation.rows("discrimination_pairs")
    families: dict = {}
    for collection, metric, test, _, _, p, adjusted, _, significant, position in rows:
        families.setdefault((collection, metric, test), []).append((position, p, adjusted))
        assert p == adjusted and significant == (p <= 0.05)
    for points in families.values():
        assert [position for position, _, _ in points] == list(range(1, 7))
        assert [p for _, p, _ in points] == sorted(p for _, p, _ in points)


def test_the_asl_plot_is_a_picture_of_a_curve_per_metric_and_test_for_each_collection(data):
    outputs = [{"path": "out/asl.png", "level": "asl_plot"},
               {"path": "out/asl.svg", "level": "asl_plot"}]  # fmt: skip
    spec = _spec(outputs=outputs, discrimination={"tests": ["t"]})
    evaluation = evaluate(yaml_file(data / "asl.yaml", spec))
    with Image.open(data / "out" / "asl.png") as image:
        assert image.format == "PNG"
        assert image.size == (int(4.8 * DPI * len(COLLECTIONS)), int(4.4 * DPI))
        colours = {rgba[:3] for _, rgba in image.convert("RGBA").getcolors(maxcolors=1 << 20)}
    assert {(0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)} <= colours  # a line per metric
    assert (0x2C, 0xA0, 0x2C) not in colours  # no third line
    root = ET.parse(data / "out" / "asl.svg").getroot()
    texts = ["".join(t.itertext()).strip() for t in root.iter(f"{SVG}text")]
    for collection, metric, _, _, _, _, pairs, significant, _ in evaluation.rows("discrimination"):
        assert collection in texts
        assert f"{metric}, t ({significant}/{pairs} significant)" in texts
    assert "alpha = 0.05" in texts


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"discrimination": None, "outputs": [{"path": "a.png", "level": "asl_plot"}]},
         r"outputs\.0\.level: needs a discrimination section"),
        ({"discrimination": {"tests": ["tt"]}}, r"unknown test 'tt'; did you mean 't'\?"),
        ({"discrimination": {"tests": ["bootstrap"]}, "compare": {"samples": "exact"}},
         "compare.samples is exact: give it a number of samples"),
        ({"runs": {"r0": {"path": "{collection}-r0.trec", "collection": ["c1"]},
                   "r1": {"path": "{collection}-r1.trec", "collection": ["c2"]}}},
         "no collection has two runs"),
    ],
)  # fmt: skip
def test_what_discrimination_refuses_is_a_spec_error(data, change, message):
    spec = {k: v for k, v in {**_spec(), **change}.items() if v is not None}
    with pytest.raises(SpecError, match=message):
        evaluate(yaml_file(data / "refused.yaml", spec), write=False)


def test_tukey_s_pairs_are_corrected_by_the_test_itself(data):
    spec = _spec(discrimination={"tests": ["tukey_hsd"], "correction": "bonferroni"})
    evaluation = evaluate(yaml_file(data / "tukey.yaml", spec), write=False)
    rows = evaluation.rows("discrimination_pairs")
    assert {row[7] for row in rows} == {"none"}
    assert all(row[5] == row[6] for row in rows)
    assert np.isfinite([row[5] for row in rows]).all()
