"""One namespace for metric names: every kind of clash is caught at registration, naming both
owners (distribution and class); built-in names and trec_eval's names cannot be taken or shadowed.
A plugin whose names clash with the built-ins' (or among its own) fails alone: its measures are not
used, a warning says why, and the built-ins and the other plugins work. Two plugins whose measures
clash both stay loaded: the clashing measures of both are withheld, every other one is used."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import fake_distribution

from pipeline import Measure, PluginError, RankedParams, SpecError, hookimpl
from pipeline.errors import PluginWarning
from pipeline.host import manager as plugins
from pipeline.measures.registry import Registry, get_registry

ROOT = Path(__file__).resolve().parents[1]


def measure(cls_name: str, name: str, **aliases: dict) -> type[Measure]:
    """A measure class of this module (its SQL does not matter here: nothing is evaluated)."""
    body = {
        "name": name,
        "description": f"{name}, for the namespace tests",
        "Params": RankedParams,
        "aliases": dict(aliases),
        "per_query": lambda self, p, c: "0",
        "__module__": __name__,
        "__qualname__": cls_name,
    }
    return type(cls_name, (Measure,), body)


def plugin(*measures: type[Measure], tryfirst: bool = False) -> object:
    class Plugin:
        measures: tuple[type[Measure], ...] = ()

        @hookimpl(tryfirst=tryfirst)
        def register_metrics(self) -> list[type[Measure]]:
            return list(measures)

    Plugin.measures = measures
    return Plugin()


def registry_with(*plugins_: tuple[str, object]) -> tuple[Registry, plugins.PluginManager]:
    """The built-ins plus each (distribution, plugin), registered as entry points would be."""
    pm = plugins.create_plugin_manager()
    for distribution, obj in plugins_:
        name = distribution.removeprefix("irpipe-")
        pm.register(obj, name=name)
        pm.distributions[name] = distribution
    return Registry.from_plugin_manager(pm), pm


EVIL = "class test_namespace.Evil, distribution 'irpipe-evil'"
AP = "class pipeline.metrics.average_precision.AP, distribution 'irpipe'"
NDCG = "class pipeline.metrics.cumulative_gain.nDCG, distribution 'irpipe'"

CLASHES = [
    # (id, plugins, the message)
    ("alias_vs_builtin_alias", [("irpipe-evil", plugin(measure("Evil", "Evil", MAP={})))],
     rf"metric alias 'MAP' of Evil \({EVIL}\) clashes with alias 'MAP' of AP \({AP}\): the same name"),
    ("alias_vs_builtin_name", [("irpipe-evil", plugin(measure("Evil", "Evil", nDCG={})))],
     rf"metric alias 'nDCG' of Evil \({EVIL}\) clashes with name 'nDCG' of nDCG \({NDCG}\): the same name"),
    ("alias_vs_trec_eval_name", [("irpipe-evil", plugin(measure("Evil", "Evil", map={})))],
     rf"metric alias 'map' of Evil \({EVIL}\) clashes with trec_eval's name 'map' for AP \(distribution 'irpipe'\): the same name"),
    ("name_vs_builtin_name", [("irpipe-evil", plugin(measure("Evil", "AP")))],
     rf"metric name 'AP' of AP \({EVIL}\) clashes with name 'AP' of AP \({AP}\): the same name"),
    ("name_differs_in_case_from_builtin", [("irpipe-evil", plugin(measure("Evil", "ap")))],
     rf"metric name 'ap' of ap \({EVIL}\) clashes with name 'AP' of AP \({AP}\): the names differ only in case"),
    ("alias_differs_in_case_from_builtin_alias", [("irpipe-evil", plugin(measure("Evil", "Evil", Map={})))],
     rf"metric alias 'Map' of Evil \({EVIL}\) clashes with alias 'MAP' of AP \({AP}\): the names differ only in case"),
    ("alias_differs_in_case_from_trec_eval_name", [("irpipe-evil", plugin(measure("Evil", "Evil", Recip_Rank={})))],
     r"metric alias 'Recip_Rank' of Evil .* clashes with trec_eval's name 'recip_rank' for RR \(distribution 'irpipe'\): the names differ only in case"),
    ("name_read_as_trec_eval_syntax", [("irpipe-evil", plugin(measure("Evil", "ndcg_cut_7")))],
     r"metric name 'ndcg_cut_7' of ndcg_cut_7 .* clashes with trec_eval's name 'ndcg_cut' for nDCG .*: trec_eval's syntax reads it as 'ndcg_cut' with parameters"),
    ("name_read_as_trec_eval_parameters", [("irpipe-evil", plugin(measure("Evil", "P.5")))],
     r"metric name 'P\.5' of P\.5 .* clashes with trec_eval's name 'P' for P .*: the same name"),
    ("alias_vs_ranx_name", [("irpipe-evil", plugin(measure("Evil", "Evil", hit_rate={})))],
     r"metric alias 'hit_rate' of Evil .* clashes with ranx's name 'hit_rate' for Success \(distribution 'irpipe'\): the same name"),
    ("name_differs_in_case_from_ranx_name", [("irpipe-evil", plugin(measure("Evil", "R-Precision")))],
     r"metric name 'R-Precision' of R-Precision .* clashes with ranx's name 'r-precision' for Rprec \(distribution 'irpipe'\): the names differ only in case"),
    ("alias_vs_alias_in_one_plugin", [
        ("irpipe-evil", plugin(measure("Evil", "Evil", twin={}), measure("Other", "Other", twin={}))),
     ], r"metric alias 'twin' of (Evil|Other) .*'irpipe-evil'\) clashes with alias 'twin' of (Evil|Other) .*: the same name"),
    ("first_call_cannot_shadow_builtins", [("irpipe-evil", plugin(measure("Evil", "Evil", map={}), tryfirst=True))],
     rf"metric alias 'map' of Evil \({EVIL}\) clashes with trec_eval's name 'map'"),
]  # fmt: skip


CONTESTS = [
    ("alias_vs_alias_of_two_plugins", [
        ("irpipe-first", plugin(measure("First", "First", shared={}))),
        ("irpipe-second", plugin(measure("Second", "Second", shared={}))),
     ], r"metric alias 'shared' of (First|Second) \(class test_namespace\.(First|Second), distribution 'irpipe-(first|second)'\) clashes with alias 'shared' of (First|Second) \(class test_namespace\.(First|Second), distribution 'irpipe-(first|second)'\): the same name"),
    ("alias_vs_name_of_two_plugins", [
        ("irpipe-first", plugin(measure("First", "First"))),
        ("irpipe-second", plugin(measure("Second", "Second", First={}))),
     ], r"'First' of (First|Second) .*'irpipe-(first|second)'\) clashes with (name|alias) 'First' .*: the same name"),
    ("names_differ_in_case_across_plugins", [
        ("irpipe-first", plugin(measure("First", "Judged"))),
        ("irpipe-second", plugin(measure("Second", "judged"))),
     ], r"'(Judged|judged)' of .* clashes with name '(Judged|judged)' .*: the names differ only in case"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("plugins_", "message"), [c[1:] for c in CONTESTS], ids=[c[0] for c in CONTESTS]
)
def test_two_plugins_clashing_keep_their_other_metrics_and_neither_wins(plugins_, message):
    extras = [measure(f"Own{i}", f"Own{i}") for i in range(len(plugins_))]
    with_extras = [
        (d, plugin(*p.measures, extra)) for (d, p), extra in zip(plugins_, extras, strict=True)
    ]
    with pytest.warns(PluginWarning, match=message) as warned:
        registry, pm = registry_with(*with_extras)
    # One warning for the contest; a warning of another kind that an import of this process may
    # give meanwhile is not the registry's (named in the message, should this fail).
    contests = [w for w in warned if issubclass(w.category, PluginWarning)]
    assert len(contests) == 1, [f"{w.category.__name__}: {w.message}" for w in warned]
    assert "neither's is used (their other metrics are)" in str(contests[0].message)
    assert pm.failures() == []  # both plugins stay loaded
    withheld = {m for state in pm.states() for m in state.withheld}
    assert withheld == {cls.name for _, p in plugins_ for cls in p.measures}
    assert not withheld & set(registry.providers)  # neither is used: loading order cannot matter
    assert {"Own0", "Own1"} <= set(registry.providers)
    assert [m.canonical for m in registry.resolve("Own1")] == ["Own1"]
    for name in withheld:
        with pytest.raises(SpecError, match=rf"^metric '{name}' is not available: .*clashes.*uninstall one of the two plugins"):  # fmt: skip
            registry.resolve(name)


@pytest.mark.parametrize(
    ("plugins_", "message"), [c[1:] for c in CLASHES], ids=[c[0] for c in CLASHES]
)
def test_every_kind_of_clash_is_refused_naming_both_owners(plugins_, message):
    with pytest.warns(PluginWarning, match=message) as warned:
        registry, pm = registry_with(*plugins_)
    assert "share one namespace and built-in names cannot be taken" in str(warned[0].message)
    assert {state.plugin for state in pm.failures()} == {
        d.removeprefix("irpipe-") for d, _ in plugins_
    }
    assert all(re.search(message, state.reason) for state in pm.failures())
    assert {owner.plugin for owner in registry.providers.values()} <= set(plugins.DEFAULT_PLUGINS)
    assert [m.canonical for m in registry.resolve("map")] == ["AP"]


def test_a_clash_among_builtins_is_a_bug_and_raises():
    ap = type(get_registry().resolve("AP")[0].measure)
    owners = ["pipeline.metrics.average_precision", "pipeline.metrics.precision"]
    with pytest.raises(PluginError, match=r"name 'AP' of AP .* clashes with name 'AP' of AP"):
        Registry([(ap, owner) for owner in owners], refuse=lambda *args: None)


def test_a_plugin_without_clashes_registers_and_builtins_keep_their_meaning():
    judged = measure("Judged", "Judged", judged={})  # a case variant of its own name: one metric
    registry, pm = registry_with(("irpipe-judged", plugin(judged)))
    assert pm.failures() == []
    assert [m.canonical for m in registry.resolve("judged")] == ["Judged"]
    assert [m.canonical for m in registry.resolve("map")] == ["AP"]
    assert registry.providers["Judged"].distribution == "irpipe-judged"
    assert registry.providers["AP"].distribution == "irpipe"


def test_builtin_names_have_no_clash_among_themselves():
    # Case variants of one built-in (nDCG, NDCG, ndcg) are one metric; the registry builds.
    assert get_registry().resolve("NDCG@10")[0].canonical == "nDCG@10"


def test_a_plugin_registered_without_distribution_is_named_by_its_plugin_name():
    pm = plugins.create_plugin_manager()
    pm.register(plugin(measure("Evil", "Evil", MAP={})), name="local")
    expected = r"^plugin 'local' \(registered without a distribution\) was not loaded: .*\(class test_namespace\.Evil, plugin 'local', registered without a distribution\) clashes"
    with pytest.warns(PluginWarning, match=expected):
        Registry.from_plugin_manager(pm)


EVIL_MODULE = '''
from pipeline import Measure, RankedParams, hookimpl

class Evil(Measure):
    """Claims trec_eval's `map`: every spec naming it would silently change meaning."""
    name = "Evil"
    description = "takes map"
    Params = RankedParams
    aliases = {"map": {}}

    def per_query(self, p, c):
        return "0.5"

@hookimpl
def register_metrics():
    return [Evil]
'''


def test_an_entry_point_plugin_is_named_by_its_distribution(tmp_path, monkeypatch):
    site = fake_distribution(
        tmp_path, "irpipe-evil", {"evil": "evil_metrics"}, evil_metrics=EVIL_MODULE
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("IRPIPE_LOAD_PLUGINS", "evil")
    monkeypatch.delitem(sys.modules, "evil_metrics", raising=False)
    expected = r"^plugin 'irpipe-evil 1\.0' \(entry point 'evil'\) was not loaded: .*class evil_metrics\.Evil, distribution 'irpipe-evil'"
    with pytest.warns(PluginWarning, match=expected):
        registry = Registry.from_plugin_manager(plugins.create_plugin_manager())
    assert "Evil" not in registry.names() and registry.resolve("map")[0].canonical == "AP"


def test_irpipe_metrics_shows_the_distribution_of_each_metric(tmp_path):
    site = fake_distribution(tmp_path, "irpipe-judged", {"judged": "irpipe_judged"})
    example = ROOT / "plugins" / "irpipe-judged"
    env = {
        "IRPIPE_LOAD_PLUGINS": "judged",
        "PYTHONPATH": f"{site}:{example}:{ROOT}",
        "COLUMNS": "300",
    }
    command = [sys.executable, "-m", "pipeline.cli", "metrics", "--json"]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    providers = {m["name"]: m["provided_by"] for m in json.loads(result.stdout)}
    assert providers["Assessed"] == "irpipe-judged"
    assert providers["AP"] == "irpipe"
