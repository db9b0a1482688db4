"""Generated answers' nugget scores (`pipeline.metrics.nuggets`) against nuggetizer's own scorer,
on generated nuggets and assignments with every label, empty nugget sets, missing answers and
integer qids; the strict and lenient readings of bad labels; and the exact mean."""

from __future__ import annotations

import json
import random
import statistics
from fractions import Fraction
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
import yaml
from answer_sets import METRICS, NUGGETIZER, collection, write
from conftest import irpipe_inprocess
from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores

from pipeline import evaluate
from pipeline.plan.exact_mean import exact_mean
from pipeline.run.evaluation import evaluate as evaluate_spec
from pipeline.synthetic_answers import write_answers


def _values(spec: Path, **settings) -> tuple[dict, dict]:
    """(per-query values by (run, qid, metric), means by (run, metric)) of the spec."""
    if settings:
        data = yaml.safe_load(spec.read_text())
        data["settings"] = {**data.get("settings", {}), **settings}
        spec.write_text(yaml.safe_dump(data))
    results = evaluate(spec)
    per_query = {(r.run, r.qid, r.metric): r.value for r in results.per_query().itertuples()}
    means = {(r.run, r.metric): r.value for r in results.aggregate().itertuples()}
    return per_query, means


@pytest.mark.parametrize(("seed", "odd"), [(1, False), (2, False), (3, True), (4, True)])
def test_every_value_and_mean_is_nuggetizers(tmp_path, seed, odd):
    """Each topic's scores equal calculate_nugget_scores', and each run's means equal
    calculate_global_metrics' over a record per topic (`queries: qrels`: a topic without an
    answer supporting nothing), to the last bit."""
    spec, records = collection(tmp_path, seed, odd=odd)
    per_query, means = _values(spec)
    for run, found in records.items():
        for record in found["all"]:
            scores = calculate_nugget_scores(record["qid"], record["nuggets"])
            for metric, field in NUGGETIZER.items():
                assert per_query[run, record["qid"], metric] == getattr(scores, field)
        overall = calculate_global_metrics(found["all"])
        for metric, field in NUGGETIZER.items():
            assert means[run, metric] == overall[field], (run, metric)


def test_under_intersection_the_means_are_over_the_answeredtopics(tmp_path):
    """`queries: intersection` averages the topics a run answered: nuggetizer's means over the
    lines of the run's own assignment file."""
    spec, records = collection(tmp_path, 5)
    _, means = _values(spec, queries="intersection")
    for run, found in records.items():
        overall = calculate_global_metrics(found["answered"])
        assert {m: means[run, m] for m in NUGGETIZER} == {
            m: overall[f] for m, f in NUGGETIZER.items()
        }


def _weighted(nuggets: list[dict], strict: bool) -> float:
    """The weighted score from its definition, as Python computes it: vital nuggets weigh 1,
    okay ones 0.5; a nugget supported counts 1, partly 0.5 (strict: 0)."""
    gain = {"support": 1.0, "partial_support": 0.0 if strict else 0.5}
    vital = [gain.get(n["assignment"], 0.0) for n in nuggets if n["importance"] == "vital"]
    okay = [gain.get(n["assignment"], 0.0) for n in nuggets if n["importance"] == "okay"]
    weight = len(vital) + 0.5 * len(okay)
    return (sum(vital) + 0.5 * sum(okay)) / weight if weight else 0.0


def test_the_weighted_score_is_its_definition(tmp_path):
    """NuggetWeighted against the definition written in Python; by hand: vital supported and
    partly, okay not: (1 + 0.5) / 2.5 = 0.6, strict 1 / 2.5 = 0.4 (as open-rag-eval gives where
    a topic has both kinds)."""
    spec, records = collection(tmp_path, 6, odd=True)
    per_query, means = _values(spec)
    for run, found in records.items():
        for strict, metric in ((False, "NuggetWeighted"), (True, "NuggetWeighted(strict=True)")):
            values = [_weighted(r["nuggets"], strict) for r in found["all"]]
            assert [per_query[run, r["qid"], metric] for r in found["all"]] == values
            assert means[run, metric] == statistics.mean(values)
    hand = [{"importance": "vital", "assignment": "support"},
            {"importance": "vital", "assignment": "partial_support"},
            {"importance": "okay", "assignment": "not_support"}]  # fmt: skip
    assert (_weighted(hand, False), _weighted(hand, True)) == (0.6, 0.4)


def test_the_hand_example_reads_as_nuggetizer_scores_it(tmp_path):
    """One topic by hand: 2 vital (supported, partly), 1 okay (not): all (1 + 0.5) / 3 = 0.5,
    vital 1.5 / 2 = 0.75, strict 1/3 and 1/2, weighted 0.6 and 0.4; a topic without nuggets 0."""
    nuggets = [{"text": "a", "importance": "vital"}, {"text": "b", "importance": "vital"},
               {"text": "c", "importance": "okay"}]  # fmt: skip
    labels = ["support", "partial_support", "not_support"]
    write(tmp_path / "n.jsonl", [{"qid": "1", "nuggets": nuggets}, {"qid": "2", "nuggets": []}])
    assigned = [{**n, "assignment": a} for n, a in zip(nuggets, labels, strict=True)]
    write(tmp_path / "a.jsonl", [{"qid": "1", "nuggets": assigned}, {"qid": "2", "nuggets": []}])
    spec = {"collections": {"c": {"nuggets": "n.jsonl"}},
            "runs": {"r": {"assignments": "a.jsonl", "collection": "c"}}, "metrics": METRICS}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    per_query, _ = _values(tmp_path / "spec.yaml")
    assert [per_query["r", "1", m] for m in METRICS] == [0.5, 0.75, 1 / 3, 0.5, 0.6, 0.4]
    assert {per_query["r", "2", m] for m in METRICS} == {0.0}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"qid": "1", "nuggets": [{"text": "a", "importance": "vital", "assignment": "supporter"}]}',
         "the assignment must be one of support, partial_support, not_support, found 'supporter'"),
        ("not json", "not a JSON line"),
        ('{"nuggets": []}', "the qid is missing, or not text or an integer"),
        ('{"qid": "1", "nuggets": {"text": "a"}}', "the nuggets are missing, or not a list"),
        ('{"qid": "1", "nuggets": [{"importance": "vital", "assignment": "support"}]}',
         "a nugget without a text"),
    ],
)  # fmt: skip
def test_a_bad_assignment_line_is_named_with_its_file_and_line(tmp_path, line, problem):
    """Under `input: strict`, exit 3 naming file:line and what is wrong; nothing written."""
    good = {"qid": "0", "nuggets": [{"text": "x", "importance": "vital", "assignment": "support"}]}
    write(tmp_path / "n.jsonl", [{"qid": q, "nuggets": [{"text": t, "importance": "vital"}]}
                                  for q, t in (("0", "x"), ("1", "a"))])  # fmt: skip
    (tmp_path / "a.jsonl").write_text(json.dumps(good) + "\n" + line + "\n")
    spec = {"collections": {"c": {"nuggets": "n.jsonl"}}, "metrics": ["NuggetAll"],
            "runs": {"r": {"assignments": "a.jsonl", "collection": "c"}},
            "outputs": [{"path": "out/q.csv", "level": "query"}]}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("run", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert f"a.jsonl:2: {problem}" in result.stderr
    assert not (tmp_path / "out").exists()


def test_lenient_reads_unknown_labels_as_nuggetizer_does_and_strict_refuses_them(tmp_path):
    """An importance `failed` counts among all nuggets only, an assignment `supporter` supports
    nothing: nuggetizer's values under `input: lenient`; `strict` names the nugget's line."""
    spec, records = collection(tmp_path, 7, odd=True)
    data = yaml.safe_load(spec.read_text())
    data["settings"] = {"input": "strict"}
    spec.write_text(yaml.safe_dump(data))
    result = irpipe_inprocess("run", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 3 and "nuggets.jsonl:" in result.stderr, result.stderr
    assert "the importance must be vital or okay, found 'failed'" in result.stderr
    per_query, _ = _values(spec, input="lenient")
    record = records["run0"]["all"][0]
    scores = calculate_nugget_scores(record["qid"], record["nuggets"])
    assert per_query["run0", record["qid"], "NuggetAll"] == scores.all_score


def test_a_nugget_listed_twice_is_refused(tmp_path):
    nugget = {"text": "a", "importance": "vital"}
    write(tmp_path / "n.jsonl", [{"qid": "1", "nuggets": [nugget, nugget]}])
    write(tmp_path / "a.jsonl", [{"qid": "1", "nuggets": [{**nugget, "assignment": "support"}]}])
    spec = {"collections": {"c": {"nuggets": "n.jsonl"}}, "metrics": ["NuggetAll"],
            "runs": {"r": {"assignments": "a.jsonl", "collection": "c"}}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("run", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "n.jsonl:1: query '1' has nugget 'a' (vital) again on line 1" in result.stderr
    assert "1 duplicate (qid, docno) pair; a nugget may appear once per query" in result.stderr


def test_nuggets_and_qrels_name_one_input(tmp_path):
    spec = {"collections": {"c": {"nuggets": "n.jsonl", "qrels": "q.txt"}}, "metrics": ["AP"],
            "runs": {}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("validate", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "nuggets: PATH is qrels: PATH with format: nuggets; give one of them" in result.stderr


def _means(groups: list[list[float]]) -> list[float]:
    """Each group's exact mean, by DuckDB over an Arrow table of the values."""
    con = duckdb.connect()
    table = pa.table(
        {
            "g": [g for g, values in enumerate(groups) for _ in values],
            "metric": ["m"] * sum(map(len, groups)),
            "value": [v for values in groups for v in values],
        }
    )
    con.register("t", table)
    sql = f"SELECT g, {exact_mean('value')} FROM t GROUP BY g ORDER BY g"
    return [value for _, value in con.execute(sql).fetchall()]


def test_the_exact_mean_is_statistics_mean_where_an_ordered_sum_is_not():
    """On 2,000 generated groups of shares (k / 2n) and of arbitrary values in [0, 1], the exact
    mean is the correctly rounded mean (statistics.mean, and Fraction's) in every group; the
    ordered sum divided by the count is not, in many."""
    rng = random.Random(8)
    groups = []
    for g in range(2000):
        size = rng.randint(1, 200)
        halves = 2 * rng.randint(1, 30)
        shares = [rng.randint(0, halves) / halves for _ in range(size)]
        groups.append(shares if g % 2 else [rng.random() for _ in range(size)])
    expected = [statistics.mean(values) for values in groups]
    assert _means(groups) == expected
    assert expected[:50] == [float(sum(map(Fraction, v)) / len(v)) for v in groups[:50]]
    assert sum(sum(v) / len(v) != e for v, e in zip(groups, expected, strict=True)) > 100


def test_the_exact_mean_refuses_a_value_it_cannot_average_exactly():
    with pytest.raises(duckdb.Error, match=r"metric m: exact_mean averages values 0 or in"):
        _means([[0.5, 1.5]])


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [("text", "a fact of another topic", "'a fact of another topic' (vital)"),
     ("importance", "okay", "'{text}' (okay)"),
     ("importance", "failed", "'{text}' (of another importance)")],
)  # fmt: skip
def test_a_nugget_the_collection_does_not_hold_is_refused_under_strict(tmp_path, key, value, said):
    """Assignments of another nugget set (a text the collection's nuggets lack, or a nugget of
    another importance) are a mismatched file: strict names the run, the nugget and the topic;
    lenient leaves the nugget out."""
    spec, _ = collection(tmp_path, 9)
    lines = [json.loads(line) for line in (tmp_path / "run0.jsonl").read_text().splitlines()]
    first = next(
        line for line in lines if line["nuggets"] and line["nuggets"][0]["importance"] == "vital"
    )
    nugget = first["nuggets"][0]
    said = said.format(text=nugget["text"])
    nugget[key] = value
    write(tmp_path / "run0.jsonl", lines)
    result = irpipe_inprocess("run", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert (
        f"run 'run0' has the nugget {said} in query {str(first['qid'])!r}, "
        "which collection 'rag' does not hold" in result.stderr
    )
    per_query, _ = _values(spec, input="lenient")
    assert per_query["run0", str(first["qid"]), "NuggetAll"] >= 0


def _assignment_sets(tmp_path: Path) -> tuple[dict, dict]:
    """Two assignment sets of the same answers (a person's, an LLM's agreeing 70% of the
    time), written as nuggetizer writes them; each as {(run_id, qid, text): grade}."""
    rng = random.Random(12)
    grades = {"support": 2, "partial_support": 1, "not_support": 0}
    sets: dict[str, list[dict]] = {"human": [], "llm": []}
    for run in ("a", "b"):
        for q in range(1, 16):
            nuggets = [
                {"text": f"q{q} n{i}", "importance": "vital"} for i in range(rng.randint(0, 6))
            ]
            human = [{**n, "assignment": rng.choice(list(grades))} for n in nuggets]
            llm = [{**n, "assignment": n["assignment"] if rng.random() < 0.7
                    else rng.choice(list(grades))} for n in human]  # fmt: skip
            sets["human"].append({"qid": str(q), "run_id": run, "nuggets": human})
            sets["llm"].append({"qid": str(q), "run_id": run, "nuggets": llm})
    labels = {}
    for name, lines in sets.items():
        write(tmp_path / f"{name}.jsonl", lines)
        labels[name] = {(line["run_id"], line["qid"], n["text"]): grades[n["assignment"]]
                        for line in lines for n in line["nuggets"]}  # fmt: skip
    return labels["human"], labels["llm"]


def test_agree_compares_two_assignment_sets_label_by_label(tmp_path):
    """`irpipe agree --format assignments`: the pairs are the (run_id, qid, nugget) both label,
    and Cohen's kappa is scikit-learn's over them (support 2, partial 1, not 0)."""
    from sklearn.metrics import cohen_kappa_score

    human, llm = _assignment_sets(tmp_path)
    result = irpipe_inprocess(
        "agree", "human.jsonl", "llm.jsonl", "--format", "assignments", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert f"{len(human)} pairs judged by both (0 by human.jsonl only" in result.stdout
    keys = sorted(human)
    kappa = cohen_kappa_score([human[k] for k in keys], [llm[k] for k in keys])
    row = next(line for line in result.stdout.splitlines() if line.startswith("cohen_kappa "))
    assert float(row.split()[1]) == pytest.approx(kappa, abs=5e-5)


def test_the_python_door_reads_nuggets_and_assignments_as_the_spec_does(tmp_path):
    """`evaluate(qrels={"rag": {"nuggets": PATH}}, runs={NAME: {"assignments": PATH}})`: the
    same values as the spec naming the same files."""
    spec, _ = collection(tmp_path, 13, runs=2)
    per_query, means = _values(spec)
    runs = {f"run{r}": {"assignments": str(tmp_path / f"run{r}.jsonl")} for r in range(2)}
    results = evaluate(
        qrels={"rag": {"nuggets": str(tmp_path / "nuggets.jsonl")}}, runs=runs, metrics=METRICS
    )
    assert {(r.run, r.metric): r.value for r in results.aggregate().itertuples()} == means
    found = {(r.run, r.qid, r.metric): r.value for r in results.per_query().itertuples()}
    assert found == per_query


@pytest.mark.parametrize(
    ("metrics", "runs", "said"),
    [
        (["NuggetAll", "AP"], "assignments", "run 'r' holds an answer's nugget assignments, and metric 'AP' scores rankings"),
        (["NuggetAll"], "path", "run 'r' holds rankings, and metric 'NuggetAll' scores an answer's nugget assignments"),
        (["SupportRecall"], "assignments", "metric 'SupportRecall' scores generated answers (their citations)"),
    ],
)  # fmt: skip
def test_answers_and_rankings_are_not_scored_by_each_others_metrics(tmp_path, metrics, runs, said):
    """A nugget measure of a ranking (its scores are not assignments), or a ranking measure of
    an answer's nuggets: a spec error naming the run and the metric, before any data is read."""
    spec = {"collections": {"c": {"nuggets": "n.jsonl"}}, "metrics": metrics,
            "runs": {"r": {runs: "r.txt", "collection": "c"}}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("validate", "--no-data", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert said in result.stderr


def test_a_message_names_the_key_as_the_spec_spells_it(tmp_path):
    """`nuggets:` and `assignments:` are read as `qrels:` and `path:`, but a message about them
    names the key the spec wrote, with its line."""
    spec = {"collections": {"c": {"nuggets": "missing.jsonl"}}, "metrics": ["NuggetAll"],
            "runs": {"r": {"assignments": "a.jsonl", "collection": "c"}}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = irpipe_inprocess("validate", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "spec.yaml:3: collections.c.nuggets: " in result.stderr
    assert "missing.jsonl does not exist" in result.stderr


def test_without_a_nuggets_file_the_runs_assignments_give_the_topics(tmp_path):
    """An assignments file holds each nugget's text and importance: read as nuggets (`nuggets:`
    naming it), and the runs' files overlaid, they are the topics and nuggets of the runs
    together, and the scores are those against the nuggets file the runs were assigned from."""
    write_answers(tmp_path)
    runs = {r: {"assignments": f"{r}.jsonl", "collection": "rag"} for r in ("concise", "hedging")}
    with_file = {"collections": {"rag": {"nuggets": "nuggets.jsonl"}}, "runs": runs,
                 "metrics": METRICS}  # fmt: skip
    from_runs = {**with_file, "collections": {
        "concise_nuggets": {"nuggets": "concise.jsonl"}, "hedging_nuggets": {"nuggets": "hedging.jsonl"},
        "rag": {"qrels": {"overlay": ["concise_nuggets", "hedging_nuggets"]}}}}  # fmt: skip
    means = []
    for spec in (with_file, from_runs):
        (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
        con = evaluate_spec(tmp_path / "spec.yaml", write=False).con
        means.append(
            dict(
                ((r, m), v)
                for r, m, v in con.sql("SELECT run, metric, value FROM aggregate").fetchall()
            )
        )
    assert means[0] == means[1]
    assert len(means[0]) == 2 * len(METRICS)


def test_lenient_says_how_many_lines_it_read_so(tmp_path):
    """Under lenient, labels strict refuses are read as nuggetizer reads them, and a warning
    names each file and how many of its lines held one; strict files say nothing."""
    nuggets = [{"qid": "1", "nuggets": [{"text": "a", "importance": "vital"}]},
               {"qid": "2", "nuggets": [{"text": "b", "importance": "failed"}]}]  # fmt: skip
    write(tmp_path / "n.jsonl", nuggets)
    labels = ["supporter", "support"]
    write(tmp_path / "a.jsonl", [{"qid": line["qid"], "nuggets": [{**line["nuggets"][0], "assignment": label}]}
                                 for line, label in zip(nuggets, labels, strict=True)])  # fmt: skip
    spec = {"collections": {"c": {"nuggets": "n.jsonl"}}, "metrics": ["NuggetAll"],
            "runs": {"r": {"assignments": "a.jsonl", "collection": "c"}},
            "settings": {"input": "lenient"}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    result = irpipe_inprocess("run", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "n.jsonl: 1 line read under input: lenient that strict refuses: an importance"
        in result.stderr
    )
    assert (
        "a.jsonl: 1 line read under input: lenient that strict refuses: an assignment"
        in result.stderr
    )
