"""The plugin package plugins/irpipe-usermodels, installed as a user installs it: into a venv of its
own, where its tests pass and `irpipe run` evaluates its metrics as ir_measures does.

The venv sees this environment's packages (irpipe, numpy, pyarrow, pytest, ir_measures), so the
install is offline and fast: `pip install --no-deps --no-build-isolation` of a copy of the package
(building in place would leave build/ and egg-info in the repository). ir_measures' ERR runs
gdeval.pl with perl, which every Debian has (perl-base is essential).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import ir_measures
import pytest
from ir_measures import ERR, Compat, Judged

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "irpipe-usermodels"

# Query 1: unjudged documents, a negative grade, grades 0-4; query 2 has no relevant document;
# query 3 is missing from the run; query 9 is only in the run. Scores are distinct and positive,
# where ir_measures' Judged and Compat order documents as irpipe does.
QRELS = {
    "1": {"a": 4, "b": 2, "c": -1, "d": 0, "e": 1, "f": 3, "g": 1},
    "2": {"x": 0, "y": -2},
    "3": {"z": 2},
}
RUN = {
    "1": {"u1": 9.5, "b": 8.25, "a": 7.0, "c": 6.5, "u2": 5.0, "e": 4.0, "d": 3.5, "g": 1.25},
    "2": {"x": 2.0, "w": 1.0},
    "9": {"a": 1.0},
}
METRICS = {"usermodels.ERR@20": ERR @ 20, "Compat(p=0.8)": Compat(p=0.8), "Judged@10": Judged @ 10}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A venv with the plugin installed, seeing this environment's packages."""
    return _venv_with(tmp_path_factory.mktemp("usermodels"), [PLUGIN])


def _venv_with(root: Path, packages: list[Path]) -> Path:
    """A venv in `root` seeing this environment's packages, with copies of `packages` installed
    (offline, without their dependencies: this environment has them)."""
    env = root / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env)],
        check=True,
    )
    _see_this_environment(env / "bin" / "python")
    sources = [
        shutil.copytree(path, root / path.name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        for path in packages
    ]  # fmt: skip
    pip = ["-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
    _run(env, [*pip, *map(str, sources)])
    return env


def _see_this_environment(python: Path) -> None:
    """--system-site-packages gives the base interpreter's packages, not this venv's: a .pth
    file adds this environment's site directories (their .pth files too: editable installs)."""
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    line = "import site; " + "; ".join(f"site.addsitedir({d!r})" for d in dirs)
    (Path(purelib) / "irpipe_test_environment.pth").write_text(line + "\n", encoding="utf-8")


def _run(
    env: Path, args: list[str], cwd: Path | None = None, load: str | None = "usermodels"
) -> str:
    """Run the venv's python with args (only the plugins `load` names load; with None, every
    installed one); its output, or fail with it. A warning on stderr fails too."""
    environ = {k: v for k, v in os.environ.items() if k != "IRPIPE_LOAD_PLUGINS"}
    environ |= {} if load is None else {"IRPIPE_LOAD_PLUGINS": load}
    done = subprocess.run(
        [env / "bin" / "python", *args], cwd=cwd, env=environ, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not re.search(r"^(irpipe: |Warning: )", done.stderr, re.MULTILINE), done.stderr
    return done.stdout


def test_the_plugins_own_tests_pass(venv):
    tests = venv.parent / PLUGIN.name / "tests"
    output = _run(venv, ["-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)], tests.parent)
    assert " passed" in output and "skipped" not in output


def test_irpipe_run_gives_ir_measures_values(venv, tmp_path):
    """The metrics resolve through the installed entry point (nothing else registers them)."""
    values = _irpipe_run(venv, tmp_path)
    theirs = {
        (m.query_id, name): m.value
        for name, measure in METRICS.items()
        for m in ir_measures.iter_calc([measure], QRELS, RUN)
    }
    assert set(values) == set(theirs) == {(q, m) for q in QRELS for m in METRICS}
    for (qid, metric), value in values.items():
        if (
            metric == "usermodels.ERR@20"
        ):  # gdeval.pl prints 5 decimals; irpipe keeps the exact value
            assert abs(value - theirs[qid, metric]) <= 5e-6 + 1e-12, (qid, metric)
        else:
            assert value == theirs[qid, metric], (qid, metric)
    assert values["1", "usermodels.ERR@20"] != theirs["1", "usermodels.ERR@20"]  # unrounded, not 0


def test_every_shipped_plugin_installs_beside_the_others(tmp_path_factory, tmp_path):
    """Every package under plugins/ in one venv: each loads, none is withheld, and every metric
    of each evaluates (Judged counts the negative grade of query 1's `c`; Assessed does not)."""
    packages = sorted(p for p in PLUGIN.parent.iterdir() if (p / "pyproject.toml").exists())
    env = _venv_with(tmp_path_factory.mktemp("every_plugin"), packages)
    rows = json.loads(_run(env, [_irpipe_script(), "plugins", "--json"], load=None))
    shipped = [row for row in rows if row["distribution"] in {p.name for p in packages}]
    assert {row["distribution"] for row in shipped} == {p.name for p in packages}
    assert all(row["state"] == "loaded" and not row["withheld"] for row in shipped), shipped
    metrics = {m: None for row in shipped for m in row["metrics"]}
    assert {"usermodels.ERR", "Compat", "Judged", "Assessed"} <= set(metrics)
    cutoffs = {
        "usermodels.ERR": "usermodels.ERR@10",
        "Judged": "Judged@10",
        "Assessed": "Assessed@10",
    }
    values = _irpipe_run(env, tmp_path, [cutoffs.get(m, m) for m in metrics], load=None)
    assert (values["1", "Judged@10"], values["1", "Assessed@10"]) == (6 / 8, 5 / 8)
    assert {metric for _, metric in values} == {cutoffs.get(m, m) for m in metrics}


def _irpipe_run(
    venv: Path,
    directory: Path,
    metrics: tuple[str, ...] = tuple(METRICS),
    load: str | None = "usermodels",
) -> dict[tuple[str, str], float]:
    """Evaluate RUN with `metrics` by `irpipe run` in the venv; {(qid, metric): value}."""
    lines = [f"{q} 0 {d} {g}" for q, docs in QRELS.items() for d, g in docs.items()]
    (directory / "qrels.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = [f"{q} Q0 {d} 0 {s!r} t" for q, docs in RUN.items() for d, s in docs.items()]
    (directory / "run.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": list(metrics),
        "outputs": [{"path": "per_query.csv", "level": "query"}],
    }
    (directory / "spec.yaml").write_text(json.dumps(spec), encoding="utf-8")  # JSON is YAML
    _run(venv, [_irpipe_script(), "run", "--quiet", "spec.yaml"], directory, load)
    with open(directory / "per_query.csv", encoding="utf-8") as rows:
        return {(row["qid"], row["metric"]): float(row["value"]) for row in csv.DictReader(rows)}


def _irpipe_script() -> str:
    """The `irpipe` command installed with irpipe here; the venv's python runs it."""
    script = shutil.which("irpipe", path=str(Path(sys.executable).parent))
    assert script, f"irpipe is not installed beside {sys.executable}"
    return script
