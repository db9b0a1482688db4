"""Plugins: the example package under plugins/ loads through an entry point and evaluates."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pipeline.entry_points import InstalledEntryPoint
from pipeline.host import manager as plugins
from pipeline.measures.registry import Registry

EXAMPLE = Path(__file__).resolve().parents[1] / "plugins" / "irpipe-judged"


@pytest.fixture
def judged_entry_point(monkeypatch):
    """Pretend the example plugin is installed, without installing anything."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    ep = InstalledEntryPoint("irpipe", "judged", "irpipe_judged", "irpipe-judged", "1.0")
    monkeypatch.setattr(plugins, "entry_points", lambda group: [ep] if group == "irpipe" else [])
    monkeypatch.setenv("IRPIPE_LOAD_PLUGINS", "judged")
    yield
    sys.modules.pop("irpipe_judged", None)


def test_entry_point_plugin_registers_a_metric(judged_entry_point):
    registry = Registry.from_plugin_manager(plugins.create_plugin_manager())
    [judged] = registry.resolve("Assessed@2")
    assert judged.canonical == "Assessed@2"


def test_plugins_not_allowed_do_not_load(judged_entry_point, monkeypatch):
    monkeypatch.setenv("IRPIPE_LOAD_PLUGINS", "")
    registry = Registry.from_plugin_manager(plugins.create_plugin_manager())
    assert "Assessed" not in registry.names()


def test_plugin_metric_evaluates_in_the_same_plan(judged_entry_point, monkeypatch, evaluate_trec):
    registry = Registry.from_plugin_manager(plugins.create_plugin_manager())
    monkeypatch.setattr("pipeline.measures.registry._registry", registry)
    qrels, run = "1 0 a 1\n1 0 b -1", "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t"
    per_query, _ = evaluate_trec(qrels, run, ["Assessed@2", "Assessed@10", "P@1"])
    assert (per_query["1", "Assessed@2"], per_query["1", "Assessed@10"]) == (1 / 2, 1 / 3)
