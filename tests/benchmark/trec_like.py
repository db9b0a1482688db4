"""A TREC-like test collection in numpy: topics, simulated systems, pooled graded qrels.

Each topic has a universe of candidate documents, each with a latent grade (0-2) and a match signal
that every system sees alike; a system scores a document as quality × grade + signal + noise of its
own and ranks its best `depth`. The qrels are a pool, as a track builds them: the top `pool_depth`
of the pooled systems, plus the relevant documents that only manual runs found (their signal is so
low that no system retrieves them). So judgments cluster at the top of the rankings, deep ranks and
systems outside the pool meet unjudged documents, some relevant documents are never retrieved, and
scores printed with few decimals tie.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Topics", "make_topics", "pool", "qrels_columns", "ranking", "run_columns", "scores"]

UNIVERSE = 4000  # candidate documents per topic: four times a 1,000-deep ranking
# Docnos of TREC disks 4 and 5 come in four shapes and lengths (FBIS3-10082, FT921-1234,
# LA010189-0001, FR940104-0-00001): bytewise tie-breaking sees that, and DuckDB's string hash gives
# distinct 16-byte Federal Register docnos one value now and then, as in real runs.
SHAPES = 4


@dataclass(frozen=True)
class Topics:
    """Per topic (rows) and candidate document (columns): docno, latent grade, shared signal."""

    qids: np.ndarray  # (topics,) str
    docnos: np.ndarray  # (topics, UNIVERSE) str, distinct within a topic
    grades: np.ndarray  # (topics, UNIVERSE) 0, 1 or 2
    signal: np.ndarray  # (topics, UNIVERSE) what every system sees of the match
    manual: np.ndarray  # (topics, UNIVERSE) relevant, found only by manual runs


def make_topics(rng: np.random.Generator, first_qid: int, count: int) -> Topics:
    """`count` topics numbered from `first_qid`, 1-6% of each universe relevant."""
    shape = (count, UNIVERSE)
    # Increasing ids keep docnos distinct within a topic; topics share a range, as in a corpus.
    ids = rng.integers(0, 400_000, size=(count, 1)) + np.cumsum(rng.integers(1, 200, shape), 1)
    docnos = _docnos(ids)
    relevant = rng.random(shape) < rng.uniform(0.01, 0.06, size=(count, 1))
    grades = relevant * np.where(rng.random(shape) < 0.35, 2, 1)
    manual = relevant & (rng.random(shape) < 0.04)
    # How clearly a topic's documents match differs: systems agree more on easy topics (small pools).
    clarity = rng.uniform(0.4, 2.5, size=(count, 1))
    signal = clarity * rng.normal(size=shape) - 10.0 * manual
    qids = np.arange(first_qid, first_qid + count).astype(str)
    return Topics(qids, docnos, grades, signal, manual)


def _docnos(ids: np.ndarray) -> np.ndarray:
    """A docno of one of the four shapes for each id; distinct ids give distinct docnos."""
    kind, n = ids % SHAPES, ids // SHAPES
    month, day = (n % 12 + 1).astype(str), (n // 12 % 31 + 1).astype(str)
    date = np.char.add(np.char.zfill(month, 2), np.char.zfill(day, 2))  # MMDD, then the item
    fbis = np.char.add("FBIS3-", n.astype(str))
    ft = _join(
        "FT9", (n % 4 + 1).astype(str), (n // 4 % 4 + 1).astype(str), "-", (n // 16).astype(str)
    )
    la = _join("LA", date, "89-", np.char.zfill((n // 372).astype(str), 4))
    fr = _join(
        "FR94", date, "-", (n // 372 % 2).astype(str), "-", np.char.zfill((n // 744).astype(str), 5)
    )
    return np.select([kind == 0, kind == 1, kind == 2], [fbis, ft, la], fr)


def _join(*parts) -> np.ndarray:
    joined = parts[0]
    for part in parts[1:]:
        joined = np.char.add(joined, part)
    return joined


def scores(topics: Topics, quality: float, noise: np.ndarray) -> np.ndarray:
    """A system's exact scores for every candidate: better systems weigh the grade more."""
    return quality * topics.grades + topics.signal + noise


def ranking(exact: np.ndarray, depth: int) -> np.ndarray:
    """Column indices of each topic's best `depth` candidates, best first (the system's order)."""
    return np.argsort(-exact, axis=1, kind="stable")[:, :depth]


def pool(topics: Topics, pooled: list[np.ndarray], depth: int) -> np.ndarray:
    """Which candidates are judged: the top `depth` of each pooled ranking, and the manual finds."""
    judged = topics.manual.copy()
    rows = np.arange(len(topics.qids))[:, None]
    for ranked in pooled:
        judged[rows, ranked[:, :depth]] = True
    return judged


def qrels_columns(topics: Topics, judged: np.ndarray) -> list[np.ndarray]:
    """[qid, iter, docno, grade] of the judged candidates, by topic and then docno (bytewise)."""
    topic, column = np.nonzero(judged)
    docnos = topics.docnos[topic, column]
    order = np.lexsort((docnos, topic))
    topic, column, docnos = topic[order], column[order], docnos[order]
    zeros = np.zeros(len(topic), dtype=int)
    return [topics.qids[topic], zeros, docnos, topics.grades[topic, column]]


def run_columns(
    topics: Topics, exact: np.ndarray, ranked: np.ndarray, tag: str, printed: tuple[float, int]
) -> list[np.ndarray]:
    """[qid, Q0, docno, rank, score, tag] in the system's order, scores printed as `printed`.

    `printed` is (offset, decimals): the score written is exact + offset, rounded. Rounding ties
    documents the system told apart; the file keeps the system's order, not trec_eval's.
    """
    rows = np.arange(len(topics.qids))[:, None]
    count, depth = ranked.shape
    offset, decimals = printed
    values = np.round(exact[rows, ranked] + offset, decimals).ravel() + 0.0  # no "-0.00"
    return [
        np.repeat(topics.qids, depth),
        np.full(count * depth, "Q0"),
        topics.docnos[rows, ranked].ravel(),
        np.tile(np.arange(1, depth + 1), count),
        np.char.mod(f"%.{decimals}f", values),
        np.full(count * depth, tag),
    ]
