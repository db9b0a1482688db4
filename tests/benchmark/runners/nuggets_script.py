"""The answers suite's reference: a plain Python script that reads every run's assignment JSON
lines and computes, per topic, the six nugget scores (nuggetizer's arithmetic, and the weighted
score's definition) and per run their means (statistics.mean, as nuggetizer averages).

    python nuggets_script.py OUT.json RUN.jsonl ...
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

GAIN = {"support": 1.0, "partial_support": 0.5}
NAMES = ["NuggetAll", "NuggetVital", "NuggetWeighted"]


def _support(nuggets: list[dict], strict: bool) -> float:
    if strict:
        return sum(1.0 for n in nuggets if n["assignment"] == "support")
    return sum(GAIN.get(n["assignment"], 0.0) for n in nuggets)


def _scores(nuggets: list[dict], strict: bool) -> list[float]:
    vital = [n for n in nuggets if n["importance"] == "vital"]
    okay = [n for n in nuggets if n["importance"] == "okay"]
    weight = len(vital) + 0.5 * len(okay)
    weighted = _support(vital, strict) + 0.5 * _support(okay, strict)
    return [
        _support(nuggets, strict) / len(nuggets) if nuggets else 0.0,
        _support(vital, strict) / len(vital) if vital else 0.0,
        weighted / weight if weight else 0.0,
    ]


def main(out: str, *runs: str) -> None:
    means = {}
    for path in runs:
        per_topic = []
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                nuggets = json.loads(line)["nuggets"]
                per_topic.append(_scores(nuggets, False) + _scores(nuggets, True))
        names = NAMES + [f"{name}(strict=True)" for name in NAMES]
        for name, column in zip(names, zip(*per_topic, strict=True), strict=True):
            means[f"{Path(path).stem}/{name}"] = statistics.mean(column)
    Path(out).write_text(json.dumps(means))


if __name__ == "__main__":
    main(*sys.argv[1:])
