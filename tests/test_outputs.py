"""Writers: every format, the manifest beside each output, and atomic writes."""

from __future__ import annotations

import json

import duckdb
import pytest
from conftest import trec_files

from pipeline import OutputError, evaluate

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 2"
RUN = "1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n2 Q0 c 1 1 t"


@pytest.fixture
def spec(tmp_path, write_spec):
    trec_files(tmp_path, QRELS, RUN)

    def make(outputs):
        return write_spec(
            {
                "collections": {"c": {"qrels": "qrels.txt"}},
                "runs": {"r": {"path": "run.txt", "collection": "c"}},
                "metrics": ["P@1", "NumRet"],
                "outputs": outputs,
            }
        )

    return make


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet", ".jsonl", ".duckdb"])
def test_each_format_round_trips_through_duckdb(tmp_path, spec, suffix):
    evaluate(spec([{"path": f"out/agg{suffix}"}, {"path": f"out/pq{suffix}", "level": "query"}]))
    con = duckdb.connect()
    if suffix == ".duckdb":
        con.execute(f"ATTACH '{tmp_path / 'out/agg.duckdb'}' AS a (READ_ONLY)")
        rows = con.execute("SELECT * FROM a.aggregate").fetchall()
        assert con.execute("SELECT count(*) FROM a.manifest").fetchone()[0] > 0
    else:
        reader = {".parquet": "read_parquet", ".jsonl": "read_json"}.get(suffix, "read_csv")
        rows = con.execute(
            f"SELECT * FROM {reader}(?)", [str(tmp_path / f"out/agg{suffix}")]
        ).fetchall()
    assert [tuple(r) for r in rows] == [("r", "c", "P@1", 1.0, 2), ("r", "c", "NumRet", 3.0, 2)]


def test_manifest_records_settings_hashes_and_version(tmp_path, spec):
    path = spec([{"path": "out/s.csv"}])
    evaluate(path)
    manifest = json.loads((tmp_path / "out/s.csv.manifest.json").read_text())
    assert manifest["settings"] == {
        "relevance_level": 1,
        "ordering": "trec_eval",
        "queries": "qrels",
        "compatibility": "trec_eval-10",
        "input": "strict",
    }
    assert len(manifest["spec_sha256"]) == 64
    assert set(manifest["inputs_sha256"]) == {
        str(tmp_path / "qrels.txt"),
        str(tmp_path / "run.txt"),
    }
    assert manifest["metrics"][0]["metric"] == "P@1" and manifest["irpipe_version"]


def test_markdown_is_a_pivot(tmp_path, spec):
    evaluate(spec([{"path": "out/s.md"}]))
    lines = (tmp_path / "out/s.md").read_text().splitlines()
    assert lines[0] == "| run | collection | P@1 | NumRet |"
    assert lines[2] == "| r | c | 1.0000 | 3 |"


def test_same_inputs_give_byte_identical_tables(tmp_path, spec):
    path = spec([{"path": "out/s.parquet", "level": "query"}, {"path": "out/s.csv"}])
    evaluate(path)
    first = [(tmp_path / f"out/s.{s}").read_bytes() for s in ("parquet", "csv")]
    evaluate(path)
    assert [(tmp_path / f"out/s.{s}").read_bytes() for s in ("parquet", "csv")] == first


def test_failed_write_leaves_previous_outputs_and_no_temporary_files(tmp_path, spec):
    good = tmp_path / "out/s.csv"
    evaluate(spec([{"path": "out/s.csv"}]))
    before = good.read_bytes()
    (tmp_path / "blocked").write_text("a file where a directory should be")
    with pytest.raises(OutputError):
        evaluate(spec([{"path": "out/s.csv"}, {"path": "blocked/x.csv"}]))
    assert good.read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["s.csv", "s.csv.manifest.json"]
