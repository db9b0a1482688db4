"""What an evaluation was: its inputs by content, its software by version, its definitions.

One record serves three readers: every output's manifest, the history (`pipeline.history`), and the
cache key of each run's results. Files are identified by the digest of their bytes
(`pipeline.digest`).
"""

from __future__ import annotations

import json
import os
import platform
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline._version import __version__
from pipeline.digest import digest_file, digest_table, digest_text
from pipeline.formatting import finite
from pipeline.inputs.table_rows import memory_view
from pipeline.spec import ir_metadata
from pipeline.spec.inputs import run_inputs

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.pools.plan import PoolPlan
    from pipeline.run.evaluation_plan import EvaluationPlan
    from pipeline.spec import LoadedSpec

__all__ = [
    "Input",
    "definitions",
    "inputs_of",
    "manifest",
    "now",
    "record",
    "spec_path",
    "versions",
]


@dataclass(frozen=True)
class Input:
    """One input file: `qrels` of a collection or a `run`, by name, where, and what it holds;
    a run file's ir_metadata block (`pipeline.spec.ir_metadata`), where it has one."""

    role: str
    name: str
    path: str
    size: int
    digest: str
    ir_metadata: dict[str, Any] | None = field(default=None, compare=False, hash=False)

    def as_dict(self) -> dict[str, Any]:
        found = {"role": self.role, "name": self.name, "path": self.path, "size": self.size,
                 "digest": self.digest}  # fmt: skip
        if self.ir_metadata is not None:  # only where the file has a block: other records as before
            found["ir_metadata"] = self.ir_metadata
        return found


def inputs_of(
    loaded: LoadedSpec, describe: Callable[[Path | str], tuple[int, str]] | None = None
) -> list[Input]:
    """Every input of the spec, qrels (by collection) then runs, in spec order. A file is
    digested; an input that is not one local file (a directory or a URI, which the Spark engine
    reads) is given its `(size, digest)` by `describe`. A fused run and an overlay's qrels are
    described by their definitions and their inputs' digests."""
    spec = loaded.spec
    files = [("qrels", n, c.qrels_file) for n, c in spec.collections.items() if c.qrels_file]
    files += [("run", f.loaded_as, f.path) for f in run_inputs(spec.file_runs())]
    files += [("exclude", name, p.exclude) for name, p in spec.pools.items() if p.exclude]
    files += [("latency", n, r.latency) for n, r in spec.file_runs().items() if r.latency]
    described = [
        _describe(p, describe, loaded.tables.get(_view(role, p)), role == "run")
        for role, _, p in files
    ]
    found = [
        Input(role, name, str(p), *d) for (role, name, p), d in zip(files, described, strict=True)
    ]
    return _with_fused(spec, _with_overlays(spec, found))


def _with_overlays(spec, found: list[Input]) -> list[Input]:
    """The inputs, each overlay's qrels among the qrels in spec order: described by its
    definition (its `path`), digested with its sets' digests (an overlay's own, for an overlay
    of overlays), so that the history's keys of its runs cover every set."""
    digests = {i.name: i.digest for i in found if i.role == "qrels"}
    overlays = {}
    for name in spec.overlays():  # each after the sets it reads
        definition = {"overlay": list(spec.collections[name].overlay)}
        sets = [digests[s] for s in definition["overlay"]]
        digests[name] = digest_text({"definition": definition, "inputs": sets})
        overlays[name] = Input("qrels", name, "overlay " + json.dumps(definition), 0, digests[name])
    qrels = {i.name: i for i in found if i.role == "qrels"} | overlays
    ordered = [qrels[name] for name in spec.collections if name in qrels]
    return [*ordered, *(i for i in found if i.role != "qrels")]


def _with_fused(spec, found: list[Input]) -> list[Input]:
    """The inputs, each fused run among the runs in spec order: described by its definition
    (its `path`), digested with its inputs' digests, so that its history key covers both."""
    digests = {i.name: i.digest for i in found if i.role == "run"}
    fused = {}
    for name, inputs in spec.fused_inputs().items():
        definition = spec.runs[name].definition([[run, weight] for run, weight in inputs])
        text = "fuse " + json.dumps(definition, sort_keys=True)
        digest = digest_text({"definition": definition, "inputs": [digests[r] for r, _ in inputs]})
        fused[name] = Input("run", name, text, 0, digest)
    runs = {i.name: i for i in found if i.role == "run"}
    files: dict[str, list[Input]] = {}  # a run's inputs: its file, or one per collection
    for file in run_inputs(spec.file_runs()):
        files.setdefault(file.run, []).append(runs[file.loaded_as])
    ordered = [i for name in spec.runs for i in files.get(name) or [fused[name]]]
    return [
        *(i for i in found if i.role == "qrels"),
        *ordered,
        *(i for i in found if i.role not in ("qrels", "run")),
    ]


def _view(role: str, path: Path | str) -> str:
    """The name a table input is registered under (for a file, a name nothing has)."""
    kinds = {"qrels": "qrels", "exclude": "qrels", "latency": "latency"}
    return memory_view(path, kinds.get(role, "run"))


def _describe(
    path: Path | str, describe, table, run: bool
) -> tuple[int, str, dict[str, Any] | None]:
    """(size, digest, ir_metadata block) of an input; a run file's block is read from the
    blocks its digest reads (a compressed run's from its decompressed head)."""
    if table is not None:  # read in Python (a frame, an ir_datasets id): its Arrow data
        return table.nbytes, digest_table(table), None
    if describe is not None and not (isinstance(path, Path) and path.is_file()):
        return *describe(path), None
    if not run:
        return path.stat().st_size, digest_file(path), None
    if ir_metadata.is_compressed(path):
        return path.stat().st_size, digest_file(path), ir_metadata.read_block(path)
    head = ir_metadata.HeadLines()
    digest = digest_file(path, head)
    return path.stat().st_size, digest, ir_metadata.parse(head.finish(), str(path))


def versions(engine: str = "duckdb") -> dict[str, Any]:
    """irpipe's, DuckDB's and Python's versions, every loaded plugin distribution's, and with
    `engine` spark, pyspark's (the Spark that evaluates is the one pyspark drives)."""
    from pipeline.host.manager import get_plugin_manager

    plugins = {
        state.distribution: state.version or _installed_version(state.distribution)
        for state in get_plugin_manager().states()
        if state.state == "loaded" and state.distribution not in (None, "irpipe")
    }
    found = {
        "irpipe": __version__,
        "duckdb": _installed_version("duckdb"),
        "python": platform.python_version(),
        "plugins": dict(sorted(plugins.items())),
    }
    if engine == "spark":
        found["pyspark"] = _installed_version("pyspark")
    return found


@cache  # the loaded modules are this version's until the process ends (a loop asks each call)
def _installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def now() -> str:
    """The current time, UTC, ISO 8601 to the microsecond."""
    return datetime.now(UTC).isoformat()


def record(
    plan: EvaluationPlan,
    inputs: list[Input],
    started: str,
    software: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance of an evaluation, as manifests and the history keep it; `software`: its
    `versions()`, when the caller has them already (the cache keys read them too)."""
    recorded = record_metrics(plan.loaded, plan.metrics, plan.pools, inputs, started, software)
    curves = plan.sql.results.curves
    if curves:  # what a precision-recall curve's numbers are, beside the metrics'
        recorded["pr_curve_metrics"] = definitions(curves)
    if plan.comparing is not None:
        recorded["compare"] = plan.comparing.manifest()
    if plan.agreement is not None:
        recorded["judgments"] = plan.agreement.manifest()
    if plan.discriminating is not None:
        recorded["discrimination"] = plan.discriminating.manifest()
    if plan.loaded.spec.suites:
        recorded["suites"] = {name: list(c) for name, c in plan.loaded.spec.suites.items()}
    if plan.reproduction is not None:  # the entries, and the variants of ktu and rbo
        recorded["reproduction"] = plan.reproduction.manifest()
    # Each output writes it as JSON, which has no NaN: a parameter given as .nan is null there.
    return finite(recorded)


def record_metrics(
    loaded: LoadedSpec,
    metrics: Sequence[ResolvedMeasure],
    pools: Sequence[PoolPlan],
    inputs: list[Input],
    started: str,
    software: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What every record holds: where and when, the spec, the software, the inputs, the
    settings, the metrics and the pools (`record` adds what an evaluation computed beside)."""
    spec = loaded.spec
    recorded = {
        "irpipe_version": __version__,
        "started": started,
        "host": socket.gethostname(),
        "spec": spec_path(loaded.path),
        "spec_sha256": loaded.sha256,
        "spec_canonical": canonical_digest(loaded),
        "versions": software or versions(spec.settings.engine),
        "inputs": [i.as_dict() for i in inputs],
        "settings": spec.settings.resolved(),
        "metrics": definitions(metrics),
    }
    if pools:
        recorded["pools"] = [pool.manifest() for pool in pools]
    return recorded


def canonical_digest(loaded: LoadedSpec) -> str:
    """The digest of the spec as validated (defaults filled in; comments, layout and key order
    do not count), its paths relative to its directory, so that a moved spec keeps it."""
    base = f"{loaded.path.resolve().parent}{os.sep}"

    def relative(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: relative(item) for key, item in value.items()}
        if isinstance(value, list):
            return [relative(item) for item in value]
        return value.removeprefix(base) if isinstance(value, str) else value

    return digest_text(relative(loaded.spec.model_dump(mode="json")))


def manifest(plan: EvaluationPlan) -> dict[str, Any]:
    """The record of an evaluation starting now, its inputs digested (outside `evaluate`)."""
    return record(plan, inputs_of(plan.loaded), now())


def spec_path(path: Path) -> str:
    """The spec's absolute path (how the history tells specs apart), if it is a file."""
    return str(path.resolve()) if path.is_file() else str(path)


def definitions(metrics: Sequence[ResolvedMeasure]) -> list[dict[str, Any]]:
    """Each metric's label, canonical form, parameters, aggregator and kind, in order."""
    return [
        {
            "label": m.label,
            "metric": m.canonical,
            "params": m.params.model_dump(mode="json"),
            "aggregator": m.aggregator,
            "kind": m.measure.kind,
        }
        for m in metrics
    ]
