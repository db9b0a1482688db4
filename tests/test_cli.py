"""The `irpipe` command: exit codes, messages, no tracebacks. Run in the test's process, but for
a closed pipe, which is the process's own affair (a subprocess)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Outcome, irpipe_inprocess

ROOT = Path(__file__).resolve().parents[1]


def irpipe(*args: str, cwd: Path | None = None) -> Outcome:
    return irpipe_inprocess(*args, cwd=cwd or ROOT)


@pytest.fixture
def quickstart(tmp_path) -> Path:
    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("out"))
    return tmp_path / "configs" / "quickstart.yaml"


def test_run_writes_outputs_and_prints_summary(quickstart):
    result = irpipe("run", str(quickstart))
    assert result.returncode == 0, result.stderr
    assert "nDCG@10" in result.stdout and "bm25" in result.stdout
    assert "collection sample, 50 queries" in result.stdout
    out = quickstart.parent / "out"
    assert {p.name for p in out.iterdir()} >= {"summary.csv", "summary.md", "per_query.parquet"}


def test_validate_reads_no_data(quickstart):
    (quickstart.parent / "data" / "bm25.trec").write_text("garbage\n")
    result = irpipe("validate", str(quickstart))
    assert result.returncode == 0 and "valid" in result.stdout


def test_compile_prints_sql_with_bound_paths(quickstart):
    result = irpipe("compile", str(quickstart))
    assert result.returncode == 0
    assert "ranked AS (" in result.stdout and "bm25.trec" in result.stdout


def test_metrics_lists_the_registry():
    result = irpipe("metrics")
    assert result.returncode == 0
    for name in ("nDCG", "AP", "SearchLength", "Fallout", "ndcg_cut"):
        assert name in result.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("run", "missing.yaml"), 2, "missing.yaml: cannot read the spec"),
        (("validate", "README.md"), 2, "README.md"),
    ],
)
def test_user_errors_exit_non_zero_with_one_line(args, code, message):
    result = irpipe(*args)
    assert result.returncode == code
    assert message in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.startswith("Error: ")


def test_spec_error_exit_code_and_debug_traceback(quickstart):
    text = quickstart.read_text().replace("  - RR\n", "  - RRR\n")
    quickstart.write_text(text)
    plain = irpipe("run", str(quickstart))
    assert plain.returncode == 2
    assert "metrics.3: unknown metric 'RRR'; did you mean 'RR'" in plain.stderr
    assert "Traceback" not in plain.stderr
    debug = irpipe("--debug", "run", str(quickstart))
    assert "Traceback" in debug.stderr


def test_input_data_error_exit_code_names_file_and_line(quickstart):
    run = quickstart.parent / "data" / "bm25.trec"
    lines = run.read_text().splitlines()
    lines[4] = "1 Q0 d1 1 2.5"
    run.write_text("\n".join(lines) + "\n")
    result = irpipe("run", str(quickstart))
    assert result.returncode == 3
    assert f"{run}:5: expected 6 fields (qid Q0 docno rank score tag), found 5" in result.stderr
    assert not (quickstart.parent / "out").exists()


def test_plugins_lists_builtins_with_their_metrics_and_writers():
    result = irpipe("plugins")
    assert result.returncode == 0 and result.stderr == ""
    rows = {line.split("│")[0].strip(): line.split("│") for line in result.stdout.splitlines()}
    assert rows["pipeline.metrics.precision"][1].strip().startswith("irpipe ")
    assert "P, R," in rows["pipeline.metrics.precision"][2]
    assert ".csv" in rows["pipeline.outputs"][3] and rows["pipeline.outputs"][4].strip() == "loaded"


@pytest.mark.parametrize("debug", [False, True])
def test_an_unexpected_exception_is_an_internal_error(monkeypatch, capsys, debug):
    from pipeline import cli
    from pipeline.cli import commands

    def broken(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(commands, "metrics", broken)
    code = cli.main(["--debug", "metrics"] if debug else ["metrics"])
    err = capsys.readouterr().err
    assert code == 1
    assert (
        "Error: internal error (a bug in irpipe or a plugin): ZeroDivisionError: division by zero"
        in err
    )
    assert ("Traceback" in err) == debug
    assert ("rerun with --debug" in err) != debug


def test_warnings_are_one_line_and_do_not_fail_the_run(quickstart):
    text = quickstart.read_text().replace(
        "collections:\n", "collections:\n  spare: {qrels: data/qrels.txt}\n", 1
    )
    quickstart.write_text(text)
    result = irpipe("run", "--quiet", str(quickstart))
    assert result.returncode == 0, result.stderr
    assert (
        result.stderr.startswith("Warning: ")
        and "collections.spare: no run is evaluated" in result.stderr
    )
    assert "warnings.warn" not in result.stderr


def test_sigterm_unwinds_and_exits_143(monkeypatch, capsys):
    import os
    import signal
    import time

    from pipeline import cli
    from pipeline.cli import commands

    def stopped_by_the_scheduler(args):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the signal arrives long before this ends
        return 0

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(commands, "metrics", stopped_by_the_scheduler)
    assert cli.main(["metrics"]) == 143
    assert capsys.readouterr().err == (
        "Error: interrupted by SIGTERM: nothing was written "
        "(earlier outputs are as they were, temporary files were removed)\n"
    )
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.fixture
def without_data(quickstart) -> Path:
    """The quickstart spec on a machine that does not have its data."""
    shutil.rmtree(quickstart.parent / "data")
    return quickstart


def test_validate_no_data_checks_the_spec_without_its_files(without_data):
    result = irpipe("validate", "--no-data", str(without_data))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{without_data}: valid without data (10 metrics, 2 runs)\n"
    default = irpipe("validate", str(without_data))
    assert default.returncode == 2
    assert "collections.sample.qrels: " in default.stderr and "does not exist" in default.stderr


def test_compile_needs_no_data(without_data):
    result = irpipe("compile", str(without_data))
    assert result.returncode == 0, result.stderr
    assert "ranked AS (" in result.stdout and "data/bm25.trec" in result.stdout


def test_a_run_pattern_is_one_run_without_data_and_expanded_by_compile(quickstart):
    runs = quickstart.parent / "runs"
    runs.mkdir()
    for name in ("a", "b", "c"):
        shutil.copy(quickstart.parent / "data" / "bm25.trec", runs / f"{name}.trec")
    quickstart.write_text(quickstart.read_text().replace("data/bm25.trec", "runs/*.trec"))
    # --no-data lists no directory: the pattern stays the run `bm25`, files or not.
    no_data = irpipe("validate", "--no-data", str(quickstart))
    assert no_data.stdout.endswith("valid without data (10 metrics, 2 runs)\n"), no_data.stderr
    assert irpipe("validate", str(quickstart)).stdout.endswith("(10 metrics, 5 input files)\n")
    expanded = irpipe("compile", str(quickstart)).stdout
    assert all(f"'bm25/{name}'" in expanded for name in ("a", "b", "c"))
    shutil.rmtree(runs)
    kept = irpipe("compile", str(quickstart)).stdout  # one run, read as the literal file name
    assert "'bm25/" not in kept and "runs/[*].trec'" in kept


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("  - RR\n", "  - RR(k=ten)\n"), r"metrics\.3: 'RR\(k=ten\)': .*k"),
        (("  - RR\n", "  - {metric: RR, depth: 3}\n"), r"unknown parameter 'depth' of RR"),
        (("collection: sample}", "collection: sampel}"), r"unknown collection 'sampel'; did you mean 'sample'"),
        (("out/summary.md", "out/summary.csv"), r"outputs\.2\.path: .*summary\.csv is also outputs\.1"),
        (("out/summary.md", "out/summary.xlsx"), r"outputs\.2\.path: .*no writer for '\.xlsx'"),
        (("level: query", "level: queries"), r"outputs\.0\.level: Input should be 'query', 'aggregate'"),
        (("  ordering: trec_eval", "  odering: trec_eval"), r"settings\.odering: unknown key; did you mean 'ordering'"),
        (("  - {metric: nDCG, k: 10, gain: exponential, label: nDCG_exp@10}\n", "  - {metric: AP, label: nDCG@5}\n"), r"nDCG@5"),
    ],
)  # fmt: skip
def test_validate_no_data_checks_the_whole_spec(without_data, change, message):
    without_data.write_text(without_data.read_text().replace(*change))
    result = irpipe("validate", "--no-data", str(without_data))
    assert result.returncode == 2 and result.stderr.startswith("Error: "), result.stderr
    assert re.search(message, result.stderr), result.stderr
    assert "Traceback" not in result.stderr


def _with_closed_stdout(*args: str, cwd: Path) -> tuple[int, str]:
    """`irpipe ARGS | head -0`: stdout a pipe whose reader has left before anything is written
    (as `head -1` leaves after its line): (exit code, stderr)."""
    command = [sys.executable, "-m", "pipeline.cli", *args]
    env = {"IRPIPE_LOAD_PLUGINS": "", "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env, text=True
    )
    process.stdout.close()  # the reader leaves: every write to stdout fails with EPIPE
    stderr = process.stderr.read()
    process.stderr.close()
    return process.wait(), stderr


@pytest.mark.parametrize(
    "command",
    [
        ("run", "configs/quickstart.yaml"),
        ("metrics",),
        ("trec-eval", "-q", "-c", "configs/data/qrels.txt", "configs/data/bm25.trec"),
        ("compile", "configs/quickstart.yaml"),
        ("plugins",),
        ("validate", "configs/quickstart.yaml"),  # buffered: written as the process exits
        ("--version",),
    ],
)
def test_a_closed_pipe_ends_quietly(quickstart, command):
    """`irpipe run spec.yaml | head -1`: the reader leaving is no error, and nothing is said."""
    code, stderr = _with_closed_stdout(*command, cwd=quickstart.parent.parent)
    assert (code, stderr) in ((0, ""), (141, "")), stderr
