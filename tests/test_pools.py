"""Pools against a plain-Python computation on generated runs with ties: depth, fusion and
uniform pools, their judging order, contributions, statistics and leave-one-run-out."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from conftest import collection_spec

from pipeline.run.evaluation import evaluate
from pipeline.run.pool import build_pools
from pipeline.synthetic import generate, soft_labels, write_qrels

METRICS = ["AP", "P@5", "nDCG@10", "RR", "R@20", "NumRelRet"]


def ranked(run: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """Each query's documents in trec_eval's order: score descending, ties by docno descending."""
    return {q: sorted(docs, key=lambda d: (docs[d], d), reverse=True) for q, docs in run.items()}


def depth_contributions(data, k: int) -> set[tuple[str, str, str, int]]:
    """(qid, docno, run, rank) of each document in a run's top k."""
    return {
        (q, d, name, rank)
        for name, run in data.runs.items()
        for q, docs in ranked(run).items()
        for rank, d in enumerate(docs[:k], 1)
    }


def pool_spec(tmp_path: Path, data, pool: dict, outputs=(), metrics=METRICS, **more) -> Path:
    spec = collection_spec(tmp_path, data, metrics, **more)
    pool = {"collection": "c", **pool}
    pool["outputs"] = [{"path": f"out/{level}.csv", "level": level} for level in outputs]
    spec["pools"] = {"p": pool}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def table(pooled, name: str) -> list[dict]:
    cursor = pooled.con.execute(f"SELECT * FROM {name}")
    columns = [c[0] for c in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 4, 25])
def test_a_depth_pool_is_the_union_of_each_runs_top_k(tmp_path, seed, k):
    data = generate(seed, queries=8, runs=4, extremes=True)
    pooled = build_pools(pool_spec(tmp_path, data, {"method": {"depth": k}}))
    expected = depth_contributions(data, k)
    assert {(q, d) for _, q, d, _ in pooled.documents()} == {(q, d) for q, d, _, _ in expected}
    rows = table(pooled, "contributions_0")
    assert {(r["qid"], r["docno"], r["run"], r["rank"]) for r in rows} == expected


def fused(data, kind: str) -> dict[str, dict[str, float]]:
    """Each query's fused scores, each sum taken over its terms in descending order."""
    terms: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in data.runs.values():
        for q, docs in ranked(run).items():
            scores = [run[q][d] for d in docs]
            low, high = min(scores), max(scores)
            for rank, d in enumerate(docs, 1):
                norm = (run[q][d] - low) / (high - low) if high > low else 1.0
                terms[q][d].append(1.0 / (60 + rank) if kind == "rrf" else norm)
    return {q: {d: sum(sorted(t, reverse=True)) for d, t in ds.items()} for q, ds in terms.items()}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["rrf", "combsum"])
def test_a_fusion_pool_is_the_top_n_of_the_fused_ranking(tmp_path, seed, kind):
    data = generate(seed, queries=8, runs=5, extremes=True)
    pooled = build_pools(pool_spec(tmp_path, data, {"method": {kind: 7}}))
    expected = set()
    for q, scores in fused(data, kind).items():
        top = sorted(scores, key=lambda d: (scores[d], d), reverse=True)[:7]
        expected |= {(q, d) for d in top}
    assert {(q, d) for _, q, d, _ in pooled.documents()} == expected


def test_a_uniform_pool_draws_n_of_the_union_again_from_the_same_seed(tmp_path):
    data = generate(3, queries=10, runs=3)
    union = {(q, d) for run in data.runs.values() for q, docs in run.items() for d in docs}
    drawn = []
    for seed in (1, 1, 2):
        pooled = build_pools(pool_spec(tmp_path, data, {"method": {"uniform": 5}, "seed": seed}))
        drawn.append({(q, d) for _, q, d, _ in pooled.documents()})
    assert drawn[0] <= union and drawn[0] == drawn[1] and drawn[0] != drawn[2]
    per_query = defaultdict(int)
    for q, _ in drawn[0]:
        per_query[q] += 1
    for q in {q for q, _ in union}:
        assert per_query[q] == min(5, len({d for p, d in union if p == q}))


def test_the_judging_order_is_random_and_comes_back_with_the_seed(tmp_path):
    data = generate(5, queries=6, runs=3, ties=False)
    spec = pool_spec(tmp_path, data, {"method": {"depth": 20}, "seed": 7})
    written = tmp_path / "to_judge.txt"
    texts = []
    for seed in (7, 7, 8):
        content = yaml.safe_load(spec.read_text())
        content["pools"]["p"].update(seed=seed, outputs=[{"path": str(written)}])
        spec.write_text(yaml.safe_dump(content))
        build_pools(spec)
        texts.append(written.read_text())
    assert texts[0] == texts[1] and texts[0] != texts[2]
    lines = [line.split() for line in texts[0].splitlines()]
    assert {tuple(f[1::2]) for f in lines} == {("0", "-1")}  # qid 0 docno -1
    assert sorted(f[2] for f in lines) == sorted(
        f[2] for f in map(str.split, texts[2].splitlines())
    )
    first = [f[2] for f in lines if f[0] == lines[0][0]]
    assert first not in (sorted(first), sorted(first, reverse=True))
    manifest = json.loads(Path(f"{written}.manifest.json").read_text())
    assert manifest["pools"][0]["seed"] == 8 and manifest["pools"][0]["method"] == {"depth": 20}


def test_excluded_documents_are_not_judged_again(tmp_path):
    data = generate(2, queries=6, runs=3)
    judged = {(q, d) for q, docs in data.qrels.items() for d in docs}
    write_qrels(data.qrels, tmp_path / "earlier.txt")
    spec = pool_spec(tmp_path, data, {"method": {"depth": 10}, "exclude": "earlier.txt"})
    pooled = build_pools(spec)
    documents = {(q, d) for _, q, d, _ in pooled.documents()}
    expected = {(q, d) for q, d, _, _ in depth_contributions(data, 10)} - judged
    assert documents == expected


def test_excluded_qrels_are_loaded_under_a_plain_name_apart_from_the_collections(tmp_path):
    """The name is the plan's, and steps aside from a collection that has it: that
    collection's qrels, evaluated in the same pass, are neither doubled nor deleted."""
    data = generate(2, queries=6, runs=3)
    judged = {(q, d) for q, docs in data.qrels.items() for d in docs}
    write_qrels(data.qrels, tmp_path / "earlier.txt")
    spec = pool_spec(tmp_path, data, {"method": {"depth": 10}, "exclude": "earlier.txt"})
    content = yaml.safe_load(spec.read_text())
    content["collections"]["p exclude"] = {"qrels": "earlier.txt"}
    content["runs"]["again"] = {**content["runs"]["run0"], "collection": "p exclude"}
    spec.write_text(yaml.safe_dump(content))
    evaluation = evaluate(spec, write=False)
    assert [plan.excluded_as for plan in evaluation.plan.pools] == ["p exclude'"]
    pooled = evaluation.con.execute("SELECT qid, docno FROM pool_0").fetchall()
    assert set(pooled) == {(q, d) for q, d, _, _ in depth_contributions(data, 10)} - judged
    rows = evaluation.con.execute("SELECT count(*) FROM qrels WHERE collection = 'p exclude'")
    assert rows.fetchone()[0] == len(judged)


@pytest.mark.parametrize("grades", ["integer", "real"])
def test_pool_statistics_count_what_plain_python_counts(tmp_path, grades):
    data = generate(4, queries=8, runs=4, extremes=True)
    level, settings = 1, {}
    if grades == "real":  # soft labels at the level 0.5 (tests/test_soft_labels.py)
        data.qrels, level = soft_labels(data.qrels, 4), 0.5
        settings = {"grades": "real", "relevance_level": level}
    pooled = build_pools(pool_spec(tmp_path, data, {"method": {"depth": 6}}, settings=settings))
    contributions = depth_contributions(data, 6)
    by_document = defaultdict(set)
    for q, d, run, _ in contributions:
        by_document[q, d].add(run)
    rows = table(pooled, "pool_stats_0")
    for row in rows:
        if row["run"] is None:
            docs = [key for key in by_document if key[0] == row["qid"]]
        else:
            docs = [key for key, runs in by_document.items() if row["run"] in runs]
        grades = [data.qrels.get(q, {}).get(d) for q, d in docs]
        unique = [key for key in docs if len(by_document[key]) == 1]
        assert row["documents"] == len(docs)
        assert row["judged"] == sum(g is not None for g in grades)
        assert row["relevant"] == sum(g is not None and g >= level for g in grades)
        assert row["unique"] == len(unique)
        unique_grades = [data.qrels.get(q, {}).get(d) for q, d in unique]
        assert row["unique_relevant"] == sum(g is not None and g >= level for g in unique_grades)
    assert {r["run"] for r in rows if r["run"]} == set(data.runs)


def reduced_by_hand(data, k: int, group: set[str]) -> dict[str, dict[str, int]]:
    """The qrels without the judgments of documents only `group`'s runs put in the top k."""
    contributors = defaultdict(set)
    for q, d, run, _ in depth_contributions(data, k):
        contributors[q, d].add(run)
    only = {key for key, runs in contributors.items() if runs <= group}
    return {
        q: {d: g for d, g in docs.items() if (q, d) not in only} for q, docs in data.qrels.items()
    }


def values(spec: Path) -> dict[tuple[str, str], float]:
    return {(run, m): v for run, _, m, v, _ in evaluate(spec, write=False).aggregate()}


@pytest.mark.parametrize("seed", range(3))
def test_leave_one_run_out_equals_evaluating_the_reduced_qrels_by_hand(tmp_path, seed):
    from scipy.stats import kendalltau

    data = generate(seed, queries=10, runs=5, skill=(2.0, 1.0, 0.5, 0.0, 0.2), extremes=True)
    pooled = build_pools(pool_spec(tmp_path, data, {"method": {"depth": 8}}, ["leave_one_out"]))
    rows = table(pooled, "leave_one_out_0")
    full = values(tmp_path / "spec.yaml")
    for run in data.runs:
        alone = tmp_path / run
        alone.mkdir()
        spec = collection_spec(alone, data, METRICS)
        spec["runs"] = {run: spec["runs"][run]}
        write_qrels(reduced_by_hand(data, 8, {run}), alone / "qrels.txt")
        (alone / "spec.yaml").write_text(yaml.safe_dump(spec))
        reduced = values(alone / "spec.yaml")
        for row in (r for r in rows if r["run"] == run):
            assert row["full"] == full[run, row["metric"]]
            assert row["reduced"] == reduced[run, row["metric"]]
    for metric in METRICS:
        of = [r for r in rows if r["metric"] == metric]
        tau = kendalltau([r["full"] for r in of], [r["reduced"] for r in of]).statistic
        assert of[0]["kendall_tau"] == pytest.approx(tau, abs=1e-12)
        for r in of:
            others = [o["full"] for o in of if o is not r]
            assert r["full_rank"] == 1 + sum(o > r["full"] for o in others)
            assert r["reduced_rank"] == 1 + sum(o > r["reduced"] for o in others)


@pytest.mark.parametrize("seed", range(3))
def test_judged_at_k_is_the_mean_over_queries_summed_in_query_order(tmp_path, seed):
    """Exactly Python's left-to-right sum in qid order: a sum in whatever order DuckDB's threads
    finish could change the last digit from one evaluation to the next."""
    data = generate(seed, queries=60, runs=3, extremes=True)
    pooled = build_pools(pool_spec(tmp_path, data, {"method": {"depth": 8}}, ["leave_one_out"]))
    k = pooled.plans[0].judged_at
    for run, rankings in data.runs.items():
        fractions = [
            sum(data.qrels[q].get(d, -1) >= 0 for d in top) / len(top)
            for q in sorted(rankings)
            if q in data.qrels and (top := ranked(rankings)[q][:k])
        ]
        expected = 0.0
        for fraction in fractions:
            expected += fraction
        found = {r["judged_full"] for r in table(pooled, "leave_one_out_0") if r["run"] == run}
        assert found == {expected / len(fractions)}


def test_a_fused_run_beside_the_pooled_runs_leaves_leave_one_out_as_it_is(tmp_path):
    """A fused run adds no document to a pool; leaving each pooled run out gives what it gives
    in the same spec without the fused run."""
    data = generate(4, queries=10, runs=3, extremes=True)
    pool, levels = {"method": {"depth": 6}}, ["leave_one_out"]
    (tmp_path / "plain").mkdir()
    (tmp_path / "fused").mkdir()
    plain = table(build_pools(pool_spec(tmp_path / "plain", data, pool, levels)), "leave_one_out_0")
    spec = tmp_path / "fused" / "spec.yaml"
    pool_spec(spec.parent, data, pool, levels)
    document = yaml.safe_load(spec.read_text())
    document["runs"]["rrf"] = {"fuse": list(data.runs), "method": "rrf"}
    spec.write_text(yaml.safe_dump(document, sort_keys=False))
    assert table(build_pools(spec), "leave_one_out_0") == plain


def test_a_group_is_left_out_together(tmp_path):
    data = generate(8, queries=8, runs=4, skill=(1.0, 0.5, 0.0, 0.3))
    pool = {"method": {"depth": 5}, "groups": "^(run)[01]", "metrics": ["AP"]}
    pooled = build_pools(pool_spec(tmp_path, data, pool, ["leave_one_out"]))
    rows = {r["run"]: r for r in table(pooled, "leave_one_out_0")}
    assert rows["run0"]["group"] == rows["run1"]["group"] == "run"  # the first group names it
    reduced = reduced_by_hand(data, 5, {"run0", "run1"})
    removed = sum(len(data.qrels[q]) - len(reduced[q]) for q in data.qrels)
    assert rows["run0"]["removed_judgments"] == rows["run1"]["removed_judgments"] == removed
    assert rows["run2"]["group"] == "run2" and rows["run3"]["group"] == "run3"


def test_irpipe_run_pools_in_the_evaluations_pass_and_writes_every_output(tmp_path):
    data = generate(1, queries=6, runs=3)
    spec = pool_spec(tmp_path, data, {"method": {"depth": 5}}, ["pool", "leave_one_out"])
    content = yaml.safe_load(spec.read_text())
    content["outputs"] = [{"path": "out/summary.csv"}]
    spec.write_text(yaml.safe_dump(content))
    evaluation = evaluate(spec)
    pooled = build_pools(spec, write=False)
    ran = evaluation.con.execute("SELECT * FROM pool_0").fetchall()
    assert ran == pooled.con.execute("SELECT * FROM pool_0").fetchall()
    for name in ("summary.csv", "pool.csv", "leave_one_out.csv"):
        assert (tmp_path / "out" / name).stat().st_size > 0


def test_a_collection_before_judging_is_pooled_not_evaluated(tmp_path):
    data = generate(6, queries=5, runs=2)
    spec = pool_spec(tmp_path, data, {"method": {"depth": 3}}, ["pool_stats"])
    content = yaml.safe_load(spec.read_text())
    del content["collections"]["c"]["qrels"]
    spec.write_text(yaml.safe_dump(content))
    pooled = build_pools(spec)
    stats = table(pooled, "pool_stats_0")
    assert all(r["judged"] is None and r["documents"] > 0 for r in stats)
    from pipeline.errors import SpecError

    with pytest.raises(SpecError, match=r"collections\.c: no qrels, but runs are evaluated"):
        evaluate(spec, write=False)


def test_judged_only_is_the_condensed_list(tmp_path):
    """Sakai's condensed list (unjudged documents removed before ranking) evaluated as usual gives
    what `judged_only` gives on the full run; trec_eval's -J also drops negatively judged ones."""
    data = generate(9, queries=10, runs=3, extremes=True)
    full = collection_spec(tmp_path, data, METRICS, settings={"judged_only": True})
    (tmp_path / "full.yaml").write_text(yaml.safe_dump(full))
    condensed_dir = tmp_path / "condensed"
    condensed_dir.mkdir()
    for run in data.runs.values():
        for q in run:
            judged = data.qrels.get(q, {})
            run[q] = {d: s for d, s in run[q].items() if judged.get(d, -1) >= 0}
    condensed = collection_spec(condensed_dir, data, METRICS)
    (condensed_dir / "spec.yaml").write_text(yaml.safe_dump(condensed))
    expected = evaluate(condensed_dir / "spec.yaml", write=False).per_query()
    assert evaluate(tmp_path / "full.yaml", write=False).per_query() == expected


def test_the_guides_example_prints_what_the_guide_shows(tmp_path):
    """The guide's pools example (configs/README.md, the region `pools-example`): the command its
    run block shows prints its output block, and the prose's numbers are the table's."""
    import shutil

    from conftest import irpipe_inprocess
    from docblocks import region, region_blocks

    root = Path(__file__).resolve().parents[1]
    shutil.copytree(root / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("out"))
    section = region("configs/README.md", "pools-example")
    (run, output) = [b for b in region_blocks("configs/README.md", "pools-example")]
    assert "run" in run.marks and "output" in output.marks
    result = irpipe_inprocess(*run.text.split()[1:], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == output.text
    rows = (tmp_path / "configs/out/pool/leave_one_out.csv").read_text().splitlines()
    bm25_ap = next(r.split(",") for r in rows if ",bm25,AP," in r)
    assert f"{float(bm25_ap[5]):.3f} to {float(bm25_ap[6]):.3f}" in section  # 0.218 to 0.054
    assert f"({bm25_ap[13]} of bm25's" in section


def test_a_pooled_run_is_read_again_even_when_the_history_holds_its_results(tmp_path):
    data = generate(2, queries=5, runs=3)
    spec = pool_spec(tmp_path, data, {"method": {"depth": 4}, "runs": ["run0", "run1"]}, ["pool"])
    content = yaml.safe_load(spec.read_text())
    content["history"] = "history.duckdb"
    spec.write_text(yaml.safe_dump(content))
    first = evaluate(spec)
    again = evaluate(spec)
    assert set(again.keeper.reused) == {"run2"}  # the runs outside the pool are reused
    pool = "SELECT * FROM pool_0 ORDER BY qid, position"
    assert again.con.execute(pool).fetchall() == first.con.execute(pool).fetchall()
    assert again.aggregate() == first.aggregate()
    assert again.recorded["pools"][0]["runs"] == ["run0", "run1"]


def test_a_pattern_runs_name_pools_every_run_it_expands_to(tmp_path):
    data = generate(3, queries=4, runs=3)
    spec = collection_spec(tmp_path, data, ["AP"])
    spec["runs"] = {"sys": {"path": "run*.txt", "collection": "c"}}
    spec["pools"] = {"p": {"collection": "c", "runs": ["sys"], "method": {"depth": 2}}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    pooled = build_pools(tmp_path / "spec.yaml")
    assert pooled.plans[0].runs == ("sys/run0", "sys/run1", "sys/run2")
    expected = {(q, d) for q, d, _, _ in depth_contributions(data, 2)}
    assert {(q, d) for _, q, d, _ in pooled.documents()} == expected


def test_irpipe_pool_evaluates_for_leave_one_out_but_records_nothing(tmp_path):
    data = generate(4, queries=4, runs=2)
    spec = pool_spec(tmp_path, data, {"method": {"depth": 3}}, ["leave_one_out"])
    content = yaml.safe_load(spec.read_text())
    content["history"] = "history.duckdb"
    spec.write_text(yaml.safe_dump(content))
    build_pools(spec)
    assert (tmp_path / "out" / "leave_one_out.csv").exists()
    assert not (tmp_path / "history.duckdb").exists()


def test_a_run_that_alone_found_its_judged_documents_is_left_out_all_the_same(tmp_path):
    """Left out, a run that alone contributed every judged document it retrieved retrieves none
    of its reduced qrels': leave-one-out measures exactly that (its reduced values are 0), and
    never refuses it as a run whose docnos match no judgment (`unmatched_runs`)."""
    from types import SimpleNamespace

    runs = {
        "a": {"1": {"d1": 3.0, "d2": 2.0}, "2": {"d3": 3.0, "d4": 2.0}},
        "b": {"1": {"d2": 3.0, "d1": 2.0}, "2": {"d4": 3.0, "d3": 2.0}},
        "alone": {"1": {"x1": 3.0, "x2": 2.0}, "2": {"x3": 3.0, "x4": 2.0}},
    }
    qrels = {q: {d: int(d.endswith(("1", "3"))) for run in runs.values() for d in run[q]}
             for q in ("1", "2")}  # fmt: skip
    data = SimpleNamespace(qrels=qrels, runs=runs)
    pool = {"method": {"depth": 2}, "metrics": ["AP"]}
    spec = pool_spec(tmp_path, data, pool, ["leave_one_out"])
    rows = {r["run"]: r for r in table(build_pools(spec), "leave_one_out_0")}
    assert rows["alone"]["full"] == 0.5 and rows["alone"]["reduced"] == 0.0
    assert rows["a"]["reduced"] == rows["a"]["full"] == 0.5
