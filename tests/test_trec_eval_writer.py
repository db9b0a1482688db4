"""trec_eval's text as a writer: a spec output `*.trec_eval` prints what `irpipe trec-eval` prints,
one block per run; and text metrics alone evaluate (the per-query table's columns are fixed)."""

from __future__ import annotations

from conftest import irpipe_inprocess

from pipeline.measures.trec_names import ORDER
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run


def _files(tmp_path, runs=2):
    collection = generate(11, queries=9, runs=runs)
    write_qrels(collection.qrels, tmp_path / "qrels.txt")
    for name, run in collection.runs.items():
        write_run(run, tmp_path / f"{name}.txt", name)
    return list(collection.runs)


def test_spec_output_in_trec_eval_format_matches_the_command(tmp_path, write_spec):
    runs = _files(tmp_path)
    names = {
        "num_ret": "num_ret",
        "num_rel": "num_rel",
        "map": "map",
        "P_5": "P",
        "gm_map": "gm_map",
    }
    names |= {"relstring": "relstring", "ndcg_cut_10": "ndcg_cut"}
    metrics = sorted(names, key=lambda m: ORDER.index(names[m]))  # trec_eval prints in its order
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {name: {"path": f"{name}.txt", "collection": "c"} for name in runs},
        "settings": {"missing_queries": "trec_eval_c"},
        "metrics": [{"metric": m, "label": m} for m in metrics],
        "outputs": [{"path": "out/all.trec_eval", "level": "query"}],
    }
    evaluate(write_spec(spec))
    written = (tmp_path / "out/all.trec_eval").read_text()
    flags = [
        arg for m in metrics for arg in ("-m", m.replace("_cut_", "_cut.").replace("P_", "P."))
    ]
    expected = ""
    for name in runs:
        files = [str(tmp_path / "qrels.txt"), str(tmp_path / f"{name}.txt")]
        done = irpipe_inprocess("trec-eval", "-q", "-c", "-m", "runid", *flags, *files)
        assert done.returncode == 0, done.stderr
        expected += done.stdout
    assert written == expected
    assert "relstring" in written and "gm_map" in written


def test_text_metrics_alone_evaluate(tmp_path, write_spec):
    [run] = _files(tmp_path, runs=1)
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": f"{run}.txt", "collection": "c"}},
        "metrics": ["RelString@5"],
        "outputs": [{"path": "out/q.csv", "level": "query"}],
    }
    evaluation = evaluate(write_spec(spec))
    header = (tmp_path / "out/q.csv").read_text().splitlines()[0]
    assert header == "run,collection,qid,metric,value,text"
    texts = evaluation.con.execute("SELECT text FROM per_query").fetchall()
    assert len(texts) == 9 and all(len(t) <= 5 for (t,) in texts)
    assert any(t for (t,) in texts)


def test_trec_eval_relstring_alone(tmp_path):
    [run] = _files(tmp_path, runs=1)
    done = irpipe_inprocess(
        "trec-eval",
        "-q",
        "-c",
        "-m",
        "relstring",
        str(tmp_path / "qrels.txt"),
        str(tmp_path / f"{run}.txt"),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 9 and all(line.startswith("relstring") for line in lines)
