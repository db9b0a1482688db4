"""Every user mistake is a user error (issue 30): through the `irpipe` command, each mistake
below exits with the code of its kind (2 spec, 3 input data, 6 history), prints one `Error: ` line
naming the file or the spec key, no traceback, and leaves the directory it was run on exactly as
it was: no file written or changed, no temporary file left. Each once ended otherwise: an
evaluation that silently scored 0, an internal error, numpy's warnings, NaN in a manifest.
The command runs in the test's process, but where an import at start-up is under test.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import Outcome, irpipe_inprocess, snapshot

ROOT = Path(__file__).resolve().parents[1]
SPEC_ERROR, DATA_ERROR, HISTORY_ERROR = 2, 3, 6
# Three queries; run b ranks the relevant documents higher than run a.
QRELS = "1 0 101 1\n1 0 102 0\n2 0 201 1\n2 0 202 0\n3 0 301 1\n3 0 302 0\n"
RUN_A = "1 Q0 102 1 2 a\n1 Q0 101 2 1 a\n2 Q0 201 1 2 a\n2 Q0 202 2 1 a\n3 Q0 302 1 2 a\n"
RUN_B = "1 Q0 101 1 2 b\n1 Q0 102 2 1 b\n2 Q0 202 1 2 b\n2 Q0 201 2 1 b\n3 Q0 301 1 2 b\n"


def irpipe(*args: str, cwd: Path = ROOT) -> Outcome:
    """`irpipe ARGS` in this process, without plugins."""
    return irpipe_inprocess(*args, cwd=cwd)


def in_a_process(*args: str, **env: str) -> subprocess.CompletedProcess:
    """`irpipe ARGS` in a Python of its own, on this checkout's code, without plugins: for what
    the environment does as the process starts (a sitecustomize on PYTHONPATH, ir_datasets'
    home read as its modules are imported)."""
    command = [sys.executable, "-m", "pipeline.cli", *args]
    env = {"IRPIPE_LOAD_PLUGINS": "", "PATH": "/usr/bin:/bin", "COLUMNS": "200", **env}
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)


def refused(case: Path, code: int, message: str, *args: str, command=irpipe) -> None:
    """`irpipe ARGS` (run by `command`) exits with `code`, prints one `Error: ` line matching
    `message` and no traceback, and changes nothing under `case`."""
    before = snapshot(case)
    done = command(*args)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert re.fullmatch(r"Error: [^\n]*\n", done.stderr), done.stderr
    assert re.search(message, done.stderr), done.stderr
    assert snapshot(case) == before


def case_dir(tmp_path: Path, spec: dict, **files: str | bytes) -> Path:
    """A directory holding the qrels, runs a and b, `files`, and `spec` as spec.yaml."""
    case = tmp_path / "case"
    case.mkdir()
    written = {"qrels.txt": QRELS, "a.txt": RUN_A, "b.txt": RUN_B, **files}
    for name, data in written.items():
        (case / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    (case / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return case


def spec_of(runs: dict | None = None, **keys) -> dict:
    """A spec over the case's files: runs a and b (and `runs`), AP, a summary output."""
    files = {name: {"path": f"{name}.txt", "collection": "c"} for name in ("a", "b")}
    return {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {**files, **(runs or {})},
        "metrics": ["AP"],
        "outputs": [{"path": "out/summary.csv"}],
        **keys,
    }


def parquet(path: Path, rows: str, columns: str) -> None:
    """A Parquet file of DuckDB's VALUES `rows` under `columns` (e.g. "(1, 101.0::DOUBLE, 2.0)")."""
    duckdb.sql(f"COPY (SELECT * FROM (VALUES {rows}) t({columns})) TO '{path}' (FORMAT parquet)")


# --- 1, 2: Parquet inputs ---------------------------------------------------------------------

FLOAT_DOCNOS = "('1', 101.0::DOUBLE, 2.0), ('1', 102.0::DOUBLE, 1.0), ('2', 201.0::DOUBLE, 1.0)"
INTEGER_IDS = "(1, 101, 2.0), (1, 102, 1.0), (2, 201, 1.0)"


def test_a_parquet_run_of_float_docnos_is_refused(tmp_path):
    case = case_dir(tmp_path, spec_of({"p": {"path": "p.parquet", "collection": "c"}}))
    parquet(case / "p.parquet", FLOAT_DOCNOS, "qid, docno, score")
    refused(case, DATA_ERROR, r"/case/p\.parquet: column 'docno' holds floats \(double\); ids "
            r"are text or integers", "run", str(case / "spec.yaml"))  # fmt: skip


def test_parquet_qrels_of_float_qids_are_refused(tmp_path):
    spec = spec_of()
    spec["collections"]["c"]["qrels"] = "q.parquet"
    case = case_dir(tmp_path, spec)
    parquet(case / "q.parquet", "(1.0::FLOAT, '101', 1), (2.0::FLOAT, '201', 1)", "qid, docno, rel")
    refused(case, DATA_ERROR, r"/case/q\.parquet: column 'qid' holds floats \(float\); ids are "
            r"text or integers", "run", str(case / "spec.yaml"))  # fmt: skip


def test_integer_ids_in_parquet_are_read_as_their_decimal_text(tmp_path):
    case = case_dir(tmp_path, spec_of({"p": {"path": "p.parquet", "collection": "c"}}))
    parquet(case / "p.parquet", INTEGER_IDS, "qid, docno, score")
    done = irpipe("run", "--quiet", str(case / "spec.yaml"))
    assert done.returncode == 0, done.stderr
    rows = (case / "out" / "summary.csv").read_text().splitlines()
    assert "p,c,AP,0.6666666666666666,3" in rows  # queries 1 and 2 at 1.0; 3 unanswered


@pytest.mark.parametrize("content", ["text", "truncated"])
def test_a_file_named_parquet_that_is_not_parquet_is_named(tmp_path, content):
    case = case_dir(tmp_path, spec_of({"p": {"path": "p.parquet", "collection": "c"}}))
    parquet(case / "p.parquet", INTEGER_IDS, "qid, docno, score")
    whole = (case / "p.parquet").read_bytes()
    (case / "p.parquet").write_bytes(RUN_A.encode() if content == "text" else whole[:-20])
    refused(case, DATA_ERROR, r"/case/p\.parquet: not a valid Parquet file \(.*\); if it is TREC "
            r"text, name it without \.parquet", "run", str(case / "spec.yaml"))  # fmt: skip


FRACTIONAL_GRADES = (
    "('1', '101', 1.0::DOUBLE), ('1', '102', 2.5::DOUBLE), ('2', '201', 1.0::DOUBLE)"
)


def test_parquet_qrels_of_fractional_grades_are_refused_where_whole_ones_are_read(tmp_path):
    """A cast alone would read 2.5 as 2 (DuckDB rounds, Spark truncates): a wrong number where
    a text file's `2.5` is a bad line."""
    spec = spec_of()
    spec["collections"]["c"]["qrels"] = "q.parquet"
    case = case_dir(tmp_path, spec)
    parquet(case / "q.parquet", FRACTIONAL_GRADES, "qid, docno, rel")
    refused(case, DATA_ERROR, r"/case/q\.parquet: row 2: the relevance grade is missing or not "
            r"an integer \(decimal grades are read with settings: \{grades: real\}\): '1 102 2\.5'",
            "run", str(case / "spec.yaml"))  # fmt: skip
    parquet(case / "q.parquet", FRACTIONAL_GRADES.replace("2.5", "2.0"), "qid, docno, rel")
    done = irpipe("run", "--quiet", str(case / "spec.yaml"))
    assert done.returncode == 0, done.stderr


def test_parquet_grades_under_real_grades_are_finite_decimals(tmp_path):
    """Under `grades: real` the fractional grade is read, and a grade that is not finite is a
    bad row, as a text file's `inf` is."""
    spec = spec_of(settings={"grades": "real"})
    spec["collections"]["c"]["qrels"] = "q.parquet"
    case = case_dir(tmp_path, spec)
    parquet(case / "q.parquet", FRACTIONAL_GRADES, "qid, docno, rel")
    done = irpipe("run", "--quiet", str(case / "spec.yaml"))
    assert done.returncode == 0, done.stderr
    parquet(
        case / "q.parquet",
        FRACTIONAL_GRADES.replace("2.5::DOUBLE", "'inf'::DOUBLE"),
        "qid, docno, rel",
    )
    refused(case, DATA_ERROR, r"/case/q\.parquet: row 2: the relevance grade must be a finite "
            r"number: '1 102 inf'", "run", str(case / "spec.yaml"))  # fmt: skip


# --- 3: ir_datasets ids whose dataset lacks what the spec reads --------------------------------


@pytest.mark.parametrize(
    "key, dataset, lacks",
    [("qrels", "antique", "qrels"), ("run", "vaswani", r"scored documents \(a run\)")],
)
def test_an_ir_datasets_id_without_qrels_or_a_run_is_a_spec_error(tmp_path, key, dataset, lacks):
    # Registered datasets whose files are not downloaded: has_qrels() answers without them. In a
    # process of its own: ir_datasets reads IR_DATASETS_HOME as its modules are imported.
    spec = spec_of({"p": {"path": f"irds:{dataset}" if key == "run" else "a.txt", "collection": "c"}})  # fmt: skip
    if key == "qrels":
        spec["collections"]["c"]["qrels"] = f"irds:{dataset}"
    case = case_dir(tmp_path, spec)
    where = "collections.c.qrels" if key == "qrels" else "runs.p.path"
    refused(case, SPEC_ERROR, rf"spec\.yaml:\d+: {where}: the ir_datasets dataset "
            rf"'irds:{dataset}' has no {lacks}$", "run", str(case / "spec.yaml"),
            command=functools.partial(in_a_process, IR_DATASETS_HOME=str(tmp_path / "ir_datasets")))  # fmt: skip


# --- 4, 5: tuning a fused run's weights ---------------------------------------------------------


def tuned(folds: int, metric: str = "AP") -> dict:
    fused = {"t": {"fuse": ["a", "b"], "method": "wsum", "tune": {"metric": metric, "folds": folds}}}  # fmt: skip
    return spec_of(fused, history="history.duckdb")


@pytest.mark.parametrize("folds", [4, 9])
def test_more_folds_than_queries_is_a_spec_error_naming_both(tmp_path, folds):
    case = case_dir(tmp_path, tuned(folds))
    refused(case, SPEC_ERROR, rf"spec\.yaml:\d+: runs\.t\.tune\.folds: {folds} folds, but 3 "
            r"queries are evaluated: .*; give at most 3 folds$", "run", str(case / "spec.yaml"))  # fmt: skip


def test_as_many_folds_as_queries_tune_quietly_and_record_json(tmp_path):
    case = case_dir(tmp_path, tuned(3))
    done = irpipe("run", "--quiet", str(case / "spec.yaml"))
    assert done.returncode == 0 and done.stderr == "", done.stderr  # no numpy warning
    manifest = (case / "out" / "summary.csv.manifest.json").read_text()
    folds = _strict_json(manifest)["tuning"]["t"]["folds"]
    assert [f["queries"] for f in folds] == [1, 1, 1]
    con = duckdb.connect(str(case / "history.duckdb"), read_only=True)
    (provenance,) = con.execute("SELECT provenance FROM evaluations").fetchone()
    assert _strict_json(provenance)["tuning"]["t"]["folds"] == folds


def _strict_json(text: str) -> dict:
    """JSON as any other reader takes it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} in JSON")

    return json.loads(text, parse_constant=refuse)


def test_tuning_by_a_metric_that_ranks_no_run_is_a_spec_error(tmp_path):
    case = case_dir(tmp_path, tuned(2, metric="NumRet"))
    refused(case, SPEC_ERROR, r"spec\.yaml:\d+: runs\.t\.tune\.metric: runs are not better or "
            r"worse by 'NumRet'", "run", str(case / "spec.yaml"))  # fmt: skip


def test_a_tuning_metric_the_collection_lacks_a_field_for_is_refused_before_any_data(tmp_path):
    """The trials are planned by validation, so what their metric needs is checked there too,
    naming the collection's line (not found in the middle of an evaluation)."""
    case = case_dir(tmp_path, tuned(2, metric="Fallout@10"))
    refused(case, SPEC_ERROR, r"spec\.yaml:\d+: collections\.c: Fallout@10 needs 'num_docs' for "
            r"collection 'c'; add num_docs: <value> to it$", "validate", "--no-data",
            str(case / "spec.yaml"))  # fmt: skip


def test_tuning_without_numpy_names_the_extra_to_install(tmp_path):
    site = tmp_path / "site"  # a finder refusing numpy, as on a machine without it
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\nclass Without:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'numpy':\n"
        "            raise ModuleNotFoundError(name)\nsys.meta_path.insert(0, Without())\n"
    )
    case = case_dir(tmp_path, tuned(2))
    refused(case, SPEC_ERROR, r"spec\.yaml:\d+: runs\.t\.tune: tuning the weights needs numpy, "
            r"which is not installed: pip install 'irpipe\[arrays\]'$", "run",
            str(case / "spec.yaml"), command=functools.partial(in_a_process, PYTHONPATH=str(site)))  # fmt: skip


# --- 6: options a fusion method does not read ---------------------------------------------------


@pytest.mark.parametrize(
    "fused, message",
    [
        ({"method": "combsum", "k": 60}, r"runs\.f\.k: method combsum takes no k: only rrf reads it"),
        ({"method": "isr", "k": 10}, r"runs\.f\.k: method isr takes no k: only rrf reads it"),
        ({"method": "rrf", "norm": "none"}, r"runs\.f\.norm: method rrf takes no norm: only combsum, .*wmnz read it"),
        ({"method": "condorcet", "norm": "min-max"}, r"runs\.f\.norm: method condorcet takes no norm"),
        ({"fuse": {"a": float("nan"), "b": 1.0}, "method": "wsum"}, r"runs\.f\.fuse: .*weights must be finite numbers"),
    ],
)  # fmt: skip
def test_an_option_the_method_does_not_read_is_refused(tmp_path, fused, message):
    case = case_dir(tmp_path, spec_of({"f": {"fuse": ["a", "b"], **fused}}))
    refused(case, SPEC_ERROR, rf"spec\.yaml:\d+: {message}", "run", str(case / "spec.yaml"))


# --- the measures of other tools (issue 33): gdeval's, rbp_eval's, judged_only -----------------


@pytest.mark.parametrize(
    "metric, message",
    [
        ("ERR(variant=gdeval)@0", r"'ERR\(variant=gdeval\)@0': parameter 'k': Input should be greater than 0"),
        ("nDCG(variant=gdeval)@0", r"parameter 'k': Input should be greater than 0"),
        ("RBP(p=0.8,variant=rbp_eval)@0", r"parameter 'k': Input should be greater than 0"),
        ("RBP(p=1.0,variant=rbp_eval)", r"parameter 'p': Input should be less than 1"),
        ("RBP(p=0,variant=rbp_eval,residual=true)", r"parameter 'p': Input should be greater than 0"),
        ("ERR(variant=gdevl)@20", r"parameter 'variant': Input should be 'standard' or 'gdeval'"),
        ("nDCG(variant=trec)@20", r"parameter 'variant': Input should be 'standard' or 'gdeval'"),
        ("RBP(variant=rbpeval)", r"parameter 'variant': Input should be 'standard' or 'rbp_eval'"),
        ("nDCG(variant=gdeval,gain=exponential)@20", r"parameter 'variant': .*sets gain .* remove gain"),
        ("RBP(rel=2)", r"parameter 'variant': .*rel is rbp_eval's threshold"),
        ("nDCG(judged_only=yes)@10", r"parameter 'judged_only': Input should be true or false"),
    ],
)  # fmt: skip
def test_a_bad_parameter_of_another_tool_s_measure_is_a_spec_error(tmp_path, metric, message):
    case = case_dir(tmp_path, spec_of(metrics=["AP", metric]))
    refused(
        case,
        SPEC_ERROR,
        rf"spec\.yaml:\d+: metrics\.1: .*{message}",
        "run",
        str(case / "spec.yaml"),
    )


def test_the_defaults_of_options_a_method_does_not_read_are_no_error(tmp_path):
    fused = {"s": {"fuse": ["a", "b"], "method": "combsum", "depth": 10},
             "r": {"fuse": ["a", "b"], "k": 10}}  # fmt: skip
    case = case_dir(tmp_path, spec_of(fused))
    done = irpipe("run", "--quiet", str(case / "spec.yaml"))
    assert done.returncode == 0, done.stderr


# --- 7: a history path that is no DuckDB database -----------------------------------------------

NOT_DUCKDB = {
    "text": b"these are my notes\n",
    "sqlite": b"SQLite format 3\x00" + bytes(4080),  # DuckDB would fetch its SQLite extension
    "corrupt": bytes(8) + b"DUCK" + bytes(5000),  # DuckDB's header, checksums that fail
}
OPENING = {  # every way a command opens the history (h: its path, d: the case directory)
    "run, history: PATH": ["run", "{d}/spec.yaml"],
    "run, history: {path: PATH}": ["run", "{d}/mapping.yaml"],
    "run --history": ["run", "--history", "{h}", "{d}/bare.yaml"],
    "history": ["history", "--history", "{h}"],
    "show": ["show", "--history", "{h}", "1"],
    "diff": ["diff", "--history", "{h}", "1", "2"],
    "dashboard": ["dashboard", "--out", "{d}/site", "{h}"],
}


def history_case(tmp_path: Path, content: bytes) -> Path:
    """The case with a file `h.duckdb` of `content`, and specs naming it (or none)."""
    case = case_dir(tmp_path, spec_of(history="h.duckdb"), **{"h.duckdb": content})
    for name, spec in {"mapping": spec_of(history={"path": "h.duckdb"}), "bare": spec_of()}.items():
        (case / f"{name}.yaml").write_text(yaml.safe_dump(spec))
    return case


@pytest.mark.parametrize("opening", OPENING)
def test_a_text_file_as_the_history_is_refused_by_every_command(tmp_path, opening):
    case = history_case(tmp_path, NOT_DUCKDB["text"])
    args = [a.format(d=case, h=case / "h.duckdb") for a in OPENING[opening]]
    refused(case, HISTORY_ERROR, r"h\.duckdb: not a DuckDB database, so not an irpipe history; "
            "give another path$", *args)  # fmt: skip


@pytest.mark.parametrize("content", ["sqlite", "corrupt"])
@pytest.mark.parametrize("opening", ["run --history", "history"])
def test_a_file_of_another_format_or_corrupt_is_a_history_error(tmp_path, opening, content):
    case = history_case(tmp_path, NOT_DUCKDB[content])
    args = [a.format(d=case, h=case / "h.duckdb") for a in OPENING[opening]]
    refused(case, HISTORY_ERROR, r"h\.duckdb: (not a DuckDB database|cannot open the history: "
            "Corrupt database file)", *args)  # fmt: skip


def test_a_history_named_like_an_in_memory_database_is_the_file_of_that_name(tmp_path):
    # DuckDB reads ":memory:" as an in-memory database, which it cannot open read-only.
    case = history_case(tmp_path, NOT_DUCKDB["text"])
    (case / ":memory:").write_bytes(NOT_DUCKDB["text"])
    before = snapshot(case)
    done = irpipe("run", "--history", ":memory:", "bare.yaml", cwd=case)
    assert done.returncode == HISTORY_ERROR, done.stderr
    assert done.stderr == "Error: :memory:: not a DuckDB database, so not an irpipe history; give another path\n"  # fmt: skip
    assert snapshot(case) == before


# --- 8: judgment sets and orderings compared (agreement:, correlation:) ------------------------

# A second judgment set of the same queries, and one of other documents (no pair shared).
OTHER_QRELS = "1 0 101 1\n1 0 102 1\n2 0 201 0\n3 0 301 1\n"
ELSEWHERE = "1 0 901 1\n2 0 902 0\n"
RUN_C = RUN_B.replace(" b\n", " c\n")


def judgments_case(tmp_path: Path, **keys) -> Path:
    """Three runs of collection c, one of d (judged again) and one of e (other documents)."""
    runs = {"c3": {"path": "c.txt", "collection": "c"}, "d1": {"path": "a.txt", "collection": "d"},
            "e1": {"path": "a.txt", "collection": "e"}}  # fmt: skip
    spec = spec_of(runs, **keys)
    spec["collections"].update(d={"qrels": "d.txt"}, e={"qrels": "e.txt"})
    spec["settings"] = {"unmatched_runs": "allow"}  # e1 retrieves none of e's other documents
    return case_dir(tmp_path, spec, **{"d.txt": OTHER_QRELS, "e.txt": ELSEWHERE, "c.txt": RUN_C})


JUDGMENT_MISTAKES = {
    "unknown set": (
        {"agreement": [{"reference": "c", "other": "dd"}]},
        r"spec\.yaml:\d+: agreement\.0\.other: unknown collection 'dd'; did you mean 'd'\? the "
        r"judgment sets are the spec's collections: c, d, e$",
    ),
    "a set with itself": (
        {"agreement": [{"reference": "c", "other": "c"}]},
        r"agreement\.0\.other: 'c' is the reference itself; name another judgment set",
    ),
    "no bootstrap samples": (
        {"agreement": [{"reference": "c", "other": "d", "bootstrap": 0}]},
        r"agreement\.0\.bootstrap: Input should be greater than or equal to 1$",
    ),
    "unknown metric": (
        {"correlation": [{"reference": "AP", "other": "P@1O", "collection": "c"}]},
        r"correlation\.0\.other: 'P@1O' is not a metric of this spec; did you mean 'P@10'\? "
        r"name it as the tables do: AP, P@10, NumRet$",
    ),
    "no collection named": (
        {"correlation": [{"reference": "AP", "other": "P@10"}]},
        r"correlation\.0: the spec has several collections; say which set's runs are ordered "
        r"\(collection: one of c, d, e\)$",
    ),
    "one run": (
        {"correlation": [{"reference": "AP", "other": "P@10", "collection": "d"}]},
        r"correlation\.0: 1 run\(s\) of 'd' \(d1\): an ordering of fewer than 3 runs has "
        r"nothing to correlate; add runs$",
    ),
    "no shared pair": (
        {"agreement": [{"reference": "c", "other": "e"}]},
        r"spec\.yaml:\d+: agreement\.0: 'c' and 'e' share no judged \(qid, docno\) pair",
    ),
    "threshold outside the grades": (
        {"agreement": [{"reference": "c", "other": "d", "thresholds": [1, 2]}]},
        r"agreement\.0\.thresholds\.1: 2 is outside the grades seen on the shared pairs \(0 to "
        r"1\): at it every label is not relevant; give a threshold above 0 and at most 1$",
    ),
    "a count": (
        {"correlation": [{"reference": "AP", "other": "NumRet", "collection": "c"}]},
        r"correlation\.0\.other: 'NumRet' orders no runs: they are not better or worse by it "
        r"\(a count or a diagnostic\); order the runs by a metric of quality, such as AP$",
    ),
    "a level without entries": (
        {"outputs": [{"path": "out/summary.csv"}, {"path": "out/c.csv", "level": "confusion"}]},
        r"outputs\.1\.level: level confusion needs an agreement entry in the spec",
    ),
}

# Gates on statistics: a label agreement of c and d (threshold 1), and AP ~ P@10 over c's runs.
COMPARED = {
    "agreement": [{"reference": "c", "other": "d", "thresholds": [1]}],
    "correlation": [{"reference": "AP", "other": "P@10", "collection": "c"}],
}


def bound(**gate) -> dict:
    """The compared spec with one gate on a statistic: cohen_kappa of d against c, unless
    `gate` says otherwise."""
    found = {"statistic": "cohen_kappa", "reference": "c", "other": "d", "min": 0.4, **gate}
    return {**COMPARED, "gates": [{k: v for k, v in found.items() if v != "-"}]}


JUDGMENT_MISTAKES |= {
    "gate: unknown statistic": (
        bound(statistic="cohen_kapa"),
        r"spec\.yaml:\d+: gates\.0\.statistic: unknown statistic 'cohen_kapa'; did you mean "
        r"'cohen_kappa'\? the statistics: pairs_shared, ",
    ),
    "gate: a pair no entry compares": (
        bound(other="e"),
        r"gates\.0\.other: cohen_kappa compares the labels of an agreement entry, and none "
        r"compares 'c' \(reference\) with 'e' \(other\); the agreement entries: c ~ d; add "
        r"agreement: \[\{reference: c, other: e\}\]$",
    ),
    "gate: the pair the other way round": (
        bound(reference="d", other="c"),
        r"gates\.0\.other: agreement\.0 compares 'd' and 'c' the other way round \(reference: "
        r"c\);.* swap reference and other in the gate",
    ),
    "gate: a threshold the entry lacks": (
        bound(statistic="cohen_kappa@2"),
        r"gates\.0\.statistic: the agreement entry of 'c' and 'd' has no threshold 2 \(its "
        r"thresholds: 1\); add it to agreement\.0\.thresholds$",
    ),
    "gate: a binary statistic without threshold": (
        bound(statistic="f1"),
        r"gates\.0\.statistic: f1 is of binarised labels: name a threshold of the entry, as "
        r"f1@1$",
    ),
    "gate: a count at a threshold": (
        bound(statistic="pairs_shared@1"),
        r"gates\.0\.statistic: pairs_shared counts pairs or queries; it has no threshold",
    ),
    "gate: a metric for labels": (
        bound(metric="AP"),
        r"gates\.0\.metric: cohen_kappa compares the labels of two judgment sets, not orderings "
        r"of the runs; leave metric out$",
    ),
    "gate: no bound": (
        bound(min="-"),
        r"spec\.yaml:\d+: gates\.0: give the accepted values' bound: min, max or both$",
    ),
    "gate: min above max": (
        bound(min=0.5, max=0.2),
        r"gates\.0: min 0\.5 is above max 0\.2: no value can pass$",
    ),
    "gate: orderings of an entry that orders no runs": (
        bound(statistic="kendall_tau_b"),
        r"gates\.0\.statistic: agreement\.0 orders no runs \(none is evaluated under both 'c' "
        r"and 'd'\): it has no correlation statistic to bound$",
    ),
    "gate: a metric of a correlation entry": (
        bound(statistic="tau_ap", reference="AP", other="P@10", metric="AP"),
        r"gates\.0\.metric: 'AP' and 'P@10' are the metrics the correlation entry compares; "
        r"leave metric out$",
    ),
    "gate: a collection the correlation entry does not order": (
        bound(statistic="tau_ap", reference="AP", other="P@10", collection="d"),
        r"gates\.0\.collection: the correlation entries of 'AP' and 'P@10' order the runs of c, "
        r"not of 'd'$",
    ),
    "gate: a bound on a metric": (
        {"gates": [{"metric": "AP", "min": 0.2}]},
        r"spec\.yaml:\d+: gates\.0: min and max bound a statistic of an agreement or "
        r"correlation entry: name it \(statistic: cohen_kappa, reference: SET, other: SET\); a "
        r"metric is gated by its drop \(metric:, against:, max_drop:\)$",
    ),
}


@pytest.mark.parametrize("mistake", JUDGMENT_MISTAKES)
def test_a_judgments_mistake_is_a_spec_error_naming_the_entry(tmp_path, mistake):
    keys, message = JUDGMENT_MISTAKES[mistake]
    case = judgments_case(tmp_path, metrics=["AP", "P@10", "NumRet"], **keys)
    refused(case, SPEC_ERROR, message, "run", str(case / "spec.yaml"))
