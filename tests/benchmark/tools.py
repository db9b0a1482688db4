"""The measure sets, and how each tool is run on them: TREC text in, numbers out.

Every tool's numbers are returned under trec_eval's output names (map, P_10, ...), so they compare
directly. A tool that lacks a measure has None in its column and is simply not asked for it.
"""

from __future__ import annotations

import csv
import importlib.util
import json
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
    "missing",
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


def write_spec(path: Path, qrels: Path, runs: list[Path], metrics: list[str], out: Path) -> Path:
    """An irpipe spec: one collection, the runs, the metrics, per-query parquet and summary csv."""
    spec = {
        "collections": {"c": {"qrels": str(qrels)}},
        "runs": {run.stem: {"path": str(run), "collection": "c"} for run in runs},
        "metrics": metrics,
        "outputs": [
            {"path": str(out / "per_query.parquet"), "level": "query"},
            {"path": str(out / "summary.csv"), "level": "aggregate"},
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


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
    def command(self, suite: Suite, qrels: Path, run: Path, work: Path) -> list[str]:
        """The command evaluating `run` with the suite's measures; it writes into `work`."""

    @abstractmethod
    def results(self, suite: Suite, work: Path, log: Path) -> dict[str, float]:
        """The numbers the command produced, under trec_eval's names."""


class Irpipe(Tool):
    """`irpipe run SPEC`, the console script users run: process start to tables written."""

    name = "irpipe"

    def command(self, suite: Suite, qrels: Path, run: Path, work: Path) -> list[str]:
        metrics = [m.irpipe for m in suite.metrics if m.irpipe]
        spec = write_spec(work / "spec.yaml", qrels, [run], metrics, work / "out")
        return [irpipe_executable(), "run", str(spec)]

    def results(self, suite: Suite, work: Path, log: Path) -> dict[str, float]:
        return read_summary(suite, work / "out" / "summary.csv")


class TrecEval(Tool):
    """The trec_eval binary; its stdout (`name all value` lines) is the result."""

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

    def command(self, suite: Suite, qrels: Path, run: Path, work: Path) -> list[str]:
        return [self.binary, *suite.trec_eval_flags, str(qrels), str(run)]

    def results(self, suite: Suite, work: Path, log: Path) -> dict[str, float]:
        fields = (line.split() for line in log.read_text().splitlines())
        return {f[0]: float(f[2]) for f in fields if len(f) == 3 and f[0] != "runid"}


class Runner(Tool):
    """A Python library driven by runners/<name>_eval.py, which writes its means as JSON."""

    def __init__(self, name: str, module: str) -> None:
        self.name, self.module = name, module

    def names(self, suite: Suite) -> list[str]:
        """The measure names this library is asked for."""
        if self.name == "pytrec_eval":
            return list(suite.pytrec_eval)
        return [getattr(m, self.name) for m in suite.metrics if getattr(m, self.name)]

    def command(self, suite: Suite, qrels: Path, run: Path, work: Path) -> list[str]:
        script = RUNNERS / f"{self.name}_eval.py"
        out = work / "result.json"
        return [sys.executable, str(script), str(qrels), str(run), str(out), *self.names(suite)]

    def results(self, suite: Suite, work: Path, log: Path) -> dict[str, float]:
        raw = json.loads((work / "result.json").read_text())
        if self.name == "pytrec_eval":
            return raw  # already trec_eval's names
        trec = {getattr(m, self.name): m.trec for m in suite.metrics}
        return {trec[name]: value for name, value in raw.items()}


def read_summary(suite: Suite, path: Path) -> dict[str, float]:
    """irpipe's aggregate csv (one run) under trec_eval's names; num_q from n_queries."""
    trec = {m.irpipe: m.trec for m in suite.metrics}
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    values = {trec.get(row["metric"], row["metric"]): float(row["value"]) for row in rows}
    return {**values, "num_q": float(rows[0]["n_queries"])}


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
