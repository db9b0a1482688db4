"""The plugin's tests evaluate through an irpipe where this package is installed (its entry point).

Only this plugin loads: another installed plugin could define a clashing name (its metric would
then be withheld) or change nothing, and neither belongs in these results.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ["IRPIPE_LOAD_PLUGINS"] = "usermodels"


@pytest.fixture
def evaluate_trec(tmp_path: Path):
    """Evaluate inline qrels and run text (TREC lines) with metrics: {(qid, metric): value}."""
    from pipeline import evaluate

    def run(qrels: str, run_text: str, metrics: list[str]) -> dict[tuple[str, str], float]:
        (tmp_path / "qrels.txt").write_text(_lines(qrels), encoding="utf-8")
        (tmp_path / "run.txt").write_text(_lines(run_text), encoding="utf-8")
        spec = {
            "collections": {"c": {"qrels": "qrels.txt"}},
            "runs": {"r": {"path": "run.txt", "collection": "c"}},
            "metrics": metrics,
        }
        (tmp_path / "spec.yaml").write_text(json.dumps(spec), encoding="utf-8")  # JSON is YAML
        evaluation = evaluate(tmp_path / "spec.yaml", write=False)
        return {(q, m): v for _, _, q, m, v in evaluation.per_query(to="rows")}

    return run


def _lines(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().splitlines()) + "\n"
