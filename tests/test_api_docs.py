"""The plugin API's reference in the README: every export and hook documented, and its examples run."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

import pipeline.api
from pipeline import hookspecs
from pipeline.host import manager as plugins
from pipeline.measures import registry
from pipeline.synthetic import generate, write_qrels, write_run

README = Path(__file__).resolve().parents[1] / "README.md"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("### Writing a plugin: the API reference")
    return text[start : text.index("\n## ", start)]


def _hooks() -> list[str]:
    return [name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "irpipe_spec")]


def test_every_export_is_documented():
    documented = set(re.findall(r"^\| `(\w+)` \|", _section(), flags=re.MULTILINE))
    assert set(pipeline.api.__all__) == documented


def test_every_hook_is_documented_with_an_example():
    section = _section()
    assert _hooks() == ["register_metrics", "register_writers"]
    for hook in _hooks():
        assert f"**Hook `{hook}`**" in section
        assert any(f"def {hook}(" in block for block in _examples())


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", _section(), flags=re.DOTALL)


@pytest.fixture
def documented_plugins(monkeypatch):
    """Each example of the reference, executed as a plugin module and registered."""
    pm = plugins.create_plugin_manager()
    for i, source in enumerate(_examples()):
        module = types.ModuleType(f"readme_example_{i}")
        exec(compile(source, f"README example {i}", "exec"), module.__dict__)
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
