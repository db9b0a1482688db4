"""The everyday data sets (trec_like.py's model, trec_text.py's whitespace), deterministic.

  track    20 submissions to a TREC track, `input.<tag>`: 50 topics × 1,000 documents, mostly tabs;
           the qrels pool the first run of each of the 10 groups to depth 50.
  grid     100 runs of a BM25 grid search (10 k1 × 10 b) on the track's topics and qrels, 100
           documents each, each run's whitespace drawn as if different scripts wrote them.
  run100k  one 100,000-line run (100 topics × 1,000 documents) on its own collection, whose qrels
           pool 12 other systems to depth 30; the run and the qrels mix tabs and spaces in a line.
  nightly  20 runs of 100,000 lines (100 topics × 1,000 documents) on run100k's collection: the
           runs a nightly job evaluates (the history suite), tab-separated.
  pooling  100 runs of 50 topics × 1,000 documents, whose qrels pool all 100 to depth 100: the
           collection the pools suite pools again and leaves each run out of.

Everything is computed from fixed seeds on every call (about a second); files are written only if
they are missing, and the figures that describe the data come from the same arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from trec_like import Topics, make_topics, pool, qrels_columns, ranking, run_columns, scores
from trec_text import write_columns

__all__ = ["EVERYDAY", "Dataset", "write_everyday"]

TRACK_SEED, RUN100K_SEED, POOLING_SEED = 2024, 2025, 2026
GROUPS = ["alder", "birch", "cedar", "elm", "fir", "hazel", "larch", "maple", "oak", "yew"]
GRID_K1 = [0.5 + i / 10 for i in range(10)]
GRID_B = [0.1 + i / 10 for i in range(10)]


@dataclass(frozen=True)
class System:
    """One run to write: file name, tag, exact scores, ranking, printed scores, whitespace style."""

    file: str
    tag: str
    exact: np.ndarray
    ranked: np.ndarray
    printed: tuple[float, int]  # (offset, decimals)
    style: str


@dataclass(frozen=True)
class Dataset:
    """Paths of the qrels and runs, and a paragraph describing them for the report."""

    qrels: Path
    runs: list[Path]
    about: str


def _rng(*key: int) -> np.random.Generator:
    # One stream per (seed, purpose, index): adding a run never changes the others.
    return np.random.default_rng(list(key))


def _track() -> tuple[Topics, list[System], np.ndarray]:
    """The track's topics, its 20 submissions, and the judged mask of their pool."""
    topics = make_topics(_rng(TRACK_SEED, 0), 401, 50)
    systems = [_submission(topics, i) for i in range(2 * len(GROUPS))]
    judged = pool(topics, [s.ranked for s in systems[::2]], 50)
    return topics, systems, judged


def _submission(topics: Topics, i: int) -> System:
    """Group i // 2's run i % 2; every fifth run was edited by a script that wrote spaces."""
    rng = _rng(TRACK_SEED, 1, i)
    exact = _system(topics, rng)
    tag = f"{GROUPS[i // 2]}{('Lex', 'Neu')[i % 2]}{i // 2 + 1}"
    printed = (float(rng.choice([0, 10, -30])), int(rng.choice([3, 4, 4, 6])))
    style = "mostly tabs" if i % 5 == 4 else "tabs"
    return System(f"input.{tag}", tag, exact, ranking(exact, 1000), printed, style)


def _system(topics: Topics, rng: np.random.Generator) -> np.ndarray:
    """Exact scores of a system of its own: some quality, some noise (one of a track's or pool's)."""
    return scores(topics, rng.uniform(0.4, 2.0), rng.uniform(0.6, 1.4) * _noise(rng, topics))


def _noise(rng: np.random.Generator, topics: Topics) -> np.ndarray:
    """Standard normal noise, one value per candidate document."""
    return rng.normal(size=topics.grades.shape)


def _grid(topics: Topics) -> list[System]:
    """BM25 over a k1 × b grid: one system's noise, quality peaking at k1 0.9, b 0.4."""
    shared = _noise(_rng(TRACK_SEED, 2), topics)
    styles = _rng(TRACK_SEED, 3).choice(
        ["spaces", "tabs", "padded", "mixed"], size=100, p=[0.4, 0.3, 0.15, 0.15]
    )
    return [
        _grid_run(topics, k1, b, shared, str(styles[i]), _rng(TRACK_SEED, 4, i))
        for i, (k1, b) in enumerate((k1, b) for k1 in GRID_K1 for b in GRID_B)
    ]


def _grid_run(
    topics: Topics, k1: float, b: float, shared: np.ndarray, style: str, rng: np.random.Generator
) -> System:
    """One grid point: mostly the system's shared noise, a little of its own, 100 deep."""
    quality = 1.6 - 1.2 * ((k1 - 0.9) ** 2 + (b - 0.4) ** 2)
    exact = scores(topics, quality, shared + 0.3 * _noise(rng, topics))
    tag = f"bm25-k1_{k1:.1f}-b_{b:.1f}"
    return System(f"{tag}.trec", tag, exact, ranking(exact, 100), (15.0, 4), style)


def _run100k() -> tuple[Topics, list[System], np.ndarray]:
    """100 topics; the pool of 12 systems to depth 30; one further system, 1,000 deep."""
    topics = make_topics(_rng(RUN100K_SEED, 0), 201, 100)
    pooled = [ranking(_system(topics, _rng(RUN100K_SEED, 1, i)), 30) for i in range(12)]
    rng = _rng(RUN100K_SEED, 2)
    exact = scores(topics, 1.2, _noise(rng, topics))
    run = System("run.trec", "dense", exact, ranking(exact, 1000), (-20.0, 3), "mixed")
    return topics, [run], pool(topics, pooled, 30)


def _nightly() -> tuple[Topics, list[System], np.ndarray]:
    """run100k's topics and pool; 20 systems of their own, 1,000 deep."""
    topics, _, judged = _run100k()
    systems = []
    for i in range(20):
        exact = _system(topics, _rng(RUN100K_SEED, 3, i))
        systems.append(System(f"input.night{i:02d}", f"night{i:02d}", exact, ranking(exact, 1000),
                              (0.0, 4), "tabs"))  # fmt: skip
    return topics, systems, judged


def _pooling() -> tuple[Topics, list[System], np.ndarray]:
    """50 topics; 100 systems 1,000 deep, pooled to depth 100."""
    topics = make_topics(_rng(POOLING_SEED, 0), 501, 50)
    systems = []
    for i in range(100):
        exact = _system(topics, _rng(POOLING_SEED, 1, i))
        systems.append(System(f"input.pool{i:03d}", f"pool{i:03d}", exact, ranking(exact, 1000),
                              (0.0, 4), "tabs"))  # fmt: skip
    return topics, systems, pool(topics, [s.ranked for s in systems], 100)


def _everyday(name: str) -> tuple[Topics, list[System], np.ndarray, str, str]:
    """(topics, runs, judged, qrels directory, qrels style) of one data set."""
    if name == "pooling":
        return (*_pooling(), "pooling", "tabs")
    if name == "run100k":
        return (*_run100k(), "run100k", "mixed")
    if name == "nightly":
        return (*_nightly(), "run100k", "mixed")
    topics, systems, judged = _track()
    return topics, _grid(topics) if name == "grid" else systems, judged, "track", "spaces"


EVERYDAY = ["track", "grid", "run100k", "nightly", "pooling"]


def write_everyday(data: Path, name: str) -> Dataset:
    """Write one of EVERYDAY under `data` (qrels and runs that are missing) and describe it."""
    topics, systems, judged, home, qrels_style = _everyday(name)
    qrels = data / home / "qrels.txt"
    key = EVERYDAY.index(name)
    write_columns(qrels, qrels_columns(topics, judged), qrels_style, _rng(TRACK_SEED, 5, key))
    runs = []
    for i, system in enumerate(systems):
        columns = run_columns(topics, system.exact, system.ranked, system.tag, system.printed)
        runs.append(data / name / "runs" / system.file)
        write_columns(runs[-1], columns, system.style, _rng(TRACK_SEED, 6, key, i))
    about = [_runs(systems), _qrels(topics, judged), _retrieved(topics, systems, judged)]
    return Dataset(qrels, runs, "; ".join(about) + ".")


def _runs(systems: list[System]) -> str:
    lines = sum(s.ranked.size for s in systems)
    styles = ", ".join(sorted({s.style for s in systems}))
    if len(systems) == 1:
        return f"1 run, {lines:,} lines (whitespace: {styles})"
    return f"{len(systems)} runs, {lines:,} lines in all (whitespace: {styles})"


def _qrels(topics: Topics, judged: np.ndarray) -> str:
    per_topic = judged.sum(axis=1)
    shares = np.bincount(topics.grades[judged], minlength=3) / judged.sum()
    grades = "/".join(f"{share:.0%}" for share in shares)
    return (
        f"qrels: {len(topics.qids)} topics, {judged.sum():,} judgments "
        f"({per_topic.min()}–{per_topic.max()} a topic; grades 0/1/2: {grades})"
    )


def _retrieved(topics: Topics, systems: list[System], judged: np.ndarray) -> str:
    """What the runs retrieve of the judgments, and how often printed scores tie."""
    rows = np.arange(len(topics.qids))[:, None]
    found = np.zeros_like(judged)
    unjudged, top10, ties = [], [], []
    for s in systems:
        found[rows, s.ranked] = True
        unjudged.append(1 - judged[rows, s.ranked].mean())
        top10.append(1 - judged[rows, s.ranked[:, :10]].mean())
        printed = np.round(s.exact[rows, s.ranked] + s.printed[0], s.printed[1])
        ties.append((printed[:, 1:] == printed[:, :-1]).mean())
    relevant = judged & (topics.grades > 0)
    missed = (relevant & ~found).sum() / relevant.sum()
    return (
        f"judged relevant documents no run retrieves: {missed:.0%}; retrieved documents unjudged: "
        f"{np.mean(unjudged):.0%} (in the top 10: {np.mean(top10):.0%}); rows tied on score with "
        f"the row above: {_span(ties, '.1%')}"
    )


def _span(values: list[float], spec: str) -> str:
    """One value, or the range of several runs' values."""
    low, high = format(min(values), spec), format(max(values), spec)
    return low if len(values) == 1 else f"{low}–{high} a run"
