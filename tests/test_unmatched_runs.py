"""A run that retrieves no judged document in any query it shares with the qrels is an input error
(`unmatched_runs: error`, the default), on both doors, naming the run and showing its docnos beside
the qrels'; `allow` evaluates it; `irpipe trec-eval` keeps trec_eval's zeros."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import collection_spec, yaml_file

from pipeline import InputDataError, evaluate
from pipeline.cli import main
from pipeline.run.evaluation import evaluate as evaluate_spec
from pipeline.synthetic import Collection, generate, write_qrels, write_run


def _renamed(data: Collection, name: str, rename) -> Collection:
    """`data` with run `name`'s docnos renamed by `rename` (a lower-cased copy, a prefix...)."""
    runs = dict(data.runs)
    runs[name] = {q: {rename(d): s for d, s in docs.items()} for q, docs in runs[name].items()}
    return Collection(qrels=data.qrels, runs=runs)


def _upper(data: Collection) -> Collection:
    """The qrels' docnos upper-cased (the generated ones are lower-case), as TREC's are."""
    qrels = {q: {d.upper(): g for d, g in docs.items()} for q, docs in data.qrels.items()}
    runs = {n: {q: {d.upper(): s for d, s in docs.items()} for q, docs in run.items()}
            for n, run in data.runs.items()}  # fmt: skip
    return Collection(qrels=qrels, runs=runs)


DATA = _upper(generate(3, queries=8, runs=3))
LOWERED = _renamed(DATA, "run1", str.lower)


def _spec(tmp_path: Path, data: Collection, **more) -> Path:
    return yaml_file(tmp_path / "spec.yaml", collection_spec(tmp_path, data, ["AP", "P@5"], **more))


def _first_shared(data: Collection, run: str) -> str:
    return min(q for q in data.runs[run] if q in data.qrels)


def _pattern(where: str, data: Collection, run: str, allow: str, collection: str = "c") -> str:
    """The message, its examples those of the first query the run shares with the qrels."""
    qid = _first_shared(data, run)
    shared = sum(q in data.qrels for q in data.runs[run])
    docnos = ", ".join(repr(d) for d in sorted(data.runs[run][qid])[:3])
    judged = ", ".join(repr(d) for d in sorted(data.qrels[qid])[:3])
    return (
        re.escape(
            f"{where}: run '{run}' retrieves no document judged in collection '{collection}' in any of the "
            f"{shared} queries they share (query '{qid}': the run's documents {docnos}, ...; the "
            f"qrels' {judged}, ...); are the docnos the collection's as the qrels spell them"
        )
        + f".*To evaluate it as it is, set {re.escape(allow)}$"
    )


def test_a_run_of_lower_cased_docnos_is_an_input_error_showing_both_spellings(tmp_path):
    with pytest.raises(InputDataError, match=_pattern(
        f"{tmp_path}/run1.txt", LOWERED, "run1", "`settings: {unmatched_runs: allow}`"
    )):  # fmt: skip
        evaluate_spec(_spec(tmp_path, LOWERED), write=False)


def test_allowed_it_scores_as_having_retrieved_nothing_judged(tmp_path):
    evaluation = evaluate_spec(
        _spec(tmp_path, LOWERED, settings={"unmatched_runs": "allow"}), write=False
    )
    values = {(run, m): v for run, _, m, v, _ in evaluation.aggregate()}
    assert values["run1", "AP"] == values["run1", "P@5"] == 0.0
    assert values["run0", "AP"] > 0 and values["run2", "AP"] > 0  # the others as they are
    assert evaluation.loaded.spec.settings.resolved()["unmatched_runs"] == "allow"


def test_one_judged_document_in_one_query_is_enough(tmp_path):
    """The check is of a wrong file, not of a poor run."""
    data = _renamed(DATA, "run1", str.lower)
    qid, kept = max((q, d) for q, docs in DATA.runs["run1"].items() for d in docs
                    if d in DATA.qrels.get(q, {}))  # fmt: skip
    data.runs["run1"][qid][kept] = data.runs["run1"][qid].pop(kept.lower())
    evaluation = evaluate_spec(_spec(tmp_path, data), write=False)
    assert {run for run, *_ in evaluation.aggregate()} == {"run0", "run1", "run2"}


def test_a_run_sharing_no_query_keeps_its_own_message(tmp_path):
    data = _renamed(DATA, "run1", str.lower)
    data.runs["run1"] = {f"x{q}": docs for q, docs in data.runs["run1"].items()}
    with pytest.raises(InputDataError, match=r"run 'run1' shares no query with collection 'c'"):
        evaluate_spec(_spec(tmp_path, data), write=False)


def test_a_run_under_two_collections_is_checked_under_each(tmp_path):
    """Judged under `c`, but the other set judges none of its documents: named by that set."""
    spec = collection_spec(tmp_path, DATA, ["AP"])
    other = {q: {d.lower(): g for d, g in docs.items()} for q, docs in DATA.qrels.items()}
    write_qrels(other, tmp_path / "other.txt")
    spec["collections"]["other"] = {"qrels": "other.txt"}
    spec["runs"] = {"run0": {"path": "run0.txt", "collection": ["c", "other"]}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    message = r"/run0\.txt: run 'run0' retrieves no document judged in collection 'other'"
    with pytest.raises(InputDataError, match=message):
        evaluate_spec(tmp_path / "spec.yaml", write=False)


def _frame(run: dict[str, dict[str, float]]) -> pd.DataFrame:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return pd.DataFrame(rows, columns=["qid", "docno", "score"])


def test_a_frame_of_lower_cased_docnos_is_refused_by_the_python_door():
    runs = {name: _frame(run) for name, run in LOWERED.runs.items()}
    allow = "settings={'unmatched_runs': 'allow'}"
    expected = _pattern("runs['run1']", LOWERED, "run1", allow, "default")
    with pytest.raises(InputDataError, match=expected):
        evaluate(qrels=LOWERED.qrels, runs=runs, metrics=["AP"])
    allowed = evaluate(
        qrels=LOWERED.qrels, runs=runs, metrics=["AP"], settings={"unmatched_runs": "allow"}
    )
    assert allowed.aggregate().set_index("run").loc["run1", "value"] == 0.0


def test_trec_eval_prints_its_zeros_as_trec_eval_does(tmp_path, capsys):
    """trec_eval evaluates such a run without a word: its drop-in door does the same."""
    write_qrels(LOWERED.qrels, tmp_path / "qrels.txt")
    write_run(LOWERED.runs["run1"], tmp_path / "run1.txt")
    code = main(["trec-eval", "-c", "-m", "map", "-m", "num_rel_ret", *(
        str(tmp_path / name) for name in ("qrels.txt", "run1.txt"))])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines() == ["num_rel_ret           \tall\t0",
                                "map                   \tall\t0.0000"]  # fmt: skip
