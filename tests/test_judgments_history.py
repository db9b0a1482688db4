"""The judgment sets' comparisons kept and checked: an evaluation with agreement and correlation
entries records the tables `agreement`, `confusion` and `correlation` in its history (in its one
transaction, row for row as the evaluation made them), `irpipe show` prints them, a history of
schema version 1 is read as it is and migrated when next written; and gates bound their
statistics (`{statistic: cohen_kappa, reference: human, other: llm, min: 0.4}`), decided from
those tables, failing `irpipe run` with exit 5, recorded with the other checks and in JUnit.

Generated judgment sets (`pipeline.synthetic.llm_judgments`: every grade, negative ones, pairs
missing on both sides) and generated runs; real history files and the command line, run in the
test's process."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import irpipe_inprocess

from pipeline.history.schema import HISTORY_TABLES, JUDGMENT_TABLES
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, llm_judgments, write_qrels, write_run

TABLES = ("agreement", "confusion", "correlation")
ROWS = {
    "agreement": "reference, other, collection, statistic, value",
    "confusion": "reference, other, reference_grade, other_grade, pairs",
    "correlation": "reference, other, collection, metric, statistic, value, ci_low, ci_high, run",
}


def judged(directory: Path, seed: int = 5, **keys) -> Path:
    """Two judgment sets of generated queries (human, llm), four runs judged by the first, an
    agreement entry at thresholds 1 and 2, and AP ~ P@10 over the runs with intervals; written
    as spec.yaml with a history."""
    data = generate(seed, queries=20, runs=4, max_grade=3, extremes=True)
    write_qrels(data.qrels, directory / "human.txt")
    write_qrels(llm_judgments(data.qrels, seed, max_grade=3), directory / "llm.txt")
    for name, run in data.runs.items():
        write_run(run, directory / f"{name}.txt")
    spec = {
        "collections": {"human": {"qrels": "human.txt"}, "llm": {"qrels": "llm.txt"}},
        "runs": {name: {"path": f"{name}.txt", "collection": "human"} for name in data.runs},
        "metrics": ["AP", "P@10", "nDCG@10"],
        "history": "history.duckdb",
        "agreement": [{"reference": "human", "other": "llm", "thresholds": [1, 2]}],
        "correlation": [
            {"reference": "AP", "other": "P@10", "bootstrap": 30, "seed": 1, "collection": "human"}
        ],  # fmt: skip
        **keys,
    }
    path = directory / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def recorded(history: Path, evaluation: int) -> dict[str, list[tuple]]:
    """The history's rows of each judgment table for one evaluation, in their order."""
    with duckdb.connect(str(history), read_only=True) as con:
        return {
            table: con.execute(
                f"SELECT {ROWS[table]} FROM {table} WHERE evaluation_id = ? ORDER BY ordinal",
                [evaluation],
            ).fetchall()
            for table in TABLES
        }


def made(evaluation) -> dict[str, list[tuple]]:
    """The evaluation's own judgment tables, grades as the history keeps them (DOUBLE)."""
    found = {table: evaluation.rows(table) for table in TABLES}
    found["confusion"] = [(r, o, *(None if g is None else float(g) for g in grades), n)
                          for r, o, *grades, n in found["confusion"]]  # fmt: skip
    return found


@pytest.mark.parametrize("seed", [5, 9])
def test_each_evaluation_records_its_judgment_tables_row_for_row(tmp_path, seed):
    path = judged(tmp_path, seed)
    first, second = evaluate(path, write=False), evaluate(path, write=False)
    assert second.keeper.reused  # the runs came from the history, the tables again from them
    history = tmp_path / "history.duckdb"
    for evaluation, number in ((first, 1), (second, 2)):
        tables = made(evaluation)
        assert all(tables.values())
        assert recorded(history, number) == tables
    assert made(first) == made(second)


def test_a_spec_without_entries_records_no_judgment_rows(tmp_path):
    path = judged(tmp_path, agreement=[], correlation=[])
    evaluate(path, write=False)
    assert recorded(tmp_path / "history.duckdb", 1) == {table: [] for table in TABLES}


def test_irpipe_show_prints_and_documents_the_recorded_tables(tmp_path):
    path = judged(tmp_path)
    evaluation = evaluate(path, write=False)
    done = irpipe_inprocess("show", 1, path, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    for table, rows in made(evaluation).items():
        columns = ROWS[table].split(", ")
        assert document[table] == json.loads(
            json.dumps([dict(zip(columns, r, strict=True)) for r in rows])
        )
    text = irpipe_inprocess("show", 1, path, cwd=tmp_path).stdout
    kappa = dict((r[3], r[4]) for r in evaluation.rows("agreement"))["cohen_kappa"]
    assert "Agreement of llm with human" in text and f"{kappa:.4f}" in text
    assert "Pairs by grade: human's (rows) and llm's (columns)" in text
    pairs = {(r, o): n for *_, r, o, n in evaluation.rows("confusion")}
    across = sorted({o for _, o in pairs if o is not None})  # and `none`: never a pair of it
    row = next(line for line in text.splitlines() if line.startswith("none "))
    assert row.split()[1:] == [str(pairs.get((None, g), 0)) for g in across] + ["0"]
    assert "Orderings of the runs of human: by P@10 against AP" in text


def test_irpipe_diff_names_the_statistics_that_changed(tmp_path):
    path = judged(tmp_path)
    first = evaluate(path, write=False)
    evaluate(path, write=False)  # the same: no statistic changes
    data = generate(5, queries=20, runs=4, max_grade=3, extremes=True)
    write_qrels(llm_judgments(data.qrels, 6, max_grade=3), tmp_path / "llm.txt")  # relabelled
    third = evaluate(path, write=False)
    same = json.loads(irpipe_inprocess("diff", 1, 2, path, "--json", cwd=tmp_path).stdout)
    assert same["statistics"] == []
    done = irpipe_inprocess("diff", 1, 3, path, "--json", cwd=tmp_path)
    changed = json.loads(done.stdout)["statistics"]
    before = {r[3]: r[4] for r in first.rows("agreement")}
    after = {r[3]: r[4] for r in third.rows("agreement")}
    expected = [name for name in before if before[name] != after[name]]
    assert [c["statistic"] for c in changed if c["table"] == "agreement"] == expected
    kappa = next(c for c in changed if c["statistic"] == "cohen_kappa")
    assert (kappa["a"], kappa["b"]) == (before["cohen_kappa"], after["cohen_kappa"])
    assert kappa["difference"] == pytest.approx(after["cohen_kappa"] - before["cohen_kappa"])
    assert all(c["table"] == "agreement" for c in changed)  # the runs' orderings did not change
    text = irpipe_inprocess("diff", 1, 3, path, cwd=tmp_path).stdout
    assert f"Changed statistics of the judgment sets' comparisons ({len(changed)})" in text


def version_1(history: Path) -> None:
    """Turn a history into one that irpipe's schema version 1 wrote: without the tables
    version 2 added."""
    with duckdb.connect(str(history)) as con:
        for table in TABLES:
            con.execute(f"DROP TABLE {table}")
        con.execute("UPDATE irpipe_history SET value = '1' WHERE key = 'schema_version'")


def test_a_version_1_file_here_is_what_version_1_created(tmp_path):
    path = judged(tmp_path)
    evaluate(path, write=False)
    version_1(tmp_path / "history.duckdb")
    with duckdb.connect(str(tmp_path / "history.duckdb"), read_only=True) as con:
        found = {
            name for (name,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        }
    created = {re.search(r"TABLE \{db\}\.(\w+)", s).group(1) for s in HISTORY_TABLES
               if s not in JUDGMENT_TABLES}  # fmt: skip
    assert found == created and len(created) == len(HISTORY_TABLES) - len(TABLES)


def test_a_version_1_history_is_read_as_it_is_and_migrated_when_written(tmp_path):
    path = judged(tmp_path, agreement=[], correlation=[])
    evaluate(path, write=False)
    history = tmp_path / "history.duckdb"
    version_1(history)
    before = history.read_bytes()
    shown = irpipe_inprocess("show", 1, path, "--json", cwd=tmp_path)  # read-only: not migrated
    assert shown.returncode == 0, shown.stderr
    assert [json.loads(shown.stdout)[t] for t in TABLES] == [[], [], []]
    assert history.read_bytes() == before
    judged(tmp_path)  # the same spec, with its entries
    evaluation = evaluate(path, write=False)
    assert evaluation.keeper.reused  # the runs recorded under version 1 are reused
    with duckdb.connect(str(history), read_only=True) as con:
        version = con.execute("SELECT value FROM irpipe_history WHERE key = 'schema_version'")
        assert version.fetchone() == ("2",)
        assert con.execute("SELECT count(*) FROM evaluations").fetchone() == (2,)
    assert recorded(history, 2) == made(evaluation)
    assert irpipe_inprocess("show", 1, path, cwd=tmp_path).returncode == 0


# -- gates on statistics -------------------------------------------------------------------------


def statistic_of(evaluation, table: str, name: str) -> float:
    rows = evaluation.rows(table)
    return next(r[-1 if table == "agreement" else 5] for r in rows if name in r)


@pytest.mark.parametrize("seed", [5, 9, 13])
def test_a_gate_passes_at_its_bound_and_fails_just_past_it(tmp_path, seed):
    path = judged(tmp_path, seed)
    values = evaluate(path, write=False, remember=False)
    kappa = statistic_of(values, "agreement", "cohen_kappa@2")
    tau = statistic_of(values, "correlation", "kendall_tau_b")
    for low, high, status in ((kappa, None, "passed"), (kappa + 1e-9, None, "failed"),
                              (None, kappa, "passed"), (None, kappa - 1e-9, "failed"),
                              (kappa - 0.1, kappa + 0.1, "passed")):  # fmt: skip
        bounds = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
        gates = [{"statistic": "cohen_kappa@2", "reference": "human", "other": "llm", **bounds},
                 {"statistic": "kendall_tau_b", "reference": "AP", "other": "P@10",
                  "min": tau - 0.5}]  # fmt: skip
        judged(tmp_path, seed, gates=gates)
        checks = evaluate(path, write=False, remember=False).checks
        assert [c.status for c in checks] == [status, "passed"], (low, high)
        assert checks[0].new == kappa and checks[1].new == tau
        assert (checks[0].low, checks[0].high) == (low, high)


def test_a_failed_gate_exits_5_and_is_recorded_and_reported_as_other_checks(tmp_path):
    gates = [{"metric": "AP", "against": "previous"},
             {"statistic": "cohen_kappa", "reference": "human", "other": "llm", "min": 0.99},
             {"statistic": "pairs_shared", "reference": "human", "other": "llm", "min": 1},
             {"statistic": "max_rank_drop", "reference": "AP", "other": "P@10", "max": 3}]  # fmt: skip
    path = judged(tmp_path, gates=gates)
    done = irpipe_inprocess("run", path, "--quiet", "--junit", "checks.xml", cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    assert re.search(r"\ngates\.1 +human~llm +cohen_kappa +bounds +- +0\.\d{6} +- +>= 0\.99\n",
                     done.stderr), done.stderr  # fmt: skip
    cases = ET.parse(tmp_path / "checks.xml").getroot().iter("testcase")
    names = {case.get("name"): case for case in cases}
    failed = names["gates.1 human~llm cohen_kappa"].find("failure")
    assert "cohen_kappa of llm against human is" in failed.get("message")
    assert "min: 0.99" in failed.text
    assert names["gates.2 human~llm pairs_shared"].find("failure") is None
    assert names["gates.3 AP~P@10 max_rank_drop"].find("failure") is None
    with duckdb.connect(str(tmp_path / "history.duckdb"), read_only=True) as con:
        (provenance,) = con.execute("SELECT provenance FROM evaluations").fetchone()
    checks = json.loads(provenance)["checks"]
    assert [c["key"] for c in checks] == ["gates.0"] * 4 + ["gates.1", "gates.2", "gates.3"]
    kept = checks[4]
    assert (kept["kind"], kept["status"], kept["low"], kept["high"]) == ("bound", "failed", 0.99,
                                                                          None)  # fmt: skip


def test_an_undefined_statistic_fails_its_gate_as_a_missing_value_does(tmp_path):
    # One grade on the shared pairs binarised at 3 by neither set: kappa is undefined there.
    directory = tmp_path
    (directory / "a.txt").write_text("1 0 d1 1\n1 0 d2 1\n2 0 d3 1\n")
    (directory / "b.txt").write_text("1 0 d1 1\n1 0 d2 1\n2 0 d3 1\n")
    spec = {
        "collections": {"a": {"qrels": "a.txt"}, "b": {"qrels": "b.txt"}},
        "agreement": [{"reference": "a", "other": "b"}],
        "gates": [{"statistic": "cohen_kappa", "reference": "a", "other": "b", "min": 0.4},
                  {"statistic": "agreement", "reference": "a", "other": "b", "min": 1}],
    }  # fmt: skip
    (directory / "spec.yaml").write_text(yaml.safe_dump(spec))
    checks = evaluate(directory / "spec.yaml", write=False).checks
    assert [c.status for c in checks] == ["failed", "passed"]
    assert "has no value (undefined" in checks[0].message
