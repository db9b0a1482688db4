"""The Python door: `evaluate(qrels=..., runs=..., metrics=...)` and `Evaluator`, for notebooks
and scripts. The keywords are the spec's; inputs may be paths or tables (`inputs`), which reach
the engine as Arrow through the same SQL as Parquet files, so no number depends on the door. The
result is a `Results` (`results`): tidy tables, the wide table papers print, `to_spec`.

Imports: the run layer (validation and the evaluation), the spec, the marks and the formatting
of values; pyarrow, and pandas or polars for the tables they return.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pipeline.engines.duckdb.session import Session
from pipeline.errors import SpecError
from pipeline.frames.convert import by_query, check_columns, is_path
from pipeline.frames.irds import irds_table, is_irds
from pipeline.inputs.table_rows import memory_view
from pipeline.notebook.inputs import collection_entry, reader, run_entries
from pipeline.notebook.results import Results
from pipeline.run.evaluation import evaluate as evaluate_spec
from pipeline.run.evaluation_plan import EvaluationPlan
from pipeline.run.preflight import validate
from pipeline.spec.loader import LoadedSpec, spec_from_mapping

__all__ = ["Evaluator", "Results", "evaluate"]

#: how messages name the spec the keywords make
ORIGIN = "evaluate()"


def evaluate(
    spec: str | Path | LoadedSpec | None = None,
    *,
    qrels: Any = None,
    runs: Any = None,
    metrics: Sequence[Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    compare: Mapping[str, Any] | None = None,
    columns: Mapping[str, str] | None = None,
    agreement: Sequence[Mapping[str, Any]] | None = None,
    correlation: Sequence[Mapping[str, Any]] | None = None,
    suites: Mapping[str, Sequence[str]] | None = None,
    discrimination: Mapping[str, Any] | None = None,
    reproduction: Sequence[Mapping[str, Any]] | None = None,
    **options: Any,
):
    """Evaluate a spec file (`evaluate("spec.yaml")`: every stage `irpipe run` runs, its checks,
    history, outputs and dashboard), or runs given in Python; either way, its `Results`:

        evaluate(qrels=qrels_frame, runs={"bm25": bm25, "dense": dense}, metrics=["AP", "nDCG@10"])

    `qrels`: one input, or a mapping of collection names to inputs (judgment sets: `{"human":
    ..., "umbrela": ...}`, a set built from others as in a spec: `{"overlay": ["umbrela",
    "human"]}`, or a collection spelled out as in a spec: `{"qrels": "web.txt", "format":
    "subtopics", "num_docs": 50_000}`; a table with a `subtopic` column is subtopic qrels by
    itself; generated answers' nuggets: `{"nuggets": "nuggets.jsonl"}`, their citations' support
    judgments: `{"support": "support.txt"}`); `runs`: one input, a list, or a mapping of run
    names to inputs (a fused run is given as in a spec: `{"fuse": [names]}`; an answer run's
    assignments: `{"assignments": "gpt4o.jsonl"}`, its answers: `{"answers": "gpt4o.jsonl"}`). With several collections, each run is
    evaluated under each of them (its rows read once), unless it says which: `{"run": input,
    "collection": name}` (or a list of names), or gives a file per collection: `{"path":
    {"nfcorpus": input, "scifact": input}}`. An input is a path or a table
    (`pipeline.frames.convert`);
    `columns` maps irpipe's column names (qid, docno, rel, score, rank) to a table's. `metrics`,
    `settings`, `compare`, `agreement`, `correlation`, `suites`, `discrimination` and
    `reproduction` are the spec's keys, with the spec's
    defaults (with `agreement`, runs and metrics may be left out: the judgment sets given as
    `qrels={"human": ..., "umbrela": ...}` are compared alone). The other keywords of
    the spec door (`history`, `refresh`, `engine`, `write`) go to the evaluation as they are.
    The checks' warnings (a gate skipped) are shown as warnings once it is done."""
    if spec is not None:
        if qrels is not None or runs is not None or metrics is not None:
            raise SpecError("evaluate(): give a spec, or qrels=, runs= and metrics=, not both")
        evaluation, data = evaluate_spec(spec, **options), None
    else:
        sections = {"compare": compare, "agreement": agreement, "correlation": correlation,
                    "suites": suites, "discrimination": discrimination,
                    "reproduction": reproduction}  # fmt: skip
        loaded, data = _loaded(qrels, runs, metrics, settings, sections, columns)
        evaluation = evaluate_spec(loaded, write=False, **options)
    evaluation.warn()
    return Results(evaluation, data)


class Evaluator:
    """One collection's qrels and metrics, for evaluating many runs in a loop (validation during
    training, a parameter sweep): the qrels are read into Arrow once; each call evaluates one
    run given in any form `evaluate` takes and returns its `Results`."""

    def __init__(
        self,
        qrels: Any,
        metrics: Sequence[Any],
        settings: Mapping[str, Any] | None = None,
        columns: Mapping[str, str] | None = None,
    ) -> None:
        _check_arguments(metrics, settings, {}, columns)
        if is_irds(qrels):  # read once, here, not at every call
            self.qrels = irds_table(qrels, "qrels", "qrels")
        else:
            self.qrels = (
                qrels if is_path(qrels) else reader(settings, columns)(qrels, "qrels", "qrels")
            )
        self.metrics, self.settings, self.columns = list(metrics), dict(settings or {}), columns
        _check_metrics(self.metrics)
        self._plans: dict[str, tuple[EvaluationPlan, dict]] = {}  # by run name, once validated
        self._session = Session()

    def __call__(self, run: Any, name: str = "run") -> Results:
        """The run's results. A run given as a table is evaluated by the plan validated for
        the first table of that name: only the table changes from one call to the next. Every
        call shares one DuckDB connection holding the qrels, loaded and checked once."""
        plan, data = self._plan(run, name)
        runner = self._session if plan.engine == "duckdb" else None
        return Results(evaluate_spec(plan, write=False, runner=runner), data)

    def _plan(self, run: Any, name: str) -> tuple[EvaluationPlan, dict]:
        """The validated plan that evaluates `run` under `name`, and the spec it came from."""
        if is_path(run) or name not in self._plans:
            loaded, data = _loaded(self.qrels, {name: run}, self.metrics, self.settings, {},
                                   self.columns)  # fmt: skip
            plan = validate(loaded)
            if not is_path(run):
                self._plans[name] = plan, data
            return plan, data
        plan, data = self._plans[name]
        path = data["runs"][name]["path"]
        table = reader(self.settings, self.columns)(run, "run", f"runs[{name!r}]")
        tables = {**plan.loaded.tables, memory_view(path, "run"): table}
        return replace(plan, loaded=replace(plan.loaded, tables=tables)), data


def _section(key: str, value: Any) -> Any:
    """A section given by keyword, as the spec's YAML would hold it."""
    if key == "suites":
        return {name: list(members) for name, members in dict(value).items()}
    if key in ("compare", "discrimination"):
        return dict(value)
    return [dict(entry) for entry in value]


def _check_arguments(metrics: Any, settings: Any, sections: Mapping, columns: Any) -> None:
    """Each keyword has the shape the spec gives its key (SpecError saying which to give): a
    string where a list or a mapping belongs would otherwise be read letter by letter, or fail
    deep inside. One metric is a list of one, as in a spec and in ir_measures; `sections`: the
    other sections given (compare, agreement, correlation, reproduction), by keyword."""
    if not isinstance(metrics, list | tuple):
        example = [metrics] if isinstance(metrics, str | Mapping) else ["AP", "nDCG@10"]
        raise SpecError(f"metrics={metrics!r}: give a list of metrics, e.g. metrics={example!r}")
    compare = sections.get("compare")
    baseline = compare if isinstance(compare, str) else "bm25"
    examples = {"settings": {"compatibility": "trec_eval-9"}, "compare": {"baseline": baseline}}
    examples |= {"suites": {"beir": ["nfcorpus", "scifact"]}, "discrimination": {"tests": ["t"]}}
    given = [(k, sections.get(k)) for k in ("compare", "suites", "discrimination")]
    for keyword, value in (("settings", settings), *given):
        if value is not None and not isinstance(value, Mapping):
            raise SpecError(
                f"{keyword}={value!r}: give a mapping, as a spec's {keyword} section is, e.g. "
                f"{keyword}={examples[keyword]!r}"
            )
    for keyword in ("agreement", "correlation", "reproduction"):
        value = sections.get(keyword)
        if value is not None and (not isinstance(value, list | tuple) or
                                  not all(isinstance(entry, Mapping) for entry in value)):  # fmt: skip
            raise SpecError(
                f"{keyword}={value!r}: give a list of entries, as a spec's {keyword} section is, "
                f"e.g. {keyword}={_ENTRIES[keyword]!r}"
            )
    check_columns(columns)


#: an example of each list of entries, for messages
_ENTRIES = {
    "agreement": [{"reference": "human", "other": "umbrela"}],
    "correlation": [{"reference": "AP", "other": "P@10"}],
    "reproduction": [
        {"original": ["bm25", "bm25_rm3"], "reproduced": ["bm25_rep", "bm25_rm3_rep"]}
    ],
}


def _check_metrics(metrics: list) -> None:
    """Each metric names a measure with valid parameters (SpecError naming the entry)."""

    from pipeline.measures.registry import get_registry
    from pipeline.spec.models import MetricItem

    registry = get_registry()
    for i, entry in enumerate(metrics):
        try:
            item = MetricItem.model_validate(entry)
            registry.resolve(item.metric, item.params, item.label)
        except (SpecError, ValidationError) as exc:
            raise SpecError(f"metrics[{i}]: {exc}") from None


def _loaded(qrels, runs, metrics, settings, sections, columns) -> tuple[LoadedSpec, dict]:
    """The spec the keywords make, validated, with the tables it names; and the spec itself.
    `sections`: compare, agreement, correlation and reproduction, by keyword (None where not
    given)."""
    judging = sections.get("agreement") is not None
    if qrels is None or (metrics is None and not judging):
        raise SpecError("evaluate(): give qrels= and metrics= (and runs=), or a spec's path")
    metrics = [] if metrics is None else metrics
    _check_arguments(metrics, settings, sections, columns)
    tables: dict[str, Any] = {}
    read = reader(settings, columns)
    named = isinstance(qrels, Mapping) and not by_query(qrels)
    collections = qrels if named else {"default": qrels}
    data: dict[str, Any] = {
        "collections": {
            name: collection_entry(name, value, tables, read) for name, value in collections.items()
        },
        "runs": run_entries(runs, list(collections), tables, read),
        "metrics": list(metrics),
    }
    if settings:
        data["settings"] = dict(settings)
    for key, value in sections.items():
        if value is not None:
            data[key] = _section(key, value)
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
    return spec_from_mapping(data, Path.cwd() / ORIGIN, digest, tables=tables), data
