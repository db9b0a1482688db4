"""The history under the worst an unattended job meets: a kill in the middle of the write, and
several jobs writing at once. The real CLI in subprocesses, the real DuckDB file, row by row."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import collection_spec

from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate

ROOT = Path(__file__).resolve().parents[1]

# Runs the real CLI, stopping inside the history's transaction (every row inserted, no COMMIT
# yet) until it is killed: the patch is the test's, in the child only.
PAUSED_WRITER = """
import sys, time
from pipeline.history import record
from pipeline.cli import main

insert = record._results

def paused(con, evaluation):
    insert(con, evaluation)
    open(sys.argv[1], "w").close()
    time.sleep(120)

record._results = paused
sys.exit(main(["run", "--quiet", sys.argv[2]]))
"""


@pytest.fixture
def spec(tmp_path: Path, write_spec) -> Path:
    """Four runs on 40 generated queries, recorded in history.duckdb."""
    data = generate(5, queries=40, runs=4)
    metrics = ["AP", "nDCG@10", "P@5", "RelString@3"]
    return write_spec(collection_spec(tmp_path, data, metrics, history="history.duckdb"))


def _irpipe(*args: str) -> subprocess.Popen:
    env = {**os.environ, "IRPIPE_LOAD_PLUGINS": ""}
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _recorded(history: Path) -> dict[int, list[tuple]]:
    """Each evaluation's per-query rows, as the history holds them."""
    with duckdb.connect(str(history), read_only=True) as con:
        rows = con.execute(
            "SELECT evaluation_id, run, collection, qid, metric, value, text FROM per_query"
        ).fetchall()
        ids = [i for (i,) in con.execute("SELECT id FROM evaluations ORDER BY id").fetchall()]
    recorded: dict[int, list[tuple]] = {i: [] for i in ids}
    for evaluation, *row in rows:
        recorded[evaluation].append(tuple(row))
    return {i: sorted(rows, key=json.dumps) for i, rows in recorded.items()}


def _expected(spec: Path) -> list[tuple]:
    """The per-query table of the spec evaluated without a history."""
    data = yaml.safe_load(spec.read_text())
    del data["history"]
    plain = spec.with_name("without_history.yaml")
    plain.write_text(yaml.safe_dump(data))
    evaluation = evaluate(plain, write=False)
    return sorted(evaluation.con.execute("SELECT * FROM per_query").fetchall(), key=json.dumps)


def _counts(history: Path) -> dict[str, int]:
    with duckdb.connect(str(history), read_only=True) as con:
        tables = ("evaluations", "inputs", "evaluation_runs", "evaluation_metrics",
                  "result_keys", "results", "aggregates")  # fmt: skip
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_a_kill_inside_the_write_leaves_the_history_as_it_was(spec, tmp_path):
    history = tmp_path / "history.duckdb"
    first = _irpipe("run", "--quiet", "--refresh", str(spec))
    assert first.wait() == 0, first.stderr.read()
    before = _counts(history)
    marker = tmp_path / "inside"
    child = subprocess.Popen(
        [sys.executable, "-c", PAUSED_WRITER, str(marker), str(spec)],
        cwd=ROOT, env={**os.environ, "IRPIPE_LOAD_PLUGINS": ""},
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert _counts(history) == before  # nothing of the killed evaluation
    again = _irpipe("run", "--quiet", "--refresh", str(spec))
    assert again.wait() == 0, again.stderr.read()
    recorded = _recorded(history)
    assert list(recorded) == [1, 2]  # the killed evaluation's id was never taken
    assert recorded[1] == recorded[2] == _expected(spec)


def test_four_jobs_writing_at_once_all_land_whole(spec, tmp_path):
    history = tmp_path / "history.duckdb"
    jobs = [_irpipe("run", "--quiet", "--refresh", str(spec)) for _ in range(4)]
    for job in jobs:
        assert job.wait(timeout=300) == 0, job.stderr.read()
    recorded = _recorded(history)
    assert list(recorded) == [1, 2, 3, 4]
    expected = _expected(spec)
    for rows in recorded.values():
        assert rows == expected
    with duckdb.connect(str(history), read_only=True) as con:
        runs = con.execute(
            "SELECT evaluation_id, count(*), count(DISTINCT result_key) FROM evaluation_runs "
            "GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        (keys,) = con.execute("SELECT count(*) FROM result_keys").fetchone()
    assert runs == [(i, 4, 4) for i in (1, 2, 3, 4)]
    assert keys == 4  # each run's values stored once, however many evaluations point at them


def test_a_job_waits_for_the_history_while_another_holds_it(spec, tmp_path):
    history = tmp_path / "history.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
         "time.sleep(1.5)", str(history)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout.readline().strip() == "held"
    job = _irpipe("run", "--quiet", str(spec))  # lock_timeout 60 s: it waits, then lands
    assert job.wait(timeout=120) == 0, job.stderr.read()
    holder.wait()
    assert list(_recorded(history)) == [1]
