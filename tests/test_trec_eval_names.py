"""A bare trec_eval name in a spec means what `irpipe trec-eval -m NAME` prints: the same metrics,
with trec_eval's default parameters, and the same numbers. The reference's table of trec_eval names
(configs/REFERENCE.md, `<!-- table: trec-eval-names -->`) is checked here too."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from conftest import irpipe_inprocess
from docblocks import first_code, table

from pipeline.measures.registry import get_registry
from pipeline.measures.trec_names import ORDER, select
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

NAMES = [name for name in ORDER if name != "runid"]  # runid is the run's tag, not a metric
REFERENCE = "configs/REFERENCE.md"


@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> tuple[Path, Path]:
    """A generated qrels and one run (graded, negative judgments, ties, missing queries)."""
    folder = tmp_path_factory.mktemp("names")
    generated = generate(11, queries=10, runs=1)
    write_qrels(generated.qrels, folder / "qrels.txt")
    write_run(generated.runs["run0"], folder / "run.trec", tag="run0")
    return folder / "qrels.txt", folder / "run.trec"


@pytest.fixture(scope="module")
def printed(collection) -> dict[str, dict[tuple[str, str], str]]:
    """`irpipe trec-eval -c -q -m NAME` for every name: {name: {(printed name, qid): value}}."""
    found = {}
    for name in NAMES:
        # relstring alone fails today (a per_query table without a value column): add a number
        extra = ["-m", "num_ret"] if name == "relstring" else []
        values = _trec_eval(["-c", "-q", "-m", name, *extra, *map(str, collection)])
        found[name] = {key: v for key, v in values.items() if key[0].startswith(name)}
    return found


def _trec_eval(args: list[str]) -> dict[tuple[str, str], str]:
    done = irpipe_inprocess("trec-eval", *args)
    assert done.returncode == 0, done.stderr
    rows = (line.split("\t") for line in done.stdout.splitlines())
    return {(name.strip(), qid): value for name, qid, value in rows}


def _names_in_order(values: dict[tuple[str, str], str]) -> list[str]:
    return list(dict.fromkeys(name for name, _ in values))


@pytest.mark.parametrize("name", NAMES)
def test_a_bare_trec_eval_name_resolves_to_what_trec_eval_prints(printed, name):
    resolved = get_registry().resolve(name)
    assert len(resolved) == len(_names_in_order(printed[name]))
    (selected,) = select([name])
    assert [p for p, _, _ in selected.outputs] == _names_in_order(printed[name])
    # each printed measure, written in irpipe's grammar with its parameters, is the same metric
    expected = [get_registry().resolve(m, params) for _, m, params in selected.outputs]
    assert [m.canonical for m in resolved] == [m.canonical for (m,) in expected]


@pytest.mark.parametrize(
    ("text", "params", "labels"),
    [
        ("P", {}, [f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("R", {}, [m.label for m in get_registry().resolve("recall")]),
        ("Recall", {}, [m.label for m in get_registry().resolve("recall")]),
        ("IPrec", {}, [m.label for m in get_registry().resolve("iprec_at_recall")]),
        ("RelativeP", {}, [m.label for m in get_registry().resolve("relative_P")]),
        ("Unjudged", {}, ["Unjudged@5", "Unjudged@10", "Unjudged@20"]),
        ("P(rel=2)", {}, [f"P(rel=2)@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("P", {"k": 10}, ["P@10"]),
        ("P", {"k": [1, 2]}, ["P@1", "P@2"]),
        ("P@3", {}, ["P@3"]),
        ("nDCG", {}, ["nDCG"]),  # a metric with a meaning without a cutoff keeps it
        ("Success", {}, ["Success"]),
        ("AP", {}, ["AP"]),
    ],
)
def test_an_irpipe_name_that_needs_a_cutoff_takes_trec_evals(text, params, labels):
    assert [m.label for m in get_registry().resolve(text, params)] == labels


def test_a_label_names_each_default_cutoff():
    assert [m.label for m in get_registry().resolve("P", label="prec")][:2] == ["prec@5", "prec@10"]


def test_bare_trec_eval_names_give_trec_evals_numbers(tmp_path, write_spec, collection, printed):
    qrels, run = collection
    spec = {
        "collections": {"c": {"qrels": str(qrels)}},
        "runs": {"r": {"path": str(run), "collection": "c"}},
        "metrics": NAMES,
    }
    evaluation = evaluate(write_spec(spec), write=False)
    query = "SELECT metric, qid, value, text FROM per_query UNION ALL SELECT metric, 'all', value, NULL FROM aggregate"
    ours = {(m, q): (v, t) for m, q, v, t in evaluation.con.execute(query).fetchall()}
    compared = 0
    for name in NAMES:
        labels = [m.label for m in get_registry().resolve(name)]
        for label, trec in zip(labels, _names_in_order(printed[name]), strict=True):
            for (printed_name, qid), text in printed[name].items():
                if printed_name == trec:
                    assert _as_trec_eval(*ours[label, qid], text) == text, (name, label, qid)
                    compared += 1
    assert compared > 1000


def _as_trec_eval(value: float | None, text: str | None, like: str) -> str:
    if text is not None:  # relstring
        return f"'{text}'"
    if value is None or math.isnan(value):
        return "  -nan"
    return str(int(value)) if re.fullmatch(r"-?\d+", like) else f"{value:6.4f}"


def _expansion(name: str) -> str:
    """The reference's cell for a trec_eval name: its metrics, a cutoff list written once."""
    canonicals = [m.canonical for m in get_registry().resolve(name)]
    heads = {c.rpartition("@")[0] for c in canonicals}
    if len(canonicals) > 1 and len(heads) == 1 and "" not in heads:
        cutoffs = ", ".join(c.rpartition("@")[2] for c in canonicals)
        return f"`{heads.pop()}@k`, k = {cutoffs}"
    return ", ".join(f"`{c}`" for c in canonicals)


def test_the_reference_table_shows_every_expansion():
    rows = table(REFERENCE, "trec-eval-names")
    shown = {first_code(row["trec_eval name"]): row["in a spec it is"] for row in rows}
    assert shown == {name: _expansion(name) for name in NAMES}
