"""Writers: every format, the manifest beside each output, and atomic writes."""

from __future__ import annotations

import json

import duckdb
import pytest
from conftest import trec_files

from pipeline import OutputError
from pipeline.digest import digest_file
from pipeline.run.evaluation import evaluate

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
        "missing_queries": "value",
        "compatibility": "trec_eval-10",
        "max_docs": None,
        "judged_only": False,
        "input": "strict",
        "unmatched_runs": "error",
        "grades": "integer",
        "memory_limit": None,
        "threads": None,
        "engine": "duckdb",
    }
    assert len(manifest["spec_sha256"]) == 64
    assert manifest["spec"] == str(path.resolve())
    inputs = {(i["role"], i["path"], i["size"], i["digest"]) for i in manifest["inputs"]}
    assert inputs == {
        (role, str(tmp_path / name), (tmp_path / name).stat().st_size, digest_file(tmp_path / name))
        for role, name in (("qrels", "qrels.txt"), ("run", "run.txt"))
    }
    assert all(len(i["digest"]) == len("xxh3_128:") + 32 for i in manifest["inputs"])
    assert manifest["metrics"][0]["metric"] == "P@1" and manifest["irpipe_version"]
    assert manifest["versions"]["duckdb"] == duckdb.__version__


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


@pytest.mark.parametrize("read_only", [False, True])
def test_a_database_open_in_another_process_is_a_clear_error(tmp_path, spec, read_only):
    import subprocess
    import sys
    import time

    path = spec([{"path": "out/s.duckdb"}])
    evaluate(path)
    target = tmp_path / "out/s.duckdb"
    before = target.read_bytes()
    code = (
        "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == '1'); "
        "print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(target), str(int(read_only))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        start = time.monotonic()
        with pytest.raises(
            OutputError, match=rf"s.duckdb: the database is open in process {holder.pid}"
        ):
            evaluate(path)
        assert time.monotonic() - start < 10  # refused at once, never waiting on the lock
    finally:
        holder.kill()
        holder.wait()
    assert target.read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "s.duckdb",
        "s.duckdb.manifest.json",
    ]


def test_a_stale_write_ahead_log_is_not_replayed_into_a_new_database(tmp_path, spec):
    (tmp_path / "out").mkdir()
    (tmp_path / "out/s.duckdb.wal").write_bytes(b"left by a process that crashed")
    evaluate(spec([{"path": "out/s.duckdb"}]))
    assert not (tmp_path / "out/s.duckdb.wal").exists()
    con = duckdb.connect(str(tmp_path / "out/s.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM aggregate").fetchone()[0] == 2


def test_names_labels_and_paths_are_data_never_sql(tmp_path, write_spec):
    run = "x'); DROP TABLE qrels; --"
    collection = 'c "quoted" é 名'
    label = "P@1 | \"x'"
    directory = tmp_path / "it's a [dir]; DROP"
    directory.mkdir()
    (directory / "qrels ✓.txt").write_text(QRELS)
    (directory / "run * 1.trec").write_text(RUN)
    spec = write_spec(
        {
            "collections": {collection: {"qrels": "it's a [dir]; DROP/qrels ✓.txt"}},
            "runs": {run: {"path": "it's a [dir]; DROP/run * 1.trec", "collection": collection}},
            "metrics": [{"metric": "P@1", "label": label}],
            "outputs": [{"path": "out/s.csv"}, {"path": "out/s.md"}, {"path": "out/s.duckdb"}],
        }
    )
    evaluation = evaluate(spec)
    assert evaluation.aggregate() == [(run, collection, label, 1.0, 2)]
    rows = duckdb.connect().execute("SELECT * FROM read_csv(?)", [str(tmp_path / "out/s.csv")])
    assert rows.fetchall() == [(run, collection, label, 1.0, 2)]
    markdown = (tmp_path / "out/s.md").read_text().splitlines()
    assert markdown[0] == "| run | collection | P@1 \\| \"x' |"


def test_signals_wait_until_every_output_is_renamed(tmp_path, spec, monkeypatch):
    import os
    import signal

    events: list[str] = []
    real_replace = os.replace

    def replace(source, target):
        if not events:
            os.kill(os.getpid(), signal.SIGTERM)  # the scheduler stops the job mid-rename
        events.append("rename")
        real_replace(source, target)

    previous = signal.signal(signal.SIGTERM, lambda *_: events.append("signal"))
    try:
        monkeypatch.setattr(os, "replace", replace)
        evaluate(spec([{"path": "out/a.csv"}, {"path": "out/b.csv"}]))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert events == ["rename"] * 4 + ["signal"]
