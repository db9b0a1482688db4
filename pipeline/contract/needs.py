"""Derived columns as values: a `Need` names a column a measure reads and says how the compiler
builds it; `Requirements` is every need of a plan, by kind. Pure, no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from pipeline.errors import PluginError

__all__ = [
    "IdealAtRank", "IdealTotals", "Need", "NeedKind", "Requirements", "flatten", "level_tag",
]  # fmt: skip

#: window: a running value over the ranking (one ordered window for all); rank_window: a running
#: value ordered by `rank` (a second pass); judged_window: a per-judgment value over the qrels;
#: fact: a per-query aggregate over the qrels; ideal: the ideal ranking's columns at each rank;
#: length: the ranking's length; grades: the query's ranked grades as a list (Python measures);
#: tie: the row's tie (the rows the ordering's first key cannot tell apart): its first rank and size;
#: subtopic, subtopic_ideal, subtopic_fact: over subtopic judgments (`pipeline.contract.subtopics`);
#: latency: the run's time for the query (`runs.NAME.latency`), on every row of its ranking
NeedKind = Literal[
    "window", "rank_window", "judged_window", "fact", "ideal", "length", "grades", "tie",
    "subtopic", "subtopic_ideal", "subtopic_fact", "latency",
]  # fmt: skip


class Need(str):
    """A derived column: its name (the string itself), how it is built (`kind`, `sql`), the needs
    it is built from (`requires`) and the collection field it reads (`field`, e.g. num_docs).

    Immutable, and equal to another need exactly when the names are equal: a name encodes the
    definition (`cum_rel_2` is the running count of grades >= 2).
    """

    kind: NeedKind
    sql: str
    requires: tuple[Need, ...]
    field: str | None

    def __new__(
        cls,
        name: str,
        kind: NeedKind,
        sql: str,
        requires: tuple[Need, ...] = (),
        field: str | None = None,
    ) -> Need:
        self = super().__new__(cls, name)
        for key, value in (("kind", kind), ("sql", sql), ("requires", requires), ("field", field)):
            object.__setattr__(self, key, value)
        return self

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"a Need is immutable; cannot set {key}")

    def __repr__(self) -> str:
        return f"Need({str(self)!r}, {self.kind!r})"

    def closure(self) -> tuple[Need, ...]:
        """The needs this one is built from, then itself."""
        return (*(n for r in self.requires for n in r.closure()), self)


class IdealAtRank(Need):
    """The ideal ranking (positive gains, sorted by gain) at each row's rank; NULL beyond it.

    idcg: ideal DCG up to this position; cost: the sum of max(gain, 1) up to it; change: the ideal
    gain changes after this position; tail, tail_count: the sum of 1/idcg (and the count) over
    later positions followed by a change (trec_eval's Rndcg and G walk these).
    """

    PARTS = ("idcg", "cost", "change", "tail", "tail_count")

    @property
    def tag(self) -> str:
        return str(self).removeprefix("ideal_")

    def __getattr__(self, part: str) -> str:
        if part in IdealAtRank.PARTS:
            return f"{self}_{part}"
        raise AttributeError(part)


class IdealTotals(NamedTuple):
    """Facts of the whole ideal ranking: its length, sum of gains, sum of max(gain, 1), DCG."""

    length: Need
    gain: Need
    cost: Need
    dcg: Need


def flatten(needs: Iterable[Need | Iterable[Need]]) -> tuple[Need, ...]:
    """Needs as a measure lists them (needs, or groups such as `IdealTotals`), each with the needs
    it is built from, first seen first, once each."""
    found: dict[str, Need] = {}
    for item in needs:
        for need in [item] if isinstance(item, str) else item:
            if not isinstance(need, Need):
                raise PluginError(f"needs() must give Columns' needs, not {need!r}")
            found.update((str(n), n) for n in need.closure())
    return tuple(found.values())


@dataclass(frozen=True)
class Requirements:
    """Every derived column the compiler builds for a set of measures, by kind."""

    needs: tuple[Need, ...] = ()

    def of_kind(self, kind: NeedKind) -> dict[str, str]:
        """{name: SQL} of the needs of one kind, in the order they were first declared."""
        return {str(n): n.sql for n in self.needs if n.kind == kind}

    def has(self, kind: NeedKind) -> bool:
        return any(n.kind == kind for n in self.needs)

    @property
    def ideal_lists(self) -> dict[str, str]:
        """{tag: SQL gain of `rel`} of each ideal ranking needed beside the rows."""
        return {n.tag: n.sql for n in self.needs if isinstance(n, IdealAtRank)}

    @property
    def fields(self) -> tuple[str, ...]:
        """Collection fields read (each must be set in the spec's collection)."""
        return tuple(dict.fromkeys(n.field for n in self.needs if n.field))


def level_tag(level: int | float) -> str:
    """A relevance level (or grade) as part of a need's name: `2`, `m1` for -1; a decimal one
    (`grades: real`) keeps its digits, 0.5 is `0p5`, never the level 0's `0`."""
    text = str(int(level)) if isinstance(level, int) else repr(float(level)).replace(".", "p")
    return text.replace("-", "m").replace("+", "")
