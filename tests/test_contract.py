"""The measure contract: needs are declared values, undeclared reads and unbound SQL are named errors,
and the Python path gives the SQL path's numbers under every setting."""

from __future__ import annotations

import importlib
import typing
from typing import Any

import numpy as np
import pytest

from pipeline.api import (
    Columns,
    Measure,
    Need,
    PluginError,
    PythonMeasure,
    RankedParams,
    hookimpl,
    ratio,
)
from pipeline.contract.columns import flatten
from pipeline.contract.measure import MeasureParams
from pipeline.host import manager as plugins
from pipeline.host.builtin import DEFAULT_PLUGINS
from pipeline.measures import registry
from pipeline.measures.resolve import resolve_metrics
from pipeline.plan.compile import compile_plan
from pipeline.spec import load_spec
from pipeline.synthetic import generate, write_qrels, write_run


class PyP(PythonMeasure):
    """P@k, one query at a time."""

    name = "PyP"
    description = "precision at k, in Python"
    Params = RankedParams
    cutoff = "k"
    required = ("k",)

    def compute(self, p, query):
        return float(np.count_nonzero(query.grades[: p.k] >= query.level)) / p.k


class PyBatchR(PythonMeasure):
    """Recall@k over a whole batch with numpy: no Python call per query."""

    name = "PyBatchR"
    description = "recall at k, vectorized"
    Params = RankedParams
    cutoff = "k"
    required = ("k",)

    def compute_batch(self, p, batch):
        level = batch.level
        lengths = np.diff(batch.offsets)
        position = np.arange(len(batch.grades)) - np.repeat(batch.offsets[:-1], lengths)
        hits = ((batch.grades >= level) & (position < p.k)).astype(float)
        found = np.bincount(np.repeat(np.arange(len(batch)), lengths), hits, len(batch))
        relevant = np.bincount(
            np.repeat(np.arange(len(batch)), np.diff(batch.qrels_offsets)),
            (batch.qrels >= level).astype(float),
            len(batch),
        )
        return np.divide(found, relevant, out=np.zeros(len(batch)), where=relevant > 0)


class Undeclared(Measure):
    """Reads num_rel without declaring it."""

    name = "Undeclared"
    description = "reads a fact it did not declare"
    Params = RankedParams

    def per_query(self, p, c):
        return ratio(c.relevant_within(p), c.relevant_total(p))


class Unbound(Measure):
    name = "Unbound"
    description = "SQL naming a column that does not exist"
    Params = RankedParams

    def per_query(self, p, c):
        return "sum(no_such_column)"


class WrongLength(PythonMeasure):
    name = "WrongLength"
    description = "returns one value too many"

    def compute_batch(self, p, batch):
        return np.zeros(len(batch) + 1)


class Raises(PythonMeasure):
    name = "Raises"
    description = "its compute raises"

    def compute(self, p, query):
        raise ValueError("no grades today")


class AnyP(Measure):
    """P@k as a plugin written before measures were generic: a plain Measure, `p: Any`."""

    name = "AnyP"
    description = "precision at k, untyped"
    Params = RankedParams
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        return f"{c.relevant_within(p)} / {int(p.k)}"


class TypedP(Measure[RankedParams]):
    """P@k generic in its parameters: `p` is a RankedParams to a type checker."""

    name = "TypedP"
    description = "precision at k, typed"
    Params = RankedParams
    cutoff = "k"

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return f"{c.relevant_within(p)} / {int(p.k or 0)}"


class TypedPyP(PythonMeasure[RankedParams]):
    """P@k in Python, generic in its parameters."""

    name = "TypedPyP"
    description = "precision at k, typed, in Python"
    Params = RankedParams
    cutoff = "k"

    def compute(self, p: RankedParams, query) -> float:
        k = p.k or 0
        return float(np.count_nonzero(query.grades[:k] >= query.level)) / k


class _Plugin:
    @staticmethod
    @hookimpl
    def register_metrics():
        return [PyP, PyBatchR, Undeclared, Unbound, WrongLength, Raises, AnyP, TypedP, TypedPyP]


@pytest.fixture
def with_test_measures(monkeypatch):
    pm = plugins.create_plugin_manager()
    pm.register(_Plugin, name="contract-tests")
    monkeypatch.setattr(registry, "_registry", registry.Registry.from_plugin_manager(pm))


def _collection_spec(tmp_path, write_spec, metrics, settings, seed=3):
    collection = generate(seed, queries=14, runs=3)
    write_qrels(collection.qrels, tmp_path / "qrels.txt")
    runs = {}
    for name, run in collection.runs.items():
        write_run(run, tmp_path / f"{name}.txt", name)
        runs[name] = {"path": f"{name}.txt", "collection": "c"}
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": runs,
        "settings": settings,
        "metrics": metrics,
    }
    return write_spec(spec)


SETTINGS = [
    {},
    {"judged_only": True},
    {"max_docs": 4},
    {"max_docs": 0},
    {"queries": "intersection"},
    {"relevance_level": 2},
    {"ordering": "rank"},
    {"compatibility": "trec_eval-9"},
]


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_python_path_equals_sql_under_every_setting(
    settings, tmp_path, write_spec, with_test_measures
):
    from pipeline.run.evaluation import evaluate

    metrics = ["P@3", "PyP@3", "R@5", "PyBatchR@5", "P@20", "PyP@20"]
    evaluation = evaluate(_collection_spec(tmp_path, write_spec, metrics, settings), write=False)
    values = {(r, q, m): v for r, _, q, m, v in evaluation.per_query()}
    pairs = [("P@3", "PyP@3"), ("R@5", "PyBatchR@5"), ("P@20", "PyP@20")]
    keys = {(r, q) for r, q, _ in values}
    assert len(keys) > 30
    for run, qid in keys:
        for sql, python in pairs:
            assert values[run, qid, python] == pytest.approx(values[run, qid, sql], abs=1e-12)
    aggregate = {(r, m): (v, n) for r, _, m, v, n in evaluation.aggregate()}
    for (run, metric), (value, n) in aggregate.items():
        twin = dict(pairs).get(metric)
        if twin:
            assert aggregate[run, twin] == (pytest.approx(value, abs=1e-12), n)


def test_plain_and_generic_measures_give_the_same_values(tmp_path, write_spec, with_test_measures):
    """The plugin API before and after measures became generic in their parameters."""
    from pipeline import evaluate

    metrics = ["P@3", "AnyP@3", "TypedP@3", "TypedPyP@3"]
    results = evaluate(_collection_spec(tmp_path, write_spec, metrics, {}), write=False)
    values: dict[tuple[str, str], dict[str, float]] = {}
    for row in results.per_query(to="rows"):
        values.setdefault((row.run, row.qid), {})[row.metric] = row.value
    assert len(values) > 30
    for by_metric in values.values():
        assert by_metric["AnyP@3"] == by_metric["TypedP@3"] == by_metric["P@3"]
        assert by_metric["TypedPyP@3"] == pytest.approx(by_metric["P@3"], abs=1e-12)


_PARAMETERISED = ("judged_only_ok", "needs", "per_query", "missing", "empty")


def _builtin_measures() -> list[type[Measure]]:
    modules = [importlib.import_module(m) for m in DEFAULT_PLUGINS if ".metrics." in m]
    return [
        cls
        for module in modules
        for cls in vars(module).values()
        if isinstance(cls, type) and issubclass(cls, Measure) and cls.__module__ == module.__name__
    ]


def _params_argument(cls: type[Measure]) -> type[MeasureParams] | None:
    """X of the first `Measure[X]` among the class's bases, nearest first."""
    for klass in cls.__mro__:
        for base in klass.__dict__.get("__orig_bases__", ()):
            if typing.get_origin(base) in (Measure, PythonMeasure):
                return typing.get_args(base)[0]
    return None


@pytest.mark.parametrize("cls", _builtin_measures(), ids=lambda cls: cls.__name__)
def test_builtin_measures_are_generic_in_their_params(cls):
    """Each built-in measure is `Measure[Params]`, and its methods take `p: Params`."""
    assert _params_argument(cls) is cls.Params
    for name in _PARAMETERISED:
        method = getattr(cls, name)
        if method.__module__.startswith("pipeline.contract"):
            continue  # the contract's default, generic in the measure's Params
        assert typing.get_type_hints(method)["p"] is cls.Params, f"{cls.__name__}.{name}"


def test_undeclared_need_is_an_error_naming_the_metric(tmp_path, write_spec, with_test_measures):
    path = _collection_spec(tmp_path, write_spec, ["Undeclared"], {})
    loaded = load_spec(path)
    with pytest.raises(PluginError, match=r"Undeclared.*'R_1' without declaring it.*num_rel\(1\)"):
        compile_plan(loaded, resolve_metrics(loaded, registry.get_registry()))


def test_sql_that_does_not_bind_names_the_metric_and_its_provider(
    tmp_path, write_spec, with_test_measures
):
    from pipeline.run.evaluation import evaluate

    path = _collection_spec(tmp_path, write_spec, ["P@5", "Unbound"], {})
    message = r"metric 'Unbound' \(Unbound, from plugin 'contract-tests'.*no_such_column"
    with pytest.raises(PluginError, match=message):
        evaluate(path, write=False)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("WrongLength", r"'WrongLength'.*returned \d+ values for \d+ queries"),
        ("Raises", r"'Raises'.*raised ValueError: no grades today"),
    ],
)
def test_python_metric_failures_name_the_metric(
    metric, message, tmp_path, write_spec, with_test_measures
):
    from pipeline.run.evaluation import evaluate

    with pytest.raises(PluginError, match=message):
        evaluate(_collection_spec(tmp_path, write_spec, [metric], {}), write=False)


def test_needs_are_immutable_values_named_by_their_definition():
    c = Columns(relevance_level=1)
    need = c.num_rel(2)
    assert isinstance(need, Need) and need == "R_2" and need.kind == "fact"
    with pytest.raises(AttributeError):
        need.sql = "count(*)"
    assert c.num_rel(2) == need and c.num_rel(3) != need
    ideal = c.ideal_dcg("exponential", "standard", 10)
    assert [str(n) for n in flatten([ideal])] == ["irank_exponential", str(ideal)]


def test_a_bound_columns_allows_exactly_what_was_declared():
    c = Columns(relevance_level=1)
    bound = c.bound(flatten([c.num_rel(1), c.ideal_totals("linear")]), "metric 'X'")
    assert bound.num_rel(1) == "R_1"
    assert bound.ideal_totals("linear").dcg == "idcg_linear_standard_all"
    with pytest.raises(PluginError, match=r"metric 'X' reads .*'cum_rel_1'.*relevant_so_far\(1\)"):
        bound.relevant_so_far(1)


def test_needs_must_be_needs():
    with pytest.raises(PluginError, match="needs\\(\\) must give Columns' needs, not 'R_1x'"):
        flatten(["R_1x"])
