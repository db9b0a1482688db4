"""The registry: names, aliases, trec_eval names, duplicates, and plugins through entry points."""

from __future__ import annotations

import pytest

from pipeline import Measure, PluginError, RankedParams, SpecError
from pipeline.contract.metric_names import format_metric, parse_metric
from pipeline.measures.registry import Registry, get_registry


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("map", "AP"),
        ("P_10", "P@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("map_cut_100", "AP@100"),
        ("iprec_at_recall_0.10", "IPrec@0.1"),
        ("11pt_avg", "AP(variant='interpolated_11pt')"),
        ("recip_rank", "RR"),
        ("set_F", "SetF"),
        ("nDCG(gain=exponential)@10", "nDCG(gain='exponential')@10"),
        ("AP(rel=1)", "AP(rel=1)"),
        ("RR(k=10)", "RR@10"),
    ],
)
def test_names_and_aliases_resolve_to_canonical_strings(text, canonical):
    assert [m.canonical for m in get_registry().resolve(text)] == [canonical]


def test_unknown_metric_suggests_close_names():
    with pytest.raises(SpecError, match=r"unknown metric 'nDGC'; did you mean 'nDCG@10'"):
        get_registry().resolve("nDGC@10")


@pytest.mark.parametrize("text", ["P@", "P(1)", "P(k=len('x'))", "P@10@5"])
def test_malformed_metric_strings(text):
    with pytest.raises(SpecError):
        get_registry().resolve(text)


def test_grammar_round_trips():
    name, params, cutoff = parse_metric("nDCG(gain={0:0,1:3}, discount='jarvelin')@10")
    assert (name, params, cutoff) == ("nDCG", {"gain": {0: 0, 1: 3}, "discount": "jarvelin"}, 10)
    assert format_metric(name, params, cutoff) == "nDCG(discount='jarvelin',gain={0:0,1:3})@10"


class Twice(Measure):
    name = "Twice"
    description = "a clash"
    Params = RankedParams

    def per_query(self, p, c):
        return "0"


def test_duplicate_names_name_both_plugins():
    with pytest.raises(
        PluginError,
        match=r"metric name 'Twice' of Twice \(class test_registry\.Twice, plugin 'two', registered "
        r"without a distribution\) clashes with name 'Twice' of Twice \(class test_registry\.Twice, "
        r"plugin 'one', registered without a distribution\): the same name",
    ):
        Registry([(Twice, "one"), (Twice, "two")])


def test_every_builtin_measure_is_documented():
    for measure in get_registry().measures:
        assert measure.description and measure.__doc__
        for name, field in measure.Params.model_fields.items():
            assert field.description, (measure.name, name)


@pytest.mark.parametrize(
    ("text", "canonicals"),
    [
        ("P.5,10", ["P@5", "P@10"]),
        ("set_F.0.25", ["SetF(beta2=0.25)"]),
        ("set_F_0.25", ["SetF(beta2=0.25)"]),
        ("ndcg.1=3,2=9", ["nDCG(gain={1:3.0,2:9.0})"]),
        ("utility_2,-1,0,0", ["Utility(a=2.0)"]),
        ("success", ["Success@1", "Success@5", "Success@10"]),
        ("Rprec_mult_0.20", ["Rprec(mult=0.2)"]),
        ("gm_map", ["gmAP"]),
    ],
)
def test_trec_eval_syntax_resolves_in_specs(text, canonicals):
    assert [m.canonical for m in get_registry().resolve(text)] == canonicals


def test_one_label_names_each_trec_eval_expansion():
    resolved = get_registry().resolve("P.5,10", label="prec")
    assert [m.label for m in resolved] == ["prec_P_5", "prec_P_10"]
