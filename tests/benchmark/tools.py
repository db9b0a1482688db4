"""The measure sets, and how each tool is run on them: TREC text in, numbers out.

Every tool's numbers are returned under trec_eval's output names (map, P_10, ...), so they compare
directly. A tool that lacks a measure has None in its column and is simply not asked for it.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import shlex
import shutil
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = [
    "FIVE",
    "OFFICIAL",
    "SUITES",
    "Metric",
    "Suite",
    "Tool",
    "make_tools",
    "Values",
    "missing",
    "read_summary",
    "run_name",
    "write_spec",
]

HERE = Path(__file__).resolve().parent
RUNNERS = HERE / "runners"


@dataclass(frozen=True)
class Metric:
    """One measure as trec_eval prints it, and its name in each other tool (None: not available)."""

    trec: str
    irpipe: str | None
    ir_measures: str | None
    ranx: str | None


@dataclass(frozen=True)
class Suite:
    """A measure set: the metrics, trec_eval's -m flags (none: its default set) and pytrec_eval's."""

    name: str
    metrics: tuple[Metric, ...]
    trec_eval_flags: tuple[str, ...]
    pytrec_eval: tuple[str, ...]


FIVE = Suite(
    "five",
    (
        Metric("map", "AP", "AP", "map"),
        Metric("P_10", "P@10", "P@10", "precision@10"),
        Metric("recall_100", "R@100", "R@100", "recall@100"),
        Metric("recip_rank", "RR", "RR", "mrr"),
        Metric("ndcg_cut_10", "nDCG@10", "nDCG@10", "ndcg@10"),
    ),
    ("-m", "map", "-m", "P.10", "-m", "recall.100", "-m", "recip_rank", "-m", "ndcg_cut.10"),
    ("map", "P.10", "recall.100", "recip_rank", "ndcg_cut.10"),
)

_RECALLS = [i / 10 for i in range(11)]
_CUTOFFS = [5, 10, 15, 20, 30, 100, 200, 500, 1000]

# ---- EXTEND HERE -------------------------------------------------------------------------------
# trec_eval's default (`official`) output, every measure and cutoff, and each tool's name for it.
# irpipe names gm_map by its trec_eval name (gmAP); ir_measures and ranx have no geometric mean.
OFFICIAL_METRICS = (
    Metric("num_ret", "NumRet", "NumRet", None),
    Metric("num_rel", "NumRel", "NumRel", None),
    Metric("num_rel_ret", "NumRelRet", "NumRelRet", None),
    Metric("map", "AP", "AP", "map"),
    Metric("gm_map", "gm_map", None, None),
    Metric("Rprec", "Rprec", "Rprec", "r-precision"),
    Metric("bpref", "Bpref", "Bpref", "bpref"),
    Metric("recip_rank", "RR", "RR", "mrr"),
    *(Metric(f"iprec_at_recall_{r:.2f}", f"IPrec@{r}", f"IPrec@{r}", None) for r in _RECALLS),
    *(Metric(f"P_{k}", f"P@{k}", f"P@{k}", f"precision@{k}") for k in _CUTOFFS),
)
# -------------------------------------------------------------------------------------------------

OFFICIAL = Suite(
    "official",
    OFFICIAL_METRICS,
    (),
    ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank")
    + ("iprec_at_recall", "P"),
)
SUITES = {suite.name: suite for suite in (FIVE, OFFICIAL)}


def missing(suite: Suite, tool: str) -> list[str]:
    """trec_eval names of the suite's measures the tool cannot compute."""
    if tool in ("trec_eval", "pytrec_eval"):
        return []
    return [m.trec for m in suite.metrics if getattr(m, tool) is None]


def run_name(path: Path) -> str:
    """A run's name in every table: a TREC submission `input.<tag>` by its tag, else the file stem.

    The stem of `input.tag` is `input` for every submission, so it cannot name them.
    """
    return path.name.removeprefix("input.") if path.name.startswith("input.") else path.stem


def write_spec(path: Path, qrels: Path, runs: list[Path], metrics: list[str], out: Path) -> Path:
    """An irpipe spec: one collection, one entry per run, the metrics, per-query parquet, summary csv."""
    names = {run_name(run): run for run in runs}
    if len(names) < len(runs):  # a dict would keep one of them silently
        raise ValueError(f"runs with the same name among {[str(run) for run in runs]}")
    spec = {
        "collections": {"c": {"qrels": str(qrels)}},
        "runs": {name: {"path": str(run), "collection": "c"} for name, run in names.items()},
        "metrics": metrics,
        "outputs": [
            {"path": str(out / "per_query.parquet"), "level": "query"},
            {"path": str(out / "summary.csv"), "level": "aggregate"},
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


# Each tool's numbers for several runs: {run name: {trec_eval name: value}}.
Values = dict[str, dict[str, float]]


class Tool(ABC):
    """A tool the benchmark runs: its command for a suite, and how to read its numbers back."""

    name = ""
    module: str | None = None  # the Python package it needs, if any

    def unavailable(self) -> str | None:
        """Why this tool cannot run here, or None."""
        if self.module and importlib.util.find_spec(self.module) is None:
            return f"{self.module} is not installed (pip install '.[bench]')"
        return None

    @abstractmethod
    def command(self, suite: Suite, qrels: Path, runs: list[Path], work: Path) -> list[str]:
        """One command evaluating all `runs` with the suite's measures; it writes into `work`."""

    @abstractmethod
    def results(self, suite: Suite, runs: list[Path], work: Path, log: Path) -> Values:
        """The numbers the command produced, by run name, under trec_eval's names."""


class Irpipe(Tool):
    """`irpipe run SPEC`, the console script users run: one spec lists every run."""

    name = "irpipe"

    def command(self, suite: Suite, qrels: Path, runs: list[Path], work: Path) -> list[str]:
        metrics = [m.irpipe for m in suite.metrics if m.irpipe]
        spec = write_spec(work / "spec.yaml", qrels, runs, metrics, work / "out")
        return [irpipe_executable(), "run", str(spec)]

    def results(self, suite: Suite, runs: list[Path], work: Path, log: Path) -> Values:
        return read_summary(suite, work / "out" / "summary.csv")


# trec_eval as users run it on many runs: one process per run, in a shell loop, each run's output
# in a file of its own. $1 is the output directory, $2 the qrels, the rest are the runs.
_LOOP = 'out=$1; qrels=$2; shift 2; for run; do {} "$qrels" "$run" > "$out/${{run##*/}}.txt" || exit; done'


class TrecEval(Tool):
    """The trec_eval binary: on one run, its stdout (`name all value` lines) is the result."""

    name = "trec_eval"

    def __init__(self, binary: str | None) -> None:
        self.binary = binary

    def unavailable(self) -> str | None:
        if self.binary:
            return None
        return (
            "no trec_eval on PATH: git clone https://github.com/usnistgov/trec_eval && "
            "make -C trec_eval, then put it on PATH or pass --trec-eval PATH"
        )

    def command(self, suite: Suite, qrels: Path, runs: list[Path], work: Path) -> list[str]:
        evaluate = [self.binary, *suite.trec_eval_flags]
        if len(runs) == 1:
            return [*evaluate, str(qrels), str(runs[0])]
        work.mkdir(parents=True, exist_ok=True)
        loop = _LOOP.format(" ".join(map(shlex.quote, evaluate)))
        return ["bash", "-c", loop, "bash", str(work), str(qrels), *map(str, runs)]

    def results(self, suite: Suite, runs: list[Path], work: Path, log: Path) -> Values:
        if len(runs) == 1:
            return {run_name(runs[0]): _trec_eval_values(log)}
        return {run_name(run): _trec_eval_values(work / f"{run.name}.txt") for run in runs}


def _trec_eval_values(path: Path) -> dict[str, float]:
    fields = (line.split() for line in path.read_text().splitlines())
    return {f[0]: float(f[2]) for f in fields if len(f) == 3 and f[0] != "runid"}


class Runner(Tool):
    """A Python library driven by runners/<name>_eval.py: all runs in one process, JSON out."""

    def __init__(self, name: str, module: str) -> None:
        self.name, self.module = name, module

    def names(self, suite: Suite) -> list[str]:
        """The measure names this library is asked for."""
        if self.name == "pytrec_eval":
            return list(suite.pytrec_eval)
        return [getattr(m, self.name) for m in suite.metrics if getattr(m, self.name)]

    def command(self, suite: Suite, qrels: Path, runs: list[Path], work: Path) -> list[str]:
        script = str(RUNNERS / f"{self.name}_eval.py")
        out = str(work / "result.json")
        runs_given = ["--runs", *map(str, runs)]
        return [
            sys.executable,
            script,
            str(qrels),
            out,
            *runs_given,
            "--measures",
            *self.names(suite),
        ]

    def results(self, suite: Suite, runs: list[Path], work: Path, log: Path) -> Values:
        raw = json.loads((work / "result.json").read_text())
        trec = {}  # pytrec_eval's names are already trec_eval's
        if self.name != "pytrec_eval":
            trec = {getattr(m, self.name): m.trec for m in suite.metrics}
        return {
            run_name(run): {trec.get(k, k): v for k, v in raw[str(run)].items()} for run in runs
        }


def read_summary(suite: Suite, path: Path) -> Values:
    """irpipe's aggregate csv under trec_eval's names, by run; num_q from n_queries."""
    trec = {m.irpipe: m.trec for m in suite.metrics}
    values: Values = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            run = values.setdefault(row["run"], {"num_q": float(row["n_queries"])})
            run[trec.get(row["metric"], row["metric"])] = float(row["value"])
    return values


def irpipe_executable() -> str:
    """The irpipe script beside this interpreter (the benchmark's venv), else the one on PATH."""
    beside = Path(sys.executable).parent / "irpipe"
    return str(beside) if beside.exists() else shutil.which("irpipe") or "irpipe"


def make_tools(names: list[str], trec_eval: str | None) -> list[Tool]:
    """The tools named, in the order given; `trec_eval` is the binary's path, if any."""
    known = {
        "irpipe": Irpipe(),
        "trec_eval": TrecEval(trec_eval),
        "pytrec_eval": Runner("pytrec_eval", "pytrec_eval"),
        "ir_measures": Runner("ir_measures", "ir_measures"),
        "ranx": Runner("ranx", "ranx"),
    }
    unknown = [name for name in names if name not in known]
    if unknown:
        raise SystemExit(f"unknown tools {unknown}; choose from {', '.join(known)}")
    return [known[name] for name in names]
