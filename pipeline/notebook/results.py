"""An evaluation's results for a notebook: tidy tables (pandas, polars or Arrow), the wide table
papers print, an HTML display, and `to_spec`, which turns the experiment into a spec and files
that `irpipe run` evaluates to the same tables."""

from __future__ import annotations

import html
import os
import re
import tempfile
from collections import namedtuple
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import yaml

from pipeline.compare.marks import report_table
from pipeline.errors import SpecError
from pipeline.formatting import format_value
from pipeline.frames.irds import is_irds
from pipeline.inputs.table_rows import MEMORY, memory_view
from pipeline.outputs.targets import TO_SPEC_HEADER, Kept, Written, check_written

if TYPE_CHECKING:
    from pipeline.checks import CheckResult
    from pipeline.run.evaluation import Evaluation

__all__ = ["Results"]

_FORMATS = ("pandas", "polars", "arrow", "rows")


class ReportCell(NamedTuple):
    """One cell of the wide table: a run's value of a metric in a collection, whether it is the
    best of the collection's runs, and its significance mark (empty or None without one)."""

    collection: str
    run: str
    metric: str
    value: float | None
    best: bool
    mark: str | None


class Results:
    """What `pipeline.evaluate` returns, by either door: tidy tables of the evaluation (as
    pandas, polars or Arrow frames, or as rows of named tuples, which need nothing installed),
    its checks' outcomes, and the `Evaluation` itself (`evaluation`: its connection, plan,
    history and provenance)."""

    def __init__(self, evaluation: Evaluation, spec: dict[str, Any] | None = None) -> None:
        self.evaluation = evaluation
        self._spec = spec  # the spec the keyword door built (memory:// paths for tables)

    @property
    def checks(self) -> list[CheckResult]:
        """The expected values' and gates' outcomes (`expect:`, `gates:`), in spec order."""
        return self.evaluation.checks

    @property
    def failed(self) -> bool:
        """Whether an expected value or a gate failed (`irpipe run` would exit 5)."""
        return self.evaluation.failed

    def aggregate(self, to: str = "pandas"):
        """(run, collection, metric, value, n_queries): one row per run and metric."""
        return self._table("SELECT run, collection, metric, value, n_queries FROM aggregate", to)

    def per_query(self, to: str = "pandas"):
        """(run, collection, qid, metric, value): one row per run, query and metric (a text
        metric's value is in `text`, when the spec has one)."""
        text = any(m.measure.kind == "text" for m in self.evaluation.plan.metrics)
        columns = "run, collection, qid, metric, value" + (", text" if text else "")
        return self._table(f"SELECT {columns} FROM per_query", to)

    def comparisons(self, to: str = "pandas"):
        """Every paired test (`compare=`): run, baseline, metric, test, difference, interval,
        p-value and its corrected value, n, effect size."""
        if self.evaluation.plan.comparing is None:
            raise SpecError("comparisons(): nothing was compared; pass compare={} to evaluate()")
        return self._table("SELECT * FROM comparison", to)

    def suites(self, to: str = "pandas"):
        """Each suite's means (`suites=`): suite, run, metric, macro (the mean of its
        collections' means), micro (over every query of them), n_collections, n_queries."""
        if not self.evaluation.loaded.spec.suites:
            raise SpecError("suites(): the evaluation has no suites; pass suites={NAME: [...]}")
        return self._table("SELECT * FROM suite", to)

    def discrimination(self, to: str = "pandas"):
        """Discriminative power (`discrimination=`): per collection, metric and test, the pairs
        of runs, those found significant and their share."""
        if self.evaluation.plan.discriminating is None:
            raise SpecError("discrimination(): pass discrimination={} to evaluate()")
        return self._table("SELECT * FROM discrimination", to)

    def agreement(self, to: str = "pandas"):
        """Each agreement entry's statistics (`agreement=`): reference, other, collection (empty:
        two judgment sets), statistic, value."""
        return self._judgments("agreement", to)

    def confusion(self, to: str = "pandas"):
        """Each agreement entry's pairs by (reference_grade, other_grade); a grade is empty
        (None) where that set does not judge the pair."""
        return self._judgments("confusion", to)

    def correlation(self, to: str = "pandas"):
        """The statistics of two orderings of the runs (`agreement=`, `correlation=`):
        reference, other, collection, metric, statistic, value, ci_low, ci_high, and the `run`
        that falls most (max_rank_drop)."""
        return self._judgments("correlation", to)

    def reproduction(self, to: str = "pandas"):
        """repro_eval's measures of each reproduction entry (`reproduction=`): entry, kind,
        baseline, original, reproduced, the two collections, measure, metric, qid (ktu and rbo
        per topic; empty for their means and the rest), value, n_original, n_reproduced."""
        if self.evaluation.plan.reproduction is None:
            raise SpecError(
                "reproduction(): no reproductions were measured; pass reproduction=[{'original': "
                "[...], 'reproduced': [...]}] to evaluate()"
            )
        return self._table("SELECT * FROM reproduction", to)

    def _judgments(self, table: str, to: str):
        if self.evaluation.plan.agreement is None:
            raise SpecError(
                f"{table}(): no judgment sets or orderings were compared; pass agreement=[...] "
                "(or correlation=[...]) to evaluate()"
            )
        return self._table(f"SELECT * FROM {table}", to)

    def table(self):
        """Runs by metrics as papers print them (pandas): 4 decimals, the best value of each
        metric marked *, and with comparisons the significance marks (see `legend`)."""
        import pandas as pd

        rows: dict[tuple[str, str], dict[str, str]] = {}
        for cell in self._report():
            shown = format_value(cell.value) + ("*" if cell.best else "") + (cell.mark or "")
            rows.setdefault((cell.collection, cell.run), {})[cell.metric] = shown
        frame = pd.DataFrame.from_dict(rows, orient="index")
        if not rows:  # judgment sets compared alone: no run evaluated
            frame.index = pd.MultiIndex.from_arrays([[], []])
        frame.index.names = ["collection", "run"]
        return frame

    def legend(self) -> list[str]:
        """What the table's marks mean: `*` the best value, and with comparisons the test,
        correction and alpha behind ▲ and ▼ (and △, ▽), as the console and the reports say them."""
        found = self.evaluation.significance()
        marks = ["* the best value of the metric among its collection's runs"]
        return [*marks, *(found.legend if found is not None else ())]

    def _report(self) -> list[ReportCell]:
        """The cells of the `report` table (made first if the evaluation wrote no report)."""
        con, plan = self.evaluation.con, self.evaluation.plan
        if not con.execute(
            "SELECT count(*) FROM duckdb_tables() "
            "WHERE table_name = 'report' AND schema_name = current_schema()"
        ).fetchone()[0]:
            report_table(con, plan.metrics, plan.comparing)
        columns = ", ".join(ReportCell._fields)
        return [ReportCell(*row) for row in con.execute(f"SELECT {columns} FROM report").fetchall()]

    def _repr_html_(self) -> str:
        notes = "".join(f"<br>{html.escape(line)}" for line in self.legend())
        return self.table().to_html(escape=True) + f"<p>{html.escape(self._caption())}{notes}</p>"

    def __repr__(self) -> str:
        return "\n".join([self._caption(), self.table().to_string(), *self.legend()])

    def _caption(self) -> str:
        runs, metrics = len(self.evaluation.loaded.spec.runs), len(self.evaluation.plan.metrics)
        settings = self.evaluation.loaded.spec.settings.resolved()
        return (
            f"irpipe: {runs} run{'s' * (runs != 1)} × {metrics} metric{'s' * (metrics != 1)}; "
            f"queries: {settings['queries']}, relevance_level: {settings['relevance_level']}, "
            f"ordering: {settings['ordering']}"
        )

    def _table(self, sql: str, to: str):
        if to not in _FORMATS:
            raise SpecError(f"to={to!r}: expected one of {', '.join(_FORMATS)}")
        relation = self.evaluation.con.sql(sql)
        if to == "rows":
            row = namedtuple("Row", relation.columns)  # noqa: PYI024 -- rows of a query
            return [row(*values) for values in relation.fetchall()]
        return {"pandas": relation.df, "polars": relation.pl, "arrow": relation.to_arrow_table}[
            to
        ]()

    def to_spec(self, directory: str | Path) -> Path:
        """Write the tables given in Python as Parquet files and a spec (`spec.yaml`) naming
        them, into `directory`; `irpipe run DIRECTORY/spec.yaml` evaluates the same inputs with
        the same settings to the same tables. Every file is written under a temporary name and
        renamed once all are written, so a failure leaves nothing half-written. A file is
        replaced only in a directory `to_spec` wrote (its spec begins with `TO_SPEC_HEADER`),
        and never an input. The spec's path."""
        import pyarrow.parquet as pq

        if self._spec is None:
            raise SpecError(
                f"to_spec({str(directory)!r}): these results are of a spec file "
                f"({self.evaluation.loaded.path}), which is their spec already"
            )
        directory = Path(directory)
        files = _file_names(self._spec)
        _check_directory(directory, [*files.values(), "spec.yaml"], self._spec)
        directory.mkdir(parents=True, exist_ok=True)
        staged: list[tuple[Path, Path]] = []
        try:
            for path, kind in _memory_inputs(self._spec):
                staged.append(_staged(directory / files[path]))
                pq.write_table(
                    self.evaluation.loaded.tables[memory_view(path, kind)], staged[-1][0]
                )
            staged.append(_staged(directory / "spec.yaml"))
            spec = yaml.safe_dump(_replaced(self._spec, files), sort_keys=False, allow_unicode=True)
            staged[-1][0].write_text(f"{TO_SPEC_HEADER}\n{spec}", encoding="utf-8")
        except BaseException:
            for temporary, _ in staged:
                temporary.unlink(missing_ok=True)
            raise
        for temporary, target in staged:
            temporary.replace(target)
        return directory / "spec.yaml"


def _check_directory(directory: Path, names: list[str], spec: dict[str, Any]) -> None:
    """`to_spec` may write `names` into `directory` (SpecError naming the call otherwise)."""
    where = f"to_spec({str(directory)!r})"
    if directory.exists() and not directory.is_dir():
        raise SpecError(f"{where}: {directory} is a file; give a new or empty directory")
    inputs = [Kept(Path(path), "an input of these results", "name another directory")
              for path in _file_inputs(spec)]  # fmt: skip
    check_written([Written(directory / name, "to_spec", name, where) for name in names], inputs)


def _file_inputs(spec: dict[str, Any]) -> list[str]:
    """The inputs given as files (not tables, not ir_datasets ids)."""
    found = _read_qrels(spec) + [r["path"] for r in spec["runs"].values() if "path" in r]
    return [path for path in found if not str(path).startswith(MEMORY) and not is_irds(path)]


def _staged(target: Path) -> tuple[Path, Path]:
    """A fresh temporary name beside `target` (never a file of the user's)."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    os.close(fd)
    return Path(name), target


def _file_names(spec: dict[str, Any]) -> dict[str, str]:
    """The Parquet file of each table input: `runs.<name>.parquet`, the name made safe for a
    file (a run named `grid/k1=0.9` is `runs.grid_k1=0.9.parquet`), numbered where two clash."""
    names: dict[str, str] = {}
    for path, _ in _memory_inputs(spec):
        argument, _, name = path.removeprefix(MEMORY).partition("/")
        stem = f"{argument}.{re.sub(r'[^A-Za-z0-9_.=+-]', '_', name)}"
        taken = set(names.values())
        names[path] = next(f"{stem}{suffix}.parquet" for suffix in ("", *map(str, range(2, 10**6)))
                           if f"{stem}{suffix}.parquet" not in taken)  # fmt: skip
    return names


def _memory_inputs(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(memory:// path, its kind: qrels, run or latency) of every input given as a table."""
    found = [(path, "qrels") for path in _read_qrels(spec)]
    found += [(r["path"], "run") for r in spec["runs"].values() if "path" in r]
    found += [(r["latency"], "latency") for r in spec["runs"].values() if "latency" in r]
    return [(path, kind) for path, kind in found if str(path).startswith(MEMORY)]


def _read_qrels(spec: dict[str, Any]) -> list[str]:
    """The collections' qrels inputs (an overlay reads none: its sets are the inputs)."""
    return [c["qrels"] for c in spec["collections"].values() if isinstance(c["qrels"], str)]


def _replaced(value: Any, written: dict[str, str]) -> Any:
    """The spec with each memory:// path replaced by the file it was written to."""
    if isinstance(value, dict):
        return {key: _replaced(item, written) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, written) for item in value]
    if isinstance(value, Path):
        return str(value)
    return written.get(value, value) if isinstance(value, str) else value
