"""Precision-recall curve tables (`level: pr_curve`) and per-query differences (`level: diff_plot`):
the numbers against trec_eval 10.0 (its golden output), `irpipe trec-eval`, the spec's own IPrec
metrics and pytrec_eval; the spec's tables untouched; and every bad output named by its key."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import pytrec_eval
from conftest import spec_of_runs

from pipeline import SpecError, validate
from pipeline.cli import main
from pipeline.plan.output_tables import RECALL_LEVELS
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

GOLDEN = Path(__file__).parent / "golden"
ELEVEN = [f"{r:.2f}" for r in RECALL_LEVELS[11]]
HUNDRED_ONE = [f"{r:.2f}" for r in RECALL_LEVELS[101]]


def _collection(folder: Path, seed: int, runs: int = 3, **options) -> dict:
    """A generated collection written to `folder`: {run name: run dict}, and its qrels."""
    generated = generate(seed, runs=runs, **options)
    write_qrels(generated.qrels, folder / "qrels.txt")
    for name, run in generated.runs.items():
        write_run(run, folder / f"{name}.trec", tag=name)
    return generated


def _spec(runs: list[str], metrics: list, outputs: list, settings: dict | None = None) -> dict:
    return spec_of_runs(runs, metrics, ".trec", settings=settings or {}, outputs=outputs)


def _curve(evaluation, table: str = "pr_curve") -> dict[tuple[str, float], float]:
    rows = evaluation.con.execute(f"SELECT run, recall, precision FROM {table}").fetchall()
    return {(run, recall): precision for run, recall, precision in rows}


def _golden_iprec(case: str) -> dict[float, str]:
    """trec_eval 10.0's printed iprec_at_recall summary lines of a golden case."""
    found = {}
    for line in (GOLDEN / f"{case}.out").read_text().splitlines():
        name, qid, value = (field.strip() for field in line.split("\t"))
        if name.startswith("iprec_at_recall_") and qid == "all":
            found[float(name.removeprefix("iprec_at_recall_"))] = value
    return found


@pytest.mark.parametrize("folder", ["binary", "graded"])
def test_eleven_points_print_as_trec_eval_10_prints_iprec_at_recall(write_spec, folder):
    """The golden output was printed by the trec_eval 10.0 binary with -c."""
    data = GOLDEN / folder
    spec = {
        "collections": {"c": {"qrels": str(data / "qrels.txt")}},
        "runs": {"run": {"path": str(data / "run.trec"), "collection": "c"}},
        "settings": {"missing_queries": "trec_eval_c"},
        "metrics": ["AP"],
        "outputs": [{"path": "out/pr.csv", "level": "pr_curve"}],
    }
    curve = _curve(evaluate(write_spec(spec)))
    golden = _golden_iprec(f"{folder}/official_c")
    assert sorted(golden) == list(RECALL_LEVELS[11])
    assert {r: f"{curve['run', r]:6.4f}" for r in golden} == golden


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"missing_queries": "trec_eval_c"},
        # trec_eval -c -J: an emptied missing ranking makes some levels NaN (a trec_eval quirk)
        {"missing_queries": "trec_eval_c", "judged_only": True, "relevance_level": 2},
        {"compatibility": "trec_eval-9"},
        {"queries": "intersection", "max_docs": 5},
        {"ordering": "rank", "relevance_level": 2},
    ],
)
def test_curves_equal_the_specs_own_iprec_metrics_to_the_last_bit(tmp_path, write_spec, settings):
    """The same SQL: pr_curve (11 levels) and pr_curve_101 are bit for bit the aggregates a spec
    gets when it names IPrec at those levels itself, under every setting that changes them."""
    _collection(tmp_path, seed=7)
    levels = list(RECALL_LEVELS[101])
    metrics = [{"metric": "IPrec", "recall": levels, "label": "own"}]
    outputs = [
        {"path": "pr.csv", "level": "pr_curve"},
        {"path": "pr101.csv", "level": "pr_curve", "recall_levels": 101},
    ]
    evaluation = evaluate(write_spec(_spec(["run0", "run1", "run2"], metrics, outputs, settings)))
    own = {(r, m): v for r, _, m, v, _ in evaluation.aggregate()}
    for table, count in (("pr_curve", 11), ("pr_curve_101", 101)):
        curve = _curve(evaluation, table)
        assert len(curve) == 3 * count
        for (run, recall), precision in curve.items():
            expected = own[run, f"own@{recall}"]
            assert precision == expected or (precision != precision and expected != expected)


def test_eleven_points_equal_irpipe_trec_eval_output(tmp_path, write_spec, capsys):
    _collection(tmp_path, seed=3, runs=1)
    spec = _spec(["run0"], ["AP"], [{"path": "pr.csv", "level": "pr_curve"}])
    spec["settings"] = {"missing_queries": "trec_eval_c"}
    curve = _curve(evaluate(write_spec(spec)))
    qrels, run = str(tmp_path / "qrels.txt"), str(tmp_path / "run0.trec")
    assert main(["trec-eval", "-c", "-m", "iprec_at_recall", qrels, run]) == 0
    printed = {}
    for line in capsys.readouterr().out.splitlines():
        name, _, value = line.split("\t")
        printed[float(name.strip().removeprefix("iprec_at_recall_"))] = value
    assert printed == {r: f"{curve['run0', r]:6.4f}" for r in RECALL_LEVELS[11]}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("count", [11, 101])
def test_curves_equal_pytrec_eval_means(tmp_path, write_spec, seed, count):
    """pytrec_eval is trec_eval 9.x: its recall rounding, only the queries a run answered."""
    generated = _collection(tmp_path, seed, float32_ties=False)
    output = {"path": "pr.csv", "level": "pr_curve", "recall_levels": count}
    spec = _spec(list(generated.runs), ["AP"], [output], {"compatibility": "trec_eval-9"})
    evaluation = evaluate(write_spec(spec))
    names = ELEVEN if count == 11 else HUNDRED_ONE
    table = "pr_curve" if count == 11 else "pr_curve_101"
    curve = _curve(evaluation, table)
    n_queries = dict(
        evaluation.con.execute(f"SELECT DISTINCT run, n_queries FROM {table}").fetchall()
    )
    measure = "iprec_at_recall." + ",".join(names)
    for name, run in generated.runs.items():
        results = pytrec_eval.RelevanceEvaluator(generated.qrels, {measure}).evaluate(run)
        assert n_queries[name] == len(results)
        for text, recall in zip(names, RECALL_LEVELS[count], strict=True):
            total = 0.0
            for qid in sorted(results):  # summed in query order, as trec_eval sums
                total += results[qid][f"iprec_at_recall_{text}"]
            assert curve[name, recall] == total / len(results), (name, recall)


def test_the_specs_tables_hold_only_its_metrics(tmp_path, write_spec):
    _collection(tmp_path, seed=5, runs=2)
    outputs = [
        {"path": "agg.csv"},
        {"path": "pq.csv", "level": "query"},
        {"path": "agg.md"},
        {"path": "pr.csv", "level": "pr_curve", "recall_levels": 101},
    ]
    evaluation = evaluate(write_spec(_spec(["run0", "run1"], ["AP", "P@5"], outputs)))
    assert {m for _, _, m, _, _ in evaluation.aggregate()} == {"AP", "P@5"}
    assert {m for _, _, _, m, _ in evaluation.per_query()} == {"AP", "P@5"}
    con = duckdb.connect()
    for name in ("agg.csv", "pq.csv"):
        metrics = con.execute("SELECT DISTINCT metric FROM read_csv(?)", [str(tmp_path / name)])
        assert {m for (m,) in metrics.fetchall()} == {"AP", "P@5"}
    assert (tmp_path / "agg.md").read_text().startswith("| run | collection | AP | P@5 |\n")
    manifest = json.loads((tmp_path / "agg.csv.manifest.json").read_text())
    assert [m["label"] for m in manifest["metrics"]] == ["AP", "P@5"]
    curve_metrics = manifest["pr_curve_metrics"]
    assert len(curve_metrics) == 101 and curve_metrics[10]["metric"] == "IPrec@0.1"


def test_a_spec_without_curves_compiles_no_curve_tables(tmp_path, write_spec):
    _collection(tmp_path, seed=5, runs=1)
    plan = validate(write_spec(_spec(["run0"], ["AP"], [{"path": "a.csv"}]))).sql
    assert plan.results.curves == () and "curve_" not in plan.sql_text()


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet", ".jsonl", ".duckdb", ".md"])
def test_every_table_writer_writes_the_curve(tmp_path, write_spec, suffix):
    _collection(tmp_path, seed=2, runs=2)
    spec = _spec(["run0", "run1"], ["AP"], [{"path": f"pr{suffix}", "level": "pr_curve"}])
    spec["collections"]["d"] = {"qrels": "qrels.txt"}
    spec["runs"]["other"] = {"path": "run0.trec", "collection": "d"}
    evaluation = evaluate(write_spec(spec))
    expected = evaluation.con.execute("SELECT * FROM pr_curve").fetchall()
    assert [(c, r) for c, r, *_ in expected[::11]] == [("c", "run0"), ("c", "run1"), ("d", "other")]
    assert [row[2] for row in expected[:11]] == list(RECALL_LEVELS[11])
    path = str(tmp_path / f"pr{suffix}")
    if suffix == ".md":
        lines = (tmp_path / "pr.md").read_text().splitlines()
        assert lines[0] == "| collection | run | recall | precision | n_queries |"
        c, r, recall, precision, n = expected[1]
        assert lines[3] == f"| {c} | {r} | {recall:.4f} | {precision:.4f} | {n} |"
        return
    con = duckdb.connect()
    if suffix == ".duckdb":
        con.execute("ATTACH ? AS out (READ_ONLY)", [path])
        query = "SELECT * FROM out.pr_curve"
    else:
        reader = {".parquet": "read_parquet", ".jsonl": "read_json"}.get(suffix, "read_csv")
        query = f"SELECT * FROM {reader}('{path}')"
    result = con.execute(query)
    assert [d[0] for d in result.description] == [
        "collection",
        "run",
        "recall",
        "precision",
        "n_queries",
    ]
    assert [tuple(row) for row in result.fetchall()] == expected


def test_differences_are_against_the_baseline_sorted_by_gain(tmp_path, write_spec):
    _collection(tmp_path, seed=9)
    output = {"path": "d.svg", "level": "diff_plot", "metric": "nDCG@10", "baseline": "run1"}
    evaluation = evaluate(write_spec(_spec(["run0", "run1", "run2"], ["AP", "nDCG@10"], [output])))
    values = {(r, q): v for r, _, q, m, v in evaluation.per_query() if m == "nDCG@10"}
    rows = evaluation.con.execute(
        "SELECT run, baseline, metric, qid, difference, outcome FROM diff_plot_0"
    ).fetchall()
    assert [r for r, *_ in rows] == ["run0"] * 12 + ["run2"] * 12  # 12 qrels queries each
    for run, baseline, metric, qid, difference, outcome in rows:
        assert (baseline, metric) == ("run1", "nDCG@10")
        assert difference == values[run, qid] - values["run1", qid]
        assert outcome == ("tied" if difference == 0 else "better" if difference > 0 else "worse")
    for run in ("run0", "run2"):
        ordered = [(-d, q) for r, _, _, q, d, _ in rows if r == run]
        assert ordered == sorted(ordered)


def test_a_metric_where_lower_is_better_counts_a_drop_as_a_gain(tmp_path, write_spec):
    _collection(tmp_path, seed=4, runs=2)
    spec = _spec(["run0", "run1"], ["Fallout@10"], [])
    spec["collections"]["c"]["num_docs"] = 100
    spec["outputs"] = [
        {"path": "d.png", "level": "diff_plot", "metric": "Fallout@10", "baseline": "run0"}
    ]
    rows = (
        evaluate(write_spec(spec))
        .con.execute("SELECT difference, outcome FROM diff_plot_0")
        .fetchall()
    )
    assert {o for d, o in rows if d < 0} == {"better"} and {o for d, o in rows if d > 0} == {
        "worse"
    }
    assert [d for d, _ in rows] == sorted(d for d, _ in rows)  # best gain (lowest) first


def test_differences_use_the_queries_both_runs_were_averaged_over(tmp_path, write_spec):
    generated = _collection(tmp_path, seed=9, runs=2)
    output = {"path": "d.svg", "level": "diff_plot", "metric": "AP", "baseline": "run0"}
    spec = _spec(["run0", "run1"], ["AP"], [output], {"queries": "intersection"})
    evaluation = evaluate(write_spec(spec))
    qids = {q for (q,) in evaluation.con.execute("SELECT qid FROM diff_plot_0").fetchall()}
    both = set(generated.runs["run0"]) & set(generated.runs["run1"]) & set(generated.qrels)
    assert qids == both and len(both) < len(generated.qrels)


@pytest.fixture
def garbage(tmp_path):
    """Data files that cannot be read: every error below is found before any data is read."""
    for name in ("qrels.txt", "bm25.trec", "dense.trec", "solo.trec"):
        (tmp_path / name).write_text("not a TREC file\n")
    return {
        "collections": {"c": {"qrels": "qrels.txt"}, "d": {"qrels": "qrels.txt"}},
        "runs": {
            "bm25": {"path": "bm25.trec", "collection": "c"},
            "dense": {"path": "dense.trec", "collection": "c"},
            "solo": {"path": "solo.trec", "collection": "d"},
        },
        "metrics": ["AP", "nDCG@10", "gm_map", "NumRet", "RelString", "Unjudged@10"],
    }


def _diff(**keys) -> dict:
    return {"path": "d.png", "level": "diff_plot", "metric": "AP", "baseline": "bm25", **keys}


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (_diff(baseline="bm2"), r"spec.yaml:\d+: outputs.0.baseline: unknown run 'bm2'; did you mean 'bm25'\? the spec's runs: bm25, dense, solo"),
        (_diff(baseline="solo"), r"outputs.0.baseline: 'solo' is the only run of collection 'd'"),
        (_diff(metric="nDCG@20"), r"outputs.0.metric: 'nDCG@20' is not a metric of this spec; did you mean 'nDCG@10'\?"),
        (_diff(metric="gm_map"), r"outputs.0.metric: gmAP is aggregated by gmean, not a mean"),
        (_diff(metric="NumRet"), r"outputs.0.metric: NumRet is aggregated by sum"),
        (_diff(metric="RelString"), r"outputs.0.metric: RelString is text"),
        (_diff(metric="Unjudged@10"), r"outputs.0.metric: Unjudged@10 is a count or a diagnostic"),
        ({"path": "d.png", "level": "diff_plot", "baseline": "bm25"}, r"outputs.0.metric: level diff_plot needs metric"),
        ({"path": "d.png", "level": "diff_plot", "metric": "AP"}, r"outputs.0.baseline: level diff_plot needs baseline"),
        ({"path": "p.png", "level": "pr_plot", "metric": "AP"}, r"outputs.0.metric: metric is for level diff_plot or tradeoff, not pr_plot"),
        ({"path": "a.csv", "recall_levels": 101}, r"outputs.0.recall_levels: recall_levels is for level pr_curve or pr_plot, not aggregate"),
        ({"path": "p.csv", "level": "pr_curve", "recall_levels": 12}, r"outputs.0.recall_levels: Input should be 11 or 101"),
        ({"path": "a.png", "level": "aggregate"}, r"outputs.0.level: a .png output cannot be level 'aggregate' \(.png writes: pr_plot, diff_plot, tradeoff, asl_plot\); level aggregate is written to: .csv, .db, .duckdb"),
        ({"path": "p.csv", "level": "pr_plot"}, r"outputs.0.level: a .csv output cannot be level 'pr_plot' .*; level pr_plot is written to: .png, .svg$"),
        ({"path": "p.trec_eval", "level": "pr_curve"}, r"outputs.0.level: a .trec_eval output cannot be level 'pr_curve' \(.trec_eval writes: query, aggregate\)"),
    ],
)  # fmt: skip
def test_bad_outputs_are_spec_errors_naming_the_key(write_spec, garbage, output, message):
    garbage["outputs"] = [output]
    with pytest.raises(SpecError, match=message):
        validate(write_spec(garbage))


def test_a_baseline_from_an_unexpanded_pattern_is_checked_once_expanded(tmp_path, write_spec):
    (tmp_path / "runs").mkdir()
    _collection(tmp_path / "runs", seed=1, runs=2)
    (tmp_path / "runs" / "qrels.txt").rename(tmp_path / "qrels.txt")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"sys": {"path": "runs/*.trec", "collection": "c"}},
        "metrics": ["AP"],
        "outputs": [_diff(baseline="sys/run0")],
    }
    path = write_spec(spec)
    assert validate(path, data=False).metrics  # the pattern's runs are not listed without data
    assert len(validate(path).sql.loads) == 3
    spec["outputs"] = [_diff(baseline="sys/run7")]
    with pytest.raises(SpecError, match=r"outputs.0.baseline: unknown run 'sys/run7'"):
        validate(write_spec(spec))


@pytest.mark.parametrize("name", ["nDCG@10", "ndcg_cut_10", "nDCG(k=10)"])
def test_a_diff_plot_names_its_metric_by_label_or_by_any_name_of_it(write_spec, garbage, name):
    garbage["outputs"] = [_diff(metric=name)]
    plan = validate(write_spec(garbage), data=False).sql
    assert "p.metric = ?" in plan.sql_text() and "'nDCG@10'" in plan.sql_text()
