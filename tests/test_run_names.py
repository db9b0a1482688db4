"""Run names from glob patterns: TREC's `input.<runtag>` files and ordinary run files.

Every case writes real files and goes through `load_spec`, or through the real CLI.
"""

from __future__ import annotations

import csv
import gzip

import pytest
from conftest import irpipe_inprocess

from pipeline import SpecError
from pipeline.spec import load_spec
from pipeline.synthetic import generate, write_qrels, write_run


@pytest.fixture
def spec_with_pattern(tmp_path, write_spec):
    """Write empty files under runs/ and a spec whose run `sys` is `pattern`; return the spec."""

    def write(files: list[str], pattern: str = "runs/*", extra: dict | None = None):
        (tmp_path / "qrels.txt").write_text("1 0 a 1\n")
        (tmp_path / "runs").mkdir(exist_ok=True)
        for name in files:
            (tmp_path / "runs" / name).write_bytes(b"")
        runs = {"sys": {"path": pattern, "collection": "c"}, **(extra or {})}
        spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "runs": runs, "metrics": ["AP"]}
        return write_spec(spec)

    return write


@pytest.mark.parametrize(
    ("file", "name"),
    [
        ("input.aplrob03a", "aplrob03a"),  # TREC's distribution: input.<runtag>
        ("input.MU03rob01", "MU03rob01"),
        ("input.aplrob03a.gz", "aplrob03a"),
        ("input.ok8v.2", "ok8v.2"),  # a run tag with a dot keeps it
        ("input.uwmt.run", "uwmt.run"),  # everything after input. is the tag
        ("run.trec", "run"),
        ("run.txt.gz", "run"),
        ("bm25.run", "bm25"),
        ("bm25.trec", "bm25"),
        ("BM25.TREC", "BM25"),
        ("dense.tsv", "dense"),
        ("x.txt", "x"),
        ("ranker.res.bz2", "ranker"),
        ("bm25.k1_0.9", "bm25.k1_0.9"),  # an unknown suffix is part of the name
        ("noext", "noext"),
        ("input.", "input."),  # no tag: nothing to name it by but the file
    ],
)
def test_a_pattern_names_each_run_by_the_rule(spec_with_pattern, tmp_path, file, name):
    loaded = load_spec(spec_with_pattern([file]))
    assert list(loaded.spec.runs) == [f"sys/{name}"]
    assert loaded.spec.runs[f"sys/{name}"].path == tmp_path / "runs" / file


def test_a_trec_directory_gives_one_run_per_tag_in_file_order(spec_with_pattern):
    files = ["input.MU03rob01", "input.aplrob03a", "input.ok8v.2", "input.pircRB03d"]
    loaded = load_spec(spec_with_pattern(files, "runs/input.*"))
    assert list(loaded.spec.runs) == [
        "sys/MU03rob01",
        "sys/aplrob03a",
        "sys/ok8v.2",
        "sys/pircRB03d",
    ]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (["a.trec", "a.txt"], r"runs/a.trec and runs/a.txt are both named 'sys/a'"),
        (["input.bm25", "bm25.trec.gz"], r"runs/bm25.trec.gz and runs/input.bm25 are both named 'sys/bm25'"),
    ],
)  # fmt: skip
def test_two_files_with_one_name_are_an_error_naming_both(spec_with_pattern, files, message):
    with pytest.raises(SpecError, match=rf"spec.yaml:\d+: runs.sys.path: {message}.*rename"):
        load_spec(spec_with_pattern(files))


def test_a_pattern_clashing_with_a_named_run_names_both(spec_with_pattern):
    extra = {"sys/bm25": {"path": "qrels.txt", "collection": "c"}}
    path = spec_with_pattern(["bm25.trec"], extra=extra)
    with pytest.raises(
        SpecError, match=r"runs/bm25.trec and runs.sys/bm25 are both named .sys/bm25."
    ):
        load_spec(path)


def test_the_cli_evaluates_trec_input_files_under_their_tags(tmp_path, write_spec):
    collection = generate(7, queries=6, runs=3, float32_ties=False)
    write_qrels(collection.qrels, tmp_path / "qrels.txt")
    (tmp_path / "runs").mkdir()
    tags = ["aplrob03a", "MU03rob01", "ok8v.2"]
    for tag, run in zip(tags, collection.runs.values(), strict=True):
        write_run(run, tmp_path / "plain", tag=tag)
        (tmp_path / "runs" / f"input.{tag}.gz").write_bytes(
            gzip.compress((tmp_path / "plain").read_bytes())
        )
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"robust": {"path": "runs/input.*", "collection": "c"}},
        "metrics": ["AP"],
        "outputs": [{"path": "out.csv"}],
    }
    result = irpipe_inprocess("run", "--quiet", write_spec(spec))
    assert result.returncode == 0, result.stderr
    with (tmp_path / "out.csv").open() as handle:
        runs = {row["run"] for row in csv.DictReader(handle)}
    assert runs == {f"robust/{tag}" for tag in tags}
