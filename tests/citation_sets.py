"""Generated answers and support judgments for the tests (tests/test_support.py, the Spark
engine's): answers in both years' formats with uncited sentences, answers of no sentence,
integer topic ids, missing answers, every support and, where asked, citations without a
judgment; and the value of each support measure by its definition (configs/REFERENCE.md,
"Citation support"), written here."""

from __future__ import annotations

import json
import random
from pathlib import Path

import yaml

__all__ = ["METRICS", "collection", "read_lines", "reference"]

METRICS = [
    "SupportPrecision", "SupportRecall", "SupportRecall(reduce='mean')", "CitedSentences",
    "Citations", "AnswerWords", "SupportPrecision(partial=0.25)",
    "SupportRecall(partial=0.25,reduce='mean')",
]  # fmt: skip
_WORDS = ["alpha", "beta", "gamma\u00a0delta", "eps,ilon", "zeta\u2003eta", "theta"]


def _weight(grade: int | None, partial: float) -> float:
    return 1.0 if grade == 2 else partial if grade == 1 else 0.0


def reference(sentences: list[tuple[str, list[str]]], judged: dict, partial: float = 0.5):
    """Each measure's value of one answer, by its definition: `sentences` (text, cited docids),
    `judged` (sentence, docid) -> support."""
    pairs = [(s, d) for s, (_, cited) in enumerate(sentences) for d in cited]
    weights = [_weight(judged.get(pair), partial) for pair in pairs]
    per_sentence = {
        reduce: [
            how([_weight(judged.get((s, d)), partial) for d in cited]) if cited else 0.0
            for s, (_, cited) in enumerate(sentences)
        ]
        for reduce, how in (("max", max), ("mean", lambda w: sum(w) / len(w)))
    }
    n = len(sentences)
    return {
        "precision": sum(weights) / len(weights) if weights else 0.0,
        "recall": {r: sum(v) / n if n else 0.0 for r, v in per_sentence.items()},
        "cited": sum(1 for _, cited in sentences if cited) / n if n else 0.0,
        "citations": float(len(pairs)),
        "words": float(sum(len(text.split()) for text, _ in sentences)),
    }


def _values(answer, judged) -> dict[str, float]:
    """The metrics' values of one answer (None: not answered, every value 0)."""
    if answer is None:
        return dict.fromkeys(METRICS, 0.0)
    half, quarter = reference(answer, judged), reference(answer, judged, 0.25)
    return dict(zip(METRICS, [
        half["precision"], half["recall"]["max"], half["recall"]["mean"], half["cited"],
        half["citations"], half["words"], quarter["precision"], quarter["recall"]["mean"],
    ], strict=True))  # fmt: skip


def _draw_answer(rng: random.Random, refs: list[str]):
    if rng.random() < 0.08:
        return []  # an answer of no sentence
    return [
        (" ".join(rng.choices(_WORDS, k=rng.randint(0, 7))),
         rng.sample(refs, rng.choice([0, 0, 1, 1, 2, 3])))
        for _ in range(rng.randint(1, 5))
    ]  # fmt: skip


def _line(rng: random.Random, qid: str, refs: list[str], answer) -> dict:
    """The answer in 2024's format (citations by index, an integer topic id now and then) or
    2025's (by docid)."""
    if rng.random() < 0.5:
        topic = int(qid) if rng.random() < 0.3 else qid
        cited = [{"text": t, "citations": [refs.index(d) for d in c]} for t, c in answer]
        return {"run_id": "x", "topic_id": topic, "references": refs, "answer": cited}
    cited = [{"text": t, "citations": c} for t, c in answer]
    return {"metadata": {"narrative_id": qid}, "references": refs, "answer": cited}


def collection(tmp_path: Path, seed: int, runs: int = 3, judged_share: float = 1.0):
    """Generated answers of `runs` runs and support judgments of (a `judged_share` of) their
    citations: (spec path, the reference's per-query values, the topics judged)."""
    rng = random.Random(seed)
    lines, expected, topics = [], {}, set()
    answers = {}
    for r in range(runs):
        run, records = f"run{r}", []
        for t in range(20):
            if rng.random() < 0.1:
                continue  # not answered
            qid, refs = str(300 + t), [f"doc{t}_{i}" for i in range(rng.randint(3, 8))]
            answer = _draw_answer(rng, refs)
            records.append(_line(rng, qid, refs, answer))
            judged = {(s, d): rng.choice([0, 1, 2]) for s, (_, c) in enumerate(answer) for d in c
                      if rng.random() < judged_share}  # fmt: skip
            lines += [f"{run} {qid} {s} {d} {g}\n" for (s, d), g in judged.items()]
            topics |= {qid} if judged else set()
            answers[run, qid] = (answer, judged)
        (tmp_path / f"{run}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in records))
    for r in range(runs):
        for qid in topics:
            expected[f"run{r}", qid] = _values(*answers.get((f"run{r}", qid), (None, {})))
    (tmp_path / "support.txt").write_text("".join(lines))
    spec = {"collections": {"rag": {"support": "support.txt"}}, "metrics": METRICS,
            "runs": {f"run{r}": {"answers": f"run{r}.jsonl", "collection": "rag"} for r in range(runs)},
            "outputs": [{"path": "out/q.jsonl", "level": "query"},
                        {"path": "out/a.jsonl", "level": "aggregate"}]}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    return tmp_path / "spec.yaml", expected


def read_lines(path: Path) -> list[dict]:
    """A JSONL output's rows."""
    return [json.loads(line) for line in path.read_text().splitlines()]
