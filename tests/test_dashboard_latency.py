"""The dashboard of a history with latency (`irpipe run` of generated runs with their per-query
times, two nights, then `irpipe dashboard`): each evaluation's effectiveness against latency,
per collection a chart per pair of an effectiveness metric and a latency statistic, the Pareto
front the `tradeoff` output marks (QPS: higher is better); and every latency metric read the
right way round, lower is better, in its trend, its gate's line, and each change marked better
or worse. The pages' data is read from their JSON block; the browser (`dashboard_support`)
checks what is drawn."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import irpipe_inprocess
from dashboard_support import Opened

from pipeline.synthetic import generate, write_qrels, write_run
from pipeline.synthetic_latency import generate_latency, write_latency

#: each run's ranking (by skill) and typical time: slow ranks best and is slowest (on the
#: front), quick ranks worst and is fastest (on it too), late ranks as quick and is slower
#: (dominated). On the second night quick is three times slower, still the fastest: the
#: runs' latencies, more than 20 times apart the first night, are less the second.
RUNS = {"quick": ("run0", 5.0), "slow": ("run2", 150.0), "late": ("run0", 20.0)}
LATENCY = {"mean_ms": "lower", "p95_ms": "lower", "QPS": "higher"}
METRICS = ["nDCG@10", "AP", {"metric": "Latency", "label": "mean_ms"},
           {"metric": "Latency", "stat": "p95", "label": "p95_ms"}, "QPS"]  # fmt: skip
DOMINATED = "#D55E00"  # the Okabe-Ito orange: a loss


def _write_times(root: Path, data, slower: float) -> None:
    for i, (name, (ranking, typical)) in enumerate(RUNS.items()):
        times = generate_latency(i, list(data.runs[ranking]), typical)
        factor = slower if name == "quick" else 1.0
        times = {q: [round(t * factor, 3) for t in ts] for q, ts in times.items()}
        write_latency(times, root / f"{name}.ms")


def _spec(root: Path, metrics: list) -> dict:
    data = generate(4, queries=30, runs=3, skill=(0.5, 3.0, 8.0), float32_ties=False)
    write_qrels(data.qrels, root / "qrels.txt")
    for ranking, _ in RUNS.values():
        write_run(data.runs[ranking], root / f"{ranking}.trec")
    _write_times(root, data, slower=1.0)
    runs = {name: {"path": f"{ranking}.trec", "collection": "c", "latency": f"{name}.ms"}
            for name, (ranking, _) in RUNS.items()}  # fmt: skip
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "runs": runs, "metrics": metrics,
            "history": "h.duckdb"}  # fmt: skip
    return spec, data


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """Two nights of one spec (a gate on p95_ms against the previous night, the `tradeoff`
    output of nDCG@10 against p95_ms), quick slower on the second; its dashboard."""
    root = tmp_path_factory.mktemp("latency")
    spec, data = _spec(root, METRICS)
    spec["gates"] = [{"metric": "p95_ms", "max_drop": 5, "against": "previous"}]
    spec["outputs"] = [{"path": "t.svg", "level": "tradeoff", "metric": "nDCG@10",
                        "latency": "p95_ms"}]  # fmt: skip
    (root / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    for slower in (1.0, 3.0):
        _write_times(root, data, slower)
        done = irpipe_inprocess("run", "spec.yaml", "--quiet", cwd=root)
        assert done.returncode in (0, 5), done.stderr  # 5: the gate failed, as nights do
    done = irpipe_inprocess("dashboard", "h.duckdb", "--out", "site", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "site"


def _payload(page: Path) -> dict:
    html = page.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="irpipe-data">(.*?)</script>', html)
    return json.loads(found.group(1).replace("<\\/", "</"))


def _records(chart: dict, name: str) -> list[dict]:
    """A chart's dataset as the page's script expands it (coded fields looked up)."""
    data = chart["data"][name]
    return [{f: data["dicts"][f][v] if f in data["dicts"] else v
             for f, v in zip(data["fields"], row, strict=True)} for row in data["rows"]]  # fmt: skip


def _aggregates(history: Path, evaluation: int) -> dict[tuple[str, str], float]:
    with duckdb.connect(str(history), read_only=True) as con:
        rows = con.execute("SELECT run, metric, value FROM aggregates WHERE evaluation_id = ?",
                           [evaluation]).fetchall()  # fmt: skip
    return {(run, metric): value for run, metric, value in rows}


def _front(points: dict[str, tuple[float, float]], faster: str) -> set[str]:
    """The runs no other run beats: as good by both (higher effectiveness; latency in the
    direction `faster`) and better by one; written here as the definition reads."""
    s = 1 if faster == "higher" else -1
    return {run for run, (v, t) in points.items()
            if not any(o != run and w >= v and s * u >= s * t and (w > v or s * u > s * t)
                       for o, (w, u) in points.items())}  # fmt: skip


def test_each_pair_of_metrics_has_its_tradeoff_and_front(site):
    """Evaluation 2's page: a chart per effectiveness metric and latency statistic, each run's
    two values as the history holds them, the front by each one's direction (QPS: quick, the
    fastest, is on it; were QPS lower-better, slow alone would be), the tradeoff output's."""
    payload = _payload(site / "evaluations" / "2.html")
    charts = {c["title"]: c for c in payload["charts"] if " against " in c["title"]}
    assert list(charts) == [f"{m} against {t} (c)" for m in ("nDCG@10", "AP") for t in LATENCY]
    assert payload["filters"]["latency"] == sorted(LATENCY)
    assert payload["defaults"] == {"latency": "mean_ms"}  # the first Latency metric
    values = _aggregates(site.parent / "h.duckdb", 2)
    for (metric, latency), chart in zip([(m, t) for m in ("nDCG@10", "AP") for t in LATENCY],
                                        charts.values(), strict=True):  # fmt: skip
        rows = _records(chart, "points")
        assert [r["run"] for r in rows] == list(RUNS)
        for r in rows:
            assert (r["value"], r["statistic"]) == (round(values[r["run"], metric], 4),
                                                   round(values[r["run"], latency], 4))  # fmt: skip
        points = {run: (values[run, metric], values[run, latency]) for run in RUNS}
        assert {r["run"] for r in rows if r["front"]} == _front(points, LATENCY[latency])
    qps = _records(charts["nDCG@10 against QPS (c)"], "points")
    assert {r["run"] for r in qps if r["front"]} == {"quick", "slow"}
    svg = ET.parse(site.parent / "t.svg").getroot()
    drawn = [g.get("id") for g in svg.iter("{http://www.w3.org/2000/svg}g")
             if (g.get("id") or "").startswith("point-")]  # fmt: skip
    on_page = _records(charts["nDCG@10 against p95_ms (c)"], "points")
    assert drawn == [f"point-{i}-{'front' if r['front'] else 'dominated'}"
                     for i, r in enumerate(on_page)]  # fmt: skip


@pytest.mark.parametrize("evaluation, scale", [(1, {"type": "log"}), (2, {"zero": False})])
def test_the_tradeoff_chart_s_specification(site, evaluation, scale):
    """The y axis the effectiveness metric, the x axis the statistic, each saying which way is
    better, on a log scale where the runs' latencies are more than 20 times apart (as in the
    output); the front a step line whose steps follow QPS's direction; the runs named."""
    values = _aggregates(site.parent / "h.duckdb", evaluation)
    for latency in LATENCY:
        spread = [values[run, latency] for run in RUNS]
        assert (max(spread) > 20 * min(spread)) == (evaluation == 1)  # the data is as meant
    payload = _payload(site / "evaluations" / f"{evaluation}.html")
    tradeoffs = [c for c in payload["charts"] if " against " in c["title"]]
    assert len(tradeoffs) == 2 * len(LATENCY)
    for chart in tradeoffs:
        spec = payload["specs"][chart["spec"]]
        metric, latency = chart["title"].removesuffix(" (c)").split(" against ")
        line, front, dominated, names = spec["layer"]
        assert front["encoding"]["y"]["title"] == f"{metric} (higher is better)"
        assert front["encoding"]["x"]["title"] == f"{latency} ({LATENCY[latency]} is better)"
        assert front["encoding"]["x"]["scale"] == scale
        assert (front["name"], front["mark"]["filled"]) == ("front", True)
        assert (dominated["name"], dominated["mark"]["filled"]) == ("dominated", False)
        step = "step-before" if latency == "QPS" else "step-after"
        assert (line["mark"]["type"], line["mark"]["interpolate"]) == ("line", step)
        assert names["encoding"]["text"] == {"field": "run"}


def test_the_tradeoff_is_drawn_and_follows_the_filters(site, browser):
    """Opened in Chromium: by default each effectiveness metric against mean_ms, the front's
    runs filled and the dominated one hollow, each named; the latency filter chooses p95_ms;
    choosing QPS as the metric shows its trade-offs and chooses it as the statistic."""
    opened = Opened(browser, site / "evaluations" / "2.html")
    opened.draw_all()
    assert opened.problems == [] and all(u.startswith("file://") for u in opened.requests)
    shown = ".chart[data-latency]:not(.filtered-out)"
    tagged = "cs => cs.map(c => c.dataset.metric + ' ' + c.dataset.latency)"
    assert opened.page.eval_on_selector_all(shown, tagged) == ["nDCG@10 mean_ms", "AP mean_ms"]
    opened.page.select_option("select[name=metric]", "nDCG@10")
    opened.page.select_option("select[name=latency]", "p95_ms")
    opened.draw_all()
    assert opened.page.eval_on_selector_all(shown, tagged) == ["nDCG@10 p95_ms"]
    chart = opened.page.locator(shown)
    fills = "ps => ps.map(p => p.getAttribute('fill'))"
    assert len(chart.locator(".front_marks path").evaluate_all(fills)) == 2
    assert chart.locator(".dominated_marks path").evaluate_all(fills) == ["white"]
    assert sorted(chart.locator(".names_marks text").all_text_contents()) == sorted(RUNS)
    assert chart.locator(".pareto_front_marks path").count() == 1
    opened.page.select_option("select[name=metric]", "QPS")
    opened.draw_all()
    assert opened.page.eval_on_selector_all(shown, tagged) == ["nDCG@10 QPS", "AP QPS"]
    assert opened.page.locator("select[name=latency]").input_value() == "QPS"
    assert opened.problems == []
    opened.close()


def test_latency_reads_lower_is_better(site):
    """The trends of the latency statistics say lower is better, and p95's gate against the
    previous night is drawn above the reference (the most it may rise); the values that changed
    are marked worse where quick's latency rose, its QPS fell; the per-query bars call a rise in
    a query's time (QPS's too) a loss; the best value is the lowest."""
    index = _payload(site / "index.html")
    titles = [c["title"] for c in index["charts"]]
    assert "p95_ms (c), lower is better" in titles and "QPS (c)" in titles
    assert "nDCG@10 (c)" in titles
    with duckdb.connect(str(site.parent / "h.duckdb"), read_only=True) as con:
        (provenance,) = con.execute("SELECT provenance FROM evaluations WHERE id = 2").fetchone()
    (gate,) = [c for c in json.loads(provenance)["checks"] if c["run"] == "quick"]
    trend = next(c for c in index["charts"] if c["title"].startswith("p95_ms"))
    (limit,) = [r for r in _records(trend, "limits") if r["run"] == "quick"]
    assert limit["low"] == limit["high"] == round(gate["reference"] + 5, 4)
    html = (site / "evaluations" / "2.html").read_text(encoding="utf-8")
    changes = re.search(r'<table class="sortable changes">.*?</table>', html, re.S).group(0)
    row = r"<td>c</td><td>(\w+)</td><td>(\w+)</td>.*?<span class='([a-z ]+)'>"
    marked = re.findall(row, changes)
    assert marked == [("quick", "mean_ms", "up worse"), ("quick", "p95_ms", "up worse"),
                      ("quick", "QPS", "down worse")]  # fmt: skip
    page = _payload(site / "evaluations" / "2.html")
    bars = [c for c in page["charts"] if c["title"].startswith("Δ ")]
    assert sorted(c["title"] for c in bars) == sorted(f"Δ {m} per query (c)" for m in LATENCY)
    for chart in bars:
        calculated = page["specs"][chart["spec"]]["layer"][0]["transform"][2]["calculate"]
        assert calculated == "datum.difference > 0 ? 'worse' : 'better'", chart["title"]
    assert re.search(r"<td>quick</td><td>[0-9.]+</td><td>[0-9.]+</td><td>[0-9.]+\*</td>", html)


def test_a_rise_in_latency_is_drawn_as_a_loss(site, browser):
    """Every query of quick took longer on the second night: its per-query bars of mean_ms
    are all drawn in the colour of a loss."""
    opened = Opened(browser, site / "evaluations" / "2.html")
    opened.page.select_option("select[name=metric]", "mean_ms")
    opened.draw_all()
    bars = opened.page.locator(".chart:not([data-latency]):not(.filtered-out) .mark-rect path")
    colours = set(bars.evaluate_all("ps => ps.map(p => p.getAttribute('fill'))"))
    assert bars.count() > 0 and colours == {DOMINATED}
    assert opened.problems == []
    opened.close()


@pytest.mark.parametrize("metrics", [["nDCG@10", "AP"], ["QPS", "Latency(stat=p95)"]])
def test_no_tradeoff_without_both_kinds_of_metric(tmp_path, metrics):
    """Without a latency statistic, or without an effectiveness metric, no trade-off chart and
    no latency filter."""
    spec, _ = _spec(tmp_path, metrics)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    assert irpipe_inprocess("run", "spec.yaml", "--quiet", cwd=tmp_path).returncode == 0
    done = irpipe_inprocess("dashboard", "h.duckdb", "--out", "site", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for page in (tmp_path / "site" / "index.html", tmp_path / "site" / "evaluations" / "1.html"):
        payload = _payload(page)
        assert payload["filters"]["latency"] == [] and payload["defaults"] == {}
        assert not [c for c in payload["charts"] if " against " in c["title"]]
        assert "Effectiveness against latency" not in page.read_text(encoding="utf-8")


def test_the_index_opens_on_every_collection_s_tradeoff(tmp_path):
    """Two collections whose latest evaluations timed their runs by different statistics
    (mean_ms; QPS): the index opens on every statistic, so that both collections' trade-offs
    show; each evaluation's page on its own."""
    for name, latency in (("c", {"metric": "Latency", "label": "mean_ms"}), ("d", "QPS")):
        spec, _ = _spec(tmp_path, ["nDCG@10", latency])
        spec["collections"] = {name: spec["collections"]["c"]}
        for run in spec["runs"].values():
            run["collection"] = name
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
        assert irpipe_inprocess("run", f"{name}.yaml", "--quiet", cwd=tmp_path).returncode == 0
    done = irpipe_inprocess("dashboard", "h.duckdb", "--out", "site", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    index = _payload(tmp_path / "site" / "index.html")
    assert (index["defaults"], index["filters"]["latency"]) == ({"latency": ""}, ["QPS", "mean_ms"])
    titles = [c["title"] for c in index["charts"] if " against " in c["title"]]
    assert titles == ["nDCG@10 against QPS (d)", "nDCG@10 against mean_ms (c)"]  # newest first
    for evaluation, statistic in ((1, "mean_ms"), (2, "QPS")):
        page = _payload(tmp_path / "site" / "evaluations" / f"{evaluation}.html")
        assert page["defaults"] == {"latency": statistic}
