"""BEIR's and MTEB's qrels (`query-id corpus-id score` under a header line) are read as TREC's are:
the same judgments give the same numbers, however the format is known (named, or recognised from
the header, in a spec and in the Python door, plain or gzip-compressed), and a bad file is one
message naming the file and the line, exit 3, nothing written (configs/REFERENCE.md, "BEIR
qrels"). The Spark engine's reading is in tests/test_spark_inputs.py.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
import yaml
from conftest import snapshot
from test_user_errors import DATA_ERROR, SPEC_ERROR, irpipe

from pipeline import evaluate
from pipeline.inputs.recognise import recognised
from pipeline.synthetic import generate, write_beir_qrels, write_qrels, write_run

# Every family: counts, ranks, cutoffs, graded gains, the ideal ranking, judged-only rankings,
# negative grades (unjudged vs judged non-relevant), text, geometric means.
METRICS = [
    "AP", "P@5", "P@10", "R@10", "RR", "Rprec", "Bpref", "infAP", "nDCG", "nDCG@10", "DCG@5",
    "RBP", "Success@5", "SetF", "NumRet", "NumRel", "NumRelRet", "gmAP", "Unjudged@10",
    "RelString", "AP(rel=2)", "nDCG(gain='exponential')@10", "Rprec(mult=0.5)",
]  # fmt: skip
HEADER = "query-id\tcorpus-id\tscore\n"


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> Path:
    """A generated collection (every hard case) as TREC qrels, as BEIR qrels plain and .gz (the
    project's generator), and two runs."""
    where = tmp_path_factory.mktemp("judged")
    data = generate(seed=32, queries=20, runs=2, extremes=True)
    write_qrels(data.qrels, where / "qrels.txt")
    write_beir_qrels(data.qrels, where / "test.tsv")
    write_beir_qrels(data.qrels, where / "test.tsv.gz")
    for name, run in data.runs.items():
        write_run(run, where / f"{name}.trec")
    return where


def _per_query(qrels: Path, runs: list[Path], **settings) -> list[tuple]:
    """Every (run, qid, metric, value, text) through the Python door, sorted."""
    found = evaluate(
        qrels=str(qrels), runs={r.stem: str(r) for r in runs}, metrics=METRICS, settings=settings
    ).per_query(to="arrow")
    columns = [found.column(c).to_pylist() for c in ("run", "qid", "metric", "value", "text")]
    rows = zip(*columns, strict=True)
    return sorted(rows, key=lambda row: row[:3])


@pytest.mark.parametrize("name", ["test.tsv", "test.tsv.gz"])
@pytest.mark.parametrize("settings", [{}, {"input": "lenient", "relevance_level": 2}])
def test_beir_qrels_give_exactly_the_trec_values(judged, name, settings):
    runs = sorted(judged.glob("*.trec"))
    expected = _per_query(judged / "qrels.txt", runs, **settings)
    assert len(expected) > 40 * len(METRICS)  # every query, every metric: nothing vanished
    assert _per_query(judged / name, runs, **settings) == expected


def test_a_spec_reads_named_and_recognised_beir_qrels_alike(judged, tmp_path):
    spec = {
        "collections": {
            "trec": {"qrels": str(judged / "qrels.txt")},
            "named": {"qrels": str(judged / "test.tsv.gz"), "format": "beir"},
            "recognised": {"qrels": str(judged / "test.tsv")},
        },
        "runs": {
            c: {"path": str(judged / "run0.trec"), "collection": c}
            for c in ("trec", "named", "recognised")
        },  # fmt: skip
        "metrics": ["AP", "nDCG@10"],
        "outputs": [{"path": "out.csv", "level": "query"}],
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    done = irpipe("run", "--quiet", str(tmp_path / "spec.yaml"))
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "out.csv").read_text().splitlines()[1:]
    by_collection = {c: sorted(line.split(",", 2)[2] for line in lines if
                               line.split(",")[1] == c) for c in spec["runs"]}  # fmt: skip
    assert by_collection["trec"] and by_collection["named"] == by_collection["trec"]
    assert by_collection["recognised"] == by_collection["trec"]


def test_compiling_reads_no_qrels_file_and_validating_recognises_it(judged, monkeypatch):
    """The plan is compiled from the spec alone; the data's validation looks at the first line."""
    import pipeline.inputs.recognise as formats
    from pipeline.run.preflight import compile_spec, validate

    spec = judged / "recognised.yaml"
    runs = {"r": {"path": str(judged / "run0.trec"), "collection": "c"}}
    spec.write_text(yaml.safe_dump({"collections": {"c": {"qrels": str(judged / "test.tsv")}},
                                    "runs": runs, "metrics": ["AP"]}))  # fmt: skip
    [load] = [load for load in validate(spec).sql.loads if load.name == "c"]
    assert load.format.docno == "f[2]"  # read as BEIR's: recognised
    monkeypatch.setattr(formats, "_first_line", lambda path: pytest.fail(f"read {path}"))
    [load] = [load for load in compile_spec(spec).sql.loads if load.name == "c"]
    assert load.format.docno == "f[3]"  # read as TREC's, the file untouched


@pytest.mark.parametrize(
    "first_line, expected",
    [
        (HEADER, "beir"),
        ("query-id corpus-id score\r\n", "beir"),  # spaces, CRLF
        ("\ufeffquery-id\tcorpus-id\tscore\n", "beir"),  # a byte-order mark
        ("query-id\tcorpus-id\n", "beir"),  # a header lacking a column: reported as one
        ("1 0 doc 1\n", "trec"),
        ("query-id 0 corpus-id 1\n", "trec"),  # a TREC line of BEIR's words has four fields
        ("query-id corpus-id score score\n", "trec"),
        ("qid\tdocid\trel\n", "trec"),  # another header: not BEIR's, so read as TREC (and refused)
        ("\n" + HEADER, "trec"),  # the header must be the first line
        ("", "trec"),
    ],
)
def test_the_first_line_says_whether_a_file_is_beir(tmp_path, first_line, expected):
    path = tmp_path / "qrels.tsv"
    path.write_text(first_line + "1\td1\t1\n", encoding="utf-8", newline="")
    assert recognised(path) == expected
    packed = tmp_path / "qrels.tsv.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert recognised(packed) == expected


def test_a_trec_file_is_never_taken_for_beir(tmp_path):
    for seed in range(20):
        write_qrels(generate(seed, queries=5).qrels, tmp_path / "qrels.txt")
        assert recognised(tmp_path / "qrels.txt") == "trec"
    for unreadable in (tmp_path / "missing.tsv", tmp_path, tmp_path / "bad.gz"):
        (tmp_path / "bad.gz").write_bytes(HEADER.encode())  # named .gz, not gzip
        assert recognised(unreadable) == "trec"


def _case(tmp_path: Path, qrels: str, **collection) -> Path:
    """A directory with BEIR qrels text `qrels`, a run and a spec writing an output."""
    case = tmp_path / "case"
    case.mkdir()
    (case / "test.tsv").write_text(qrels)
    (case / "run.trec").write_text("1 Q0 d1 1 2 r\n1 Q0 d2 2 1 r\n2 Q0 d3 1 1 r\n")
    spec = {
        "collections": {"c": {"qrels": "test.tsv", **collection}},
        "runs": {"r": {"path": "run.trec", "collection": "c"}},
        "metrics": ["AP"],
        "outputs": [{"path": "out.csv"}],
    }
    (case / "spec.yaml").write_text(yaml.safe_dump(spec))
    return case


def refused(case: Path, code: int, message: str, *args: str) -> None:
    """`irpipe ARGS` exits with `code`, no traceback, one `Error: ` line (the first) matching
    `message` (hints may follow it, as for TREC files), and changes nothing under `case`."""
    before = snapshot(case)
    done = irpipe(*args)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("Error: ") == 1, done.stderr
    assert re.match(r"Error: [^\n]*" + message, done.stderr), done.stderr
    assert snapshot(case) == before


GOOD = HEADER + "1\td1\t1\n1\td2\t0\n2\td3\t2\n"
BAD = {
    "a header lacking a column": (
        GOOD.replace("\tscore", ""), {}, r"test.tsv:1: a BEIR header names the columns query-id, "
        r"corpus-id, score in this order; missing: score: 'query-id\\tcorpus-id'"
    ),
    "a header lacking a column, format named": (
        GOOD.replace("query-id\t", ""), {"format": "beir"}, r"test.tsv:1: .*missing: query-id:"
    ),
    "a header out of order": (
        GOOD.replace("query-id\tcorpus-id", "corpus-id\tquery-id"), {},
        r"test.tsv:1: .* in this order; found them out of order",
    ),
    "a decimal grade": (
        GOOD.replace("d2\t0", "d2\t0.5"), {}, r"test.tsv:3: the relevance grade must be an integer, "
        r"found '0.5' \(decimal grades are read with settings: \{grades: real\}\): '1\\td2\\t0.5'$"
    ),
    "a decimal grade, lenient": (
        GOOD.replace("d3\t2", "d3\t1e-1"), {}, r"test.tsv:4: the relevance grade must be an integer, "
        r"found '1e-1' \(decimal grades are read with settings: \{grades: real\}\)"
    ),
    "a grade that is not a number": (
        GOOD.replace("d2\t0", "d2\thigh"), {},
        r"test.tsv:3: the relevance grade must be an integer, found 'high'",
    ),
    "too few fields": (GOOD + "2\td4\n", {}, r"test.tsv:5: expected 3 fields \(query-id corpus-id score\), found 2"),
    "a TREC line": (GOOD + "2 0 d4 1\n", {}, r"test.tsv:5: expected 3 fields .*, found 4"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD)
def test_a_bad_beir_file_is_one_error_naming_its_line(tmp_path, case):
    text, collection, message = BAD[case]
    where = _case(tmp_path, text, **collection)
    if case.endswith("lenient"):  # lenient reads grades as atol would, but never cuts a decimal
        spec = yaml.safe_load((where / "spec.yaml").read_text())
        (where / "spec.yaml").write_text(yaml.safe_dump({**spec, "settings": {"input": "lenient"}}))
    refused(where, DATA_ERROR, message, "run", "--quiet", str(where / "spec.yaml"))


def test_a_duplicate_names_both_lines_counting_the_header(tmp_path):
    where = _case(tmp_path, GOOD + "1\td1\t2\n")
    message = r"test.tsv:2: query '1' has document 'd1' again on line 5\n"
    refused(where, DATA_ERROR, message, "run", "--quiet", str(where / "spec.yaml"))


def test_beir_named_on_a_table_is_a_spec_error(tmp_path):
    where = _case(tmp_path, GOOD, format="beir")
    spec = yaml.safe_load((where / "spec.yaml").read_text())
    spec["collections"]["c"]["qrels"] = "qrels.parquet"
    (where / "spec.yaml").write_text(yaml.safe_dump(spec))
    refused(where, SPEC_ERROR, r"collections\.c.*format: beir reads a text file", "validate",
            "--no-data", str(where / "spec.yaml"))  # fmt: skip


def test_beir_qrels_read_as_trec_say_which_format_they_are(tmp_path):
    where = _case(tmp_path, GOOD, format="trec")
    done = irpipe("run", "--quiet", str(where / "spec.yaml"))
    assert done.returncode == DATA_ERROR
    assert "test.tsv:1: expected 4 fields (qid iter docno rel), found 3" in done.stderr
    assert "hint: a line is BEIR's qrels header: set the collection's `format: beir`" in done.stderr
