"""Both doors run one evaluation: `pipeline.evaluate(spec)` checks, records and draws exactly as
`irpipe run spec` does.

The same spec (expected values, one of them failing, gates against the previous evaluation and
against a run, a history with its dashboard, outputs) is evaluated twice by each door, in two
copies of one directory. The histories hold the same rows, the checks the same outcomes, the
outputs the same bytes and the dashboards the same pages, once the copy's directory and the
times of the evaluations (which no door can make equal) are read alike.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import irpipe_inprocess

from pipeline import evaluate

ROOT = Path(__file__).resolve().parents[1]
SPEC = {
    "collections": {"sample": {"qrels": "data/qrels.txt"}},
    "runs": {
        "bm25": {"path": "data/bm25.trec", "collection": "sample"},
        "dense": {"path": "data/dense.trec", "collection": "sample"},
    },  # fmt: skip
    "metrics": ["AP", "nDCG@10"],
    "expect": [
        {"run": "bm25", "metric": "AP", "value": 0.2179, "tolerance": 0.0001},
        {"run": "dense", "metric": "AP", "value": 0.5},
    ],  # fmt: skip
    "gates": [
        {"metric": "nDCG@10", "against": "previous", "max_drop": 0.005},
        {"metric": "AP", "run": "dense", "against": {"run": "bm25"}, "max_drop": 0.05},
    ],  # fmt: skip
    "outputs": [{"path": "out/summary.csv"}, {"path": "out/per_query.parquet", "level": "query"}],
    "history": {"path": "out/history.duckdb", "dashboard": "out/site"},
}
#: an ISO time, as the provenance, the history and the pages write it
TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?")
#: how long an evaluation took, as its dashboard page shows it
SECONDS = re.compile(r"(<td>seconds</td><td>)[0-9.e-]+")
#: what no two evaluations share: when they ran, for how long, on which host
VARYING = {"started", "finished", "duration", "host"}


def copy(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    shutil.copytree(ROOT / "configs" / "data", d / "data")
    (d / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    return d


@pytest.fixture(scope="module")
def doors(tmp_path_factory):
    """The directory evaluated twice by `irpipe run`, and the one evaluated twice by Python:
    each with its exit codes, or checks' outcomes."""
    tmp_path = tmp_path_factory.mktemp("doors")
    command, python = copy(tmp_path, "command"), copy(tmp_path, "python")
    codes = [irpipe_inprocess("run", "--quiet", command / "spec.yaml").returncode for _ in "12"]
    with pytest.warns(UserWarning):  # the first night's gate against the previous is skipped
        first = evaluate(python / "spec.yaml")
    results = [first, evaluate(python / "spec.yaml")]
    return command, python, codes, results


def alike(text: str, d: Path) -> str:
    """`text` with the copy's directory, every time and every duration read alike."""
    return SECONDS.sub(r"\1<s>", TIME.sub("<time>", text.replace(str(d), "<dir>")))


def history_rows(d: Path) -> dict[str, list]:
    """Every table of the history, each provenance without what varies, read alike."""
    with duckdb.connect(str(d / "out" / "history.duckdb"), read_only=True) as con:
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        rows = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
    rows["evaluations"] = [
        (*row[:1], *row[4:9], _steady(json.loads(row[9]))) for row in rows["evaluations"]
    ]
    return json.loads(alike(json.dumps(rows, default=str), d))


def _steady(record: dict) -> dict:
    return {key: value for key, value in record.items() if key not in VARYING}


def test_both_doors_decide_the_same_checks_and_fail_alike(doors):
    command, python, codes, results = doors
    assert codes == [5, 5]  # dense's AP is not 0.5: exit 5, every output written
    assert all(result.failed for result in results)
    outcomes = [(c.key, c.run, c.status) for c in results[1].checks]
    assert ("expect.1", "dense", "failed") in outcomes and ("gates.0", "bm25", "passed") in outcomes
    recorded = history_rows(command)["evaluations"][-1][-1]["checks"]
    assert [c.as_record() for c in results[1].checks] == json.loads(
        alike(json.dumps(recorded), command).replace("<dir>", str(python))
    )


def test_both_doors_leave_the_same_history(doors):
    command, python, _, _ = doors
    assert history_rows(command) == history_rows(python)


def test_both_doors_write_the_same_outputs_and_dashboard(doors):
    command, python, _, _ = doors
    files = sorted(p.relative_to(command) for p in (command / "out").rglob("*") if p.is_file())
    assert files == sorted(
        p.relative_to(python) for p in (python / "out").rglob("*") if p.is_file()
    )
    assert Path("out/site/index.html") in files and Path("out/site/evaluations/2.html") in files
    for name in files:
        if name.suffix == ".duckdb":
            continue  # compared row by row above
        ours, theirs = (command / name).read_bytes(), (python / name).read_bytes()
        if ours != theirs:  # a manifest or a page: the same once directory and times read alike
            assert alike(ours.decode(), command) == alike(theirs.decode(), python), name
