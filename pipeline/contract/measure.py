"""The measure contract: a definition (name, parameters, aggregator), what it needs, and its SQL.

A measure's `per_query` returns one SQL aggregate expression evaluated per (run, query) over the rows
of the canonical ranking. It reads the row columns of `Columns` and the derived columns (running
counts, per-query facts, the ideal ranking, the ranking's length, collection fields) that `needs`
declares; the compiler builds every declared column once, for all measures. A measure never reads
files, re-sorts the ranking, or loops over rows in Python. For what SQL cannot express well,
`PythonMeasure` computes over numpy arrays after the SQL ranking.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from pipeline.contract.columns import Columns, Need
from pipeline.entry_points import quiet_pydantic_plugins

# Pydantic looks for its plugins (reading every distribution's metadata) when it first builds a
# validator; irpipe's cache of the installation tells it beforehand when none is installed.
quiet_pydantic_plugins()

__all__ = ["Aggregator", "LevelParams", "Measure", "MeasureParams", "ParamsT", "RankedParams"]


class MeasureParams(BaseModel):
    """Base of every measure's parameter model: strict, frozen, unknown keys rejected, and no
    number NaN or infinite (`Utility(a=.nan)`, `SetF(beta=1e999)`: no measure is defined there,
    and a NaN would pass every bound a field declares)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, defer_build=True, allow_inf_nan=False
    )


def _level(value: Any) -> Any:
    """A relevance level is a number (a decimal one only under `grades: real`, which the spec's
    metrics are checked against) or None."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if value is not None and not (number and math.isfinite(value)):
        raise PydanticCustomError(
            "level", "Input should be a finite number (an integer; a decimal under grades: real)"
        )
    return value


class LevelParams(MeasureParams):
    """The relevance level of a binary measure."""

    rel: Annotated[int | float | None, BeforeValidator(_level)] = Field(
        None,
        description="grade >= rel is relevant (default: relevance_level); a decimal under "
        "grades: real",
    )


class RankedParams(LevelParams):
    """Parameters shared by binary measures over a ranking: a cutoff and a relevance level."""

    k: int | None = Field(None, gt=0, description="cutoff: only the first k ranks count")


#: how a measure's per-query values combine into its value (`Measure.aggregator`)
Aggregator = Literal[
    "mean", "gmean", "sum", "exact_mean", "median", "p90", "p95", "p99", "max", "qps", "none"
]

#: the parameter model a measure's methods receive as `p`
ParamsT = TypeVar("ParamsT", bound=MeasureParams)


class Measure(ABC, Generic[ParamsT]):
    """A measure definition, generic in its parameter model. Subclasses set the class attributes
    and implement `per_query`. Written `class P(Measure[RankedParams])` with `Params =
    RankedParams`, a measure's methods take `p: RankedParams`, which a type checker reads; a
    plain `Measure` subclass (`p: Any`) is a `Measure[Any]` and works the same."""

    name: ClassVar[str]
    description: ClassVar[str]
    Params: ClassVar[type[MeasureParams]] = MeasureParams
    #: other names, each with the parameters it presets: {"map_cut": {}, "11pt_avg": {...}}
    aliases: ClassVar[dict[str, dict[str, Any]]] = {}
    #: the parameter that `@x` sets, or None if the measure takes no cutoff
    cutoff: ClassVar[str | None] = None
    #: parameters that must be given (besides the defaults), e.g. ("k",) for P
    required: ClassVar[tuple[str, ...]] = ()
    #: how per-query values combine: mean (trec_eval's: summed in query order), gmean (floor
    #: 1e-5, as trec_eval), sum, exact_mean (statistics.mean's correctly rounded mean, for values
    #: 0 or in [2^-47, 1]), a statistic over the queries (median, p90, p95, p99 as numpy's
    #: percentiles, max, or qps: values per second of their sum in milliseconds), or none
    aggregator: ClassVar[Aggregator] = "mean"
    #: what the runs it scores are: rankings (TREC runs, fused runs, tables of scores), generated
    #: answers' assignments to nuggets (`pipeline.inputs.assignments`) or generated answers
    #: themselves, their sentences and citations (`pipeline.inputs.answers`)
    reads: ClassVar[Literal["rankings", "assignments", "answers"]] = "rankings"
    #: number (a DOUBLE in `value`) or text (a VARCHAR in `text`, e.g. relstring)
    kind: ClassVar[Literal["number", "text"]] = "number"
    #: which aggregate is best, so the console can mark the best run: "higher", "lower", or None
    #: when runs are not better or worse by it: counts, diagnostics (Unjudged, IDCG), and means
    #: over a different set of queries per run (SearchLength leaves out queries with no hit)
    better: ClassVar[Literal["higher", "lower"] | None] = "higher"

    #: the value depends only on where judged documents (grade >= 0 or negative judgments) rank,
    #: on facts and on the ranking's length (`Columns.num_ret`), and `missing` is the value when
    #: no judged document is retrieved: the executor may then skip unjudged rows once ranked
    judged_rows_suffice: ClassVar[bool] = False
    #: whether dropping the unjudged documents (`judged_only`) is a question for it: not for a
    #: query's latency, nor for an answer's sentences (an uncited one is no unjudged document)
    judged_only_applies: ClassVar[bool] = True

    def judged_only_ok(self, p: ParamsT) -> bool:
        """Whether these parameters keep the value a function of judged rows (see the flag)."""
        gain = getattr(p, "gain", None)
        # a mapping that gives unjudged (-1) or negatively judged (-2) rows a gain needs them all
        gains_unjudged = isinstance(gain, dict) and any(grade < 0 for grade in gain)
        return self.judged_rows_suffice and not gains_unjudged

    def aggregated_by(self, p: ParamsT) -> Aggregator:
        """How per-query values combine under these parameters: the class's `aggregator`, unless
        a parameter chooses the statistic (`Latency(stat=p95)`)."""
        return self.aggregator

    def needs(self, p: ParamsT, c: Columns) -> Iterable[Need | Iterable[Need]]:
        """The derived columns `per_query`, `missing` and `empty` read, as `c`'s methods name
        them (`c.num_rel(2)`, `c.relevant_so_far(1)`, `c.ideal_totals(gain)`, `c.num_docs()`);
        none by default. Reading an undeclared one is an error naming the measure."""
        return ()

    @abstractmethod
    def per_query(self, p: ParamsT, c: Columns) -> str:
        """SQL aggregate expression giving the measure's value for one (run, query)."""

    def missing(self, p: ParamsT, c: Columns) -> str:
        """SQL expression over query facts (and `Columns.num_ret`, 0 when the run lacks the query)
        for a query none of whose retrieved documents is judged, or that the run lacks (default 0)."""
        return "0"

    def empty(self, p: ParamsT, c: Columns) -> str:
        """SQL value for a query the run answered but -J or -M emptied (default: as missing)."""
        return self.missing(p, c)
