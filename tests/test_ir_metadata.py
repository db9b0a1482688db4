"""ir_metadata (ir-metadata.org): a run file's block read into its provenance, runs named by their
tags, and the `ir_metadata` output level, by both doors.

Every run file here is generated (`pipeline.synthetic`) and given a block written by the test.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import json
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import irpipe_inprocess

import pipeline
from pipeline import InputDataError, SpecError
from pipeline._version import __version__
from pipeline.digest import digest_file
from pipeline.spec import load_spec
from pipeline.spec.ir_metadata import HeadLines, parse, read_head
from pipeline.synthetic import generate, write_qrels, write_run


def block(tag: str, team: str = "lab") -> str:
    """An ir_metadata block as run files carry it: YAML behind '# ', between the markers."""
    return (
        "# ir_metadata.start\n"
        f"# tag: {tag}\n"
        "# actor:\n"
        f"#   team: {team}\n"
        "# platform:\n"
        "#   software:\n"
        "#     libraries:\n"
        "#       - pyterrier==0.10.1\n"
        "# research goal:\n"
        "#   venue:\n"
        "#     name: SIGIR\n"
        "#     year: 2026\n"
        "# method:\n"
        "#   retrieval:\n"
        "#     - name: bm25\n"
        "#       k1: 0.9\n"
        "# ir_metadata.end\n"
    )


def own(tag: str, team: str = "lab") -> dict:
    """What `block(tag, team)` says, as a mapping."""
    return {
        "tag": tag,
        "actor": {"team": team},
        "platform": {"software": {"libraries": ["pyterrier==0.10.1"]}},
        "research goal": {"venue": {"name": "SIGIR", "year": 2026}},
        "method": {"retrieval": [{"name": "bm25", "k1": 0.9}]},
    }


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    """qrels.txt and two TREC runs, runs/input.run0 and runs/input.run1, each opening with a
    block tagged bm25 and rm3."""
    data = generate(11, queries=8, runs=2, float32_ties=False, skill=(2.0, 4.0))
    write_qrels(data.qrels, tmp_path / "qrels.txt")
    (tmp_path / "runs").mkdir()
    for (name, run), tag in zip(data.runs.items(), ("bm25", "rm3"), strict=True):
        path = tmp_path / "runs" / f"input.{name}"
        write_run(run, path, tag=name)
        path.write_text(block(tag) + path.read_text())
    return tmp_path


def spec(**more) -> dict:
    runs = {"sys": {"path": "runs/input.*", "collection": "c", **more.pop("run", {})}}
    return {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": runs,
        "metrics": ["AP", "nDCG@10"],
        **more,
    }


def run_cli(path: Path) -> tuple[int, str]:
    """`irpipe run --quiet PATH`: its exit code and stderr."""
    code, _, err = irpipe_inprocess("run", "--quiet", path)
    return code, err


# --- reading the block -------------------------------------------------------------------------


def test_the_block_is_read_from_the_lines_that_open_the_file(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("\n# a comment first\n" + block("bm25") + "  \n1 Q0 d1 1 2.0 x\n")
    assert parse(read_head(path), str(path)) == own("bm25")


def test_a_block_after_the_first_line_of_data_is_not_read(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 d1 1 2.0 x\n" + block("bm25") + "1 Q0 d2 2 1.0 x\n")
    assert read_head(path) == [] and parse(read_head(path), str(path)) is None


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 20])
def test_the_head_fed_block_by_block_is_the_head_read_whole(tmp_path, size):
    path = tmp_path / "run.txt"
    path.write_bytes((block("bm25") + "1 Q0 d1 1 2.0 x\n" * 50).encode())
    head, data = HeadLines(), path.read_bytes()
    for start in range(0, len(data), size):
        if not head(data[start : start + size]):
            break
    assert head.finish() == read_head(path)
    assert parse(head.finish(), "x") == own("bm25")


def test_watching_the_digest_read_leaves_the_digest_as_it_was(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text(block("bm25") + "1 Q0 d1 1 2.0 x\n" * 10)
    head = HeadLines()
    assert digest_file(path, head) == digest_file(path)
    assert parse(head.finish(), "x") == own("bm25")


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress])
def test_a_compressed_run_has_its_block_read_from_its_text(tmp_path, compress):
    path = tmp_path / f"run.{'gz' if compress is gzip.compress else 'bz2'}"
    path.write_bytes(compress((block("bm25") + "1 Q0 d1 1 2.0 x\n").encode()))
    assert parse(read_head(path), str(path)) == own("bm25")


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        ("# tag: [bm25\n# actor: x\n", 3, r"not valid YAML \(expected ',' or '\]'.*begun on line 2\)"),
        ("# tag: bm25\n#  bad: indentation\n", 3, r"not valid YAML \(.*"),
        ("# - a list\n", 1, r"a YAML list, not a mapping of sections"),
    ],
)  # fmt: skip
def test_a_malformed_block_is_an_input_error_naming_the_file_and_line(lines, line, message):
    text = f"# ir_metadata.start\n{lines}# ir_metadata.end\n".encode()
    with pytest.raises(
        InputDataError, match=rf"^run.txt:{line}: (the ir_metadata block is )?{message}"
    ):
        parse(text.splitlines(keepends=True), "run.txt")


def test_a_block_without_its_end_is_an_input_error_naming_its_start():
    lines = [b"# note\n", b"# ir_metadata.start\n", b"# tag: x\n"]
    with pytest.raises(
        InputDataError, match=r"^run.txt:2: '# ir_metadata.start' has no '# ir_metadata.end'"
    ):
        parse(lines, "run.txt")


# --- provenance, by both doors -----------------------------------------------------------------


def _run_inputs(recorded: dict) -> dict[str, dict]:
    return {i["name"]: i for i in recorded["inputs"] if i["role"] == "run"}


def test_the_manifest_and_the_history_hold_each_runs_block(runs_dir, write_spec):
    history = runs_dir / "history.duckdb"
    path = write_spec(spec(outputs=[{"path": "out.csv"}], history={"path": str(history)}))
    assert run_cli(path) == (0, "")
    manifest = json.loads((runs_dir / "out.csv.manifest.json").read_text())
    inputs = _run_inputs(manifest)
    assert inputs["sys/run0"]["ir_metadata"] == own("bm25")
    assert inputs["sys/run1"]["ir_metadata"] == own("rm3")
    assert "ir_metadata" not in next(i for i in manifest["inputs"] if i["role"] == "qrels")
    with duckdb.connect(str(history), read_only=True) as con:
        (provenance,) = con.execute("SELECT provenance FROM evaluations").fetchone()
    assert _run_inputs(json.loads(provenance))["sys/run1"]["ir_metadata"] == own("rm3")


def test_the_python_door_records_the_block_too(runs_dir, write_spec):
    results = pipeline.evaluate(write_spec(spec()))
    inputs = _run_inputs(results.evaluation.recorded)
    assert [inputs[r]["ir_metadata"]["tag"] for r in ("sys/run0", "sys/run1")] == ["bm25", "rm3"]


def test_a_block_changes_no_value(runs_dir, write_spec):
    with_block = pipeline.evaluate(write_spec(spec())).aggregate(to="rows")
    for path in (runs_dir / "runs").iterdir():
        path.write_text(path.read_text().split("# ir_metadata.end\n", 1)[1])
    without = pipeline.evaluate(write_spec(spec())).aggregate(to="rows")
    assert with_block == without and len(without) == 4


def test_a_run_without_a_block_records_none(tmp_path, write_spec):
    data = generate(3, queries=4, runs=1)
    write_qrels(data.qrels, tmp_path / "qrels.txt")
    write_run(data.runs["run0"], tmp_path / "run.txt")
    path = write_spec({"collections": {"c": {"qrels": "qrels.txt"}},
                       "runs": {"r": {"path": "run.txt", "collection": "c"}}, "metrics": ["AP"]})  # fmt: skip
    recorded = pipeline.evaluate(path).evaluation.recorded
    assert "ir_metadata" not in _run_inputs(recorded)["r"]


def test_a_malformed_block_stops_the_evaluation_with_exit_3(runs_dir, write_spec):
    bad = runs_dir / "runs" / "input.run1"
    bad.write_text(bad.read_text().replace("#   team: lab", "#   team: [lab"))
    code, err = run_cli(write_spec(spec(outputs=[{"path": "out.csv"}])))
    assert code == 3
    assert f"Error: {bad}:5: the ir_metadata block is not valid YAML" in err
    assert "while parsing a flow sequence begun on line 4" in err
    assert not (runs_dir / "out.csv").exists()


# --- run names from tags -----------------------------------------------------------------------


def test_names_ir_metadata_names_each_run_by_its_tag(runs_dir, write_spec):
    loaded = load_spec(write_spec(spec(run={"names": "ir_metadata"})))
    assert list(loaded.spec.runs) == ["sys/bm25", "sys/rm3"]
    assert loaded.spec.runs["sys/rm3"].path == runs_dir / "runs" / "input.run1"


def test_by_default_runs_keep_their_file_names(runs_dir, write_spec):
    assert list(load_spec(write_spec(spec())).spec.runs) == ["sys/run0", "sys/run1"]


def test_a_gzipped_run_is_named_by_its_tag(runs_dir, write_spec):
    plain = runs_dir / "runs" / "input.run1"
    (runs_dir / "runs" / "input.run1.gz").write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    loaded = load_spec(write_spec(spec(run={"names": "ir_metadata"})))
    assert list(loaded.spec.runs) == ["sys/bm25", "sys/rm3"]


def test_two_files_with_one_tag_are_a_spec_error_naming_both(runs_dir, write_spec):
    second = runs_dir / "runs" / "input.run1"
    second.write_text(second.read_text().replace("tag: rm3", "tag: bm25"))
    path = write_spec(spec(run={"names": "ir_metadata"}))
    with pytest.raises(
        SpecError,
        match=r"runs.sys.path: runs/input.run0 and runs/input.run1 are both named 'sys/bm25'.*"
        r"names: ir_metadata <run>/<the tag of its ir_metadata block>",
    ):
        load_spec(path)
    assert run_cli(path)[0] == 2


def test_a_file_without_a_tag_is_an_input_error_naming_it(runs_dir, write_spec):
    untagged = runs_dir / "runs" / "input.run1"
    untagged.write_text(untagged.read_text().replace("# tag: rm3\n", ""))
    code, err = run_cli(write_spec(spec(run={"names": "ir_metadata"})))
    assert code == 3
    assert f"Error: {untagged}: has no tag in its ir_metadata, and names: ir_metadata" in err


def test_names_ir_metadata_on_one_file_is_a_spec_error(runs_dir, write_spec):
    runs = {"r": {"path": "runs/input.run0", "collection": "c", "names": "ir_metadata"}}
    path = write_spec({**spec(), "runs": runs})
    with pytest.raises(
        SpecError, match=r"spec.yaml:\d+: runs.r.names: names: ir_metadata names the runs a glob"
    ):
        load_spec(path)


# --- the ir_metadata output level --------------------------------------------------------------


def _compare_spec() -> dict:
    outputs = [
        {"path": "out/agg.csv"},
        {"path": "out/meta/{run}.yaml", "level": "ir_metadata"},
    ]
    return spec(
        run={"names": "ir_metadata"},
        compare={"baseline": "sys/bm25", "tests": ["t"], "correction": "holm"},
        outputs=outputs,
    )


def _aggregate(path: Path) -> dict[tuple[str, str], tuple[float, int]]:
    with path.open() as handle:
        return {
            (row["run"], row["metric"]): (float(row["value"]), int(row["n_queries"]))
            for row in csv.DictReader(handle)
        }


def _check_document(runs_dir: Path, run: str, tag: str) -> None:
    written = runs_dir / "out" / "meta" / "sys" / f"{tag}.yaml"
    document = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert list(document) == ["tag", "actor", "platform", "research goal", "method", "data"]
    assert document["tag"] == tag
    assert document["actor"] == {"team": "lab"}
    assert document["method"] == {"retrieval": [{"name": "bm25", "k1": 0.9}]}
    assert document["platform"]["software"]["libraries"] == [
        "pyterrier==0.10.1",
        f"irpipe=={__version__}",
        f"duckdb=={duckdb.__version__}",
    ]
    assert document["research goal"]["venue"] == {"name": "SIGIR", "year": 2026}
    evaluation = document["research goal"]["evaluation"]
    assert evaluation["reported_measures"] == ["AP", "nDCG@10"]
    assert [m["metric"] for m in evaluation["measures"]] == ["AP", "nDCG@10"]
    assert evaluation["measures"][1]["params"]["k"] == 10
    assert evaluation["settings"]["queries"] == "qrels"
    aggregate = _aggregate(runs_dir / "out" / "agg.csv")
    for metric in ("AP", "nDCG@10"):
        assert (evaluation["values"][metric], evaluation["n_queries"][metric]) == aggregate[
            (run, metric)
        ]
    assert evaluation["significance test"] == [
        {"name": "t", "correction method": "holm", "alpha": 0.05, "samples": 100000, "seed": 0}
    ]
    assert evaluation["baseline"] == ["sys/bm25"]
    qrels = runs_dir / "qrels.txt"
    assert document["data"] == {
        "test collection": {"name": "c", "qrels": str(qrels), "qrels digest": digest_file(qrels)}
    }
    manifest = json.loads(written.with_name(written.name + ".manifest.json").read_text())
    assert manifest["table"].startswith("ir_metadata_1_")


def test_the_cli_writes_each_runs_ir_metadata(runs_dir, write_spec):
    code, out, err = irpipe_inprocess("run", write_spec(_compare_spec()))
    assert code == 0, err
    assert "out/meta/sys/bm25.yaml" in out and "out/meta/sys/rm3.yaml" in out
    _check_document(runs_dir, "sys/bm25", "bm25")
    _check_document(runs_dir, "sys/rm3", "rm3")


def test_the_python_door_writes_the_same_files(runs_dir, write_spec):
    path = write_spec(_compare_spec())
    assert run_cli(path)[0] == 0
    first = (runs_dir / "out" / "meta" / "sys" / "rm3.yaml").read_bytes()
    pipeline.evaluate(path)
    _check_document(runs_dir, "sys/rm3", "rm3")
    assert (runs_dir / "out" / "meta" / "sys" / "rm3.yaml").read_bytes() == first


def test_a_run_without_a_block_is_described_by_the_evaluation_alone(tmp_path, write_spec):
    data = generate(3, queries=4, runs=1)
    write_qrels(data.qrels, tmp_path / "qrels.txt")
    write_run(data.runs["run0"], tmp_path / "run.txt")
    path = write_spec({"collections": {"c": {"qrels": "qrels.txt"}},
                       "runs": {"r": {"path": "run.txt", "collection": "c"}}, "metrics": ["AP"],
                       "outputs": [{"path": "{run}.yml", "level": "ir_metadata"}]})  # fmt: skip
    pipeline.evaluate(path)
    document = yaml.safe_load((tmp_path / "r.yml").read_text())
    assert list(document) == ["tag", "research goal", "platform", "data"]
    assert document["tag"] == "r"
    assert "significance test" not in document["research goal"]["evaluation"]


def test_a_per_run_path_without_run_is_a_spec_error(runs_dir, write_spec):
    path = write_spec(spec(outputs=[{"path": "meta.yaml", "level": "ir_metadata"}]))
    code, err = run_cli(path)
    assert code == 2
    assert (
        "outputs.0.level: level ir_metadata writes one file per run: its path must hold {run}"
        in err
    )


def test_a_run_under_two_collections_needs_collection_in_the_path(runs_dir, write_spec):
    two = spec(
        outputs=[{"path": "m/{run}.yaml", "level": "ir_metadata"}], run={"collection": ["c", "d"]}
    )
    two["collections"]["d"] = {"qrels": "qrels.txt"}
    code, err = run_cli(write_spec(two))
    assert code == 2
    assert "outputs.0.path: run sys/run0 under c and run sys/run0 under d would both write" in err
    assert "add {collection} to the path" in err
    two["outputs"][0]["path"] = "m/{collection}/{run}.yaml"
    assert run_cli(write_spec(two)) == (0, "")
    assert (runs_dir / "m" / "d" / "sys" / "run1.yaml").is_file()


def test_a_run_name_leading_out_of_the_directory_is_a_spec_error(runs_dir, write_spec):
    runs = {"../escape": {"path": "runs/input.run0", "collection": "c"}}
    outputs = [{"path": "m/{run}.yaml", "level": "ir_metadata"}]
    code, err = run_cli(write_spec({**spec(outputs=outputs), "runs": runs}))
    assert code == 2
    assert "the run '../escape' cannot name a file" in err
    assert not (runs_dir / "escape.yaml").exists()
