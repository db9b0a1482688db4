"""Same inputs, same bytes: every output of a spec is byte-identical across evaluations, thread
counts and doors; per-query values are trec_eval's sums to the last bit; `irpipe verify`.

The collection is deep enough (1,000 documents a query) for DuckDB to split a query's rows between
threads: summed as they arrive, values changed in their last bit from one evaluation to the next.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from conftest import deep_collection, irpipe_inprocess

from pipeline.notebook import evaluate as evaluate_frames
from pipeline.run.evaluation import evaluate

QUERIES, DEPTH, RUNS = 20, 1000, 3
METRICS = ["AP", "nDCG", "nDCG@10", "Bpref", "infAP", "RBP(p=0.8)", "ERR@20", "P@10", "RR"]
OUTPUTS = [
    {"path": "out/per_query.parquet", "level": "query"},
    {"path": "out/per_query.csv", "level": "query"},
    {"path": "out/aggregate.tsv", "level": "aggregate"},
    {"path": "out/aggregate.jsonl", "level": "aggregate"},
    {"path": "out/summary.md", "level": "aggregate"},
    {"path": "out/results.trec_eval", "level": "query"},
    {"path": "out/curve.csv", "level": "pr_curve"},
    {"path": "out/comparison.csv", "level": "comparison"},
    {"path": "out/report.md", "level": "report"},
    {"path": "out/report.tex", "level": "report"},
    {"path": "out/fused.trec", "level": "run", "run": "fused"},
    {"path": "out/results.duckdb", "level": "query"},
]


def _spec() -> dict:
    runs = {f"run{r}": {"path": f"run{r}.txt", "collection": "c"} for r in range(RUNS)}
    fused = {"fuse": list(runs), "method": "combsum", "norm": "sum"}
    return {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {**runs, "fused": fused},
        "metrics": METRICS,
        "compare": {"baseline": "run0", "tests": ["t", "randomization"]},
        "outputs": OUTPUTS,
    }


@pytest.fixture(scope="module")
def deep(tmp_path_factory) -> Path:
    """The collection and its spec, in a directory of their own."""
    directory = tmp_path_factory.mktemp("deep")
    deep_collection(directory, QUERIES, DEPTH, RUNS)
    (directory / "spec.yaml").write_text(yaml.safe_dump(_spec()), encoding="utf-8")
    return directory


def _digests(directory: Path) -> dict[str, str]:
    """The digest of every output (not the manifests, which record when they were written; nor
    the database, which holds its manifest as a table: its rows are compared below)."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((directory / "out").iterdir())
        if not p.name.endswith((".manifest.json", ".duckdb"))
    }


def _database_rows(directory: Path) -> list[tuple]:
    from pipeline.outputs.rows import table_rows

    return table_rows(directory / "out" / "results.duckdb", database=True)


def test_ten_evaluations_at_one_two_and_four_threads_write_the_same_bytes(deep):
    seen, rows = defaultdict(set), []
    for threads in (1, 2, 4, 1, 2, 4, 4, 2, 1, 4):
        evaluate(deep / "spec.yaml", threads=threads)
        for name, digest in _digests(deep).items():
            seen[name].add(digest)
        rows.append(_database_rows(deep))
    assert len(seen) == len(OUTPUTS) - 1
    assert {name: len(d) for name, d in seen.items() if len(d) > 1} == {}
    assert all(r == rows[0] for r in rows) and len(rows[0]) == (RUNS + 1) * QUERIES * 9


def test_the_values_are_trec_eval_s_to_the_last_bit(deep):
    """pytrec_eval (trec_eval's code) adds a query's terms in rank order; so does irpipe, at
    any number of threads: every value is the same double, not merely close."""
    import pytrec_eval

    qrels, runs = defaultdict(dict), {}
    for line in (deep / "qrels.txt").read_text().splitlines():
        q, _, d, rel = line.split()
        qrels[q][d] = int(rel)
    for r in range(RUNS):
        runs[f"run{r}"] = defaultdict(dict)
        for line in (deep / f"run{r}.txt").read_text().splitlines():
            q, _, d, _, score, _ = line.split()
            runs[f"run{r}"][q][d] = float(score)
    names = {"map": "AP", "ndcg": "nDCG", "bpref": "Bpref", "infAP": "infAP", "recip_rank": "RR"}
    evaluator = pytrec_eval.RelevanceEvaluator(dict(qrels), set(names))
    ours = evaluate(deep / "spec.yaml", write=False, threads=4).per_query()
    values = {(run, qid, metric): value for run, _, qid, metric, value in ours}
    compared = 0
    for run, ranking in runs.items():
        for qid, measures in evaluator.evaluate(dict(ranking)).items():
            for measure, value in measures.items():
                assert values[run, qid, names[measure]] == value, (run, qid, measure)
                compared += 1
    assert compared == RUNS * (QUERIES - 1) * len(names)


def test_frames_give_the_files_values_to_the_last_bit(deep):
    import pandas

    read = {"sep": " ", "header": None, "dtype": {0: str, 2: str}}
    qrels = pandas.read_csv(deep / "qrels.txt", names=["qid", "iter", "docno", "rel"], **read)
    columns = ["qid", "q0", "docno", "rank", "score", "tag"]
    runs = {
        f"run{r}": pandas.read_csv(deep / f"run{r}.txt", names=columns, **read) for r in range(RUNS)
    }
    files = evaluate(deep / "spec.yaml", write=False, threads=1).per_query()
    expected = {row[:4]: row[4] for row in files if row[0] != "fused"}
    for threads in (1, 4):
        frames = evaluate_frames(qrels=qrels, runs=runs, metrics=METRICS, threads=threads)
        got = frames.per_query()
        assert len(got) == len(expected)
        for row in got.itertuples(index=False):
            key = (row.run, "default", row.qid, row.metric)
            assert row.value == expected[(row.run, "c", row.qid, row.metric)], key


# --- irpipe verify ---


@pytest.fixture
def written(deep, tmp_path) -> Path:
    """A copy of the collection, evaluated once: its outputs and their manifests."""
    shutil.copytree(deep, tmp_path / "w", ignore=shutil.ignore_patterns("out"))
    evaluate(tmp_path / "w" / "spec.yaml", threads=2)
    return tmp_path / "w"


def _verify(path: Path) -> tuple[int, str]:
    code, out, err = irpipe_inprocess("verify", path)
    return code, out + err


def test_verify_evaluates_again_and_finds_the_same_bytes(written):
    for name in ("per_query.parquet", "summary.md", "report.tex", "fused.trec", "results.duckdb"):
        code, said = _verify(written / "out" / name)
        what = "rows" if name.endswith(".duckdb") else "bytes"
        assert (code, said.strip()) == (0, f"{written / 'out' / name}: the same {what}, "
                                            "evaluated again from its manifest")  # fmt: skip
    assert not list((written / "out").glob(".irpipe-verify-*")), "the scratch directory is left"


def test_verify_names_the_first_line_or_row_that_differs(written):
    csv = written / "out" / "per_query.csv"
    lines = csv.read_text().splitlines()
    lines[7] = lines[7].replace(lines[7].split(",")[4], "0.5")
    csv.write_text("\n".join(lines) + "\n")
    code, said = _verify(csv)
    assert code == 5 and f"line 8: {lines[7]!r} written" in said
    parquet = written / "out" / "per_query.parquet"
    import duckdb

    duckdb.execute(
        f"COPY (SELECT * REPLACE (CASE WHEN qid = '3' AND metric = 'AP' AND run = 'run1' THEN 0.5 "
        f"ELSE value END AS value) FROM '{parquet}') TO '{parquet}.tmp' (FORMAT parquet)"
    )
    Path(f"{parquet}.tmp").replace(parquet)
    code, said = _verify(parquet)
    assert code == 5 and "row " in said and "'run1', 'c', '3', 'AP', 0.5" in said


def test_verify_stops_at_an_input_whose_digest_changed(written):
    run = written / "run1.txt"
    run.write_text(run.read_text().replace(" 2.5", " 2.6", 1))
    code, said = _verify(written / "out" / "aggregate.tsv")
    assert code == 3
    assert f"run 'run1' ({run}) changed since the output was written" in said


def test_verify_stops_at_a_changed_spec_and_needs_a_manifest(written):
    manifest = json.loads((written / "out" / "summary.md.manifest.json").read_text())
    code, said = _verify(written / "spec.yaml")
    assert code == 2 and "no manifest beside it" in said
    spec = written / "spec.yaml"
    spec.write_text(spec.read_text() + "# a comment\n")
    code, said = _verify(written / "out" / "summary.md")
    assert code == 3 and f"the spec {manifest['spec']} changed" in said


# --- the threads setting ---


def test_threads_must_be_a_whole_number_of_at_least_one(deep, write_spec):
    spec = _spec() | {"settings": {"threads": 0}}
    spec["collections"]["c"]["qrels"] = str(deep / "qrels.txt")
    for run in ("run0", "run1", "run2"):
        spec["runs"][run]["path"] = str(deep / f"{run}.txt")
    code, _, err = irpipe_inprocess("validate", write_spec(spec))
    assert code == 2 and "settings.threads" in err
    code, _, err = irpipe_inprocess("run", deep / "spec.yaml", "--threads", "0")
    assert code == 2  # argparse's usage error
    assert "--threads: expected a whole number of at least 1, got '0'" in err


def test_threads_is_recorded_but_not_in_the_results_bytes(written):
    manifest = json.loads((written / "out" / "summary.md.manifest.json").read_text())
    assert manifest["settings"]["threads"] == 2  # as the fixture evaluated it
    footer = (written / "out" / "summary.md").read_text().splitlines()[-1]
    assert "grades=integer;" in footer and "threads" not in footer and "engine" not in footer


# --- the example specs ---

EXAMPLES = sorted(
    p.name for p in (Path(__file__).parents[1] / "configs").glob("*.yaml") if p.name != "spark.yaml"
)


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_s_outputs_are_the_same_bytes_ten_times(tmp_path, example):
    """Ten evaluations of each example spec of configs/ (Spark's is the Spark tests'), at 1, 2
    and 4 threads, history aside (one that held the results would skip computing them)."""
    configs = shutil.copytree(Path(__file__).parents[1] / "configs", tmp_path / "configs")
    seen = defaultdict(set)
    for threads in (1, 2, 4, 1, 2, 4, 4, 2, 1, 4):
        evaluation = evaluate(configs / example, threads=threads, remember=False)
        for job in evaluation.plan.outputs:
            if job.path.suffix != ".duckdb":
                seen[job.path.name].add(hashlib.sha256(job.path.read_bytes()).hexdigest())
    assert seen, f"{example} wrote nothing"
    assert {name: len(digests) for name, digests in seen.items() if len(digests) > 1} == {}
