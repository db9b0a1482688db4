"""The dashboard's suites and discriminative power: an evaluation's page shows, per suite and
metric, BEIR's table (the suite's collections as rows, the runs as columns, the mean last) and
the pairs of runs each test tells apart, as the history recorded them. Read from the page's HTML
(the browser's tests of the dashboard are tests/test_dashboard.py)."""

from __future__ import annotations

import re
from html import unescape

import duckdb
import yaml
from conftest import collection_spec, irpipe_inprocess

from pipeline.formatting import format_value
from pipeline.synthetic import generate, llm_judgments, write_qrels


def _tables(html: str, kind: str) -> list[list[list[str]]]:
    """Each table of class `kind`: its rows (the header's first), each a list of cell texts."""
    found = []
    for body in re.findall(rf'<table class="sortable {kind}">(.*?)</table>', html, re.S):
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
        found.append([[unescape(re.sub(r"<[^>]+>", "", c)).strip()
                       for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
                      for row in rows])  # fmt: skip
    return found


def test_an_evaluation_s_page_shows_its_suites_and_discriminative_power(tmp_path):
    data = generate(31, queries=30, runs=3, skill=(0.0, 2.0, 6.0))
    spec = collection_spec(tmp_path, data, ["AP", "nDCG@10"], history={"path": "h.duckdb"})
    write_qrels(llm_judgments(data.qrels, 31, max_grade=3), tmp_path / "llm.txt")
    spec["collections"]["llm"] = {"qrels": "llm.txt"}
    for run in spec["runs"].values():
        run["collection"] = ["c", "llm"]
    spec |= {"suites": {"both": ["c", "llm"]}, "discrimination": {"tests": ["t"]}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    assert irpipe_inprocess("run", "spec.yaml", "--quiet", cwd=tmp_path).returncode == 0
    done = irpipe_inprocess("dashboard", "h.duckdb", "--out", "site", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "site" / "evaluations" / "1.html").read_text(encoding="utf-8")
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        values = {(r, c, m): v for r, c, m, v in con.execute(
            "SELECT run, collection, metric, value FROM aggregates").fetchall()}  # fmt: skip
    suites = _tables(html, "suite")
    assert len(suites) == 2  # a table per metric
    for table, metric in zip(suites, ["AP", "nDCG@10"], strict=True):
        assert table[0] == ["collection", "run0", "run1", "run2"]
        assert [row[0] for row in table[1:]] == ["c", "llm", "mean"]
        for row in table[1:3]:
            assert row[1:] == [format_value(values[r, row[0], metric]) for r in table[0][1:]]
        means = [(values[r, "c", metric] + values[r, "llm", metric]) / 2 for r in table[0][1:]]
        assert table[3][1:] == [format_value(m) for m in means]
    (power,) = _tables(html, "power")
    assert power[0] == ["collection", "metric", "test", "correction", "pairs", "significant",
                        "share"]  # fmt: skip
    assert [row[:5] for row in power[1:]] == [[c, m, "t", "holm", "3"] for c in ("c", "llm")
                                              for m in ("AP", "nDCG@10")]  # fmt: skip
    assert any(row[5] != "0" for row in power[1:])
