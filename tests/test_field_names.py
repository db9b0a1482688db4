"""The lower-case names the field writes after `@k` (ranx's `ndcg@10`, `map@100`, `mrr@10`, and
trec_eval's names given a cutoff): each evaluates to its CamelCase form's values under its label,
or is refused with a spelling that works; a suggestion never repeats the name typed, nor itself."""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import collection_spec
from docblocks import first_code, table

from pipeline import SpecError
from pipeline.measures.field_names import FIELD_NAMES, REFUSED
from pipeline.measures.registry import get_registry
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate

# (what the field writes, irpipe's spelling of the same measure)
SAME = [
    ("ndcg@10", "nDCG@10"),
    ("ndcg_cut@5", "nDCG@5"),
    ("ndcg_burges@10", "nDCG(gain=exponential)@10"),
    ("dcg@5", "DCG@5"),
    ("dcg_burges@5", "DCG(gain=exponential)@5"),
    ("map@100", "AP@100"),
    ("map_cut@10", "AP@10"),
    ("recall@100", "R@100"),
    ("precision@10", "P@10"),
    ("mrr@10", "RR@10"),
    ("mrr", "RR"),
    ("recip_rank@20", "RR@20"),
    ("success@10", "Success@10"),
    ("hit_rate@5", "Success@5"),
    ("r-precision", "Rprec"),
]


@pytest.mark.parametrize(("field", "irpipe"), SAME)
def test_a_lower_case_name_is_its_camel_case_measure(field, irpipe):
    registry = get_registry()
    [typed], [camel] = registry.resolve(field), registry.resolve(irpipe)
    assert (typed.canonical, typed.label, typed.params) == (
        camel.canonical,
        camel.label,
        camel.params,
    )


def test_lower_case_names_evaluate_to_the_camel_case_values(tmp_path):
    data = generate(seed=40, queries=15, runs=2)
    assert len({irpipe for _, irpipe in SAME}) == len(SAME)  # each label once in a spec
    tables = {}
    for side, metrics in (("field", [f for f, _ in SAME]), ("irpipe", [i for _, i in SAME])):
        directory = tmp_path / side
        directory.mkdir()
        spec = collection_spec(directory, data, metrics)
        spec_path = directory / "spec.yaml"
        spec_path.write_text(yaml.safe_dump(spec), encoding="utf-8")
        tables[side] = sorted(evaluate(spec_path, write=False).per_query())
    assert tables["field"] == tables["irpipe"]
    assert {row[3] for row in tables["field"]} >= {"nDCG@10", "AP@100", "RR@10", "Success@5"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hits@10", r"ranx's hits@10 .* not an irpipe metric: .* write P@10$"),
        ("f1@5", r"ranx's f1@5 .* not an irpipe metric: .* write P@5 and R@5$"),
        ("hit_rate", r"^'hit_rate' needs a cutoff: hit_rate@10 is Success@10$"),
        ("p@10", r"^unknown metric 'p'; did you mean 'P@10'\?"),
        ("ap@100", r"^unknown metric 'ap'; did you mean 'AP@100'"),
        ("R-prec", r"^unknown metric 'R-prec'; did you mean 'R-Prec' or 'Rprec' or 'RPrec'\?"),
    ],
)
def test_a_name_irpipe_does_not_take_is_refused_with_one_that_works(text, message):
    with pytest.raises(SpecError, match=message):
        get_registry().resolve(text)


TYPOS = ["R-prec", "ndgc@10", "Ndcg@10", "mapp@100", "rr@10", "err@20", "recal@100", "mrrr"]


@pytest.mark.parametrize("text", TYPOS)
def test_each_suggestion_is_new_once_and_works(text):
    with pytest.raises(SpecError, match="did you mean") as refused:
        get_registry().resolve(text)
    suggested = re.findall(r"'([^']+)'", str(refused.value).partition("did you mean")[2])
    typed = text.partition("@")[0]
    assert suggested and len(suggested) == len(set(suggested))
    assert all(s.partition("@")[0] != typed for s in suggested)
    for spelling in suggested:
        assert get_registry().resolve(spelling)


def test_every_field_name_resolves_with_a_cutoff_or_alone():
    registry = get_registry()
    for name, field in FIELD_NAMES.items():
        text = name if field.metric == "Rprec" else f"{name}@10"
        assert [m.measure.name for m in registry.resolve(text)] == [field.metric]


def test_the_reference_table_is_the_code_s():
    rows = table("configs/REFERENCE.md", "field-names")
    documented = {first_code(row["name"]).partition("@")[0]: row for row in rows}
    assert set(FIELD_NAMES) | set(REFUSED) <= set(documented)
    registry = get_registry()
    for name, row in documented.items():
        typed = first_code(row["name"]).replace("@k", "@7")
        if row["in a spec it is"] == "refused":
            assert name in REFUSED, name
            with pytest.raises(SpecError, match="not an irpipe metric"):
                registry.resolve(typed)
            continue
        irpipe = first_code(row["in a spec it is"]).replace("@k", "@7")
        assert [m.canonical for m in registry.resolve(typed)] == [irpipe], name
