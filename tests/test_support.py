"""The support measures of generated answers' citations (SupportPrecision, SupportRecall,
CitedSentences, Citations, AnswerWords) against a reference written here from their definitions
(configs/REFERENCE.md, "Citation support"), on generated answers in both years' formats with
uncited sentences, answers of no sentence, integer topic ids, missing answers, every support and
citations without a judgment; and what `input: strict` refuses."""

from __future__ import annotations

import csv
import json
import shutil
import statistics
from pathlib import Path

import pytest
import yaml
from citation_sets import METRICS, collection
from citation_sets import read_lines as _read
from conftest import irpipe_inprocess

from pipeline import evaluate
from pipeline.errors import SpecError


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_value_and_mean_is_the_definitions(tmp_path, seed):
    """Per topic, every value equals the reference's to the last bit; each mean is
    statistics.mean's over the support judgments' topics, a missing answer 0."""
    spec, expected = collection(tmp_path, seed)
    assert irpipe_inprocess("run", "--quiet", str(spec)).returncode == 0
    found = {(r["run"], r["qid"], r["metric"]): r["value"] for r in _read(tmp_path / "out/q.jsonl")}
    assert found == {
        (run, q, m): v for (run, q), values in expected.items() for m, v in values.items()
    }
    means = {(r["run"], r["metric"]): r["value"] for r in _read(tmp_path / "out/a.jsonl")}
    for (run, metric), value in means.items():
        values = [v[metric] for (r, _), v in expected.items() if r == run]
        assert value == statistics.mean(values), (run, metric)


def test_lenient_reads_an_unjudged_citation_as_no_support(tmp_path):
    """Under lenient, a citation without a judgment weighs 0 (it is still a citation); under
    strict, it is an input error naming the run, topic, sentence and document, exit 3."""
    spec, expected = collection(tmp_path, 4, runs=2, judged_share=0.7)
    strict = irpipe_inprocess("run", "--quiet", str(spec))
    assert strict.returncode == 3
    assert "holds no support judgment of it: add the line 'run0 " in strict.stderr
    assert not (tmp_path / "out").exists()
    data = yaml.safe_load(spec.read_text())
    spec.write_text(yaml.safe_dump({**data, "settings": {"input": "lenient"}}))
    assert irpipe_inprocess("run", "--quiet", str(spec)).returncode == 0
    found = {(r["run"], r["qid"], r["metric"]): r["value"] for r in _read(tmp_path / "out/q.jsonl")}
    assert found == {
        (run, q, m): v for (run, q), values in expected.items() for m, v in values.items()
    }


@pytest.mark.parametrize(
    ("answer", "support", "said"),
    [
        ({"topic_id": "1", "references": ["a"], "answer": [{"text": "x", "citations": [1]}]},
         "r 1 0 a 2", "answers.jsonl:1: sentence 0 cites reference 1, and the answer has 1"),
        ({"topic_id": "1", "references": ["a"], "answer": [{"text": "x", "citations": ["b"]}]},
         "r 1 0 a 2", "answers.jsonl:1: sentence 0 cites 'b', not among its references"),
        ({"topic_id": "1", "references": ["a"], "answer": [{"text": "x", "citations": [0]}]},
         "r 1 0 a 3", "support.txt:1: the support must be 2 (full), 1 (partial) or 0 (none), found '3'"),
        ({"topic_id": "1", "references": ["a"], "answer": [{"text": "x", "citations": [0]}]},
         "r 1 x a 2", "support.txt:1: the sentence must be a number counted from 0"),
        ({"references": ["a"], "answer": []}, "r 1 0 a 2",
         "answers.jsonl:1: the topic_id (or metadata.narrative_id) is missing"),
        ({"topic_id": "1", "references": ["a"], "answer": [{"text": "x", "citations": [0, 0]}]},
         "r 1 0 a 2", "answers.jsonl:1"),
    ],
)  # fmt: skip
def test_strict_refuses_what_the_track_does_not_write(tmp_path, answer, support, said):
    """A citation out of the references, a docid not among them, another support, a sentence
    that is not a number, a line without a topic, a document cited twice by one sentence: an
    input error naming the file and line, exit 3, nothing written."""
    (tmp_path / "answers.jsonl").write_text(json.dumps(answer) + "\n")
    (tmp_path / "support.txt").write_text(support + "\n")
    spec = {"collections": {"c": {"support": "support.txt"}}, "metrics": ["SupportRecall"],
            "runs": {"r": {"answers": "answers.jsonl", "collection": "c"}},
            "outputs": [{"path": "out/a.csv", "level": "aggregate"}]}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("run", "--quiet", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert said in result.stderr
    assert not (tmp_path / "out").exists()


def test_the_python_door_reads_answers_and_support(tmp_path):
    """`evaluate(qrels={"rag": {"support": P}}, runs={"x": {"answers": P}})`: the spec's
    values."""
    spec, expected = collection(tmp_path, 5, runs=1)
    results = evaluate(
        qrels={"rag": {"support": str(tmp_path / "support.txt")}},
        runs={"run0": {"answers": str(tmp_path / "run0.jsonl")}},
        metrics=METRICS,
    )
    found = {(r.run, r.qid, r.metric): r.value for r in results.per_query().itertuples()}
    assert found == {
        (run, q, m): v for (run, q), values in expected.items() for m, v in values.items()
    }


def test_lenient_says_how_many_lines_it_read_so(tmp_path):
    """Under lenient, a support strict refuses reads as none and a docid citation outside the
    references as cited; a warning names each file and how many lines held one."""
    answer = {"topic_id": "1", "references": ["a"], "answer": [{"text": "x", "citations": ["b"]}]}
    (tmp_path / "answers.jsonl").write_text(json.dumps(answer) + "\n")
    (tmp_path / "support.txt").write_text("r 1 0 b 7\n")
    spec = {"collections": {"c": {"support": "support.txt"}}, "metrics": ["SupportRecall"],
            "runs": {"r": {"answers": "answers.jsonl", "collection": "c"}},
            "settings": {"input": "lenient"}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("run", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "support.txt: 1 line read under input: lenient that strict refuses: a support"
        in result.stderr
    )
    assert (
        "answers.jsonl: 1 line read under input: lenient that strict refuses: a citation"
        in result.stderr
    )
    assert "SupportRecall" in result.stdout and "0.0000" in result.stdout


def test_a_run_of_assignments_and_answers_is_refused_in_both_doors(tmp_path):
    """One run is one input: assignments and answers together are a spec error saying that a
    system's nugget and support evaluations are two specs, in a spec and in a call."""
    said = "assignments and answers are each one input; give one of them"
    spec = {"collections": {"c": {"support": "s.txt"}}, "metrics": ["SupportRecall"],
            "runs": {"r": {"answers": "a.jsonl", "assignments": "b.jsonl", "collection": "c"}}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("validate", "--no-data", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert said in result.stderr
    with pytest.raises(SpecError, match=said):
        evaluate(qrels={"c": {"support": str(tmp_path / "s.txt")}}, metrics=["SupportRecall"],
                 runs={"r": {"answers": "a.jsonl", "assignments": "b.jsonl"}})  # fmt: skip


@pytest.mark.parametrize(
    ("metric", "settings", "said"),
    [
        ({"metric": "SupportRecall", "judged_only": True}, {},
         "SupportRecall takes no judged_only"),
        ({"metric": "Latency", "judged_only": True}, {}, "Latency takes no judged_only"),
        ("CitedSentences", {"judged_only": True},
         "metric 'CitedSentences' scores answers, whose uncited sentences it would drop"),
    ],
)  # fmt: skip
def test_judged_only_is_refused_where_nothing_is_ranked(tmp_path, metric, settings, said):
    """judged_only drops a ranking's unjudged documents: of an answer's rows it would drop the
    uncited sentences (a value silently changed), and a latency ranks nothing; a spec error."""
    spec = {"collections": {"c": {"support": "s.txt"}}, "metrics": [metric],
            "runs": {"r": {"answers": "a.jsonl", "collection": "c"}}, "settings": settings}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("validate", "--no-data", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert said in result.stderr


def test_counts_are_compared_but_not_marked(tmp_path):
    """Citations and AnswerWords have no better direction: their comparisons are in the
    comparison table (generous cites significantly more than careful in configs/citations.yaml),
    and no mark calls one run better, where SupportRecall's mark does (a count is no score)."""
    configs = shutil.copytree(Path(__file__).parents[1] / "configs", tmp_path / "configs")
    spec = configs / "citations.yaml"
    data = yaml.safe_load(spec.read_text())
    data["outputs"] = [{"path": "out/c.csv", "level": "comparison"},
                       {"path": "out/r.csv", "level": "report"}]  # fmt: skip
    spec.write_text(yaml.safe_dump(data))
    assert irpipe_inprocess("run", "--quiet", str(spec)).returncode == 0
    significant = {row["metric"]: row["significant"] for row in _rows(configs / "out/c.csv")}
    assert significant["Citations"] == significant["SupportRecall"] == "true"
    marks = {
        row["metric"]: row["mark"]
        for row in _rows(configs / "out/r.csv")
        if row["run"] == "generous"
    }
    assert marks["Citations"] == "" and marks["SupportRecall"] == "▲"


def _rows(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open()))


def test_the_nuggets_collection_overlaid_adds_its_topics(tmp_path):
    """Overlaid with a nuggets file, the support judgments' collection has every topic of both:
    a topic no citation is judged in is scored (0, nothing supported), and the others keep
    their values."""
    spec, expected = collection(tmp_path, 7, runs=2)
    judged = {qid for _, qid in expected}
    extra = "999"  # a topic of the nuggets alone
    nuggets = [{"qid": q, "nuggets": [{"text": f"fact {q}", "importance": "vital"}]}
               for q in [*sorted(judged), extra]]  # fmt: skip
    (tmp_path / "nuggets.jsonl").write_text("".join(json.dumps(n) + "\n" for n in nuggets))
    data = yaml.safe_load(spec.read_text())
    data["collections"] = {"sup": {"support": "support.txt"}, "nug": {"nuggets": "nuggets.jsonl"},
                           "rag": {"qrels": {"overlay": ["sup", "nug"]}}}  # fmt: skip
    spec.write_text(yaml.safe_dump(data))
    assert irpipe_inprocess("run", "--quiet", str(spec)).returncode == 0
    found = {(r["run"], r["qid"], r["metric"]): r["value"] for r in _read(tmp_path / "out/q.jsonl")}
    missing = {(run, extra, m): 0.0 for run in ("run0", "run1") for m in METRICS}
    assert found == {
        **{(run, q, m): v for (run, q), values in expected.items() for m, v in values.items()},
        **missing,
    }
