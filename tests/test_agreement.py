"""Agreement of two judgment sets (`agreement:`), checked against scikit-learn's cohen_kappa_score
(unweighted, linear, quadratic), precision_score, recall_score and f1_score, and the
`krippendorff` package's alpha (nominal, ordinal, interval, with the value domain of the grades
either set gives), on generated label sets: a TREC-like qrels and a second set made by
`pipeline.synthetic.llm_judgments`, which errs as an LLM judge does (leniently on related
documents), with every grade, negative grades, and pairs missing on both sides; through the spec
door, the Python door and `irpipe agree`."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path

import duckdb
import krippendorff
import numpy as np
import pytest
from conftest import irpipe_inprocess
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import cohen_kappa_score, f1_score, precision_score, recall_score

import pipeline
from pipeline.agreement.labels import LABEL_STATISTICS, Labels, label_statistics
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, llm_judgments, write_qrels, write_run

SEEDS = range(24)
TOLERANCE = 1e-12


def judgment_sets(seed: int, queries: int = 30) -> tuple[dict, dict]:
    """A generated qrels (grades -2..3) and an LLM-like second set of its queries."""
    human = generate(seed, queries=queries, runs=0, max_grade=3).qrels
    return human, llm_judgments(human, seed, max_grade=3)


def shared_pairs(reference: dict, other: dict) -> tuple[np.ndarray, np.ndarray]:
    """The two grades of every (qid, docno) both sets judge."""
    pairs = [(g, other[q][d]) for q, docs in reference.items() for d, g in docs.items()
             if d in other.get(q, {})]  # fmt: skip
    return np.array([a for a, _ in pairs], float), np.array([b for _, b in pairs], float)


def expected_statistics(a: np.ndarray, b: np.ndarray, thresholds) -> dict[str, float]:
    """Every statistic as the reference libraries compute it on the shared pairs."""
    found = _library_statistics(a, b)
    for t in thresholds:
        x, y = (a >= t).astype(int), (b >= t).astype(int)
        binary = {**_library_statistics(x, y), **_binary(x, y)}
        found.update({f"{name}@{t}": value for name, value in binary.items()})
    return found


def _library_statistics(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    domain = np.unique(np.concatenate([a, b]))
    # scikit-learn weighs by the grades' positions among the labels; it refuses decimal labels
    i, j = np.searchsorted(domain, a), np.searchsorted(domain, b)
    with warnings.catch_warnings():  # one label only: undefined, as irpipe says too
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", UserWarning)
        found = {
            "agreement": float(np.mean(a == b)),
            "cohen_kappa": cohen_kappa_score(i, j),
            "cohen_kappa_linear": cohen_kappa_score(i, j, weights="linear"),
            "cohen_kappa_quadratic": cohen_kappa_score(i, j, weights="quadratic"),
        }
    for level in ("nominal", "ordinal", "interval"):
        found[f"krippendorff_alpha_{level}"] = _alpha(a, b, domain, level)
    return found


def _alpha(a, b, domain, level: str) -> float:
    try:
        return krippendorff.alpha(
            np.vstack([a, b]), value_domain=domain, level_of_measurement=level
        )
    except ValueError:  # one value only: the package refuses, irpipe says undefined
        return float("nan")


def _binary(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    nan = float("nan")
    return {
        "precision": precision_score(x, y, zero_division=nan),
        "recall": recall_score(x, y, zero_division=nan),
        "f1": f1_score(x, y, zero_division=nan),
    }


def assert_statistics(found: dict[str, float | None], expected: dict[str, float]) -> None:
    for name, value in expected.items():
        got = found[name]
        if np.isnan(value):
            assert got is None or np.isnan(got), name
        else:
            assert got == pytest.approx(value, rel=TOLERANCE, abs=TOLERANCE), name


def thresholds_of(a: np.ndarray, b: np.ndarray) -> list[int]:
    """The grades a threshold may be (above the lowest seen, at most the highest)."""
    grades = np.unique(np.concatenate([a, b]))
    return [int(t) for t in grades[1:]][:3]


def write_sets(directory: Path, human: dict, llm: dict) -> None:
    write_qrels(human, directory / "human.txt")
    write_qrels(llm, directory / "llm.txt")


def spec_of(thresholds: list[int], **keys) -> dict:
    return {
        "collections": {"human": {"qrels": "human.txt"}, "llm": {"qrels": "llm.txt"}},
        "agreement": [{"reference": "human", "other": "llm", "thresholds": thresholds}],
        **keys,
    }


def statistics_of(rows: list[tuple]) -> dict[str, float | None]:
    return {statistic: value for _, _, _, statistic, value in rows}


# -- every statistic against the reference libraries ------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_every_statistic_is_scikit_learn_s_and_krippendorff_s(tmp_path, write_spec, seed):
    human, llm = judgment_sets(seed)
    a, b = shared_pairs(human, llm)
    thresholds = thresholds_of(a, b)
    write_sets(tmp_path, human, llm)
    evaluation = evaluate(write_spec(spec_of(thresholds)), write=False)
    found = statistics_of(evaluation.rows("agreement"))
    assert_statistics(found, expected_statistics(a, b, thresholds))
    shown = {t: f"{t}" for t in thresholds}
    assert list(found) == [
        "pairs_shared", "pairs_reference_only", "pairs_other_only", "queries_shared",
        *LABEL_STATISTICS,
        *(f"{name}@{shown[t]}" for t in thresholds
          for name in (*LABEL_STATISTICS, "precision", "recall", "f1")),
    ]  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS[:8])
def test_the_counts_and_the_confusion_table_are_the_pairs(tmp_path, write_spec, seed):
    human, llm = judgment_sets(seed)
    write_sets(tmp_path, human, llm)
    evaluation = evaluate(write_spec(spec_of([])), write=False)
    found = statistics_of(evaluation.rows("agreement"))
    keys = lambda sets: {(q, d) for q, docs in sets.items() for d in docs}  # noqa: E731
    both = keys(human) & keys(llm)
    assert found["pairs_shared"] == len(both)
    assert found["pairs_reference_only"] == len(keys(human) - keys(llm))
    assert found["pairs_other_only"] == len(keys(llm) - keys(human))
    assert found["queries_shared"] == len({q for q, _ in both})
    cells = Counter()
    for q, d in keys(human) | keys(llm):
        cells[human.get(q, {}).get(d), llm.get(q, {}).get(d)] += 1
    confusion = evaluation.rows("confusion")
    assert {(r, o): n for _, _, r, o, n in confusion} == dict(cells)
    assert [(r is None, r, o is None, o) for _, _, r, o, _ in confusion] == sorted(
        (r is None, r, o is None, o) for r, o in cells
    )  # grades in order, a set's missing label (None) after its grades


def test_the_generated_sets_have_what_the_tests_need():
    """Every grade, negative ones, pairs missing on both sides, disagreements both ways."""
    human, llm = judgment_sets(0)
    a, b = shared_pairs(human, llm)
    assert {-2, -1, 0, 1, 2, 3} <= set(a) and {0, 1, 2, 3} <= set(b)
    assert (a < b).any() and (a > b).any()
    pairs = lambda sets: sum(map(len, sets.values()))  # noqa: E731
    assert len(a) < pairs(human) and len(a) < pairs(llm)
    lenient = np.mean(b[a <= 0] > 0)
    assert 0.2 < lenient < 0.6  # an LLM judge's leniency on related (judged, not relevant) ones


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 2.75, 3.0]),
                  st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), st.integers(1, 5)),
        min_size=1, max_size=40,
    )
)  # fmt: skip
def test_decimal_grades_and_repeated_cells_agree_with_the_libraries(cells):
    """The statistics read a sparse table whose cells may repeat and whose grades may be
    decimals (`settings: {grades: real}`): the libraries see each pair as often as it counts."""
    a = np.array([r for r, _, n in cells for _ in range(n)])
    b = np.array([o for _, o, n in cells for _ in range(n)])
    labels = Labels(*(np.array(column, float) for column in zip(*cells, strict=True)))
    assert_statistics(label_statistics(labels), _library_statistics(a, b))


# -- both doors, and irpipe agree ------------------------------------------------------------


def test_the_python_door_gives_the_spec_s_tables(tmp_path, write_spec):
    import pandas as pd

    human, llm = judgment_sets(5)
    write_sets(tmp_path, human, llm)
    spec = evaluate(write_spec(spec_of([1, 2])), write=False)
    frame = pd.read_csv(tmp_path / "llm.txt", sep=" ", names=["qid", "iter", "docno", "rel"],
                        dtype={"qid": str})  # fmt: skip
    results = pipeline.evaluate(
        qrels={"human": str(tmp_path / "human.txt"), "llm": frame},
        agreement=[{"reference": "human", "other": "llm", "thresholds": [1, 2]}],
    )
    assert [tuple(r) for r in results.agreement(to="rows")] == spec.rows("agreement")
    assert [tuple(r) for r in results.confusion(to="rows")] == spec.rows("confusion")
    assert list(results.correlation().columns) == [
        "reference", "other", "collection", "metric", "statistic", "value", "ci_low",
        "ci_high", "run",
    ]  # fmt: skip
    write_run(generate(5, runs=1).runs["run0"], tmp_path / "run.trec")
    plain = pipeline.evaluate(qrels=frame, runs=str(tmp_path / "run.trec"), metrics=["AP"])
    with pytest.raises(pipeline.SpecError, match=r"agreement\(\): no judgment sets"):
        plain.agreement()


def test_outputs_write_the_tables_with_their_manifests(tmp_path, write_spec):
    human, llm = judgment_sets(6)
    write_sets(tmp_path, human, llm)
    outputs = [{"path": f"out/{level}.{suffix}", "level": level}
               for level in ("agreement", "confusion") for suffix in ("csv", "md", "parquet")]  # fmt: skip
    outputs += [{"path": f"out/agreement.{suffix}", "level": "agreement"} for suffix in ("tsv", "jsonl")]  # fmt: skip
    evaluation = evaluate(write_spec(spec_of([2], outputs=outputs)))
    rows = evaluation.rows("agreement")
    shared = len(shared_pairs(human, llm)[0])
    csv = (tmp_path / "out" / "agreement.csv").read_text().splitlines()
    assert csv[0] == "reference,other,collection,statistic,value"
    # counts are integers, the collection is the reference set's, every other value as it is
    assert csv[1] == f"human,llm,human,pairs_shared,{shared}"
    assert [line.split(",")[-1] for line in csv[1:5]] == [str(int(r[4])) for r in rows[:4]]
    assert [line.split(",")[-1] for line in csv[5:]] == ["" if r[4] is None else repr(r[4]) for r in rows[4:]]  # fmt: skip
    tsv = (tmp_path / "out" / "agreement.tsv").read_text().splitlines()
    assert tsv[1] == f"human\tllm\thuman\tpairs_shared\t{shared}"
    jsonl = [json.loads(line) for line in (tmp_path / "out" / "agreement.jsonl").read_text().splitlines()]  # fmt: skip
    assert jsonl[0] == {"reference": "human", "other": "llm", "collection": "human",
                        "statistic": "pairs_shared", "value": shared}  # fmt: skip
    assert [row["value"] for row in jsonl] == [r[4] for r in rows]
    parquet = duckdb.sql(f"SELECT * FROM '{tmp_path}/out/agreement.parquet'")
    assert dict(zip(parquet.columns, parquet.types, strict=True))["value"] == "DOUBLE"
    assert parquet.fetchall() == rows
    markdown = (tmp_path / "out" / "confusion.md").read_text()
    assert markdown.startswith("| reference | other | reference_grade | other_grade | pairs |")
    manifest = json.loads((tmp_path / "out" / "agreement.csv.manifest.json").read_text())
    entry = {"reference": "human", "other": "llm", "thresholds": [2]}
    assert manifest["judgments"]["agreement"] == [entry]


def test_irpipe_agree_prints_the_spec_s_statistics(tmp_path, write_spec):
    human, llm = judgment_sets(7)
    write_sets(tmp_path, human, llm)
    found = statistics_of(evaluate(write_spec(spec_of([1, 3])), write=False).rows("agreement"))
    done = irpipe_inprocess("agree", "human.txt", "llm.txt", "--thresholds", "1,3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    shared, only = int(found["pairs_shared"]), int(found["pairs_reference_only"])
    assert lines[0].startswith(f"Agreement of llm.txt with human.txt: {shared} pairs judged by "
                               f"both ({only} by human.txt only")  # fmt: skip
    assert lines[1].split() == ["statistic", "grades", ">=", "1", ">=", "3"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[3:13]}
    for name in LABEL_STATISTICS:
        assert rows[name] == [f"{found[name + s]:.4f}" for s in ("", "@1", "@3")], name
    assert rows["f1"][0] == "-"


def test_irpipe_agree_refuses_a_threshold_outside_the_grades(tmp_path):
    human, llm = judgment_sets(8)
    write_sets(tmp_path, human, llm)
    done = irpipe_inprocess("agree", "human.txt", "llm.txt", "--thresholds", "7", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("Error: <irpipe agree>: agreement.0.thresholds.0: 7 is outside "
                                  "the grades seen on the shared pairs (-2 to 3)")  # fmt: skip
    done = irpipe_inprocess("agree", "human.txt", "llm.txt", "--metric", "AP", cwd=tmp_path)
    assert done.returncode == 2 and "--metric orders runs by a metric" in done.stderr


def test_a_spec_without_runs_compares_judgment_sets_only(tmp_path, write_spec):
    human, llm = judgment_sets(9)
    write_sets(tmp_path, human, llm)
    done = irpipe_inprocess("run", str(write_spec(spec_of([1]))), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Agreement of llm with human:")
    plain = {"collections": spec_of([])["collections"], "metrics": ["AP"]}
    with pytest.raises(pipeline.SpecError, match=r"runs: give at least one; only a spec that "
                       r"compares judgment sets alone \(agreement:\) may leave it out"):  # fmt: skip
        evaluate(write_spec(plain), write=False)


def test_irpipe_agree_orders_the_runs_under_both_sets(tmp_path):
    human, llm = judgment_sets(10)
    write_sets(tmp_path, human, llm)
    (tmp_path / "runs").mkdir()
    made = generate(10, queries=30, runs=4, skill=(0.0, 1.0, 2.0, 3.0))
    for name, run in made.runs.items():
        write_run(run, tmp_path / "runs" / f"{name}.trec")
    done = irpipe_inprocess("agree", "human.txt", "llm.txt", "--runs", "runs/*", "--metric", "AP",
                  cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Orderings of the runs by each metric: under llm.txt against human.txt" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("AP "))
    assert len(row.split()) >= 7  # the metric and its six statistics
