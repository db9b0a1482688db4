"""`irpipe history`, `irpipe show` and `irpipe diff`: the real CLI over history files written by
real evaluations of generated collections, read back as text and as JSON."""

from __future__ import annotations

import functools
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from conftest import collection_spec, evaluate_with_plugin, install_scaled_plugin, irpipe_inprocess
from docblocks import code, table

from pipeline.digest import digest_file
from pipeline.formatting import format_value
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate

METRICS = ["AP", "nDCG@10", "P@5", "RR", "gmAP", "num_ret", "RelString@5"]


def _documented_keys() -> dict[str, set[str]]:
    """The keys of each --json document as the reference documents them (configs/REFERENCE.md,
    `<!-- table: history-json -->`): a cell's code spans outside parentheses, which hold a key's
    own keys or values."""
    found = {}
    for row in table("configs/REFERENCE.md", "history-json"):
        cell = row["keys"]
        while re.search(r"\([^()]*\)", cell):
            cell = re.sub(r"\([^()]*\)", "", cell)
        found[row["document"].strip("`")] = set(code(cell))
    return found


DOCUMENTED = _documented_keys()
HISTORY_KEYS = DOCUMENTED["history"]
EVALUATION_KEYS = DOCUMENTED["an evaluation"]
CHANGE_KEYS = DOCUMENTED["a change"]
SHOW_KEYS = DOCUMENTED["show"]
SHOWN_KEYS = DOCUMENTED["the shown evaluation"]
DIFF_KEYS = DOCUMENTED["diff"]
VALUE_KEYS = DOCUMENTED["a changed value"]


@pytest.fixture
def spec(tmp_path: Path) -> dict:
    """A spec over a generated collection with three runs, recorded in history.duckdb."""
    data = generate(11, queries=15, runs=3)
    return collection_spec(tmp_path, data, METRICS, history="history.duckdb")


@pytest.fixture
def irpipe(tmp_path):
    """Run the CLI in this process, in tmp_path: (exit code, stdout, stderr)."""
    return functools.partial(irpipe_inprocess, cwd=tmp_path)


def _json(irpipe, *args: str) -> dict:
    code, out, err = irpipe(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def _drop_first_line(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[1:]))


def test_history_lists_each_evaluation_with_what_changed(spec, write_spec, tmp_path, irpipe):
    path = write_spec(spec)
    evaluate(path, write=False)
    evaluate(path, write=False)  # nothing changed
    _drop_first_line(tmp_path / "run1.txt")
    evaluate(path, write=False)
    evaluate(write_spec({**spec, "settings": {"relevance_level": 2}}), write=False)
    evaluate(write_spec({**spec, "metrics": [*METRICS, "R@100"]}), write=False)

    document = _json(irpipe, "history", path)
    assert set(document) == HISTORY_KEYS
    assert document["spec"] == str(path.resolve())
    assert document["history"] == str(tmp_path / "history.duckdb")
    evaluations = document["evaluations"]
    assert [e["id"] for e in evaluations] == [1, 2, 3, 4, 5]  # oldest first
    assert all(set(e) == EVALUATION_KEYS for e in evaluations)
    assert [e["previous"] for e in evaluations] == [None, 1, 2, 3, 4]
    assert [(e["runs"], e["reused"]) for e in evaluations] == [(3, 0), (3, 3), (3, 2), (3, 0),
                                                               (3, 0)]  # fmt: skip
    changes = [[(c["kind"], c["name"], c["change"]) for c in e["changes"]] for e in evaluations]
    assert changes == [
        [],
        [],
        [("run", "run1", "changed")],
        [("setting", "relevance_level", "changed"), ("spec", "content", "changed")],
        [("setting", "relevance_level", "changed"), ("metric", "R@100", "added"),
         ("spec", "content", "changed")],
    ]  # fmt: skip
    run1 = evaluations[2]["changes"][0]
    assert set(run1) == CHANGE_KEYS
    assert run1["new"] == digest_file(tmp_path / "run1.txt")
    setting = evaluations[3]["changes"][0]
    assert (setting["old"], setting["new"]) == ("1", "2")
    assert evaluations[4]["changes"][0]["new"] == "1"  # the last spec has the default again

    code, out, _ = irpipe("history", path)
    assert code == 0
    assert out.isascii()  # not a terminal: plain ASCII
    lines = out.splitlines()
    assert lines[0] == "History history.duckdb: 5 evaluations of spec.yaml, oldest first"
    assert "first evaluation of the spec" in out
    assert "no change" in out
    assert "run run1 changed" in out
    assert "setting relevance_level: 1 -> 2" in out
    assert "metric R@100 added" in out
    assert " 2 of 3 " in out and " 3 of 3 " in out


def test_history_names_runs_added_and_removed_and_a_label_redefined(
    spec, write_spec, tmp_path, irpipe
):
    labelled = {**spec, "metrics": ["AP", {"metric": "nDCG", "k": 10, "label": "main"}]}
    path = write_spec(labelled)
    evaluate(path, write=False)
    runs = {**spec["runs"], "new": {"path": "run0.txt", "collection": "c"}}
    del runs["run2"]
    metrics = ["AP", {"metric": "nDCG", "k": 10, "gain": "exponential", "label": "main"}]
    evaluate(write_spec({**labelled, "runs": runs, "metrics": metrics}), write=False)
    last = _json(irpipe, "history", path)["evaluations"][-1]
    assert last["reused"] == 0
    assert [(c["kind"], c["name"], c["change"], c["old"], c["new"]) for c in last["changes"]][
        :3
    ] == [
        ("run", "new", "added", None, digest_file(tmp_path / "run0.txt")),
        ("run", "run2", "removed", digest_file(tmp_path / "run2.txt"), None),
        ("metric", "main", "changed", "nDCG@10", "nDCG(gain='exponential')@10"),
    ]
    _, out, _ = irpipe("history", path)
    assert "run new added" in out and "run run2 removed" in out
    assert "metric main: nDCG@10 -> nDCG(gain='exponential')@10" in out


def test_history_of_a_spec_skips_other_specs_in_the_same_file(spec, write_spec, tmp_path, irpipe):
    first = write_spec(spec)
    other = write_spec({**spec, "metrics": ["AP"]}, name="other.yaml")
    evaluate(first, write=False)
    evaluate(other, write=False)
    _drop_first_line(tmp_path / "qrels.txt")
    evaluate(first, write=False)
    history = tmp_path / "history.duckdb"

    mine = _json(irpipe, "history", first)["evaluations"]
    assert [(e["id"], e["previous"]) for e in mine] == [(1, None), (3, 1)]
    assert [(c["kind"], c["name"]) for c in mine[1]["changes"]] == [("qrels", "c")]
    everything = _json(irpipe, "history", "--history", history)
    assert everything["spec"] is None
    assert [e["spec"] for e in everything["evaluations"]] == [str(first), str(other), str(first)]
    assert [e["previous"] for e in everything["evaluations"]] == [None, None, 1]
    last = _json(irpipe, "history", "--history", history, "--last", "2")["evaluations"]
    assert [(e["id"], e["previous"]) for e in last] == [(2, None), (3, 1)]
    code, out, _ = irpipe("history", "--history", history)
    assert code == 0 and "other.yaml" in out and "qrels of c changed" in out

    # With --history, SPEC only selects: it is not read, so a deleted spec's evaluations list.
    other.unlink()
    gone = _json(irpipe, "history", other, "--history", history)["evaluations"]
    assert [e["id"] for e in gone] == [2]


def test_history_names_versions_that_changed(spec, write_spec, monkeypatch, irpipe):
    import platform

    import pipeline

    python = platform.python_version()
    path = write_spec(spec)
    evaluate(path, write=False)
    monkeypatch.setattr("pipeline.run.provenance.__version__", "999.0")
    monkeypatch.setattr("pipeline.run.provenance.platform.python_version", lambda: "3.99.0")
    evaluate(path, write=False)
    last = _json(irpipe, "history", path)["evaluations"][-1]
    assert last["reused"] == 0  # a new version recomputes
    assert [(c["kind"], c["name"], c["old"], c["new"]) for c in last["changes"]] == [
        ("version", "irpipe", pipeline.__version__, "999.0"),
        ("version", "python", python, "3.99.0"),
    ]
    _, out, _ = irpipe("history", path)
    assert f"irpipe {pipeline.__version__} -> 999.0" in out
    assert f"python {python} -> 3.99.0" in out


def _aggregates(evaluation) -> dict[tuple, float]:
    return {(run, collection, metric): value
            for run, collection, metric, value, _ in evaluation.aggregate()}  # fmt: skip


def _per_query(evaluation) -> dict[tuple, tuple]:
    rows = evaluation.con.execute(
        "SELECT run, collection, metric, qid, value, text FROM per_query"
    ).fetchall()
    return {row[:4]: row[4:] for row in rows}


def test_diff_shows_changed_values_with_their_numbers_and_why(spec, write_spec, tmp_path, irpipe):
    path = write_spec(spec)
    before = evaluate(path, write=False)
    _drop_first_line(tmp_path / "run1.txt")
    after = evaluate(path, write=False)

    document = _json(irpipe, "diff", "1", "2", path)
    assert set(document) == DIFF_KEYS
    assert (document["a"]["id"], document["b"]["id"]) == (1, 2)
    assert [(c["kind"], c["name"], c["change"]) for c in document["changes"]] == [
        ("run", "run1", "changed")
    ]
    assert [r["run"] for r in document["same_results"]] == ["run0", "run2"]
    old, new = _aggregates(before), _aggregates(after)
    changed = {key for key in old if not _same(old[key], new[key])}
    assert changed and {k[0] for k in changed} == {"run1"}
    values = document["values"]
    assert all(set(v) == VALUE_KEYS for v in values)
    assert {(v["run"], v["collection"], v["metric"]) for v in values if v["a"] is not None} == (
        changed
    )
    for v in values:
        key = (v["run"], v["collection"], v["metric"])
        assert (v["a"], v["b"]) == (old.get(key), new.get(key))
        if v["a"] is not None:
            assert v["difference"] == new[key] - old[key]
        assert v["explained"]
    # Per-query counts, against the two evaluations' own per-query tables.
    before_q, after_q = _per_query(before), _per_query(after)
    for v in values:
        keys = {k for k in before_q | after_q if k[:3] == (v["run"], v["collection"], v["metric"])}
        differing = sum(before_q.get(k) != after_q.get(k) for k in keys)
        assert v["queries_changed"] == differing > 0
    relstring = [v for v in values if v["metric"] == "RelString@5"]
    assert relstring and relstring[0]["a"] is None  # a text metric: per-query changes only
    assert document["unchanged_values"] == len(old) - len(changed)
    assert document["unexplained_values"] == 0

    code, out, _ = irpipe("diff", "1", "2", path)
    assert code == 0 and out.isascii()
    assert "What differs from 1 to 2:" in out
    digests = document["changes"][0]["old"][:21], document["changes"][0]["new"][:21]
    assert "  run run1 changed ({} -> {})\n".format(*digests) in out
    assert "Same results in both (the same result key, so the same rows): run0, run2" in out
    ap = ("run1", "c", "AP")
    row = next(line for line in out.splitlines() if line.split()[:3] == ["c", "run1", "AP"])
    assert row.split()[3:6] == [f"{old[ap]:.6g}", f"{new[ap]:.6g}", f"{new[ap] - old[ap]:+.6g}"]


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def test_diff_of_a_setting_names_it_and_every_run_changes(spec, write_spec, tmp_path, irpipe):
    evaluate(write_spec(spec), write=False)
    evaluate(write_spec({**spec, "settings": {"relevance_level": 2}}), write=False)
    document = _json(irpipe, "diff", "1", "2", "--history", tmp_path / "history.duckdb")
    setting = [c for c in document["changes"] if c["kind"] == "setting"]
    assert setting == [{"kind": "setting", "name": "relevance_level", "change": "changed",
                        "old": "1", "new": "2"}]  # fmt: skip
    assert document["same_results"] == []
    assert {v["run"] for v in document["values"]} == {"run0", "run1", "run2"}
    assert all(v["explained"] for v in document["values"])


def test_diff_of_identical_evaluations_says_nothing_changed(spec, write_spec, irpipe):
    path = write_spec(spec)
    evaluate(path, write=False)
    evaluate(path, write=False, refresh=True)  # evaluated again, not reused
    document = _json(irpipe, "diff", "1", "2", path)
    assert document["changes"] == [] and document["values"] == []
    assert document["unchanged_values"] == 3 * (len(METRICS) - 1)  # RelString has no aggregate
    code, out, _ = irpipe("diff", "1", "2", path)
    assert code == 0
    assert "nothing recorded (the same input files, settings, metrics, versions and spec)" in out
    assert "No value changed: all 18 aggregate values are equal to the last bit" in out


def test_a_value_changed_by_one_bit_with_no_cause_is_a_reproducibility_problem(
    spec, write_spec, tmp_path, irpipe
):
    path = write_spec(spec)
    evaluate(path, write=False)
    second = evaluate(path, write=False)
    value = _aggregates(second)["run0", "c", "AP"]
    nudged = math.nextafter(value, 1.0)  # what a nondeterministic sum would leave
    with duckdb.connect(str(tmp_path / "history.duckdb")) as con:
        con.execute(
            "UPDATE aggregates SET value = ? WHERE evaluation_id = 2 AND run = 'run0' "
            "AND metric = 'AP'",
            [nudged],
        )
    document = _json(irpipe, "diff", "1", "2", path)
    assert document["changes"] == []
    assert [
        (v["run"], v["metric"], v["a"], v["b"], v["explained"]) for v in document["values"]
    ] == [("run0", "AP", value, nudged, False)]
    assert document["values"][0]["queries_changed"] == 0
    assert document["unexplained_values"] == 1
    _, out, _ = irpipe("diff", "1", "2", path)
    assert "Reproducibility problem: 1 value of run0 changed although nothing recorded" in out
    assert f"{value:.17g}" in out and f"{nudged:.17g}" in out  # all digits where they differ


def test_show_prints_the_evaluation_and_its_aggregate_table(spec, write_spec, tmp_path, irpipe):
    path = write_spec(spec)
    evaluation = evaluate(path, write=False)
    document = _json(irpipe, "show", "1", path)
    assert set(document) == SHOW_KEYS
    shown = document["evaluation"]
    assert set(shown) == SHOWN_KEYS
    assert shown["id"] == 1 and shown["spec"] == str(path.resolve())
    assert [m["label"] for m in shown["metrics"]] == [*METRICS[:5], "NumRet", "RelString@5"]
    assert [(r["run"], r["cached"]) for r in shown["runs"]] == [("run0", False), ("run1", False),
                                                               ("run2", False)]  # fmt: skip
    assert {i["name"]: i["digest"] for i in shown["inputs"]}["run2"] == digest_file(
        tmp_path / "run2.txt"
    )
    assert shown["settings"]["relevance_level"] == 1
    rows = [tuple(row.values()) for row in document["aggregates"]]
    assert json.dumps(rows) == json.dumps(evaluation.aggregate())

    code, out, _ = irpipe("show", "1", path)
    assert code == 0 and out.isascii()
    assert out.startswith("Evaluation 1 of spec.yaml\n")
    assert f"run     run2    {(tmp_path / 'run2.txt').stat().st_size}" in out
    assert digest_file(tmp_path / "qrels.txt") in out
    assert "relevance_level 1, ordering trec_eval" in out
    assert "collection c, 15 queries" in out
    table = out[out.index("collection c,") :].splitlines()
    for metric in ("AP", "nDCG@10", "gmAP", "NumRet"):
        cells = next(line.split() for line in table if line.split()[:1] == [metric])
        integral = metric == "NumRet"
        expected = [format_value(v, integral) for _, _, m, v, _ in evaluation.aggregate()
                    if m == metric]  # fmt: skip
        assert [cell.rstrip("*") for cell in cells[1:]] == expected
    assert "* best run of the collection" in out
    assert "Wrote" not in out and "No outputs" not in out


def test_plugins_versions_and_a_plugin_no_longer_installed(spec, write_spec, tmp_path, irpipe):
    path = write_spec({**spec, "metrics": ["Scaled", "AP"]})
    for version in ("1.0", "1.1"):
        install_scaled_plugin(tmp_path / "site", version)
        evaluate_with_plugin(tmp_path / "site", path)
    last = _json(irpipe, "history", path)["evaluations"][-1]
    assert [(c["kind"], c["name"], c["old"], c["new"]) for c in last["changes"]] == [
        ("plugin", "irpipe-scaled", "1.0", "1.1")
    ]
    _, out, _ = irpipe("history", path)
    assert "plugin irpipe-scaled 1.0 -> 1.1" in out
    # Here the plugin is not installed: its values print, unmarked, and the note says why.
    aggregates = _json(irpipe, "show", "2", path)["aggregates"]
    code, out, err = irpipe("show", "2", path)
    assert code == 0, err
    table = out[out.index("collection c,") :].splitlines()
    rows = [line.split() for line in table if line.startswith("run") and line[3].isdigit()]
    assert [row[0] for row in rows] == ["run0", "run1", "run2"]  # a row per run: Scaled, AP
    values = [format_value(a["value"]) for a in aggregates if a["metric"] == "Scaled"]
    assert [row[1] for row in rows] == values  # printed, never marked
    assert sum(row[2].endswith("*") for row in rows) == 1  # AP still resolves: its best marked
    assert "Not installed now, so not marked: Scaled" in out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["history", "--history", "{tmp}/missing.duckdb"], 6,
         "no history at {tmp}/missing.duckdb (the file does not exist)"),
        (["show", "1", "--history", "{tmp}/missing.duckdb"], 6, "no history at"),
        (["history"], 2, "give a SPEC whose `history:` names the history, or --history PATH"),
        (["diff", "1", "2"], 2, "give a SPEC"),
        (["history", "{tmp}/bare.yaml"], 2, "the spec has no `history:`"),
        (["show", "3", "{tmp}/spec.yaml"], 2,
         "history.duckdb: no evaluation 3 in this history; it holds 2 evaluations, ids 1 to 2"),
        (["diff", "1", "7", "{tmp}/spec.yaml"], 2, "no evaluation 7 in this history"),
        (["diff", "9", "7", "{tmp}/spec.yaml"], 2, "no evaluation 7, 9 in this history"),
        (["history", "--history", "{tmp}/other.duckdb"], 6,
         "a DuckDB database but not an irpipe history"),
        (["history", "--history", "{tmp}/qrels.txt"], 6, "not a DuckDB database"),
    ],
)  # fmt: skip
def test_errors_are_one_clear_line(spec, write_spec, tmp_path, irpipe, args, code, message):
    path = write_spec(spec)
    evaluate(path, write=False)
    evaluate(path, write=False)
    write_spec({k: v for k, v in spec.items() if k != "history"}, name="bare.yaml")
    with duckdb.connect(str(tmp_path / "other.duckdb")) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    before = (tmp_path / "history.duckdb").read_bytes()
    status, out, err = irpipe(*(a.format(tmp=tmp_path) for a in args))
    assert status == code
    assert out == ""
    assert err.startswith("Error: ") and err.count("\n") == 1
    assert message.format(tmp=tmp_path) in err
    assert (tmp_path / "history.duckdb").read_bytes() == before  # read, never written


HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])  # holds the file's lock, as an evaluation appending does
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _hold(history: Path, seconds: float) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(history), str(seconds)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert holder.stdout.readline().strip() == "holding"
    return holder


def test_reading_waits_for_a_writer_then_reads(spec, write_spec, tmp_path, irpipe):
    path = write_spec(spec)
    evaluate(path, write=False)
    holder = _hold(tmp_path / "history.duckdb", 1.5)
    started = time.monotonic()
    try:
        code, out, err = irpipe("history", path)
    finally:
        holder.wait()
    assert code == 0, err
    assert time.monotonic() - started > 0.5
    assert "1 evaluation of spec.yaml" in out


def test_reading_past_the_lock_timeout_names_the_holder(spec, write_spec, tmp_path, irpipe):
    path = write_spec({**spec, "history": {"path": "history.duckdb", "lock_timeout": 0.3}})
    evaluate(path, write=False)
    holder = _hold(tmp_path / "history.duckdb", 5)
    try:
        code, _, err = irpipe("show", "1", path)
    finally:
        holder.kill()
        holder.wait()
    assert code == 6
    assert f"the history is in use by process {holder.pid}" in err
    assert "still after 0.3 s" in err
