"""Broken plugins fail alone: a plugin that cannot be imported, whose hook raises or returns anything
but measure or writer classes, that implements a misspelt hook, or whose names clash is reported once,
by its distribution and version with what to fix, and is not used; a good plugin beside it and every
built-in keep working. Plugins are real modules with a `.dist-info` on sys.path: nothing is installed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import fake_distribution

from pipeline import SpecError, hookimpl
from pipeline.errors import IrpipeWarning, PluginWarning
from pipeline.host import manager as plugins
from pipeline.measures.registry import Registry

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "plugins" / "irpipe-judged"  # the good plugin: Assessed@k
QRELS, RUN = "1 0 a 1\n1 0 b -1", "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t"

MEASURE = '''
from pipeline.api import Measure, RankedParams, Writer, hookimpl

class Broken(Measure):
    """A good measure, unless a case changes it."""
    name = "Broken"
    description = "half of everything"
    Params = RankedParams
    aliases = {}
    cutoff = "k"

    def per_query(self, p, c):
        return "0.5"
'''
HOOK = "\n@hookimpl\ndef register_metrics():\n    return {}\n"
WRITERS = "\n@hookimpl\ndef register_writers():\n    return {}\n"


def measure_returning(result: str, **changes: str) -> str:
    """The module above, with class attributes changed (`name="'my metric'"`), whose hook
    returns `result`."""
    source = MEASURE
    for attribute, value in changes.items():
        source = re.sub(rf"(?m)^    {attribute} = .*$", f"    {attribute} = {value}", source)
    return source + HOOK.format(result)


def writer_returning(body: str) -> str:
    """The module above with a writer class of this body, returned by register_writers."""
    return MEASURE + f"\nclass Xlsx(Writer):\n{body}\n" + WRITERS.format("[Xlsx]")


@dataclass(frozen=True)
class Broken:
    id: str
    source: str  # the module of distribution irpipe-broken 1.0, entry point `broken`
    reason: str  # regular expressions for the warning: what is wrong ...
    fix: str  # ... and what to do
    attribute: str = ""  # the entry point names the module, or this attribute of it


CONTRACT = r"its register_metrics must return a list of pipeline\.api\.Measure subclasses, each setting name, description and Params \(a pydantic model; see pipeline/hookspecs\.py\)"
WRITER_CONTRACT = r"its register_writers must return a list of pipeline\.api\.Writer subclasses, each setting suffixes such as \('\.xlsx',\) \(see pipeline/hookspecs\.py\)"
REINSTALL = r"reinstall or upgrade it \(a dependency may be missing\), or report it to its authors"
BUG = r"a bug in the plugin: upgrade it, or report it to its authors"
ABSTRACT = "    suffixes = ('.xlsx',)  # and no write"

BROKEN = [
    # (a) the import fails
    Broken("missing_dependency", "import irpipe_no_such_dependency\n", r"importing broken_plugin raised ModuleNotFoundError: No module named 'irpipe_no_such_dependency'", REINSTALL),
    Broken("syntax_error", MEASURE + "def register_metrics(:\n", r"importing broken_plugin raised SyntaxError: .*\(broken_plugin\.py, line \d+\)", REINSTALL),
    Broken("raises_on_import", "raise RuntimeError('set IRPIPE_TOKEN first')\n", r"importing broken_plugin raised RuntimeError: set IRPIPE_TOKEN first", REINSTALL),
    Broken("exits_on_import", "import sys\nsys.exit(3)\n", r"importing broken_plugin raised SystemExit: 3", REINSTALL),
    Broken("missing_attribute", "x = 1\n", r"importing broken_plugin:plugin raised AttributeError: module 'broken_plugin' has no attribute 'plugin'", REINSTALL, ":plugin"),
    # (b) a hook raises
    Broken("metrics_hook_raises", MEASURE + HOOK.format("1 / 0"), r"its register_metrics hook raised ZeroDivisionError: division by zero", BUG),
    Broken("writers_hook_raises", MEASURE + HOOK.format("[Broken]") + WRITERS.format("[][0]"), r"its register_writers hook raised IndexError: list index out of range", BUG),
    # (c) a hook returns something else than what it promises
    Broken("returns_a_class_not_a_list", measure_returning("Broken"), r"register_metrics returned class broken_plugin\.Broken, not a list", CONTRACT),
    Broken("returns_a_string", measure_returning("['Broken@10']"), r"register_metrics returned 'Broken@10' \(a str\), not a class", CONTRACT),
    Broken("returns_an_instance", measure_returning("[Broken()]"), r"register_metrics returned an instance of broken_plugin\.Broken \(return the class itself\), not a class", CONTRACT),
    Broken("returns_a_non_measure", measure_returning("[Broken, dict]"), r"class builtins\.dict is not a subclass of pipeline\.api\.Measure", CONTRACT),
    Broken("measure_without_name", measure_returning("[Broken]", name="None"), r"measure class broken_plugin\.Broken has no name \(a string such as 'Judged'\)", CONTRACT),
    Broken("measure_name_unwritable", measure_returning("[Broken]", name="'my metric'"), r"measure class broken_plugin\.Broken is named 'my metric', which no spec can write", CONTRACT),
    Broken("measure_without_description", measure_returning("[Broken]", description="''"), r"measure class broken_plugin\.Broken has no description \(a one-line string\)", CONTRACT),
    Broken("params_not_pydantic", measure_returning("[Broken]", Params="dict"), r"measure class broken_plugin\.Broken: Params is class builtins\.dict, not a pydantic model", CONTRACT),
    Broken("cutoff_not_a_parameter", measure_returning("[Broken]", cutoff="'depth'"), r"measure class broken_plugin\.Broken: its cutoff 'depth' is not a field of its Params", CONTRACT),
    Broken("python_measure_computes_nothing", MEASURE.replace("import Measure,", "import Measure, PythonMeasure,") + "\nclass Idle(PythonMeasure):\n    name = 'Idle'\n    description = 'x'\n" + HOOK.format("[Broken, Idle]"), r"measure class broken_plugin\.Idle implements neither compute nor compute_batch", CONTRACT),
    Broken("measure_abstract", MEASURE.replace("def per_query", "def per_kuery") + HOOK.format("[Broken]"), r"measure class broken_plugin\.Broken cannot be created: TypeError: Can't instantiate abstract class Broken.*per_query", r"implement per_query; irpipe creates each class without arguments"),
    Broken("writer_not_a_writer", MEASURE + WRITERS.format("[Broken]"), r"class broken_plugin\.Broken is not a subclass of pipeline\.api\.Writer", WRITER_CONTRACT),
    Broken("writer_without_suffixes", writer_returning("    def write(self, con, table, path, manifest): pass"), r"writer class broken_plugin\.Xlsx has no suffixes \(a tuple such as \('\.xlsx',\)\)", WRITER_CONTRACT),
    Broken("writer_suffix_upper_case", writer_returning("    suffixes = ('.XLSX',)\n    def write(self, con, table, path, manifest): pass"), r"writer class broken_plugin\.Xlsx: suffix '\.XLSX' is not '\.' and lower-case text", WRITER_CONTRACT),
    Broken("writer_abstract", writer_returning(ABSTRACT), r"writer class broken_plugin\.Xlsx cannot be created: TypeError: .*write", r"implement write; irpipe creates each class without arguments"),
    Broken("writer_takes_builtin_suffix", writer_returning("    suffixes = ('.xlsx', '.csv')\n    def write(self, con, table, path, manifest): pass"), r"writers pipeline\.outputs\.CsvWriter \(irpipe\) and broken_plugin\.Xlsx \(irpipe-broken\) claim the same suffix '\.csv'", r"a suffix has one writer and built-in suffixes cannot be taken: rename it"),
    # (d) a name clashes with a built-in's
    Broken("alias_takes_trec_eval_map", measure_returning("[Broken]", aliases="{'map': {}}"), r"metric alias 'map' of Broken \(class broken_plugin\.Broken, distribution 'irpipe-broken'\) clashes with trec_eval's name 'map' for AP \(distribution 'irpipe'\): the same name\. .*: rename the alias", r"upgrade the plugin, or report it to its authors"),
    Broken("name_takes_builtin", measure_returning("[Broken]", name="'nDCG'"), r"metric name 'nDCG' of nDCG \(class broken_plugin\.Broken, distribution 'irpipe-broken'\) clashes with name 'nDCG' of nDCG .*: rename the name", r"upgrade the plugin, or report it to its authors"),
    # (e) a hook irpipe does not have, or none at all
    Broken("misspelt_hook", MEASURE + HOOK.format("[Broken]").replace("register_metrics", "register_metric"), r"it implements 'register_metric', which is not an irpipe hook \(did you mean 'register_metrics'\?\)", r"rename it to 'register_metrics', or mark it @hookimpl\(optionalhook=True\) if it may be absent"),
    Broken("hook_with_unknown_argument", MEASURE + HOOK.format("[Broken]").replace("register_metrics()", "register_metrics(config)"), r"its hooks do not match irpipe's: hookimpl definition: register_metrics\(config\) Argument\(s\) \{'config'\} are declared in the hookimpl but can not be found in the hookspec", r"a hook takes only the arguments pipeline/hookspecs\.py lists \(or upgrade irpipe\)"),
    Broken("no_hook_at_all", MEASURE, r"it implements no irpipe hook", r"point the entry point at the module whose register_metrics or register_writers carries @pipeline\.api\.hookimpl"),
]  # fmt: skip


@pytest.fixture
def site(tmp_path, monkeypatch):
    """Install (without installing) distributions: `site(name=source)` writes irpipe-<name> 1.0
    with entry point `<name>` naming module `<name>_plugin` (or `attribute` of it), and
    irpipe-judged (the example) always; these load. Returns a PYTHONPATH for a subprocess."""
    root = tmp_path / "site"
    modules = ["irpipe_judged"]
    monkeypatch.syspath_prepend(str(EXAMPLE))

    def install(attribute: str = "", **sources: str) -> str:
        fake_distribution(root, "irpipe-judged", {"judged": "irpipe_judged"})
        for name, source in sources.items():
            module = f"{name}_plugin"
            fake_distribution(
                root, f"irpipe-{name}", {name: module + attribute}, **{module: source}
            )
            modules.append(module)
        monkeypatch.syspath_prepend(str(root))
        monkeypatch.setenv("IRPIPE_LOAD_PLUGINS", ",".join(["judged", *sources]))
        return f"{root}:{EXAMPLE}:{ROOT}"

    yield install
    for module in modules:  # the next test's plugin of the same name is another module
        sys.modules.pop(module, None)


def loaded(monkeypatch) -> tuple[plugins.PluginManager, Registry, list[str]]:
    """A new plugin manager and registry, made the process-wide ones, and the plugin warnings."""
    with pytest.warns(IrpipeWarning) as warned:
        pm = plugins.create_plugin_manager()
        registry = Registry.from_plugin_manager(pm)
    monkeypatch.setattr("pipeline.host.manager._manager", pm)
    monkeypatch.setattr("pipeline.measures.registry._registry", registry)
    return pm, registry, [str(w.message) for w in warned if isinstance(w.message, PluginWarning)]


@pytest.mark.parametrize("case", BROKEN, ids=[c.id for c in BROKEN])
def test_a_broken_plugin_is_named_by_its_distribution_and_the_others_work(
    case, site, monkeypatch, evaluate_trec
):
    site(case.attribute, broken=case.source)
    pm, registry, warnings = loaded(monkeypatch)
    head = r"plugin 'irpipe-broken 1\.0' \(entry point 'broken'\) was not loaded: "
    assert len(warnings) == 1 and re.fullmatch(f"{head}{case.reason}; {case.fix}", warnings[0])
    states = {state.plugin: state.state for state in pm.states()}
    assert states["broken"] == "failed" and states["judged"] == "loaded"
    assert "Broken" not in registry.names() and pm.get_plugin("broken") is None
    per_query, _ = evaluate_trec(QRELS, RUN, ["Assessed@2", "P@1", "AP"])
    assert (per_query["1", "Assessed@2"], per_query["1", "P@1"]) == (1 / 2, 1.0)


def test_an_unknown_metric_names_the_plugins_that_failed(site, monkeypatch):
    site(broken=measure_returning("[Broken]", aliases="{'map': {}}"))
    _, registry, _ = loaded(monkeypatch)
    with pytest.raises(
        SpecError,
        match=r"^unknown metric 'Broken' \(irpipe metrics lists them all; plugin 'irpipe-broken "
        r"1\.0' failed to load: metric alias 'map' of Broken .*: rename the alias\)$",
    ):
        registry.resolve("Broken@10")


def test_several_failed_plugins_are_listed_by_name(site, monkeypatch):
    site(one="import nothing_here\n", two=MEASURE + HOOK.format("None + 1"))
    _, registry, warnings = loaded(monkeypatch)
    assert len(warnings) == 2
    with pytest.raises(SpecError, match=r"2 plugins failed to load \('irpipe-one 1\.0', 'irpipe-two 1\.0'\): their warnings say why\)$"):  # fmt: skip
        registry.resolve("Broken")


def test_two_plugins_claiming_one_name_keep_their_other_metrics(site, monkeypatch, evaluate_trec):
    """Neither wins by loading first: what `Shared` means must not depend on what else is
    installed; what only one of them defines stays in use."""
    own = "\nclass {0}(Broken):\n    name = '{0}'\n    aliases = {{}}\n"
    one = measure_returning("[Broken, OneOwn]", name="'One'", aliases="{'Shared': {}}")
    two = measure_returning("[Broken, TwoOwn]", name="'Two'", aliases="{'Shared': {}}")
    site(one=one + own.format("OneOwn"), two=two + own.format("TwoOwn"))
    pm, registry, warnings = loaded(monkeypatch)
    assert pm.failures() == []
    assert warnings == [
        "plugin 'irpipe-one 1.0' (entry point 'one') and plugin 'irpipe-two 1.0' (entry point "
        "'two'): metric alias 'Shared' of Two (class two_plugin.Broken, distribution "
        "'irpipe-two') clashes with alias 'Shared' of One (class one_plugin.Broken, distribution "
        "'irpipe-one'): the same name. Names and aliases of every distribution share one "
        "namespace and built-in names cannot be taken: rename the alias; two installed plugins "
        "define it, so neither's is used (their other metrics are): uninstall one of the two "
        "plugins, or ask one's authors to rename it"
    ]
    withheld = {state.plugin: state.withheld for state in pm.records if state.withheld}
    assert withheld == {"one": ["One"], "two": ["Two"]}
    assert not {"One", "Two", "Shared"} & set(registry.names())
    with pytest.raises(
        SpecError, match=r"^metric 'Shared' is not available: metric alias 'Shared'"
    ):
        registry.resolve("Shared")
    values = evaluate_trec(QRELS, RUN, ["OneOwn@2", "TwoOwn@2", "Assessed@2"])[0]
    assert (values["1", "OneOwn@2"], values["1", "TwoOwn@2"], values["1", "Assessed@2"]) == (
        0.5,
        0.5,
        0.5,
    )


def test_an_entry_point_name_taken_by_another_distribution(site, tmp_path, monkeypatch):
    site()
    fake_distribution(tmp_path / "site", "irpipe-judged-fork", {"judged": "irpipe_judged"})
    pm, registry, warnings = loaded(monkeypatch)
    assert warnings == [
        "plugin 'irpipe-judged-fork 1.0' (entry point 'judged') was not loaded: the entry point name "
        "'judged' is taken by distribution 'irpipe-judged'; uninstall one of the two distributions"
    ]
    assert registry.resolve("Assessed@2")[0].canonical == "Assessed@2"


def test_two_entry_points_naming_one_module(tmp_path, site, monkeypatch):
    site()
    entry_points = {"first": "irpipe_judged", "second": "irpipe_judged"}
    fake_distribution(tmp_path / "site", "irpipe-twice", entry_points)
    monkeypatch.setenv("IRPIPE_LOAD_PLUGINS", "first,second")
    _, registry, warnings = loaded(monkeypatch)
    assert warnings == [
        "plugin 'irpipe-twice 1.0' (entry point 'second') was not loaded: it names the same object "
        "as plugin 'first'; remove one of the entry points"
    ]
    assert registry.resolve("Assessed@2")[0].canonical == "Assessed@2"


def test_irpipe_load_plugins_skips_the_others_and_warns_of_unknown_names(site, monkeypatch):
    site(broken="import nothing_here\n")
    monkeypatch.setenv("IRPIPE_LOAD_PLUGINS", "judged,judgd")
    with pytest.warns(IrpipeWarning, match=r"IRPIPE_LOAD_PLUGINS names 'judgd', which no installed distribution provides as an irpipe entry point \(installed: broken, judged\)"):  # fmt: skip
        pm = plugins.create_plugin_manager()
    states = {state.plugin: state for state in pm.states()}
    assert (states["broken"].state, states["broken"].error) == ("skipped", None)
    assert states["judged"].state == "loaded" and pm.failures() == []


def test_a_plugin_registered_directly_fails_the_same_way():
    """An embedding program's own plugin: named by its plugin name, as it has no distribution."""

    class Raising:
        @hookimpl
        def register_metrics(self):
            raise KeyError("config")

    pm = plugins.create_plugin_manager()
    pm.register(Raising(), name="local")
    with pytest.warns(PluginWarning, match=r"^plugin 'local' \(registered without a distribution\) was not loaded: its register_metrics hook raised KeyError: 'config'"):  # fmt: skip
        registry = Registry.from_plugin_manager(pm)
    assert registry.resolve("AP")[0].canonical == "AP"
    assert [state.plugin for state in pm.failures()] == ["local"]


def test_a_builtin_that_breaks_is_a_bug_in_irpipe():
    pm = plugins.create_plugin_manager()
    with pytest.raises(RuntimeError, match=r"^built-in plugin pipeline\.outputs: broken$"):
        pm.fail("pipeline.outputs", "broken", "fix irpipe")


def test_an_optional_hook_irpipe_lacks_is_no_failure(site, monkeypatch):
    optional = MEASURE + HOOK.format("[Broken]")
    optional += "\n@hookimpl(optionalhook=True)\ndef register_rankers():\n    return []\n"
    site(future=optional)
    pm = plugins.create_plugin_manager()
    assert pm.failures() == [] and "Broken" in Registry.from_plugin_manager(pm).names()


# --- the command line: warnings, no traceback, the documented exit codes, `irpipe plugins` ---


def irpipe(*args: str, pythonpath: str, load: str) -> subprocess.CompletedProcess:
    """The real command, with only these plugins on the path and allowed to load."""
    env = {"PYTHONPATH": pythonpath, "IRPIPE_LOAD_PLUGINS": load, "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "pipeline.cli", *args]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env={**env, "COLUMNS": "200"}
    )


@pytest.fixture
def spec(tmp_path, write_spec) -> Callable[..., Path]:
    """Good qrels and run in tmp_path; returns a writer of specs evaluating these metrics."""
    (tmp_path / "qrels.txt").write_text(QRELS + "\n")
    (tmp_path / "run.txt").write_text(RUN + "\n")

    def with_metrics(*metrics: str) -> Path:
        return write_spec(
            {
                "collections": {"c": {"qrels": "qrels.txt"}},
                "runs": {"r": {"path": "run.txt", "collection": "c"}},
                "metrics": list(metrics),
                "outputs": [{"path": "out/summary.csv"}],
            }
        )

    return with_metrics


WARNING = re.compile(
    r"irpipe: plugin 'irpipe-broken 1\.0' \(entry point 'broken'\) was not loaded: importing "
    r"broken_plugin raised ModuleNotFoundError: No module named 'irpipe_no_such_dependency'; "
    rf"{REINSTALL}\n"
)


def test_the_cli_warns_once_and_runs_without_the_broken_plugin(site, spec, tmp_path):
    path = site(broken=BROKEN[0].source)
    result = irpipe("run", str(spec("Assessed@2", "AP")), pythonpath=path, load="broken,judged")
    assert result.returncode == 0, result.stderr
    assert WARNING.fullmatch(result.stderr), result.stderr  # once, though both hooks were read
    assert "Assessed@2" in result.stdout and (tmp_path / "out" / "summary.csv").exists()


def test_the_cli_shows_the_plugins_traceback_with_debug_only(site, spec):
    path = site(broken=MEASURE + HOOK.format("1 / 0"))
    quiet = irpipe("run", "--quiet", str(spec("AP")), pythonpath=path, load="broken")
    debug = irpipe("--debug", "run", "--quiet", str(spec("AP")), pythonpath=path, load="broken")
    assert (quiet.returncode, debug.returncode) == (0, 0)
    assert "Traceback" not in quiet.stderr and "ZeroDivisionError: division by zero" in quiet.stderr
    assert re.search(r"Traceback(.|\n)*broken_plugin\.py(.|\n)*\nirpipe: plugin", debug.stderr)


def test_a_spec_naming_a_failed_plugins_metric_is_a_spec_error(site, spec):
    path = site(broken=BROKEN[0].source)
    result = irpipe("validate", str(spec("Broken@10")), pythonpath=path, load="broken,judged")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    warning, error = result.stderr.splitlines()
    assert WARNING.fullmatch(warning + "\n")
    assert re.fullmatch(
        r"Error: .*spec\.yaml:\d+: metrics\.0: unknown metric 'Broken' \(irpipe metrics lists them "
        r"all; plugin 'irpipe-broken 1\.0' failed to load: importing broken_plugin raised "
        r"ModuleNotFoundError: No module named 'irpipe_no_such_dependency'\)",
        error,
    )


def test_plugins_json_lists_every_plugin_and_its_state(site):
    good_writer = writer_returning(
        "    suffixes = ('.xlsx',)\n    def write(self, con, table, path, manifest): pass"
    )
    path = site(broken=BROKEN[0].source, writer=good_writer, skipped=MEASURE)
    result = irpipe("plugins", "--json", pythonpath=path, load="broken,judged,writer")
    assert result.returncode == 0 and WARNING.fullmatch(result.stderr), result.stderr
    rows = json.loads(result.stdout)
    assert [row["plugin"] for row in rows] == [*plugins.DEFAULT_PLUGINS, *["broken", "judged", "skipped", "writer"]]  # fmt: skip
    assert all(set(row) == {"plugin", "distribution", "version", "state", "error", "metrics", "writers", "withheld"} for row in rows)  # fmt: skip
    by_name = {row["plugin"]: row for row in rows}
    assert by_name["pipeline.metrics.average_precision"]["metrics"][:1] == ["AP"]
    assert by_name["pipeline.outputs"]["writers"][:1] == [".csv"]
    assert {row["distribution"] for row in rows[: len(plugins.DEFAULT_PLUGINS)]} == {"irpipe"}
    broken = by_name["broken"]
    assert (broken["distribution"], broken["version"], broken["state"]) == ("irpipe-broken", "1.0", "failed")  # fmt: skip
    assert re.fullmatch(rf"importing broken_plugin raised ModuleNotFoundError: .*; {REINSTALL}", broken["error"])  # fmt: skip
    assert broken["metrics"] == broken["writers"] == []
    assert (by_name["judged"]["state"], by_name["judged"]["metrics"]) == ("loaded", ["Assessed"])
    assert (by_name["writer"]["metrics"], by_name["writer"]["writers"]) == ([], [".xlsx"])
    assert (by_name["skipped"]["state"], by_name["skipped"]["error"]) == ("skipped", None)


def test_plugins_table_shows_each_state(site):
    path = site(broken=BROKEN[0].source)
    result = irpipe("plugins", pythonpath=path, load="broken,judged")
    assert result.returncode == 0 and "Traceback" not in result.stderr
    rows = {line.split("│")[0].strip(): line.split("│") for line in result.stdout.splitlines()}
    assert (
        rows["judged"][1].strip() == "irpipe-judged 1.0" and rows["judged"][4].strip() == "loaded"
    )
    assert rows["broken"][4].strip().startswith("failed: importing broken_plugin raised")


def test_plugins_shows_what_a_contest_withheld(site):
    """Two plugins both defining `Assessed` (the example's metric): both stay loaded, each with
    `Assessed` withheld, in the table and in --json; the warning is printed once."""
    path = site(twin=measure_returning("[Broken]", name="'Assessed'"))
    result = irpipe("plugins", pythonpath=path, load="judged,twin")
    assert result.returncode == 0 and result.stderr.count("irpipe: plugin") == 1, result.stderr
    rows = {line.split("│")[0].strip(): line.split("│") for line in result.stdout.splitlines()}
    for plugin in ("judged", "twin"):
        assert rows[plugin][4].strip() == "loaded; withheld: Assessed"
    listed = json.loads(irpipe("plugins", "--json", pythonpath=path, load="judged,twin").stdout)
    assert {row["plugin"]: row["withheld"] for row in listed if row["withheld"]} == {
        "judged": ["Assessed"],
        "twin": ["Assessed"],
    }
