"""The install check's cases: one function a case, each installing what its case names in a new
virtual environment and running its feature end to end, and CASES, which check.py runs.

An extra's case has the extra's name; check.py fails if an extra of pyproject.toml has none.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from outputs import (
    check_summary,
    named_metrics,
    number,
    output,
    read_csv,
    summary_by_run,
    trec_eval_values,
)
from support import (
    FLOORS,
    Case,
    canonical,
    core_floors,
    floor_pins,
    pins_drift,
    pyproject,
    require,
    version_key,
)

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


def case_dashboard(case: Case) -> None:
    """irpipe[dashboard]: two evaluations of the quickstart write the spec's dashboard, which
    `irpipe dashboard` writes again byte for byte; Chromium, headless, draws its charts."""
    case.setup(case.ws.irpipe("dashboard"))
    spec = case.spec("quickstart.yaml")
    spec["history"] = {"path": "results/history.duckdb", "dashboard": "results/site"}
    name = case.write_spec("dashboard.yaml", spec)
    for _ in range(2):
        case.irpipe("run", name, "--quiet")
    site = case.work / "results" / "site"
    pages = ["index.html", "evaluations/1.html", "evaluations/2.html", "assets/vega.js"]
    require(all((site / page).is_file() for page in pages), f"the dashboard lacks one of {pages}")
    case.irpipe("dashboard", "results/history.duckdb", "--out", "again")
    for path in site.rglob("*"):
        again = case.work / "again" / path.relative_to(site)
        require(path.is_dir() or again.read_bytes() == path.read_bytes(), f"{path.name} differs")
    chromium = shutil.which("chromium")
    require(chromium, "no chromium to open the dashboard in (apt-get install chromium)")
    dom = case.run(chromium, *HEADLESS, (site / "index.html").as_uri()).stdout
    require('data-ready="true"' in dom, "the index page's script did not finish in Chromium")
    require(dom.count("<svg") >= len(spec["metrics"]), "Chromium drew fewer charts than metrics")


#: Chromium's own headless mode: the page's DOM once its scripts have run (no network at all),
#: in a window tall enough for every chart to be on screen (a chart is drawn when it comes near).
HEADLESS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--window-size=1280,8000", "--virtual-time-budget=10000", "--dump-dom")  # fmt: skip


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
    """irpipe[arrays] and plugins/irpipe-usermodels beside it: a spec naming usermodels.ERR@10 and the
    plugin's Python measures (numpy over Arrow) evaluates the quickstart's runs, each value in
    [0, 1]."""
    plugin = "irpipe-usermodels"
    case.setup(case.ws.irpipe("arrays"), case.ws.plugins()[plugin])
    python_measures = case.python_json(PYTHON_MEASURES, plugin)
    require(
        python_measures, f"{plugin} registers no Python measure: the arrays extra goes untested"
    )
    labels = ["usermodels.ERR@10", *python_measures]
    check_plugin_metrics(case, labels, low=0, high=1)


NOTEBOOK = """
import json
import pandas as pd
from pipeline import evaluate
ids = {"qid": str, "docno": str}
qrels = pd.read_csv("data/qrels.txt", sep=" ", names=["qid", "iter", "docno", "rel"], dtype=ids)
runs = {n: pd.read_csv(f"data/{n}.trec", sep=" ", names=["qid", "Q0", "docno", "rank", "score",
        "tag"], dtype=ids) for n in ("bm25", "dense")}
metrics = ["AP", "nDCG@10", "P@10"]
frames = evaluate(qrels=qrels, runs=runs, metrics=metrics)
files = evaluate(qrels="data/qrels.txt", runs={n: f"data/{n}.trec" for n in runs}, metrics=metrics)
from pipeline.pyterrier import Experiment  # result frames: no PyTerrier installed
topics = pd.DataFrame({"qid": qrels.qid.unique(), "query": ""})
labels = qrels.rename(columns={"rel": "label"})
experiment = Experiment(runs, topics, labels, ["map", "P_10"])
print(json.dumps({"frames": frames.aggregate().values.tolist(),
                  "files": files.aggregate().values.tolist(),
                  "experiment": experiment.values.tolist(),
                  "spec": str(frames.to_spec("from_notebook"))}))
"""


def case_notebook(case: Case) -> None:
    """irpipe[notebook]: the quickstart's files read into pandas frames evaluate, through the
    Python door, to the values of the same files; its to_spec writes a spec `irpipe run` takes."""
    case.setup(case.ws.irpipe("notebook"))
    found = case.python_json(NOTEBOOK)
    require(found["frames"] == found["files"], f"frames and files differ: {found}")
    case.irpipe("run", found["spec"], "--quiet")
    names = [row[0] for row in found["experiment"]]
    require(names == ["bm25", "dense"], f"Experiment without PyTerrier: {found['experiment']}")


PYTERRIER = """
import json
import ir_measures
import pandas as pd
import pyterrier as pt
from pipeline import ir_measures as irpipe_measures
from pipeline.pyterrier import Experiment
ids = {"qid": str, "docno": str}
qrels = pd.read_csv("data/qrels.txt", sep=" ", names=["qid", "iter", "docno", "label"], dtype=ids)
runs = {n: pd.read_csv(f"data/{n}.trec", sep=" ", names=["qid", "Q0", "docno", "rank", "score",
        "tag"], dtype=ids) for n in ("bm25", "dense")}
topics = pd.DataFrame({"qid": qrels.qid.unique(), "query": ""})
ranked = {n: pt.Transformer.from_df(frame) for n, frame in runs.items()}
options = {"eval_metrics": ["map", "ndcg_cut_10"], "baseline": 0, "correction": "holm"}
ours = Experiment(ranked, topics, qrels, **options)
theirs = pt.Experiment(ranked, topics, qrels, **options)
irpipe_measures.install()
through = pt.Experiment(ranked, topics, qrels, **options)
print(json.dumps({"ours": ours[theirs.columns].fillna(-1).values.tolist(),
                  "theirs": theirs.fillna(-1).values.tolist(),
                  "through": through[theirs.columns].fillna(-1).values.tolist()}))
"""


def case_pyterrier(case: Case) -> None:
    """irpipe[pyterrier]: `Experiment` on PyTerrier transformers gives pt.Experiment's frame (its
    values to 1e-12), and pt.Experiment through irpipe's installed ir_measures provider too."""
    case.setup(case.ws.irpipe("pyterrier"))
    found = case.python_json(PYTERRIER)
    for other in ("ours", "through"):
        for mine, theirs in zip(found[other], found["theirs"], strict=True):
            same = [a == b or (isinstance(a, float) and abs(a - b) <= 1e-12)
                    for a, b in zip(mine, theirs, strict=True)]  # fmt: skip
            require(all(same), f"{other}: {mine} against pt.Experiment's {theirs}")


IRDS = """
import json, os, sys
cache = os.path.join(sys.argv[1], "msmarco-passage", "trec-dl-2019")
os.makedirs(cache)
with open("data/qrels.txt", "rb") as source, open(os.path.join(cache, "qrels"), "wb") as target:
    target.write(source.read())  # the cache as ir_datasets keeps a real id's qrels: no download
os.environ["IR_DATASETS_HOME"] = sys.argv[1]
from pipeline import evaluate
metrics = ["AP", "nDCG@10", "P@10"]
runs = {"bm25": "data/bm25.trec"}
ids = evaluate(qrels="irds:msmarco-passage/trec-dl-2019/judged", runs=runs, metrics=metrics)
files = evaluate(qrels="data/qrels.txt", runs=runs, metrics=metrics)
print(json.dumps({"ids": ids.aggregate().values.tolist(),
                  "files": files.aggregate().values.tolist()}))
"""


def case_irds(case: Case) -> None:
    """irpipe[irds] (with pandas, for the results' frames): a real ir_datasets id whose qrels are
    in ir_datasets' cache evaluates to the values of the same qrels file, offline."""
    case.setup(case.ws.irpipe("irds"), "pandas")
    found = case.python_json(IRDS, case.root / "ir_datasets")
    require(found["ids"] == found["files"], f"the id and the file differ: {found}")


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
    "notebook": case_notebook,
    "pyterrier": case_pyterrier,
    "irds": case_irds,
    "plugins": case_plugins,
    "compare": case_compare,
    "plot": case_plot,
    "dashboard": case_dashboard,
}
#: The cases that are not an extra's.
NOT_EXTRA_CASES = frozenset({"base", "plugins", "floors"})
#: Cases a case needs: spark compares its summary with base's.
NEEDS = {"spark": ("base",)}
