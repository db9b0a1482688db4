"""The duplicate check proves "no document twice in a query" exactly, in one sort of hashes, even
where DuckDB's hash gives distinct (run, qid, docno) triples one value; only a file that truly holds
a duplicate is read again for its line-numbered report."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import yaml

from pipeline.errors import DuplicateError
from pipeline.inputs import checks as validation
from pipeline.run.evaluation import evaluate

# TREC's Federal Register docnos (FR941202-0-00043): 16 bytes, among which DuckDB's string hash
# gives distinct ones the same value (109 times among the 1.5M triples of TREC 2003 Robust's runs).
DOCNOS = [f"FR9412{day:02d}-0-{item:05d}" for day in range(10) for item in range(100)]


def _colliding_pair() -> tuple[str, str]:
    """Two distinct docnos of DOCNOS whose (run, qid, docno) triples hash alike in this DuckDB."""
    con = duckdb.connect()
    found = con.execute(
        "SELECT list(d ORDER BY d) FROM unnest(?::VARCHAR[]) t(d) "
        "GROUP BY hash('r', '1', d) HAVING count(*) > 1 ORDER BY 1 LIMIT 1",
        [DOCNOS],
    ).fetchall()
    assert found, "DuckDB's hash no longer collides on these docnos: pick others that do"
    first, second = found[0][0][:2]
    return first, second


def _spec(tmp_path: Path, runs: dict[str, list[str]]) -> Path:
    """Qrels judging the first docno of query 1; each run ranks its docnos for query 1."""
    (tmp_path / "qrels.txt").write_text(f"1 0 {DOCNOS[0]} 1\n")
    for name, docnos in runs.items():
        lines = [f"1 Q0 {d} {i + 1} {100 - i} {name}" for i, d in enumerate(docnos)]
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {name: {"path": f"{name}.txt", "collection": "c"} for name in runs},
        "metrics": ["NumRet"],
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_colliding_hashes_are_not_duplicates_and_no_file_is_read_again(tmp_path, monkeypatch):
    first, second = _colliding_pair()
    same = duckdb.connect().execute("SELECT hash('r', '1', ?) = hash('r', '1', ?)", [first, second])
    assert first != second and same.fetchone()[0]  # the premise: a real collision

    def read_again(load):
        raise AssertionError(f"{load.path} was read again though it holds no duplicate")

    monkeypatch.setattr(validation, "duplicates", read_again)
    docnos = [first, second, *(d for d in DOCNOS[:50] if d not in (first, second))]
    done = evaluate(_spec(tmp_path, {"r": docnos}), write=False)
    assert done.aggregate() == [("r", "c", "NumRet", len(docnos), 1)]


def test_a_true_duplicate_among_colliding_hashes_is_reported_for_its_file(tmp_path):
    first, second = _colliding_pair()
    clean = [first, second, next(d for d in DOCNOS if d not in (first, second))]
    twice = [first, second, first]
    with pytest.raises(DuplicateError, match=rf"b\.txt:1: query '1' has document '{first}' again on line 3"):  # fmt: skip
        evaluate(_spec(tmp_path, {"a": clean, "b": twice}), write=False)
