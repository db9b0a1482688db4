#!/usr/bin/env python3
"""Install check: every user extra of irpipe works installed alone, and the core at its floors.

The test suite runs with the `test` extra, which installs everything: an extra that misses one of
its own dependencies (issue 21: `irpipe[spark]` without pandas) or a floor of pyproject.toml that
the code has outgrown passes there unseen. Here each case gets a NEW virtual environment holding
only what it names, installed from one wheel built from this working tree, and runs its feature
end to end through the real `irpipe` command on a temporary copy of configs/:

    base      irpipe alone: `irpipe run` on the quickstart, and `irpipe trec-eval`
    spark     irpipe[spark]: the quickstart on the Spark engine equals the base case's summary
    compare   irpipe[compare]: configs/compare.yaml's comparison table, with p-values
    plot      irpipe[plot]: configs/pr_curves.yaml's PNG and SVG files, opened and checked
    arrays    irpipe[arrays] and plugins/irpipe-usermodels: ERR@10 and its Python measures
    plugins   irpipe and every package under plugins/: all their metrics load and evaluate
    floors    irpipe[test] with each core dependency at its floor (floors.txt): the core tests

Every user extra of pyproject.toml (all but `test` and `bench`) must have a case of its name. The
cases run in parallel; nothing is written into the repository. Run with the system Python:

    python3 tests/installs/check.py [--jobs N] [--keep] [CASE ...]

It prints a table (case, seconds, ok/FAILED, and the tail of a failed case's log) and exits 1 if
any case failed. The logs are kept, in a directory it names, only then.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FLOORS = Path(__file__).resolve().parent / "floors.txt"
#: Extras of pyproject.toml that users do not install: they get no case.
NOT_USER_EXTRAS = frozenset({"test", "bench"})
#: pip's options: quiet; and no bytecode compiled at install (half of installing scipy's time),
#: Python compiles what a case imports.
PIP_OPTIONS = ("--disable-pip-version-check", "-q")
PIP_INSTALL = ("install", *PIP_OPTIONS, "--no-compile")
#: Seconds any one command may take (a Spark that hangs must not hang the CI).
TIMEOUT = 900
LOG_TAIL = 40
#: How irpipe's warnings start on stderr: its own, and a plugin's it did not load.
IRPIPE_WARNINGS = ("Warning:", "irpipe: plugin")
#: The floors case's tests: the core (metrics on DuckDB, trec_eval's command, readers, the spec
#: and its schema, plugins, the history, the console), no Spark and no plots; 80 s in two processes.
FLOOR_TESTS = (
    "test_metrics.py",
    "test_pytrec_eval_agreement.py",
    "test_trec_eval_cli.py",
    "test_readers.py",
    "test_bad_inputs.py",
    "test_spec.py",
    "test_schema.py",
    "test_registry.py",
    "test_plugins.py",
    "test_execute.py",
    "test_history.py",
    "test_history_commands.py",
    "test_console.py",
)
#: trec_eval's names of quickstart measures, checked against `irpipe run`'s summary.
TREC_EVAL_NAMES = {"map": "AP", "P_10": "P@10", "recip_rank": "RR"}


class CheckFailed(Exception):
    """A case's expectation failed; the message says which."""


def require(condition: object, message: str) -> None:
    """Fail the case with `message` unless `condition` holds."""
    if not condition:
        raise CheckFailed(message)


def canonical(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version_key(version: str) -> tuple[int, ...]:
    """A release number without its trailing zeros: 1.5, 1.5.0 and 1.5.0.0 are one key."""
    parts = [int(part) for part in version.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def pyproject(root: Path = REPO) -> dict:
    """pyproject.toml's [project] table."""
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def user_extras(project: dict) -> list[str]:
    """The extras a user installs: all of [project.optional-dependencies] but test and bench."""
    return [
        name for name in project.get("optional-dependencies", {}) if name not in NOT_USER_EXTRAS
    ]


def core_floors(project: dict) -> dict[str, str]:
    """Each core dependency's declared floor (`name>=floor`), by canonical name; a dependency
    without a floor fails the check."""
    floors = {}
    for requirement in project["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group()
        floor = re.search(r">=\s*([0-9][0-9.]*)", requirement)
        require(floor, f"pyproject.toml: core dependency {requirement!r} declares no floor (>=)")
        floors[canonical(name)] = floor.group(1)
    return floors


def floor_pins(path: Path = FLOORS) -> dict[str, str]:
    """floors.txt's pins (`name==version`; comments and blank lines skipped), by canonical name."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = (part.strip() for part in line.split("=="))
            pins[canonical(name)] = version
    return pins


def pins_drift(pins: dict[str, str], floors: dict[str, str]) -> list[str]:
    """How floors.txt differs from pyproject.toml's floors: one line a difference."""
    problems = [
        f"{name}: pyproject.toml has no core dependency of this name"
        for name in pins.keys() - floors.keys()
    ]
    problems += [
        f"{name}>={floors[name]}: floors.txt lacks its pin" for name in floors.keys() - pins.keys()
    ]
    for name in sorted(pins.keys() & floors.keys()):
        if version_key(pins[name]) != version_key(floors[name]):
            problems.append(
                f"{name}: floors.txt pins {pins[name]}, pyproject.toml's floor is {floors[name]}"
            )
    return problems


def clean_env(venv: Path) -> dict[str, str]:
    """This process's environment for a command of `venv`: its bin/ first on PATH, and nothing
    that would let another environment, user site-packages or irpipe setting leak in."""
    leaks = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_TARGET", "PIP_PREFIX")
    env = {key: value for key, value in os.environ.items() if key not in leaks}
    env = {key: value for key, value in env.items() if not key.startswith(("IRPIPE_", "PYSPARK_"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONNOUSERSITE"] = "1"
    return env


def run_logged(
    command: list[str], log: Path, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess:
    """Run `command`, append it, its output and its exit code and time to `log`; a timeout fails
    the case."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n$ (cd {cwd} && {' '.join(command)})\n")
    start = time.monotonic()
    try:
        result = subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
    except subprocess.TimeoutExpired as exc:
        raise CheckFailed(f"{' '.join(command)}: no answer in {TIMEOUT} s") from exc
    with log.open("a", encoding="utf-8") as out:
        out.write(result.stdout + result.stderr)
        out.write(f"[exit {result.returncode}, {time.monotonic() - start:.1f} s]\n")
    return result


@dataclass
class Workspace:
    """What the cases share: the copy of the working tree, the wheels built from it once, each
    case's outcome (as a future, so that a case can wait for another's) and the logs directory."""

    root: Path
    logs: Path
    outcomes: dict[str, cf.Future]
    keep: bool = False

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def wheels(self) -> Path:
        return self.root / "wheels"

    @property
    def pip(self) -> Path:
        """The Python of the one environment with pip: it builds the wheels and installs into
        every case's environment (`pip --python`), which has no pip of its own."""
        return self.root / "pip" / "bin" / "python"

    def wheel(self, name: str) -> Path:
        """The wheel built for distribution `name`."""
        pattern = f"{canonical(name).replace('-', '_')}-*.whl"
        found = sorted(self.wheels.glob(pattern))
        require(len(found) == 1, f"expected one wheel {pattern} in {self.wheels}, found {found}")
        return found[0]

    def irpipe(self, extra: str | None = None) -> str:
        """The requirement installing irpipe's wheel, with `extra`."""
        return f"{self.wheel('irpipe')}[{extra}]" if extra else str(self.wheel("irpipe"))

    def plugins(self) -> dict[str, Path]:
        """Every package under plugins/: its distribution name and wheel."""
        names = [
            pyproject(path.parent)["name"]
            for path in sorted(self.src.glob("plugins/*/pyproject.toml"))
        ]
        return {name: self.wheel(name) for name in names}

    def work_of(self, name: str) -> Path:
        """The configs/ copy of case `name` once that case has passed; fails if it failed."""
        outcome = self.outcomes[name].result()
        require(outcome.ok, f"the {name} case failed, so there is nothing to compare with")
        return outcome.work


class Case:
    """One case's directory: its virtual environment, its copy of configs/ and its log."""

    def __init__(self, name: str, ws: Workspace) -> None:
        self.name, self.ws = name, ws
        self.root = ws.root / "cases" / name
        self.venv, self.work = self.root / "venv", self.root / "configs"
        self.log = ws.logs / f"{name}.log"

    def run(self, *command: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """Run a command in this case's environment (in its configs/ copy unless `cwd`); a
        non-zero exit fails the case."""
        argv = [str(part) for part in command]
        result = run_logged(argv, self.log, cwd or self.work, clean_env(self.venv))
        shown = " ".join([Path(argv[0]).name, *argv[1:4]])
        require(result.returncode == 0, f"`{shown} ...` exited {result.returncode}")
        return result

    def setup(self, *requirements: str | Path, options: tuple[str, ...] = ()) -> None:
        """A new virtual environment holding only `requirements`, and a fresh copy of configs/."""
        shutil.copytree(self.ws.src / "configs", self.work)
        self.run(sys.executable, "-m", "venv", "--without-pip", self.venv)
        python = self.venv / "bin" / "python"
        self.run(
            self.ws.pip, "-m", "pip", "--python", python, *PIP_INSTALL, *options, *requirements
        )

    def python(self, *args: str | Path) -> subprocess.CompletedProcess:
        """The environment's Python."""
        return self.run(self.venv / "bin" / "python", *args)

    def python_json(self, code: str, *args: str | Path) -> object:
        """What a snippet run by the environment's Python prints as JSON."""
        return json.loads(self.python("-c", code, *args).stdout)

    def irpipe(self, *args: str | Path) -> subprocess.CompletedProcess:
        """The environment's `irpipe` command, in the configs/ copy: it must exit 0 and warn of
        nothing (no `Warning: ...` line on stderr, nor a refused plugin's `irpipe: plugin ...`)."""
        result = self.run(self.venv / "bin" / "irpipe", *args)
        warned = [line for line in result.stderr.splitlines() if line.startswith(IRPIPE_WARNINGS)]
        require(not warned, f"irpipe {args[0]} warned:\n" + "\n".join(warned))
        return result

    def spec(self, name: str) -> dict:
        """A spec of the configs/ copy, parsed by the environment's own PyYAML."""
        code = "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"
        return self.python_json(code, self.work / name)

    def write_spec(self, name: str, spec: dict) -> str:
        """Write `spec` into the configs/ copy (JSON is YAML) and return its name."""
        (self.work / name).write_text(json.dumps(spec, indent=2), encoding="utf-8")
        return name


# Reading outputs ---------------------------------------------------------------------------------


def output(case: Case, spec: dict, level: str, suffix: str = ".csv") -> Path:
    """The spec's output of this level and suffix, in the case's configs/ copy."""
    paths = [
        o["path"] for o in spec["outputs"] if o.get("level") == level and o["path"].endswith(suffix)
    ]
    require(paths, f"the spec has no {level} output ending {suffix}")
    require((case.work / paths[0]).is_file(), f"{paths[0]} was not written")
    return case.work / paths[0]


def read_csv(path: Path) -> list[dict[str, str]]:
    """A CSV file's rows; it must have at least one."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    require(rows, f"{path.name} has no rows")
    return rows


def number(text: str, what: str, low: float = -math.inf, high: float = math.inf) -> float:
    """`text` as a finite number within [low, high]."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    require(
        math.isfinite(value) and low <= value <= high,
        f"{what}: {text!r} is not a number in [{low}, {high}]",
    )
    return value


def named_metrics(spec: dict) -> list[str]:
    """The metrics a spec names as plain strings (their labels in the outputs are the same)."""
    return [metric for metric in spec["metrics"] if isinstance(metric, str)]


def summary_by_run(rows: list[dict[str, str]]) -> dict[str, dict[str, dict[str, str]]]:
    """An aggregate table's rows as {run: {metric: row}}."""
    table: dict[str, dict[str, dict[str, str]]] = {}
    for row in rows:
        table.setdefault(row["run"], {})[row["metric"]] = row
    return table


def check_summary(rows: list[dict[str, str]], spec: dict, labels: list[str]) -> None:
    """Every run of the spec has a finite value over some queries for every metric: at least one
    for each of the spec's metrics, and every one of `labels`; all runs the same metrics."""
    table = summary_by_run(rows)
    require(
        set(table) == set(spec["runs"]),
        f"summary runs {sorted(table)}, spec runs {sorted(spec['runs'])}",
    )
    for run, metrics in table.items():
        require(
            len(metrics) >= len(spec["metrics"]),
            f"{run}: {len(metrics)} metrics for {len(spec['metrics'])} in the spec",
        )
        require(set(labels) <= set(metrics), f"{run}: lacks {sorted(set(labels) - set(metrics))}")
        require(
            metrics.keys() == next(iter(table.values())).keys(),
            f"{run}: not every run has the same metrics",
        )
        for metric, row in metrics.items():
            number(row["value"], f"{run} {metric}")
            number(row["n_queries"], f"{run} {metric} n_queries", low=1)


def trec_eval_values(stdout: str) -> dict[str, str]:
    """`irpipe trec-eval`'s summary lines (measure, all, value) as {measure: value}."""
    lines = [line.split() for line in stdout.splitlines() if line.strip()]
    require(
        lines and all(len(parts) == 3 and parts[1] == "all" for parts in lines),
        f"not trec_eval output:\n{stdout[:500]}",
    )
    return {measure: value for measure, _, value in lines}


# The cases ---------------------------------------------------------------------------------------


def case_base(case: Case) -> None:
    """irpipe alone: the quickstart's summary has both runs and every metric; `irpipe trec-eval`
    on the same files agrees with it."""
    case.setup(case.ws.irpipe())
    spec = case.spec("quickstart.yaml")
    case.irpipe("run", "quickstart.yaml", "--quiet")
    rows = read_csv(output(case, spec, "aggregate"))
    check_summary(rows, spec, named_metrics(spec))
    for run in spec["runs"]:
        check_trec_eval(case, spec, run, summary_by_run(rows)[run])


def check_trec_eval(case: Case, spec: dict, run: str, summary: dict[str, dict[str, str]]) -> None:
    """`irpipe trec-eval -c` on a run's files: its query count and measures (to its 4 decimals)
    equal the summary's."""
    files = spec["runs"][run]["path"], spec["collections"][spec["runs"][run]["collection"]]["qrels"]
    values = trec_eval_values(case.irpipe("trec-eval", "-c", files[1], files[0]).stdout)
    for measure, label in TREC_EVAL_NAMES.items():
        require(
            label in summary,
            f"{run}: the summary lacks {label}, to compare with trec-eval's {measure}",
        )
        expected = f"{float(summary[label]['value']):.4f}"
        require(
            values.get(measure) == expected,
            f"{run}: trec-eval {measure} {values.get(measure)}, summary {label} {expected}",
        )
    require(
        values.get("num_q") == next(iter(summary.values()))["n_queries"],
        f"{run}: trec-eval num_q differs",
    )


def case_spark(case: Case) -> None:
    """irpipe[spark]: the quickstart on the Spark engine writes the base case's summary exactly."""
    case.setup(case.ws.irpipe("spark"))
    spec = case.spec("quickstart.yaml")
    case.irpipe("run", "quickstart.yaml", "--quiet", "--engine", "spark")
    spark = output(case, spec, "aggregate")
    duckdb = case.ws.work_of("base") / spark.relative_to(case.work)
    mine, theirs = (
        sorted(map(tuple, csv.reader(p.read_text(encoding="utf-8").splitlines())))
        for p in (spark, duckdb)
    )
    differing = sorted(set(mine) ^ set(theirs))[:10]
    require(
        mine == theirs,
        f"the Spark summary differs from the base case's; rows in one only: {differing}",
    )


def case_compare(case: Case) -> None:
    """irpipe[compare]: configs/compare.yaml's table has a p-value and an adjusted one for every
    run against the baseline, every metric and every test; its reports are written."""
    case.setup(case.ws.irpipe("compare"))
    spec = case.spec("compare.yaml")
    case.irpipe("run", "compare.yaml", "--quiet")
    rows = {
        (r["run"], r["metric"], r["test"]): r for r in read_csv(output(case, spec, "comparison"))
    }
    runs = [run for run in spec["runs"] if run != spec["compare"]["baseline"]]
    for key in (
        (r, m, t) for r in runs for m in named_metrics(spec) for t in spec["compare"]["tests"]
    ):
        require(key in rows, f"the comparison table lacks {key}")
        number(rows[key]["p_value"], f"{key} p_value", 0, 1)
        number(rows[key]["p_adjusted"], f"{key} p_adjusted", 0, 1)
    for report in (o["path"] for o in spec["outputs"] if o.get("level") == "report"):
        require((case.work / report).stat().st_size > 0, f"{report} is empty")


#: Run by the plot case's Python: a PNG's size and its grey levels' extrema (equal when blank).
PNG_FACTS = """
import json, sys
from PIL import Image
with Image.open(sys.argv[1]) as image:
    print(json.dumps({"format": image.format, "size": image.size,
                      "extrema": image.convert("L").getextrema()}))
"""


def case_plot(case: Case) -> None:
    """irpipe[plot]: configs/pr_curves.yaml writes its PNG and SVG plots; each opens, and is
    neither tiny nor blank."""
    case.setup(case.ws.irpipe("plot"))
    spec = case.spec("pr_curves.yaml")
    case.irpipe("run", "pr_curves.yaml", "--quiet")
    for suffix in (".png", ".svg"):
        plots = [case.work / o["path"] for o in spec["outputs"] if o["path"].endswith(suffix)]
        require(plots, f"pr_curves.yaml writes no {suffix} plot")
        for plot in plots:
            (check_png if suffix == ".png" else check_svg)(case, plot)


def check_png(case: Case, path: Path) -> None:
    """A PNG that Pillow (installed with matplotlib) opens, at least 200 x 150, not one colour."""
    require(path.is_file(), f"{path.name} was not written")
    facts = case.python_json(PNG_FACTS, path)
    require(facts["format"] == "PNG", f"{path.name} is {facts['format']}, not a PNG")
    require(
        facts["size"][0] >= 200 and facts["size"][1] >= 150,
        f"{path.name} is {facts['size']} pixels",
    )
    low, high = facts["extrema"]
    require(low < high, f"{path.name} is blank: every pixel is grey level {low}")


def check_svg(case: Case, path: Path) -> None:
    """An SVG document that draws at least one path (matplotlib draws its lines as paths)."""
    require(path.is_file(), f"{path.name} was not written")
    root = ET.parse(path).getroot()
    require(root.tag.endswith("svg"), f"{path.name}'s root element is {root.tag}")
    require(any(e.tag.endswith("}path") for e in root.iter()), f"{path.name} draws nothing")


#: Run by the arrays case's Python: the names of a distribution's Python measures.
PYTHON_MEASURES = """
import json, sys
from importlib.metadata import entry_points
from pipeline.api import PythonMeasure
eps = [ep for ep in entry_points(group="irpipe") if ep.dist.name == sys.argv[1]]
print(json.dumps([m.name for ep in eps for m in ep.load().register_metrics()
                  if issubclass(m, PythonMeasure)]))
"""


def case_arrays(case: Case) -> None:
    """irpipe[arrays] and plugins/irpipe-usermodels beside it: a spec naming ERR@10 and the
    plugin's Python measures (numpy over Arrow) evaluates the quickstart's runs, each value in
    [0, 1]."""
    plugin = "irpipe-usermodels"
    case.setup(case.ws.irpipe("arrays"), case.ws.plugins()[plugin])
    python_measures = case.python_json(PYTHON_MEASURES, plugin)
    require(
        python_measures, f"{plugin} registers no Python measure: the arrays extra goes untested"
    )
    labels = ["ERR@10", *python_measures]
    check_plugin_metrics(case, labels, low=0, high=1)


def check_plugin_metrics(
    case: Case, labels: list[str], low: float = -math.inf, high: float = math.inf
) -> None:
    """The quickstart's collections and runs, evaluated with `labels` only: every run has a value
    for each, within [low, high], and irpipe warns of nothing."""
    spec = case.spec("quickstart.yaml")
    spec = {
        **spec,
        "metrics": labels,
        "outputs": [{"path": "out/plugins.csv", "level": "aggregate"}],
    }
    case.irpipe("run", case.write_spec("plugins.yaml", spec), "--quiet")
    rows = read_csv(output(case, spec, "aggregate"))
    check_summary(rows, spec, labels)
    for row in rows:
        number(row["value"], f"{row['run']} {row['metric']}", low, high)


def case_plugins(case: Case) -> None:
    """irpipe and every package under plugins/ together: `irpipe plugins --json` lists each one
    loaded, with at least one metric, none withheld and no error (and irpipe warns of nothing); a
    spec naming all their metrics evaluates."""
    plugins = case.ws.plugins()
    case.setup(case.ws.irpipe(), *plugins.values())
    listed = json.loads(case.irpipe("plugins", "--json").stdout)
    metrics = [metric for name in plugins for metric in plugin_metrics(listed, name)]
    check_plugin_metrics(case, metrics)


def plugin_metrics(listed: list[dict], name: str) -> list[str]:
    """The metrics distribution `name` contributes, as `irpipe plugins --json` lists them: at least
    one, and every entry point of it loaded, without error and with no metric withheld."""
    entries = [e for e in listed if canonical(e["distribution"] or "") == canonical(name)]
    require(entries, f"irpipe plugins --json does not list {name}")
    for entry in entries:
        refused = entry["state"] != "loaded" or entry["error"] or entry.get("withheld")
        require(not refused, f"{name} is refused: {entry}")
    metrics = [metric for entry in entries for metric in entry["metrics"]]
    require(metrics, f"{name} contributes no metric")
    return metrics


#: Run by the floors case's Python: the installed version of each distribution named.
VERSIONS = """
import json, sys
from importlib.metadata import version
print(json.dumps({name: version(name) for name in sys.argv[1:]}))
"""


def case_floors(case: Case) -> None:
    """irpipe[test] with every core dependency at its floor (floors.txt, which must equal
    pyproject.toml's floors): they install as wheels, and the core's tests pass."""
    pins = floor_pins()
    drift = pins_drift(pins, core_floors(pyproject(case.ws.src)))
    require(not drift, "floors.txt and pyproject.toml's floors differ:\n" + "\n".join(drift))
    only_wheels = ("--only-binary", ",".join(pins), "-c", str(FLOORS))
    case.setup(case.ws.irpipe("test"), options=only_wheels)
    installed = case.python_json(VERSIONS, *pins)
    wrong = {name: v for name, v in installed.items() if version_key(v) != version_key(pins[name])}
    require(not wrong, f"installed {wrong}, not the floors {pins}")
    run_floor_tests(case)


def run_floor_tests(case: Case) -> None:
    """The core's tests, in a copy of the tree without pipeline/ (they test the installed wheel),
    in two processes, with no cache written."""
    tree = case.root / "tree"
    shutil.copytree(
        case.ws.src, tree, ignore=lambda d, _: ["pipeline"] if d == str(case.ws.src) else []
    )
    tests = [f"tests/{name}" for name in FLOOR_TESTS]
    pytest = ("-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2", "--dist", "loadfile")
    case.run(case.venv / "bin" / "python", *pytest, *tests, cwd=tree)


#: Every case, by name: an extra's case has the extra's name. Submitted in this order (the longest
#: first; base before spark, which waits for it).
CASES: dict[str, Callable[[Case], None]] = {
    "floors": case_floors,
    "base": case_base,
    "spark": case_spark,
    "arrays": case_arrays,
    "plugins": case_plugins,
    "compare": case_compare,
    "plot": case_plot,
}
#: The cases that are not an extra's.
NOT_EXTRA_CASES = frozenset({"base", "plugins", "floors"})
#: Cases a case needs: spark compares its summary with base's.
NEEDS = {"spark": ("base",)}


# Running them ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """How a case went: seconds, ok, and why not."""

    name: str
    seconds: float
    ok: bool
    message: str = ""
    work: Path | None = None


def attempt(name: str, ws: Workspace) -> Outcome:
    """Run one case; any failure becomes its outcome (a bug in the check too, with its type)."""
    case, start = Case(name, ws), time.monotonic()
    try:
        CASES[name](case)
    except CheckFailed as exc:
        return Outcome(name, time.monotonic() - start, False, str(exc))
    except Exception as exc:  # noqa: BLE001 -- reported as the case's failure
        return Outcome(name, time.monotonic() - start, False, f"{type(exc).__name__}: {exc}")
    finally:
        if not ws.keep:  # pyspark's environment is half a gigabyte
            shutil.rmtree(case.venv, ignore_errors=True)
    return Outcome(name, time.monotonic() - start, True, work=case.work)


def coverage(project: dict) -> Outcome:
    """Every user extra has a case of its name, and every case but base, plugins and floors is an
    extra's (pip installs an unknown extra without a word: its case would test nothing)."""
    extras, cases = set(user_extras(project)), set(CASES) - NOT_EXTRA_CASES
    problems = [
        f"extra {e!r} has no case: add one to {Path(__file__).name} (a function case_{e}, in "
        f"CASES, that installs irpipe[{e}] alone and runs its feature end to end)"
        for e in sorted(extras - cases)
    ]
    problems += [f"case {c!r}: pyproject.toml has no extra {c!r}" for c in sorted(cases - extras)]
    return Outcome("extras", 0.0, not problems, "\n".join(problems))


def copy_tree(ws: Workspace) -> None:
    """Copy the working tree (tracked files and untracked ones git does not ignore) to ws.src."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    for name in listed.stdout.decode().split("\0"):
        if name and (REPO / name).is_file():  # a tracked file deleted in the tree is listed
            (ws.src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, ws.src / name)


def build_wheels(ws: Workspace) -> Outcome:
    """Copy the working tree, make the environment with pip, and build irpipe's wheel and every
    plugin's, once, from the copy (building in place writes build/ and *.egg-info)."""
    start = time.monotonic()
    try:
        copy_tree(ws)
    except (OSError, subprocess.CalledProcessError) as exc:  # not a git checkout, or no git
        return Outcome("wheels", 0.0, False, f"cannot copy the working tree: {exc}")
    plugins = sorted(path.parent for path in ws.src.glob("plugins/*/pyproject.toml"))
    build = ("wheel", *PIP_OPTIONS, "--no-deps", "-w", ws.wheels, ws.src, *plugins)
    for step in ((sys.executable, "-m", "venv", ws.pip.parents[1]), (ws.pip, "-m", "pip", *build)):
        failure = build_step([str(part) for part in step], ws)
        if failure:
            return Outcome("wheels", time.monotonic() - start, False, failure)
    return Outcome("wheels", time.monotonic() - start, True)


def build_step(command: list[str], ws: Workspace) -> str:
    """Run one command of the build, logged in wheels.log; why it failed, or ''."""
    result = run_logged(command, ws.logs / "wheels.log", ws.root, clean_env(ws.pip.parents[1]))
    return f"`{' '.join(command[1:4])} ...` exited {result.returncode}" if result.returncode else ""


def run_cases(ws: Workspace, names: list[str], jobs: int) -> list[Outcome]:
    """Run the cases `names` in `jobs` threads (each case's commands are processes)."""
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        for name in names:
            ws.outcomes[name] = pool.submit(attempt, name, ws)
        return [ws.outcomes[name].result() for name in names]


def selected(requested: list[str]) -> list[str]:
    """The cases to run, in CASES's order: those requested (all by default) and those they need."""
    unknown = sorted(set(requested) - set(CASES))
    if unknown:
        sys.exit(f"unknown cases {unknown}; the cases are {list(CASES)}")
    wanted = set(requested or CASES)
    wanted |= {need for name in wanted for need in NEEDS.get(name, ())}
    return [name for name in CASES if name in wanted]


def report(outcomes: list[Outcome], logs: Path) -> None:
    """The table: case, seconds, ok/FAILED; under a failure, its message and its log's tail."""
    print(f"{'case':<10} {'seconds':>8}  result")
    for outcome in outcomes:
        print(f"{outcome.name:<10} {outcome.seconds:>8.1f}  {'ok' if outcome.ok else 'FAILED'}")
    for outcome in (o for o in outcomes if not o.ok):
        print(f"\n--- {outcome.name} FAILED: {outcome.message}")
        log = logs / f"{outcome.name}.log"
        if log.is_file():
            tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL:]
            print(f"--- the last {len(tail)} lines of {log}:", *tail, sep="\n")


def main(argv: list[str] | None = None) -> int:
    """Check; 0 if every case passed, else 1."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "cases", nargs="*", metavar="CASE", help=f"only these (default: all of {', '.join(CASES)})"
    )
    parser.add_argument("--jobs", type=int, default=3, help="cases run at once (default: 3)")
    parser.add_argument("--keep", action="store_true", help="keep the environments and logs")
    args = parser.parse_args(argv)
    return 0 if check(selected(args.cases), args.jobs, args.keep) else 1


def check(names: list[str], jobs: int, keep: bool) -> bool:
    """Build the wheels and run the cases in temporary directories, report, clean up; True if
    every case passed."""
    root, logs = (Path(tempfile.mkdtemp(prefix=f"irpipe-install{x}-")) for x in ("", "-logs"))
    ws = Workspace(root, logs, {}, keep)
    try:
        outcomes = [coverage(pyproject()), built := build_wheels(ws)]
        outcomes += run_cases(ws, names, jobs) if built.ok else []
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    report(outcomes, logs)
    return conclude(all(outcome.ok for outcome in outcomes), ws)


def conclude(ok: bool, ws: Workspace) -> bool:
    """Print the verdict and what is kept: the logs if a case failed, all with --keep (else the
    logs are removed). Returns `ok`."""
    kept = [f"logs in {ws.logs}"] if not ok or ws.keep else []
    kept += [f"environments in {ws.root}"] if ws.keep else []
    if not kept:
        shutil.rmtree(ws.logs)
    print("\n" + "; ".join(["all ok" if ok else "FAILED", *kept]))
    return ok


if __name__ == "__main__":
    sys.exit(main())
