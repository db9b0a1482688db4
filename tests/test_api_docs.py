"""The plugin API's reference (plugins/README.md): every export and hook documented, and its examples
run. The reference is the region `<!-- begin: api-reference -->`, its examples the blocks marked
`<!-- test: api-example -->` (tests/docblocks.py)."""

from __future__ import annotations

import types

import pytest
from docblocks import first_code, marked, region, table

import pipeline.api
from pipeline import hookspecs
from pipeline.host import manager as plugins
from pipeline.measures import registry
from pipeline.synthetic import generate, write_qrels, write_run

PAGE = "plugins/README.md"


def _section() -> str:
    return region(PAGE, "api-reference")


def _hooks() -> list[str]:
    return [name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "irpipe_spec")]


def test_every_export_is_documented():
    documented = {first_code(row["export"]) for row in table(PAGE, "api-exports")}
    assert "<!-- table: api-exports -->" in _section()
    assert set(pipeline.api.__all__) == documented


def test_every_hook_is_documented_with_an_example():
    section = _section()
    assert _hooks() == ["register_metrics", "register_writers"]
    for hook in _hooks():
        assert f"**Hook `{hook}`**" in section
        assert any(f"def {hook}(" in block for block in _examples())


def _examples() -> list[str]:
    examples = marked("api-example", PAGE)
    assert all(block.text in _section() for block in examples)
    return [block.text for block in examples]


@pytest.fixture
def documented_plugins(monkeypatch):
    """Each example of the reference, executed as a plugin module and registered."""
    pm = plugins.create_plugin_manager()
    for i, source in enumerate(_examples()):
        module = types.ModuleType(f"readme_example_{i}")
        exec(compile(source, f"{PAGE} example {i}", "exec"), module.__dict__)
        pm.register(module, name=module.__name__)
    monkeypatch.setattr(registry, "_registry", registry.Registry.from_plugin_manager(pm))
    monkeypatch.setattr(plugins, "_manager", pm)


def test_the_examples_evaluate_from_a_spec(documented_plugins, tmp_path, write_spec):
    from pipeline import evaluate

    collection = generate(5, queries=10, runs=1, skill=(2.0,))
    write_qrels(collection.qrels, tmp_path / "qrels.txt")
    write_run(collection.runs["run0"], tmp_path / "run.txt")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": ["R@5", "MyRecall@5", "FirstTwo", "FirstTwo(rel=2)", "P@2", "P(rel=2)@2"],
        "outputs": [{"path": "out/q.counts", "level": "query"}],
    }
    evaluation = evaluate(write_spec(spec))
    values = {(q, m): v for _, _, q, m, v in evaluation.per_query(to="rows")}
    qids = {q for q, _ in values}
    assert all(values[q, "MyRecall@5"] == values[q, "R@5"] for q in qids)
    assert {values[q, "FirstTwo"] for q in qids} == {0.0, 1.0}  # both kinds of query are there
    for level, name in (("FirstTwo", "P@2"), ("FirstTwo(rel=2)", "P(rel=2)@2")):
        assert all(values[q, level] == float(values[q, name] == 1.0) for q in qids)
    counts = (tmp_path / "out/q.counts").read_text().splitlines()
    assert counts == [f"{m}\t{len(qids)}" for m in sorted(spec["metrics"])]
