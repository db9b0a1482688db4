"""Shared fixtures: a clean plugin environment, the command line run in the test's process, and
helpers that write specs and TREC files."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

# Plugins installed on the machine must never change test results.
os.environ["IRPIPE_LOAD_PLUGINS"] = ""
# The processes the tests start (the CLI, mostly) run as an installed irpipe does, from bytecode:
# where the environment forbids writing it, each would compile every module of irpipe again.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# The cache of installed entry points (pipeline.entry_points): the tests' own, not the user's.
os.environ.setdefault("IRPIPE_CACHE_DIR", tempfile.mkdtemp(prefix="irpipe-cache-"))


class Outcome(NamedTuple):
    """What a command left: its exit code, stdout and stderr (named as a CompletedProcess's)."""

    returncode: int
    stdout: str
    stderr: str


def irpipe_inprocess(*args: object, cwd: Path | str | None = None, **env: str) -> Outcome:
    """`irpipe ARGS` run by `pipeline.cli.main` in this process, as pytest's
    `runpytest_inprocess` runs pytest: stdout and stderr captured, in `cwd` (if given) with `env`
    set, both restored afterwards. An argparse error's SystemExit becomes its exit code. Start a
    subprocess instead only where the process itself is under test (signals, start-up, imports,
    closed pipes, installed plugins, environment read at start-up)."""
    from pipeline.cli import main

    out, err = _pipe(), _pipe()
    with (
        _environment(env),
        contextlib.chdir(cwd or os.getcwd()),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as exc:  # argparse: --help, or a usage error
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return Outcome(code, _text(out), _text(err))


def _pipe() -> io.TextIOWrapper:
    """A text stream like a pipe's: UTF-8, no terminal, with a `.buffer` of bytes."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8")


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """`env` over os.environ (tables 200 columns wide, as the subprocesses had), then restored."""
    before = dict(os.environ)
    os.environ.update({"COLUMNS": "200", **env})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture
def write_spec(tmp_path: Path):
    """Write a spec dict as YAML in tmp_path and return its path."""

    def write(spec: dict, name: str = "spec.yaml") -> Path:
        return yaml_file(tmp_path / name, spec)

    return write


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every directory (None) under `directory`, by relative path: what a
    refused command must leave exactly as it was."""
    return {
        str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None
        for p in sorted(directory.rglob("*"))
    }


def trec_files(tmp_path: Path, qrels: str, run: str) -> tuple[Path, Path]:
    """Write inline qrels and run text to files."""
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text(_dedent(qrels), encoding="utf-8")
    r.write_text(_dedent(run), encoding="utf-8")
    return q, r


def _dedent(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().splitlines()) + "\n"


@pytest.fixture
def evaluate_trec(tmp_path: Path, write_spec):
    """Evaluate inline qrels and run text with metrics; return (per_query, aggregate) dicts.

    per_query[(qid, metric)] = value and aggregate[metric] = (value, n_queries), for one run.
    """
    from pipeline.run.evaluation import evaluate

    def run(qrels: str, run_text: str, metrics: list, settings: dict | None = None, **collection):
        trec_files(tmp_path, qrels, run_text)
        spec = {
            "collections": {"c": {"qrels": "qrels.txt", **collection}},
            "runs": {"r": {"path": "run.txt", "collection": "c"}},
            "settings": settings or {},
            "metrics": metrics,
        }
        evaluation = evaluate(write_spec(spec), write=False)
        per_query = {(q, m): v for _, _, q, m, v in evaluation.per_query()}
        aggregate = {m: (v, n) for _, _, m, v, n in evaluation.aggregate()}
        return per_query, aggregate

    return run


def ranking(qid: str, relevant_ranks: set[int], depth: int, prefix: str = "d") -> tuple[str, str]:
    """qrels and run text for one query whose relevant documents sit at the given ranks."""
    run = [f"{qid} Q0 {prefix}{qid}_{i} {i} {1000 - i} sys" for i in range(1, depth + 1)]
    qrels = [f"{qid} 0 {prefix}{qid}_{i} {int(i in relevant_ranks)}" for i in range(1, depth + 1)]
    return "\n".join(qrels), "\n".join(run)


def fake_distribution(root: Path, name: str, entry_points: dict[str, str], **modules: str) -> Path:
    """A distribution as pip leaves it (a `.dist-info` with metadata and entry points, and its
    modules' source) in `root`; importlib.metadata finds it once `root` is on the path, and
    nothing is installed. Returns `root`."""
    root.mkdir(parents=True, exist_ok=True)
    info = root / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = [f"{key} = {value}" for key, value in entry_points.items()]
    (info / "entry_points.txt").write_text("[irpipe]\n" + "\n".join(lines) + "\n")
    for module, source in modules.items():
        (root / f"{module}.py").write_text(source, encoding="utf-8")
    return root


SCALED_PLUGIN = """
from pipeline.api import Measure, hookimpl


class Scaled(Measure):
    name = "Scaled"
    description = "the number of documents retrieved, scaled"
    aggregator = "mean"

    def needs(self, p, c):
        return ()

    def per_query(self, p, c):
        return "count(*) * FACTOR"

    def missing(self, p, c):
        return "0.0"


@hookimpl
def register_metrics():
    return [Scaled]
"""


def install_scaled_plugin(root: Path, version: str, factor: str = "2.0") -> None:
    """The plugin `irpipe-scaled` (metric Scaled: documents retrieved times `factor`) in `root`
    as pip leaves a distribution at `version`, replacing any other version there."""
    import shutil

    for old in root.glob("*.dist-info"):
        shutil.rmtree(old)
    info = root / f"irpipe_scaled-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: irpipe-scaled\nVersion: {version}\n"
    )
    (info / "entry_points.txt").write_text("[irpipe]\nscaled = irpipe_scaled\n")
    source = SCALED_PLUGIN.replace("FACTOR", factor)
    (root / "irpipe_scaled.py").write_text(source, encoding="utf-8")


def evaluate_with_plugin(root: Path, spec: Path) -> str:
    """Evaluate `spec` in a process where `root` (a plugin's distribution) is importable; the
    number of runs the history reused."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from pipeline import evaluate; "
        "e = evaluate(sys.argv[2], write=False); print(len(e.evaluation.keeper.reused))"
    )
    env = {**os.environ, "IRPIPE_LOAD_PLUGINS": "scaled"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(root), str(spec)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def spec_of_runs(
    runs: Iterable[str],
    metrics: list,
    suffix: str = ".txt",
    qrels: str = "qrels.txt",
    collection: dict | None = None,
    **more,
) -> dict:
    """The tests' one spec builder: a spec (as a dict) of one collection `c` (qrels `qrels`,
    and the keys of `collection`: num_docs, format...) whose runs are the files
    `<name><suffix>` beside the spec, evaluated with `metrics`; `more` adds top-level keys
    (settings, outputs, history...)."""
    return {
        "collections": {"c": {"qrels": qrels, **(collection or {})}},
        "runs": {name: {"path": f"{name}{suffix}", "collection": "c"} for name in runs},
        "metrics": metrics,
        **more,
    }


def yaml_file(path: Path, spec: dict) -> Path:
    """`spec` written as YAML (keys in their order) at `path`; the path."""
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def collection_spec(directory: Path, data, metrics: list, suffix: str = ".txt", **more) -> dict:
    """A spec (as a dict, `spec_of_runs`) over a generated collection
    (`pipeline.synthetic.generate`), written into `directory`: qrels.txt, each run as
    <name><suffix>; `more` adds keys."""
    from pipeline.synthetic import write_qrels, write_run

    write_qrels(data.qrels, directory / "qrels.txt")
    for name, run in data.runs.items():
        write_run(run, directory / f"{name}{suffix}")
    return spec_of_runs(data.runs, metrics, suffix, **more)


def deep_collection(directory: Path, queries: int, depth: int, runs: int) -> None:
    """qrels.txt and run0.txt, run1.txt, ... in `directory`: grades 0-3 and negative judgments,
    judged and unjudged documents in rankings `depth` deep (deep enough for DuckDB to split a
    query's rows between threads), scores printed with two decimals (ties), a query each run
    lacks, a run-only query."""
    import random

    rng = random.Random(40)
    lines = []
    for q in range(queries):
        for d in rng.sample(range(3 * depth), 300):
            lines.append(f"{q} 0 D{d} {rng.choice([0, 0, 1, 2, 3, -1])}\n")
    (directory / "qrels.txt").write_text("".join(lines), encoding="utf-8")
    for r in range(runs):
        lines = []
        for q in [*(q for q in range(queries) if q != r), 99]:
            for i, d in enumerate(rng.sample(range(3 * depth), depth)):
                lines.append(f"{q} Q0 D{d} {i + 1} {round(rng.uniform(0, 30), 2)} run{r}\n")
        (directory / f"run{r}.txt").write_text("".join(lines), encoding="utf-8")


@pytest.fixture(scope="session")
def spark():
    """One local Spark (two cores) for every Spark test: starting one takes 20 s here. Without
    Java the session cannot start, and the tests that need it fail (never skip)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from pipeline.engines.spark.session import quiet

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("irpipe-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # The tests' jobs are small and many: the JVM's first compiler tier alone and one GC
        # thread halve its CPU time (87 s to 40 s for test_engine_spark.py and
        # test_spark_inputs.py), CPU the other worker needs; no value depends on either.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    )
    with quiet():
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for a dashboard test file (Debian's, which .ci/run installs), driven by
    Playwright; pages are opened with `dashboard_support.Opened`. Without it the tests that need
    it fail (never skip)."""
    from dashboard_support import CHROMIUM, FLAGS
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), "Debian's chromium is needed (apt-get install chromium; .ci/run does)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield browser
        browser.close()
