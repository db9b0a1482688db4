"""Deterministic synthetic test collections: qrels and runs with every hard case in them.

Used by the tests (differential checks against pytrec_eval) and to make the quickstart's sample data.
A collection has graded judgments (0..max_grade), negative judgments, queries with no relevant
document, queries absent from a run, run-only queries, retrieved documents that were never judged,
relevant documents never retrieved, and score ties (also ties that only exist in float32).
With `extremes`, every collection also has the cases a random draw may miss (see `EXTREMES`); the
conformance kit (`pipeline.testing`) evaluates measures on such collections. `soft_labels` turns a
collection's grades into decimals (`grades: real`): whole ones written as decimals, or soft labels.
"""

from __future__ import annotations

import gzip
import random
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "EXTREMES",
    "SUITE_COLLECTIONS",
    "SUITE_RUNS",
    "Collection",
    "SubtopicCollection",
    "generate",
    "generate_subtopics",
    "llm_judgments",
    "soft_labels",
    "write_beir_qrels",
    "write_qrels",
    "write_run",
    "write_subtopic_qrels",
    "write_suite",
]

#: The queries `generate(..., extremes=True)` adds: qid -> what makes it hard.
EXTREMES = {
    "900": "every judgment is negative (no judged grade >= 0)",
    "901": "the runs retrieve only documents the qrels do not judge",
    "902": "every retrieved document has one score, so docno alone orders them (unless not ties)",
    "903": "judged, with relevant documents, and no run retrieves anything for it",
}


@dataclass
class Collection:
    """qrels[qid][docno] = grade and runs[name][qid][docno] = score."""

    qrels: dict[str, dict[str, int | float]] = field(default_factory=dict)
    runs: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


def generate(
    seed: int,
    queries: int = 12,
    runs: int = 2,
    max_grade: int = 3,
    float32_ties: bool = True,
    skill: tuple[float, ...] = (),
    ties: bool = True,
    extremes: bool = False,
) -> Collection:
    """A random collection; the same seed always gives the same collection.

    `float32_ties` adds scores that differ from another by a relative 1e-12: distinct doubles that
    trec_eval 9.x (which stored float32) sees as ties. `skill[r]` raises the scores of run r's
    relevant documents by skill × grade, so that runs differ in quality (default: random runs).
    `ties=False` gives every document of a ranking its own score (with no skill). `extremes` adds
    the queries of `EXTREMES`.
    """
    rng = random.Random(seed)
    qids = [_qid(i) for i in range(queries)]
    collection = Collection()
    for qid in qids:
        collection.qrels[qid] = _judgments(rng, qid, max_grade)
    for r in range(runs):
        answered = [q for q in qids if rng.random() > 0.15]  # some qrels queries are missing
        answered.append(f"run_only_{r}")
        boost = skill[r] if r < len(skill) else 0.0
        collection.runs[f"run{r}"] = {
            q: _ranking(rng, float32_ties, collection.qrels.get(q, {}), boost, ties)
            for q in answered
        }
    if extremes:
        _add_extremes(random.Random(f"extremes {seed}"), collection, max_grade, ties)
    return collection


def _qid(i: int) -> str:
    # Mixed-width numeric ids, so that bytewise and numeric order differ ("10" < "9").
    return str(i * 7 % 23 + (i // 23) * 100)


def _judgments(rng: random.Random, qid: str, max_grade: int) -> dict[str, int]:
    pool = rng.randint(1, 30)
    judged = {}
    no_relevant = rng.random() < 0.15
    for d in rng.sample(range(60), pool):
        grade = 0 if no_relevant else rng.choice([0, 0, 0, *range(1, max_grade + 1)])
        if rng.random() < 0.08:
            grade = rng.choice([-1, -2])  # a negative judgment ("pooled but unjudged")
        judged[f"d{d}"] = grade
    return judged


def _ranking(
    rng: random.Random, float32_ties: bool, judged: dict[str, int], boost: float, ties: bool = True
) -> dict[str, float]:
    depth = rng.randint(1, 40)
    docs = rng.sample(range(60), depth)  # some judged, some not
    scores: dict[str, float] = {}
    level = rng.uniform(5, 20)
    for d in docs:
        roll = rng.random()
        if not ties:
            # Steps of at least 1e-3 at 6 decimals: no two scores round to the same value.
            level -= rng.uniform(1e-3, 1)
            score = round(level, 6)
        elif roll < 0.25 and scores:
            score = rng.choice(list(scores.values()))  # an exact tie
        elif roll < 0.35 and scores and float32_ties:
            score = rng.choice(list(scores.values())) * (1 + 1e-12)  # ties only in float32
        else:
            level -= rng.uniform(0, 1)
            score = round(level, rng.choice([1, 3, 6]))
        scores[f"d{d}"] = score
    for docno in scores:
        if boost and judged.get(docno, 0) > 0:
            scores[docno] = round(scores[docno] + boost * judged[docno], 6)
    return scores


def _add_extremes(rng: random.Random, collection: Collection, max_grade: int, ties: bool) -> None:
    """The queries of `EXTREMES`, in the qrels and in every run (but 903)."""
    grades = range(max_grade + 1)
    qrels = collection.qrels
    qrels["900"] = {f"d{d}": rng.choice([-1, -2]) for d in range(6)}
    qrels["901"] = {f"d{d}": rng.choice(grades) for d in range(10)}
    qrels["902"] = {f"d{d}": rng.choice(grades) for d in range(20)}
    qrels["903"] = {f"d{d}": d % (max_grade + 1) for d in range(8)}
    for run in collection.runs.values():
        run["900"] = _scored(rng, [f"d{d}" for d in range(0, 12, 2)], ties)
        run["901"] = _scored(rng, [f"d{d}" for d in range(40, 40 + rng.randint(1, 15))], ties)
        docs = [f"d{d}" for d in rng.sample(range(30), 25)]
        run["902"] = _scored(rng, docs, ties) if not ties else dict.fromkeys(docs, 1.0)


def _scored(rng: random.Random, docs: list[str], ties: bool) -> dict[str, float]:
    """Scores for docs: distinct unless `ties`, when about half share one score."""
    shared = round(rng.uniform(0, 10), 1)
    return {
        d: shared if ties and rng.random() < 0.5 else round(20 - i - rng.random() / 2, 6)
        for i, d in enumerate(docs)
    }


@dataclass
class SubtopicCollection:
    """qrels[qid][docno][subtopic] = grade (ndeval's qrels) and runs[name][qid][docno] = score."""

    qrels: dict[str, dict[str, dict[int, int]]] = field(default_factory=dict)
    runs: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def max_grades(self) -> dict[str, dict[str, int]]:
        """Each judged document's highest grade over its subtopics: ordinary qrels."""
        return {q: {d: max(s.values()) for d, s in docs.items()} for q, docs in self.qrels.items()}

    def soft_labels(self, seed: int, whole: bool = False) -> dict[str, dict[str, dict[int, float]]]:
        """The subtopic qrels' grades as decimals, each (document, subtopic) pair's grade as
        `soft_labels` makes a document's: whole grades as floats (`whole`), else soft labels."""
        pairs = {q: {(d, s): g for d, st in docs.items() for s, g in st.items()}
                 for q, docs in self.qrels.items()}  # fmt: skip
        soft: dict[str, dict[str, dict[int, float]]] = {}
        for q, graded in soft_labels(pairs, seed, whole).items():
            for (d, s), g in graded.items():
                soft.setdefault(q, {}).setdefault(d, {})[s] = g
        return soft


def generate_subtopics(seed: int, queries: int = 12, runs: int = 2) -> SubtopicCollection:
    """A random collection of subtopic qrels (the TREC Web track's diversity qrels) with every
    hard case: graded and zero grades (and a few negative ones), documents relevant to several
    subtopics, subtopics numbered with gaps and no relevant document, a query with no relevant
    document at all, queries a run lacks, unjudged documents retrieved, and score ties."""
    rng = random.Random(f"subtopics {seed}")
    collection = SubtopicCollection()
    for i in range(queries):
        collection.qrels[_qid(i)] = _subtopic_judgments(rng, nothing_relevant=i == 1)
    for r in range(runs):
        answered = [q for q in collection.qrels if rng.random() > 0.15]
        answered.append(f"run_only_{r}")
        qrels = collection.max_grades()
        collection.runs[f"run{r}"] = {
            q: _ranking(rng, False, qrels.get(q, {}), rng.choice([0.0, 3.0])) for q in answered
        }
    return collection


def _subtopic_judgments(rng: random.Random, nothing_relevant: bool) -> dict[str, dict[int, int]]:
    subtopics = sorted(rng.sample(range(1, 13), rng.randint(1, 6)))  # gaps: 1, 4, 11
    judged: dict[str, dict[int, int]] = {}
    for d in rng.sample(range(60), rng.randint(1, 40)):
        covered = rng.sample(subtopics, rng.randint(1, len(subtopics)))
        grades = [0, 0, 1, 1, 2, 3, -2] if not nothing_relevant else [0, 0, -2]
        judged[f"d{d}"] = {s: rng.choice(grades) for s in covered}
    return judged


def write_subtopic_qrels(qrels: dict[str, dict[str, dict[int, int | float]]], path: Path) -> None:
    """ndeval's qrels: qid subtopic docno grade (a decimal grade as Python writes it: `2.0`)."""
    lines = [
        f"{q} {s} {d} {g}"
        for q, docs in qrels.items()
        for d, subtopics in docs.items()
        for s, g in subtopics.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def llm_judgments(
    qrels: dict[str, dict[str, int]],
    seed: int,
    max_grade: int = 3,
    lenient: float = 0.4,
    coverage: float = 0.85,
    extra: int = 6,
) -> dict[str, dict[str, int]]:
    """A second judgment set of the same queries, erring as an LLM judge errs: leniently on
    related documents. A document the qrels judge is judged again with probability `coverage`
    (pairs missing on this side), and a query now and then not at all; one judged not relevant
    (grade 0, or negative: judged but unusable, which a judge calls 0) is related to the topic,
    since it was pooled, and is called relevant (1, sometimes 2) with probability `lenient`; a
    relevant one keeps its grade, or drifts one grade either way. Up to `extra` documents per
    query that the qrels never judged get labels too, mostly 0 and 1 (pairs missing on the
    qrels' side). The same seed always gives the same labels."""
    rng = random.Random(f"llm {seed}")
    judged: dict[str, dict[str, int]] = {}
    for qid, docs in qrels.items():
        if rng.random() < 0.05:
            continue  # a query this judge never saw
        labels = {d: _llm_grade(rng, g, max_grade, lenient) for d, g in docs.items()
                  if rng.random() < coverage}  # fmt: skip
        unjudged = [f"d{d}" for d in range(60, 90)]
        for docno in rng.sample(unjudged, rng.randint(0, extra)):
            labels[docno] = rng.choice([0, 0, 0, 1, 1, min(2, max_grade)])
        judged[qid] = labels
    return judged


def _llm_grade(rng: random.Random, grade: int, max_grade: int, lenient: float) -> int:
    if grade <= 0:
        return rng.choice([1, 1, min(2, max_grade)]) if rng.random() < lenient else 0
    drift = rng.choice([0, 0, 0, -1, 1])
    return min(max(grade + drift, 0), max_grade)


#: soft labels a draw may miss: the usual relevance level of probabilities, and its neighbours
_SOFT_EDGES = (0.0, 0.5, 0.49999, 0.50001, 1.0)


def soft_labels(
    qrels: dict[str, dict[str, int | float]], seed: int, whole: bool = False
) -> dict[str, dict[str, float | int]]:
    """The qrels' grades as decimals, negative judgments kept as they are: with `whole`, each
    grade g >= 0 as the float g (`2.0`: decimal text that means the integer); else a soft
    label, as an LLM judge gives a probability or a score: a decimal in [0, max grade] of 1 to
    4 digits, some exactly 0, 0.5 (the usual level), just either side of it or 1, some a whole
    grade the query has (ties in the ideal ranking). The same seed gives the same labels."""
    rng = random.Random(f"soft {seed}")
    top = max((g for docs in qrels.values() for g in docs.values()), default=1) or 1
    return {
        q: {
            d: g if g < 0 else float(g) if whole else _soft(rng, top, docs) for d, g in docs.items()
        }
        for q, docs in qrels.items()
    }


def _soft(rng: random.Random, top: float, docs: dict) -> float:
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(_SOFT_EDGES)
    if roll < 0.25:
        return float(rng.choice([g for g in docs.values() if g >= 0] or [0]))
    return round(rng.uniform(0, top), rng.randint(1, 4))


def write_qrels(qrels: dict[str, dict[str, int | float]], path: Path) -> None:
    """TREC qrels: qid iter docno rel (a decimal grade as Python writes it: `0.7`, `2.0`)."""
    lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_beir_qrels(qrels: dict[str, dict[str, int | float]], path: Path) -> None:
    """BEIR's (and MTEB's) qrels: a header line, then query-id, corpus-id, score, tab-separated;
    gzip-compressed when `path` ends in .gz."""
    lines = ["query-id\tcorpus-id\tscore"]
    lines += [f"{q}\t{d}\t{g}" for q, docs in qrels.items() for d, g in docs.items()]
    text = "\n".join(lines) + "\n"
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        path.write_text(text, encoding="utf-8")


def write_run(run: dict[str, dict[str, float]], path: Path, tag: str = "run") -> None:
    """TREC run: qid Q0 docno rank score tag; ranks as a system would print them."""
    lines = []
    for q, docs in run.items():
        ordered = sorted(docs.items(), key=lambda item: -item[1])
        lines += [f"{q} Q0 {d} {i} {s!r} {tag}" for i, (d, s) in enumerate(ordered, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_sample(directory: str | Path, seed: int = 2026) -> None:
    """The quickstart's sample data: one collection of 50 queries and two runs."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    collection = generate(seed, queries=50, runs=2, float32_ties=False, skill=(4.0, 6.0))
    write_qrels(collection.qrels, directory / "qrels.txt")
    for name, run in zip(("bm25", "dense"), collection.runs.values(), strict=True):
        write_run(run, directory / f"{name}.trec", tag=name)


#: a suite's collections and runs as `write_suite` names them (the guide's BEIR-style table)
SUITE_COLLECTIONS = ("news", "finance", "science")
SUITE_RUNS = ("bm25", "dense", "hybrid")


def write_suite(
    directory: str | Path,
    seed: int = 2026,
    queries: int = 30,
    collections: tuple[str, ...] = SUITE_COLLECTIONS,
    runs: tuple[str, ...] = SUITE_RUNS,
    skill: tuple[float, ...] = (1.0, 6.0, 30.0),
) -> None:
    """A suite of collections, BEIR's layout: `<collection>/qrels.txt` and one file per run,
    `<collection>/<run>.trec`, each collection drawn with its own seed (query ids repeat across
    collections, as BEIR's numeric ids do), runs of growing `skill` (`generate`'s)."""
    directory = Path(directory)
    for i, name in enumerate(collections):
        folder = directory / name
        folder.mkdir(parents=True, exist_ok=True)
        drawn = generate(seed + i, queries=queries, runs=len(runs), float32_ties=False, skill=skill)
        write_qrels(drawn.qrels, folder / "qrels.txt")
        for run, ranking in zip(runs, drawn.runs.values(), strict=True):
            write_run(ranking, folder / f"{run}.trec", tag=run)
