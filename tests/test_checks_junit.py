"""`irpipe run --junit PATH`: every check as a JUnit testcase, written atomically; the quickstart's
sample data (configs/data) through the command line, run in the test's process."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from conftest import Outcome, irpipe_inprocess

ROOT = Path(__file__).resolve().parents[1]


def irpipe(*args: str) -> Outcome:
    return irpipe_inprocess(*args, cwd=ROOT)


@pytest.fixture
def sample(tmp_path) -> Path:
    """The quickstart's spec and data in tmp_path; returns the spec."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("out"))
    return tmp_path / "configs" / "quickstart.yaml"


def with_checks(spec: Path, **sections) -> Path:
    data = yaml.safe_load(spec.read_text())
    spec.write_text(yaml.safe_dump({**data, **sections}, sort_keys=False))
    return spec


CHECKS = {
    "expect": [
        {"run": "bm25", "metric": "AP", "value": 0.2179},  # 0.21794...: passes
        {"run": "dense", "metric": "AP", "value": 0.2000, "tolerance": 0.001},  # 0.1799: fails
    ],
    "gates": [{"metric": "nDCG@10", "max_drop": 0.005, "against": "previous"}],  # no history
}


def test_every_check_is_a_testcase(sample, tmp_path):
    report = tmp_path / "checks.xml"
    result = irpipe("run", "--quiet", "--junit", str(report), str(with_checks(sample, **CHECKS)))
    assert result.returncode == 5, result.stderr
    root = ET.parse(report).getroot()
    suite = root.find("testsuite")
    assert root.tag == "testsuites" and suite.get("name") == "irpipe"
    counts = {key: suite.get(key) for key in ("tests", "failures", "errors", "skipped")}
    assert counts == {"tests": "4", "failures": "1", "errors": "0", "skipped": "2"}
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("irpipe.expect", "expect.0 bm25 AP"),
        ("irpipe.expect", "expect.1 dense AP"),
        ("irpipe.gates", "gates.0 bm25 nDCG@10"),
        ("irpipe.gates", "gates.0 dense nDCG@10"),
    ]
    assert (
        cases[0].find("failure") is None and "expected 0.2179" in cases[0].find("system-out").text
    )
    failure = cases[1].find("failure")
    assert failure.get("message") == (
        "AP is 0.179909, worse than the expected 0.2 by 0.020091 (tolerance 0.001)"
    )
    assert "new: 0.17990900736690216" in failure.text
    assert cases[2].find("skipped").get("message") == (
        "no previous evaluation of run 'bm25' in the history"
    )


def test_a_spec_without_checks_writes_an_empty_testsuite(sample, tmp_path):
    report = tmp_path / "checks.xml"
    result = irpipe("run", "--quiet", "--junit", str(report), str(sample))
    assert result.returncode == 0, result.stderr
    suite = ET.parse(report).getroot().find("testsuite")
    assert (suite.get("tests"), suite.findall("testcase")) == ("0", [])


def test_the_report_is_replaced_whole_and_no_temporary_file_stays(sample, tmp_path):
    report = tmp_path / "reports" / "checks.xml"
    report.parent.mkdir()
    assert irpipe("run", "--quiet", "--junit", str(report), str(sample)).returncode == 0  # 0 tests
    spec = with_checks(sample, expect=CHECKS["expect"][:1])
    assert irpipe("run", "--quiet", "--junit", str(report), str(spec)).returncode == 0
    assert [p.name for p in report.parent.iterdir()] == ["checks.xml"]
    assert ET.parse(report).getroot().find("testsuite").get("tests") == "1"


def test_a_file_irpipe_did_not_write_is_kept_and_nothing_is_evaluated(sample, tmp_path):
    report = tmp_path / "checks.xml"
    report.write_text("the CI system's own report")
    result = irpipe("run", "--quiet", "--junit", str(report), str(sample))
    assert result.returncode == 2
    assert result.stderr == (
        f"Error: --junit: {report} exists and is not a JUnit report irpipe wrote; move it away "
        "or name another path\n"
    )
    assert report.read_text() == "the CI system's own report"
    assert not (sample.parent / "out").exists()


def test_the_report_is_never_an_input_of_the_spec(sample, tmp_path):
    qrels = sample.parent / "data" / "qrels.txt"
    before = qrels.read_bytes()
    result = irpipe("run", "--quiet", "--junit", str(qrels), str(sample))
    assert result.returncode == 2
    assert re.fullmatch(
        r"Error: --junit: \S+/qrels\.txt is an input of this spec \(collections\.\w+\.qrels\); "
        r"writing it would replace the data\n",
        result.stderr,
    )
    assert qrels.read_bytes() == before


def test_a_directory_is_refused_before_evaluating(sample, tmp_path):
    result = irpipe("run", "--quiet", "--junit", str(tmp_path), str(sample))
    assert result.returncode == 4
    assert result.stderr == f"Error: --junit {tmp_path}: is a directory; name a file such as checks.xml\n"  # fmt: skip
    assert not (sample.parent / "out").exists()  # nothing was evaluated or written


def test_the_example_regression_spec_passes_and_fails_on_a_changed_number(sample, tmp_path):
    spec, history = sample.parent / "regression.yaml", str(tmp_path / "history.duckdb")
    report = tmp_path / "checks.xml"
    result = irpipe("run", "--history", history, "--junit", str(report), str(spec))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Checks: 6 passed, 2 skipped"
    assert "gates.0: no previous evaluation of runs 'bm25', 'dense' (nDCG@10)" in result.stderr
    suite = ET.parse(report).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("8", "0", "2")
    again = irpipe("run", "--history", history, str(spec))  # the next night: a previous evaluation
    assert (again.returncode, again.stderr) == (0, "")
    assert again.stdout.splitlines()[-1] == "Checks: 8 passed"
    spec.write_text(spec.read_text().replace("value: 0.2179}", "value: 0.2181}"))
    changed = irpipe("run", "--quiet", str(spec))
    assert changed.returncode == 5
    assert changed.stderr.splitlines()[-1].split()[:5] == ["expect.0", "bm25", "AP", "expected", "0.218100"]  # fmt: skip
