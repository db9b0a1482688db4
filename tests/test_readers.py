"""Readers: whitespace variants read the same; bad lines are reported with their line numbers."""

from __future__ import annotations

import pytest

from pipeline import InputDataError

QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 d 1\n"
RUN = "1 Q0 a 1 3.5 t\n1 Q0 b 2 2.5 t\n1 Q0 c 3 2.5 t\n2 Q0 d 1 1e0 t\n"
METRICS = ["AP", "nDCG@3", "RR", "NumRet"]


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t.replace(" ", "\t"),  # tab separated: still the fast pass
        lambda t: t.replace(" ", "  \t "),  # runs of mixed whitespace: the general pass
        lambda t: t.replace("\n", "\r\n"),  # CRLF
        lambda t: "# a comment\n\n" + t.replace("\n", "\n   \n", 1) + "# trailing comment\n",
        lambda t: "  " + t.replace("\n", " \n"),  # leading and trailing blanks
    ],
)
def test_whitespace_variants_give_identical_values(evaluate_trec, mangle):
    expected, _ = evaluate_trec(QRELS, RUN, METRICS)
    got, _ = evaluate_trec(mangle(QRELS), mangle(RUN), METRICS)
    assert got == expected


def test_extra_run_fields_are_ignored(evaluate_trec):
    expected, _ = evaluate_trec(QRELS, RUN, METRICS)
    got, _ = evaluate_trec(QRELS, RUN.replace(" t\n", " t junk after the tag\n"), METRICS)
    assert got == expected


@pytest.mark.parametrize(
    ("qrels", "run", "message"),
    [
        (QRELS, RUN.replace("1 Q0 b 2 2.5 t", "1 Q0 b 2 2.5"), r"run.txt:2: expected 6 fields .*found 5: '1 Q0 b 2 2.5'"),
        (QRELS, RUN.replace("2.5 t", "x t", 1), r"run.txt:2: the score must be a number, found 'x'"),
        (QRELS.replace("1 0 b 0", "1 0 b"), RUN, r"qrels.txt:2: expected 4 fields \(qid iter docno rel\), found 3"),
        (QRELS.replace("1 0 c 1", "1 0 c 1 x"), RUN, r"qrels.txt:3: expected 4 fields"),
        (QRELS.replace("2 0 d 1", "2 0 d high"), RUN, r"qrels.txt:4: the relevance grade must be an integer, found 'high'"),
        ("# c\r\n\r\n" + QRELS.replace("1 0 c 1", "1 0 c"), RUN, r"qrels.txt:5: expected 4 fields"),
    ],
)  # fmt: skip
def test_bad_lines_name_file_line_and_problem(evaluate_trec, qrels, run, message):
    with pytest.raises(InputDataError, match=message):
        evaluate_trec(qrels, run, METRICS)


@pytest.mark.parametrize(
    ("score", "grade"),
    [("-0", "-0"), ("+1", "+1"), ("1e0", "01"), (".5", "007"), ("5.", "127"), ("1E-3", "-1")],
)
def test_strict_accepts_every_plain_number(evaluate_trec, score, grade):
    got, _ = evaluate_trec(
        f"1 0 a {grade}\n1 0 b 1\n", f"1 Q0 a 1 {score} t\n1 Q0 b 2 -9 t\n", ["NumRelRet"]
    )
    assert got[("1", "NumRelRet")] == 1 + (int(grade) >= 1)


def test_negative_grades_are_kept_as_judged_non_relevant(evaluate_trec):
    got, _ = evaluate_trec("1 0 a -2\n1 0 b 1\n", "1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n", ["RR", "NumRel"])
    assert got[("1", "RR")] == 0.5 and got[("1", "NumRel")] == 1


@pytest.mark.parametrize(
    ("score", "expected_rr"),
    [
        ("1,5", 0.5),  # atof reads 1: below b's 1.2
        ("1.5x", 1.0),  # atof reads 1.5: above b's 1.2
        ("abc", 0.5),  # 0
        ("1e0", 0.5),  # 1
        ("nan", 1.0),  # NaN sorts above every number (trec_eval's order is undefined)
        ("inf", 1.0),
        ("-inf", 0.5),
    ],
)
def test_lenient_reads_scores_as_c_atof(evaluate_trec, score, expected_rr):
    qrels, run = "1 0 a 1\n", f"1 Q0 a 1 {score} t\n1 Q0 b 2 1.2 t\n"
    got, _ = evaluate_trec(qrels, run, ["RR"], {"input": "lenient"})
    assert got[("1", "RR")] == expected_rr


@pytest.mark.parametrize(("grade", "relevant"), [("1.7", 1), ("2x", 1), ("abc", 0), ("-1z", 0)])
def test_lenient_reads_grades_as_c_atol(evaluate_trec, grade, relevant):
    got, _ = evaluate_trec(
        f"1 0 a {grade}\n1 0 b 0\n", "1 Q0 a 1 2 t\n", ["NumRel"], {"input": "lenient"}
    )
    assert got[("1", "NumRel")] == relevant


def test_a_utf8_byte_order_mark_is_ignored(evaluate_trec):
    expected, _ = evaluate_trec(QRELS, RUN, METRICS)
    got, _ = evaluate_trec("\ufeff" + QRELS, "\ufeff" + RUN, METRICS)
    assert got == expected


def test_a_path_with_glob_characters_reads_exactly_that_file(tmp_path, write_spec):
    from pipeline.run.evaluation import evaluate

    (tmp_path / "qrels.txt").write_text("1 0 a 1\n")
    (tmp_path / "run[1].trec").write_text("1 Q0 a 1 1 t\n")
    (tmp_path / "run1.trec").write_text("1 Q0 b 1 1 t\n")  # what DuckDB's glob would read instead
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run[1].trec", "collection": "c"}},
        "metrics": ["RR"],
    }
    assert evaluate(write_spec(spec), write=False).aggregate()[0][3] == 1.0


def test_vertical_tabs_and_form_feeds_separate_fields_as_in_c(tmp_path, write_spec):
    from pipeline.run.evaluation import evaluate

    def per_query(run_text: str) -> list[tuple]:
        (tmp_path / "qrels.txt").write_text(QRELS)
        (tmp_path / "run.txt").write_text(run_text)  # not via trec_files: splitlines splits on \v
        spec = {
            "collections": {"c": {"qrels": "qrels.txt"}},
            "runs": {"r": {"path": "run.txt", "collection": "c"}},
            "metrics": METRICS,
        }
        return evaluate(write_spec(spec), write=False).per_query()

    expected = per_query(RUN)
    assert per_query(RUN.replace(" 2.5 ", "\x0b2.5\x0c ") + "\x0c\n") == expected
