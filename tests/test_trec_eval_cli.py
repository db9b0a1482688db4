"""`irpipe trec-eval`: byte-identical to trec_eval 10.0, its flags, exit codes and quirks.

The golden outputs under tests/golden were printed by the trec_eval 10.0 binary (usnistgov/trec_eval
at f425365, built outside this repository) on inputs made by `pipeline.synthetic.generate`; see
cases.json for each command line and exit code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval
from conftest import Outcome, irpipe_inprocess

from pipeline.measures.trec_names import atof, atol, select

GOLDEN = Path(__file__).parent / "golden"
CASES = json.loads((GOLDEN / "cases.json").read_text())


def trec_eval(*args: str) -> Outcome:
    return irpipe_inprocess("trec-eval", *args)


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_is_byte_identical_to_trec_eval_10(monkeypatch, case):
    folder, _ = case.split("/")
    monkeypatch.chdir(GOLDEN / folder)
    code, out, _ = trec_eval(*CASES[case]["args"], "qrels.txt", "run.trec")
    assert code == CASES[case]["exit_code"]
    assert out == (GOLDEN / f"{case}.out").read_text()


def test_missing_topic_is_fatal_with_a_clear_message(monkeypatch):
    monkeypatch.chdir(GOLDEN / "graded")
    code, out, err = trec_eval("qrels.txt", "run.trec")
    assert code == 4 and out == ""
    assert "is in the qrels but not in the run" in err and "use -c" in err


def test_compatibility_9_skips_missing_topics_like_pytrec_eval(monkeypatch):
    monkeypatch.chdir(GOLDEN / "graded")
    code, out, _ = trec_eval(
        "--compatibility", "9", "-q", "-m", "map", "-m", "P.5", "qrels.txt", "run.trec"
    )
    assert code == 0
    ours = {(q, m.strip()): float(v) for m, q, v in (line.split("\t") for line in out.splitlines())}
    qrels, run = _read(GOLDEN / "graded")
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.5"}).evaluate(run)
    for qid, values in expected.items():
        assert ours[qid, "map"] == pytest.approx(values["map"], abs=5e-5)
        assert ours[qid, "P_5"] == pytest.approx(values["P_5"], abs=5e-5)
    assert {q for q, _ in ours} == set(expected) | {"all"}


def _read(folder: Path):
    qrels: dict = {}
    for line in (folder / "qrels.txt").read_text().splitlines():
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    run: dict = {}
    for line in (folder / "run.trec").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    return qrels, run


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["-m", "foo"], 1, "illegal measure 'foo'"),
        (["-m", "P."], 1, "empty parameter list"),
        (["-m", "P.0,5"], 2, "cutoffs must be positive"),
        (["-m", "P.5,5"], 2, "duplicate cutoffs"),
        (["-m", "ndcg.1"], 2, "malformed pair parameters"),
        (["-m", "utility.1,2"], 4, "exactly 4 coefficients"),
        (["-x"], 1, "option -x not recognized"),
        (["-Z", "z.txt"], 1, "not supported"),
    ],
)
def test_errors_use_trec_eval_exit_codes(monkeypatch, args, code, message):
    monkeypatch.chdir(GOLDEN / "binary")
    got, out, err = trec_eval("-c", *args, "qrels.txt", "run.trec")
    assert (got, out) == (code, "") and message in err


def test_wrong_file_count_and_unreadable_files(tmp_path):
    assert trec_eval("qrels.txt")[0] == 1
    code, _, err = trec_eval(str(tmp_path / "none.txt"), str(tmp_path / "none.trec"))
    assert code == 2 and "does not exist" in err


def test_measure_selection_follows_trec_eval_rules():
    names = lambda args: [o[0] for s in select(args) for o in s.outputs]  # noqa: E731
    every = names(["all_trec", "P.3"])
    assert "P_3" in every and "P_5" not in every and "map_cut_5" in every  # parameters replace
    assert names(["P.5", "P.10"]) == ["P_5"]  # the first parameters win
    assert names(["P", "P.10"]) == ["P_10"]
    assert names(["P.20,5", "map"]) == ["map", "P_5", "P_20"]  # fixed order, cutoffs sorted
    assert names(["iprec_at_recall..5,.25"]) == ["iprec_at_recall_0.25", "iprec_at_recall_0.50"]
    assert names(["set_F.0.25", "ndcg.1=3,2=9"]) == ["ndcg_1=3,2=9", "set_F_0.25"]


def test_c_parsers_match_atol_and_atof():
    assert [atol(t) for t in ("23.4", "2x", "abc", " -3")] == [23, 2, 0, -3]
    assert [atof(t) for t in ("1,5", ".25", "1e0", "abc", "-.5e1x")] == [1.0, 0.25, 1.0, 0.0, -5.0]


def test_runid_is_the_tag_of_the_last_data_line(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 a 1\n")
    (tmp_path / "r.trec").write_text("1 Q0 a 1 2 first\n1 Q0 b 2 1 last extra\n# comment\n\n")
    code, out, _ = trec_eval(
        "-m", "runid", "-m", "num_q", str(tmp_path / "q.txt"), str(tmp_path / "r.trec")
    )
    assert (
        code == 0 and out == "runid                 \tall\tlast\nnum_q                 \tall\t1\n"
    )


def test_duplicate_documents_exit_4_as_trec_eval(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r.trec").write_text("1 Q0 a 1 2 t\n1 Q0 a 2 1 t\n")
    code, out, err = trec_eval(str(tmp_path / "q.txt"), str(tmp_path / "r.trec"))
    assert (code, out) == (4, "") and "r.trec:1" in err and "again on line 2" in err


@pytest.mark.parametrize(
    ("measure", "relevant", "retrieved"), [("set_F.2", 4, 24), ("set_F.0.5", 8, 12)]
)
def test_set_F_uses_its_parameter_as_written(tmp_path, measure, relevant, retrieved):
    """trec_eval's set_F.x computes with x itself: here F is exactly 0.09375, printed 0.0938;
    x taken as beta = sqrt(x), squared again (2.0000000000000004), gave 0.09374999999999999."""
    (tmp_path / "qrels.txt").write_text("".join(f"1 0 r{i} 1\n" for i in range(relevant)))
    ranked = ["r0", *(f"u{i}" for i in range(retrieved - 1))]
    lines = (f"1 Q0 {d} {i} {100 - i} t\n" for i, d in enumerate(ranked))
    (tmp_path / "run.trec").write_text("".join(lines))
    files = str(tmp_path / "qrels.txt"), str(tmp_path / "run.trec")
    code, out, _ = trec_eval("-q", "-m", measure, *files)
    label = f"set_F_{measure[6:]}"
    assert (code, out) == (0, f"{label:<22}\t1\t0.0938\n{label:<22}\tall\t0.0938\n")
    qrels, run = _read(tmp_path)
    assert pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)["1"]["set_F"] == 0.09375
