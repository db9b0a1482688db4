"""Generated answers' sample data: nuggets and two runs of assignments, as nuggetizer writes them
(TREC RAG's nugget evaluation), for the guide's example (configs/README.md, "Evaluating generated
answers"), made again byte for byte from a seed.

The two runs answer differently: `concise` supports fewer nuggets but fully, `hedging` more of
them in part, so that the order of the runs turns between the scores that count a partial
support (0.5) and the strict ones that do not.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

__all__ = ["CITING_RUNS", "RUNS", "write_answers", "write_citations"]

#: each run's chance of supporting a nugget fully, and in part
RUNS = {"concise": (0.45, 0.05), "hedging": (0.25, 0.5)}


def _nuggets(rng: random.Random, topics: int) -> dict[str, list[dict]]:
    """Each topic's nuggets: 3 to 12, vital first (nuggetizer sorts them so)."""
    found = {}
    for t in range(topics):
        count = rng.randint(3, 12)
        vital = rng.randint(1, count)
        found[str(2024_001 + t)] = [
            {"text": f"topic {t + 1} fact {i + 1}", "importance": "vital" if i < vital else "okay"}
            for i in range(count)
        ]
    return found


def _label(rng: random.Random, full: float, partial: float) -> str:
    draw = rng.random()
    return (
        "support" if draw < full else "partial_support" if draw < full + partial else "not_support"
    )


def _lines(records: list[dict]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def write_answers(directory: str | Path, seed: int = 2026, topics: int = 30) -> None:
    """`nuggets.jsonl` and one assignments file per run of `RUNS` in `directory`; each run
    leaves one topic unanswered."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    nuggets = _nuggets(rng, topics)
    records = [{"qid": q, "query": f"question {q}", "nuggets": n} for q, n in nuggets.items()]
    (directory / "nuggets.jsonl").write_text(_lines(records), encoding="utf-8")
    for run, (full, partial) in RUNS.items():
        skipped = rng.choice(list(nuggets))
        answered = [
            {"qid": q, "run_id": run,
             "nuggets": [{**n, "assignment": _label(rng, full, partial)} for n in found]}
            for q, found in nuggets.items() if q != skipped
        ]  # fmt: skip
        (directory / f"{run}.jsonl").write_text(_lines(answered), encoding="utf-8")


#: each answering run: its year's format, its chance of leaving a sentence uncited, the
#: citations of a cited sentence, and its chances of full and partial support of a citation
CITING_RUNS = {
    "careful": ("2024", 0.35, (1, 1), (0.7, 0.2)),
    "generous": ("2025", 0.05, (1, 3), (0.4, 0.25)),
}
_WORDS = [
    "the",
    "a",
    "of",
    "retrieval",
    "answer",
    "evidence",
    "system",
    "passage",
    "claim",
    "study",
    "data",
    "result",
]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 18))).capitalize() + "."


def _answer(rng: random.Random, references: list[str], uncited: float, cites: tuple[int, int]):
    """An answer's sentences, each with the indices of the references it cites."""
    sentences = []
    for _ in range(rng.randint(2, 6)):
        count = 0 if rng.random() < uncited else rng.randint(*cites)
        sentences.append((_sentence(rng), sorted(rng.sample(range(len(references)), count))))
    return sentences


def _answer_line(run: str, year: str, qid: str, references: list[str], sentences) -> dict:
    """An answer as the year's track writes it: 2024 cites by index, 2025 by docid."""
    if year == "2024":
        answer = [{"text": text, "citations": cited} for text, cited in sentences]
        return {"run_id": run, "topic_id": qid, "references": references, "answer": answer}
    answer = [{"text": t, "citations": [references[i] for i in cited]} for t, cited in sentences]
    metadata = {"team_id": "irpipe", "run_id": run, "type": "automatic", "narrative_id": qid}
    return {"metadata": metadata, "references": references, "answer": answer}


def _support(rng: random.Random, full: float, partial: float) -> int:
    draw = rng.random()
    return 2 if draw < full else 1 if draw < full + partial else 0


def write_citations(directory: str | Path, seed: int = 2026, topics: int = 30) -> None:
    """One answers file per run of `CITING_RUNS` in `directory`, each leaving one topic
    unanswered, and `support.txt`: a support judgment of every citation."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    judgments = []
    for run, (year, uncited, cites, (full, partial)) in CITING_RUNS.items():
        skipped, lines = rng.randrange(topics), []
        for t in range(topics):
            qid, refs = str(2024_001 + t), [f"msmarco_v2.1_doc_{t}_{i}" for i in range(20)]
            sentences = _answer(rng, refs, uncited, cites) if t != skipped else []
            if t != skipped:
                lines.append(_answer_line(run, year, qid, refs, sentences))
            judgments += [
                f"{run} {qid} {s} {refs[i]} {_support(rng, full, partial)}\n"
                for s, (_, cited) in enumerate(sentences) for i in cited
            ]  # fmt: skip
        (directory / f"{run}.jsonl").write_text(_lines(lines), encoding="utf-8")
    (directory / "support.txt").write_text("".join(judgments), encoding="utf-8")
