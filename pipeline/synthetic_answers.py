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

__all__ = ["RUNS", "write_answers"]

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
