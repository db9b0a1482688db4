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
