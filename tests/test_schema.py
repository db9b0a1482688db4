"""The spec's JSON Schema: committed, equal to what the models generate, and in agreement with the
loader on what a spec may look like. Checked with `jsonschema`, as an editor would check it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import irpipe_inprocess

from pipeline import SpecError
from pipeline.spec import parse_spec_text
from pipeline.spec.schema import schema_text, spec_schema

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "configs" / "irpipe.schema.json"
EXAMPLES = sorted(ROOT.glob("configs/**/*.yaml"))


def test_the_committed_schema_is_the_models_schema():
    assert COMMITTED.read_text(encoding="utf-8") == schema_text(), (
        "configs/irpipe.schema.json differs from the spec's models; "
        "regenerate it: irpipe schema > configs/irpipe.schema.json"
    )


def test_the_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(COMMITTED.read_text()))


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_spec_validates_against_the_schema(example):
    schema = json.loads(COMMITTED.read_text())
    jsonschema.validate(
        yaml.safe_load(example.read_text()), schema, jsonschema.Draft202012Validator
    )


def test_there_are_examples():
    assert {"quickstart.yaml", "pr_curves.yaml"} <= {p.name for p in EXAMPLES}


GOOD = [
    "metrics: [AP, P@10, 'nDCG(gain=exponential)@10', map, ndcg_cut.5]",
    "metrics: [{metric: nDCG, k: [5, 10], gain: exponential, discount: jarvelin, label: n}]",
    "metrics: [{metric: nDCG, gain: {0: 0, 1: 1, 2: 3}}, {metric: AP, label: null}]",
    "metrics: [AP]\nsettings: {relevance_level: 2, ordering: rank, queries: intersection}",
    "metrics: [AP]\nsettings: {compatibility: trec_eval-9, max_docs: 0, judged_only: true}",
    "metrics: [AP]\nsettings: {input: lenient, memory_limit: 1.5 GiB, queries: null}",
    "metrics: [AP]\noutputs: [{path: a.csv}, {path: b.parquet, level: query}]",
    "metrics: [AP]\ncollections: {c: {qrels: q.txt, num_docs: 0}}",
    "metrics: [AP]\nruns: {r: {path: 'runs/*.trec', collection: c}}",
    "metrics: [AP]\ncompare: {}",
    "metrics: [AP]\ncompare: null",
    "metrics: [AP]\ncompare: {samples: exact, tests: [randomization], seed: -3}",
    "metrics: [AP]\ncompare: {baseline: r, tests: [t, wilcoxon, sign, randomization, bootstrap], "
    "correction: bh, alpha: 0.01, samples: 1000, seed: 7, metrics: [AP], min_difference: 0.01}",
    "metrics: [AP]\noutputs: [{path: a.md, level: report}, {path: b.csv, level: comparison}]",
    "metrics: [AP]\nexpect: [{run: r, metric: AP, value: 0.2179}]",
    "metrics: [AP]\nexpect: [{run: r, metric: AP, value: 1, tolerance: 0, two_sided: true}]",
    "metrics: [AP]\ngates: [{metric: AP, against: previous}]",
    "metrics: [AP]\ngates: [{metric: AP, against: {run: r}, max_drop: 0.01, run: s, "
    "significant: true}]",
    "metrics: [AP]\nexpect: []\ngates: []",
    "metrics: []\nruns: {}\nagreement: [{reference: c, other: d, thresholds: [1, 2.5]}]",
    "metrics: [AP]\nagreement: [{reference: c, other: d, rbo_p: 0.5, bootstrap: 10, seed: 2}]",
    "metrics: [AP]\ncorrelation: [{reference: AP, other: P@10, collection: c, alpha: 0.1}]",
]
BAD = [
    "metrics: []",
    "metrics: []\nagreement: []",
    "metrics: [AP]\nagreement: [{reference: c}]",
    "metrics: [AP]\nagreement: [{reference: c, other: d, thresholds: [1, 1]}]",
    "metrics: [AP]\nagreement: [{reference: c, other: d, thresholds: [true]}]",
    "metrics: [AP]\nagreement: {reference: c, other: d}",
    "metrics: [AP]\ncorrelation: [{reference: AP, other: P@10, rbo_p: 1}]",
    "metrics: [AP]\ncorrelation: [{reference: AP, other: P@10, bootstrap: 0}]",
    "metrics: [AP]\ncorrelation: [{reference: AP, other: P@10, colection: c}]",
    "metrics: [3]",
    "metrics: [{label: x}]",
    "metrics: [AP]\nsettings: {relevance_level: '1'}",
    "metrics: [AP]\nsettings: {ordering: score}",
    "metrics: [AP]\nsettings: {memory_limit: lots}",
    "metrics: [AP]\nsettings: {inptu: lenient}",
    "metrics: [AP]\noutputs: [{path: a.csv, level: ranking}]",
    "metrics: [AP]\noutputs: [{path: a.csv, format: csv}]",
    "metrics: [AP]\ncollections: {c: {qrels: q.txt, num_docs: -1}}",
    "metrics: [AP]\nruns: {r: {path: r.trec}}",
    "metrics: [AP]\nruns: {}",
    "metrics: [AP]\nextra: 1",
    "metrics: [AP]\ncompare: {tests: [randomisation]}",
    "metrics: [AP]\ncompare: {tests: [t, t]}",
    "metrics: [AP]\ncompare: {tests: []}",
    "metrics: [AP]\ncompare: {tests: t}",
    "metrics: [AP]\ncompare: {alpha: 0}",
    "metrics: [AP]\ncompare: {alpha: 1}",
    "metrics: [AP]\ncompare: {samples: 0}",
    "metrics: [AP]\ncompare: {samples: many}",
    "metrics: [AP]\ncompare: {samples: 1.5}",
    "metrics: [AP]\ncompare: {correction: holmes}",
    "metrics: [AP]\ncompare: {seed: 1.5}",
    "metrics: [AP]\ncompare: {min_difference: -0.1}",
    "metrics: [AP]\ncompare: {metrics: []}",
    "metrics: [AP]\ncompare: {basline: r}",
    "metrics: [AP]\ncompare: [t]",
    "metrics: [AP]\nexpect: [{run: r, metric: AP}]",
    "metrics: [AP]\nexpect: [{run: r, metric: AP, value: '0.2'}]",
    "metrics: [AP]\nexpect: [{run: r, metric: AP, value: 0.2, tolerance: -0.1}]",
    "metrics: [AP]\nexpect: [{run: r, metric: AP, value: 0.2, tolerence: 0.1}]",
    "metrics: [AP]\nexpect: [{run: r, metric: AP, value: 0.2, two_sided: 1}]",
    "metrics: [AP]\nexpect: {run: r, metric: AP, value: 0.2}",
    "metrics: [AP]\ngates: [{metric: AP}]",
    "metrics: [AP]\ngates: [{metric: AP, against: prev}]",
    "metrics: [AP]\ngates: [{metric: AP, against: [previous]}]",
    "metrics: [AP]\ngates: [{metric: AP, against: {runs: r}}]",
    "metrics: [AP]\ngates: [{metric: AP, against: {}}]",
    "metrics: [AP]\ngates: [{metric: AP, against: {run: 3}}]",
    "metrics: [AP]\ngates: [{metric: AP, against: previous, max_drop: -1}]",
    "metrics: [AP]\ngates: [{metric: AP, against: previous, significant: maybe}]",
]
BASE = {
    "collections": {"c": {"qrels": "q.txt"}},
    "runs": {"r": {"path": "r.trec", "collection": "c"}},
}


def spec_of(text: str) -> dict:
    return {**BASE, **yaml.safe_load(text)}


def schema_accepts(data: dict) -> bool:
    return jsonschema.Draft202012Validator(spec_schema()).is_valid(data)


def loader_accepts(data: dict) -> bool:
    text = yaml.safe_dump(data)
    try:
        parse_spec_text(text, Path("/nowhere/spec.yaml"), patterns="keep")
    except SpecError:
        return False
    return True


@pytest.mark.parametrize("text", GOOD + BAD)
def test_schema_and_loader_agree(text):
    data = spec_of(text)
    assert schema_accepts(data) == loader_accepts(data) == (text in GOOD)


def test_irpipe_schema_prints_the_committed_schema():
    result = irpipe_inprocess("schema", cwd=ROOT)
    assert result.returncode == 0 and result.stdout == COMMITTED.read_text()
    check = irpipe_inprocess("schema", "--check", COMMITTED, cwd=ROOT)
    assert check.returncode == 0, check.stderr
