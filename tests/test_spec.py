"""Spec errors: each one names the file, the line and the dotted key, before any data is read."""

from __future__ import annotations

import pytest

from pipeline import SpecError, validate
from pipeline.spec import load_spec


@pytest.fixture
def spec_dict(tmp_path):
    # The data files are garbage on purpose: a spec error must be found before any data is read.
    (tmp_path / "qrels.txt").write_text("not a qrels file\n")
    (tmp_path / "run.txt").write_text("not a run\n")
    return {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": ["P@10"],
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.update(metrics=["Pp@10"]), r"spec.yaml:\d+: metrics.0: unknown metric 'Pp'; did you mean 'P@10'"),
        (lambda s: s.update(metrics=["AP(variant='x')"]), r"metrics.0: 'AP\(variant='x'\)': parameter 'variant'"),
        (lambda s: s.update(metrics=[{"metric": "SetF", "beta": -1}]), r"metrics.0: .*'beta': Input should be greater than 0"),
        (lambda s: s.update(metrics=[{"metric": "RR", "gain": "linear"}]), r"metrics.0: .*unknown parameter 'gain' of RR; allowed: rel, k"),
        (lambda s: s.update(metrics=["Fallout"]), r"metrics.0: 'Fallout': Fallout needs k \(e.g. Fallout@10\)"),
        (lambda s: s.update(metrics=["runid"]), r"metrics.0: 'runid' is trec_eval's run tag, not a metric"),
        (lambda s: s.update(metrics=["P@10", "P_10"]), r"metric 'P@10' is listed twice"),
        (lambda s: s.update(metrics=["Fallout@10"]), r"collections.c: Fallout@10 needs 'num_docs'"),
        (lambda s: s["runs"]["r"].update(collection="x"), r"spec.yaml:\d+: runs.r.collection: unknown collection 'x'"),
        (lambda s: s["runs"]["r"].update(path="nope.txt"), r"spec.yaml:\d+: runs.r.path: .*nope.txt does not exist"),
        (lambda s: s["collections"]["c"].update(qrels="."), r"collections.c.qrels: .* is a directory"),
        (lambda s: s.update(settings={"relevnce_level": 2}), r"settings.relevnce_level: unknown key; did you mean 'relevance_level'"),
        (lambda s: s.update(settings={"ordering": "score"}), r"settings.ordering: Input should be 'trec_eval' or 'rank'"),
        (lambda s: s.update(settings={"relevance_level": "1"}), r"settings.relevance_level: Input should be a finite number \(an integer; a decimal under grades: real\)$"),
        (lambda s: s.update(settings={"grades": "real", "relevance_level": float("nan")}), r"settings.relevance_level: Input should be a finite number"),
        (lambda s: s.update(settings={"memory_limit": "lots"}), r"settings.memory_limit: .*a size such as 500MB or 2GiB, found 'lots'"),
        (lambda s: s.update(outputs=[{"path": "x.xlsx"}]), r"outputs.0.path: .*no writer for '.xlsx'"),
        (lambda s: s.update(outputs=[{"path": "x.csv", "level": "topic"}]), r"outputs.0.level: Input should be 'query', 'aggregate'"),
        (lambda s: s.update(metrics=[]), r"metrics: give at least one; only a spec that compares judgment sets alone"),
        (lambda s: s.update(extra=1), r"spec.yaml:\d+: extra: unknown key"),
    ],
)  # fmt: skip
def test_spec_errors_name_file_line_and_key(write_spec, spec_dict, change, message):
    change(spec_dict)
    with pytest.raises(SpecError, match=message):
        validate(write_spec(spec_dict))


def test_duplicate_yaml_key_is_an_error(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("collections: {}\nruns: {}\nmetrics: [P@10]\nmetrics: [AP]\n")
    with pytest.raises(SpecError, match=r"spec.yaml:4: metrics: duplicate key"):
        load_spec(path)


def test_yaml_tags_are_not_constructed(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("collections: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(SpecError, match=r"spec.yaml:1: invalid YAML"):
        load_spec(path)


def test_paths_resolve_relative_to_the_spec(tmp_path, write_spec, spec_dict):
    loaded = load_spec(write_spec(spec_dict))
    assert loaded.spec.runs["r"].path == tmp_path / "run.txt"


def test_cutoff_list_expands_with_labels(write_spec, spec_dict):
    spec_dict["metrics"] = [{"metric": "nDCG", "k": [5, 10], "gain": "exponential", "label": "e"}]
    plan = validate(write_spec(spec_dict))
    assert [(m.label, m.canonical) for m in plan.metrics] == [
        ("e@5", "nDCG(gain='exponential')@5"),
        ("e@10", "nDCG(gain='exponential')@10"),
    ]


def test_a_run_glob_expands_to_one_run_per_file(tmp_path, write_spec, spec_dict):
    (tmp_path / "runs").mkdir()
    for name in ("dense.trec.gz", "bm25.trec", ".hidden.trec"):
        (tmp_path / "runs" / name).write_bytes(b"")
    spec_dict["runs"] = {
        "sys": {"path": "runs/*.trec*", "collection": "c"},
        "r": spec_dict["runs"]["r"],
    }
    loaded = load_spec(write_spec(spec_dict))
    assert list(loaded.spec.runs) == ["sys/bm25", "sys/dense", "r"]
    assert loaded.spec.runs["sys/dense"].path == tmp_path / "runs" / "dense.trec.gz"
    assert loaded.where("runs", "sys/bm25", "collection").startswith(f"{tmp_path / 'spec.yaml'}:")


@pytest.mark.parametrize(
    ("files", "pattern", "message"),
    [
        ([], "runs/*.trec", r"spec.yaml:\d+: runs.sys.path: no file matches the pattern 'runs/\*.trec'"),
        (["a.trec", "a.txt"], "runs/a.*", r"spec.yaml:\d+: runs.sys.path: runs/a.trec and runs/a.txt are both named 'sys/a'"),
    ],
)  # fmt: skip
def test_run_glob_errors_name_the_key(tmp_path, write_spec, spec_dict, files, pattern, message):
    (tmp_path / "runs").mkdir()
    for name in files:
        (tmp_path / "runs" / name).write_bytes(b"")
    spec_dict["runs"] = {"sys": {"path": pattern, "collection": "c"}}
    with pytest.raises(SpecError, match=message):
        load_spec(write_spec(spec_dict))


def test_a_file_named_like_a_pattern_is_a_file(tmp_path, write_spec, spec_dict):
    (tmp_path / "run[1].txt").write_text("1 Q0 a 1 1 t\n")
    spec_dict["runs"]["r"]["path"] = "run[1].txt"
    assert list(load_spec(write_spec(spec_dict)).spec.runs) == ["r"]


def test_a_collection_without_runs_is_a_warning(write_spec, spec_dict):
    from pipeline.errors import IrpipeWarning

    spec_dict["collections"]["unused"] = {"qrels": "qrels.txt"}
    with pytest.warns(
        IrpipeWarning, match=r"spec.yaml:\d+: collections.unused: no run is evaluated"
    ):
        load_spec(write_spec(spec_dict))
