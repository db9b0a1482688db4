"""`irpipe dashboard`: the site of a real history (made by the CLI, run in the test's process,
evaluation after evaluation), opened in headless Chromium (Debian's, which .ci/run installs)
through Playwright (`dashboard_support.Opened`). Each page must load from the file system with no console error and no request
beyond its own files, show the history's numbers, sort and filter, and draw charts that are not
blank. Subprocesses only where another process is the point: one holding the history's lock, and
one started without a module."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import collection_spec, irpipe_inprocess
from dashboard_support import Opened

from pipeline.formatting import format_value
from pipeline.synthetic import generate, llm_judgments, write_qrels, write_run

METRICS = ["AP", "nDCG@10", "P@10", "RR"]


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    """Three nightly evaluations of one spec (expected values, gates, comparisons, precision-
    recall curves), a run changing between them, and one evaluation of another spec."""
    root = tmp_path_factory.mktemp("nightly")
    data = generate(5, queries=30, runs=3, skill=(2.0, 0.0, 1.0))
    spec = collection_spec(
        root, data, METRICS, history="history.duckdb",
        compare={"baseline": "run1", "tests": ["t"]},
        expect=[{"run": "run0", "metric": "RR", "value": 0.5, "tolerance": 0.5}],
        gates=[{"metric": "nDCG@10", "max_drop": 0.001, "against": "previous"}],
        outputs=[{"path": "out/pr.csv", "level": "pr_curve"}],
    )  # fmt: skip
    (root / "spec.yaml").write_text(yaml.safe_dump(spec))
    for seed in (None, 6, 7):  # the second and third nights, run2 is another ranker
        if seed is not None:
            write_run(generate(seed, queries=30, runs=3, skill=(0, 0, 1.5)).runs["run2"],
                      root / "run2.txt")  # fmt: skip
        done = irpipe_inprocess("run", "spec.yaml", "--quiet", cwd=root)
        assert done.returncode in (0, 5), done.stderr  # 5: a gate failed, as nights do
    other = {**spec, "compare": None, "expect": [], "gates": [], "outputs": []}
    (root / "other.yaml").write_text(yaml.safe_dump(other))
    assert irpipe_inprocess("run", "other.yaml", "--quiet", cwd=root).returncode == 0
    return root / "history.duckdb"


@pytest.fixture(scope="module")
def site(history) -> Path:
    out = history.parent / "site"
    done = irpipe_inprocess(
        "dashboard", history, "--out", out, "--compare", 1, 3, cwd=history.parent
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out / "index.html")
    return out


def _pages(site: Path) -> list[Path]:
    return [site / "index.html", *sorted((site / "evaluations").glob("*.html")),
            *site.glob("compare-*.html")]  # fmt: skip


def _aggregates(history: Path, evaluation: int) -> dict[tuple[str, str], str]:
    con = duckdb.connect(str(history), read_only=True)
    rows = con.execute(
        "SELECT run, metric, value FROM aggregates WHERE evaluation_id = ?", [evaluation]
    ).fetchall()
    con.close()
    return {(run, metric): format_value(value) for run, metric, value in rows}


def test_every_page_loads_offline_with_no_console_error(site, browser):
    pages = _pages(site)
    assert len(pages) == 1 + 4 + 1
    for path in pages:
        opened = Opened(browser, path)
        opened.draw_all()
        assert opened.problems == [], path
        assert all(url.startswith("file://") for url in opened.requests), opened.requests
        drawn = opened.page.locator(".chart svg, .chart canvas").count()
        assert drawn == opened.page.locator(".chart").count(), path
        opened.close()
        if path.name in ("index.html", "2.html", "3.html") or path.name.startswith("compare"):
            assert drawn >= 1, path  # trends, or per-query bars and precision-recall curves


def test_the_numbers_on_each_page_are_the_history_s(site, history, browser):
    for evaluation in (1, 2, 3, 4):
        opened = Opened(browser, site / "evaluations" / f"{evaluation}.html")
        headers = opened.page.eval_on_selector_all(
            "table.results thead th", "hs => hs.map(h => h.textContent)"
        )
        expected = _aggregates(history, evaluation)
        shown = {
            (row[0], metric): re.sub(r"[*▲▼△▽]", "", cell)
            for row in opened.cells("table.results")
            for metric, cell in zip(headers[1:-1], row[1:-1], strict=True)
        }
        assert shown == expected
        opened.close()
    index = Opened(browser, site / "index.html")
    assert {(r[0], m): re.sub(r"[*▲▼△▽]", "", c) for r in index.cells("table.results")
            for m, c in zip(METRICS, r[1:-1], strict=True)} == _aggregates(history, 4)  # fmt: skip
    index.close()


def test_marks_and_checks_are_those_the_history_recorded(site, history, browser):
    con = duckdb.connect(str(history), read_only=True)
    provenance = json.loads(
        con.execute("SELECT provenance FROM evaluations WHERE id = 3").fetchone()[0]
    )
    con.close()
    opened = Opened(browser, site / "evaluations" / "3.html")
    marks = {(m["run"], m["metric"]): m["mark"] for m in provenance["significance"]["marks"]}
    assert marks, "the generated runs differ significantly from the baseline"
    headers = opened.page.eval_on_selector_all(
        "table.results th", "hs => hs.map(h => h.textContent)"
    )
    for row in opened.cells("table.results"):
        for metric, cell in zip(headers[1:-1], row[1:-1], strict=True):
            assert cell.endswith(marks.get((row[0], metric), "*▲▼")) == ((row[0], metric) in marks)
    assert set(marks.values()) <= {"▲", "▼"}  # which way, as the console and the reports say
    legend = opened.page.locator("p.legend").all_text_contents()
    assert any(line.startswith("▲ significantly better than run1, ▼ significantly worse")
               for line in legend), legend  # fmt: skip
    statuses = [row[0] for row in opened.cells("table.checks")]
    assert sorted(statuses) == sorted(c["status"] for c in provenance["checks"])
    assert statuses == sorted(statuses, key=["failed", "skipped", "passed"].index)
    opened.close()


def test_tables_sort_by_any_column(site, browser):
    opened = Opened(browser, site / "index.html")
    header = opened.page.locator("table.evaluations th", has_text="evaluation").first
    header.click()
    assert [row[0] for row in opened.cells("table.evaluations")] == ["#1", "#2", "#3", "#4"]
    header.click()
    assert [row[0] for row in opened.cells("table.evaluations")] == ["#4", "#3", "#2", "#1"]
    opened.page.locator("table.results th", has_text="AP").first.click()
    column = METRICS.index("AP") + 1
    values = [float(re.sub(r"[*▲▼△▽]", "", row[column])) for row in opened.cells("table.results")]
    assert values == sorted(values)
    opened.close()


def test_filters_choose_the_run_and_metric_of_tables_and_charts(site, browser):
    opened = Opened(browser, site / "index.html")
    opened.page.select_option("select[name=run]", "run2")
    opened.draw_all()
    assert [row[0] for row in opened.cells("table.results")] == ["run2"]
    legends = opened.page.eval_on_selector_all(
        ".chart:not(.filtered-out) .role-legend-label text", "ts => ts.map(t => t.textContent)"
    )
    assert legends and set(legends) == {"run2"}
    opened.page.select_option("select[name=metric]", "P@10")
    opened.draw_all()
    assert opened.page.locator(".chart:not(.filtered-out)").count() == 1
    visible = opened.page.eval_on_selector_all(
        "table.results th:not(.filtered-out)", "hs => hs.map(h => h.textContent)"
    )
    assert visible == ["run", "P@10", "queries"]
    opened.close()


def test_trend_points_link_to_their_evaluations(site, browser):
    opened = Opened(browser, site / "index.html")
    opened.draw_all()
    point = opened.page.locator(".chart svg .mark-symbol path").first
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    with opened.page.expect_navigation():
        opened.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    assert re.search(r"/evaluations/[1-4]\.html$", opened.page.url)
    opened.page.wait_for_selector("body[data-ready=true]")
    opened.close()


def test_an_evaluation_shows_each_changed_query_against_the_previous(site, history, browser):
    con = duckdb.connect(str(history), read_only=True)
    changed = con.execute(
        """SELECT count(*) FROM per_query b JOIN per_query a
           ON a.evaluation_id = 1 AND b.evaluation_id = 2 AND a.run = b.run AND a.qid = b.qid
           AND a.metric = b.metric WHERE a.value IS DISTINCT FROM b.value"""
    ).fetchone()[0]
    con.close()
    assert changed > 0
    opened = Opened(browser, site / "evaluations" / "2.html")
    opened.page.select_option("select[name=run]", "")  # every run, every metric
    opened.page.select_option("select[name=metric]", "")
    opened.draw_all()
    shown = opened.cells("table.queries")
    assert len(shown) == min(changed, 50)  # the 50 largest changes
    changes = [abs(float(row[-1])) for row in shown]
    assert changes == sorted(changes, reverse=True) and changes[-1] > 0
    assert (
        opened.page.locator(".chart .role-mark.marktype-rect path, .chart .mark-rect path").count()
        > 0
    )
    opened.close()


def test_screenshots_are_not_blank_and_phones_need_no_sideways_scroll(site, browser):
    from PIL import Image

    opened = Opened(browser, site / "index.html")
    opened.draw_all()
    picture = Image.open(io.BytesIO(opened.page.screenshot(full_page=True))).convert("RGB")
    colours = picture.getcolors(maxcolors=1 << 20)
    assert len(colours) > 50
    assert (
        sum(n for n, c in colours if c != (255, 255, 255)) > 0.05 * picture.width * picture.height
    )
    opened.close()
    phone = Opened(browser, site / "evaluations" / "3.html", width=390)
    assert phone.page.evaluate("document.documentElement.scrollWidth") <= 390
    phone.close()


def test_the_same_history_gives_the_same_bytes(site, history, tmp_path):
    again = tmp_path / "again"
    assert (
        irpipe_inprocess(
            "dashboard", history, "--out", again, "--compare", 1, 3, cwd=tmp_path
        ).returncode
        == 0
    )
    files = sorted(p.relative_to(site) for p in site.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((site / f).read_bytes() == (again / f).read_bytes() for f in files)


NEWER = "UPDATE irpipe_history SET value = '999' WHERE key = 'schema_version'"


@pytest.mark.parametrize(
    "kind, message",
    [
        ("missing", "no history at"),
        ("not a history", "not an irpipe history"),
        ("newer", "history schema version 999"),
        ("an unknown evaluation", "no evaluation 9 in this history"),
    ],
)
def test_a_bad_history_is_one_error_and_writes_nothing(history, tmp_path, kind, message):
    path = tmp_path / "h.duckdb"
    compare = []
    if kind == "not a history":
        duckdb.connect(str(path)).execute("CREATE TABLE t AS SELECT 1").close()
    elif kind == "newer":
        shutil.copy(history, path)
        duckdb.connect(str(path)).execute(NEWER).close()
    elif kind == "an unknown evaluation":
        shutil.copy(history, path)
        compare = ["--compare", 1, 9]
    done = irpipe_inprocess("dashboard", path, "--out", tmp_path / "site", *compare, cwd=tmp_path)
    assert done.returncode != 0 and done.returncode != 1  # a user's error, not a bug
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1
    assert message in done.stderr
    assert not (tmp_path / "site").exists()
    assert not list(tmp_path.glob(".site*"))


def test_a_locked_history_is_named_and_nothing_is_written(history, tmp_path):
    path = tmp_path / "h.duckdb"
    shutil.copy(history, path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
         "print('holding', flush=True); time.sleep(30)", str(path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "holding"
        code = [sys.executable, "-c", "from pipeline.dashboard import write_dashboard; "
                "import sys; from pipeline.measures.registry import get_registry; "
                "write_dashboard(sys.argv[1], sys.argv[2], lock_timeout=0.3, registry=get_registry())",
                str(path), str(tmp_path / "site")]  # fmt: skip
        done = subprocess.run(code, capture_output=True, text=True, timeout=120)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode != 0 and f"in use by process {holder.pid}" in done.stderr
    assert not (tmp_path / "site").exists()


def test_run_writes_the_dashboard_its_spec_asks_for(tmp_path, browser):
    data = generate(9, queries=12, runs=2)
    spec = collection_spec(tmp_path, data, ["AP"],
                           history={"path": "h.duckdb", "dashboard": "site"},
                           expect=[{"run": "run0", "metric": "AP", "value": 1.0, "tolerance": 0.001}])  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    done = irpipe_inprocess("run", "spec.yaml", "--quiet", cwd=tmp_path)
    assert done.returncode == 5, done.stderr  # the expected value fails: the page says so
    opened = Opened(browser, tmp_path / "site" / "index.html")
    assert opened.page.locator(".lead .status.failed").inner_text() == "1 of 1 checks failed"
    assert opened.cells("table.checks")[0][:4] == ["failed", "expect.0", "run0", "AP"]
    opened.close()


def test_the_readme_s_nightly_example_has_its_dashboard(tmp_path, browser):
    """configs/nightly.yaml, three nights, the dense run changed on the third: the dashboard of
    its history, which the guide shows (configs/README.md, "A dashboard of the history";
    IRPIPE_DASHBOARD_SCREENSHOT=PATH writes the picture)."""
    root = tmp_path / "eval"
    shutil.copytree(Path(__file__).resolve().parents[1] / "configs", root)
    (root / "results").mkdir(exist_ok=True)
    for night in range(3):
        if night == 2:  # a retrained dense ranker: its first 40 lines gone
            dense = root / "data" / "dense.trec"
            dense.write_text("".join(dense.read_text().splitlines(keepends=True)[40:]))
        done = irpipe_inprocess("run", "nightly.yaml", "--quiet", cwd=root)
        assert done.returncode in (0, 5), done.stderr
    done = irpipe_inprocess(
        "dashboard", "results/history.duckdb", "--out", "results/site", cwd=root
    )
    assert done.returncode == 0, done.stderr
    opened = Opened(browser, root / "results" / "site" / "index.html")
    opened.draw_all()
    assert opened.problems == []
    assert [row[0] for row in opened.cells("table.evaluations")] == ["#3", "#2", "#1"]
    assert opened.page.locator("table.queries tbody tr").count() > 0  # what changed last night
    if os.environ.get("IRPIPE_DASHBOARD_SCREENSHOT"):
        opened.page.evaluate("window.scrollTo(0, 0)")
        opened.page.screenshot(path=os.environ["IRPIPE_DASHBOARD_SCREENSHOT"])
    opened.close()


@pytest.mark.parametrize("command", ["run", "dashboard"])
def test_without_the_extra_each_door_says_what_to_install(tmp_path, command):
    """irpipe alone (vl-convert hidden): a spec's history.dashboard is refused before any data
    is read, and `irpipe dashboard` says what to install; neither writes anything."""
    data = generate(3, queries=5, runs=1)
    spec = collection_spec(
        tmp_path, data, ["AP"], history={"path": "h.duckdb", "dashboard": "site"}
    )
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "hide").mkdir()
    (tmp_path / "hide" / "sitecustomize.py").write_text(
        "import sys\nclass Without:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'vl_convert':\n"
        "            raise ModuleNotFoundError(name, name=name)\nsys.meta_path.insert(0, Without())\n"
    )
    args = ["run", "spec.yaml"] if command == "run" else ["dashboard", "h.duckdb", "--out", "site"]
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "hide")},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "pip install 'irpipe[dashboard]'" in done.stderr
    assert not (tmp_path / "site").exists() and not (tmp_path / "h.duckdb").exists()


# -- judgment sets and orderings -------------------------------------------------------------


@pytest.fixture(scope="module")
def judged_site(tmp_path_factory) -> Path:
    """A history of one evaluation comparing a generated LLM-like label set with the qrels
    (thresholds 1 and 2), ordering four runs by AP and by P@10 with intervals, and gating
    Cohen's kappa (written by `history: {dashboard: ...}`)."""
    root = tmp_path_factory.mktemp("judged")
    data = generate(21, queries=25, runs=4, max_grade=3, skill=(1.5, 0.5, 0.0, 1.0))
    spec = collection_spec(root, data, ["AP", "P@10"],
                           history={"path": "h.duckdb", "dashboard": "site"})  # fmt: skip
    write_qrels(llm_judgments(data.qrels, 21, max_grade=3), root / "llm.txt")
    spec["collections"]["llm"] = {"qrels": "llm.txt"}
    spec["agreement"] = [{"reference": "c", "other": "llm", "thresholds": [1, 2]}]
    spec["correlation"] = [{"reference": "AP", "other": "P@10", "collection": "c",
                            "bootstrap": 40}]  # fmt: skip
    spec["gates"] = [{"statistic": "cohen_kappa", "reference": "c", "other": "llm", "min": 0.1}]
    (root / "spec.yaml").write_text(yaml.safe_dump(spec))
    done = irpipe_inprocess("run", "spec.yaml", "--quiet", cwd=root)
    assert done.returncode == 0, done.stderr
    return root


def _judgment_rows(history: Path, table: str) -> list[tuple]:
    with duckdb.connect(str(history), read_only=True) as con:
        return con.execute(f"SELECT * EXCLUDE (evaluation_id, ordinal) FROM {table} "
                           "ORDER BY ordinal").fetchall()  # fmt: skip


def test_an_evaluation_shows_its_agreement_confusion_and_orderings(judged_site, browser):
    history, page = judged_site / "h.duckdb", judged_site / "site" / "evaluations" / "1.html"
    opened = Opened(browser, page)
    opened.draw_all()
    assert opened.problems == [] and all(u.startswith("file://") for u in opened.requests)
    statistics = {r[3]: r[4] for r in _judgment_rows(history, "agreement")}
    shown = {row[0]: row[1:] for row in opened.cells("table.agreement")}
    assert shown["cohen_kappa"] == [format_value(statistics[f"cohen_kappa{s}"])
                                    for s in ("", "@1", "@2")]  # fmt: skip
    assert shown["recall"][0] == "–" and shown["recall"][2] == format_value(statistics["recall@2"])
    # The confusion matrix: every cell the history holds, by grade, its pairs shown and shaded.
    pairs = {(r, o): n for _, _, r, o, n in _judgment_rows(history, "confusion")}
    grades = opened.page.eval_on_selector_all(
        "table.confusion thead th", "hs => hs.slice(1).map(h => h.textContent)"
    )
    for row in opened.page.eval_on_selector_all(
        "table.confusion tbody tr",
        "rs => rs.map(r => Array.from(r.children).map(c => c.textContent))",
    ):
        for column, count in zip(grades, row[1:], strict=True):
            key = tuple(None if g == "none" else float(g) for g in (row[0], column))
            assert int(count.replace(",", "")) == pairs.get(key, 0)
    assert sum(pairs.values()) == sum(
        int(c.replace(",", "")) for c in opened.page.locator("table.confusion td").all_inner_texts()
    )
    assert opened.page.locator("table.confusion td.same").count() == 4  # grades 0 to 3 agreeing
    # The orderings side by side: the aggregates' ranks, and the recorded statistics.
    aggregates = _aggregates(history, 1)
    ranks = opened.cells("table.ranks")
    by_ap = sorted(ranks, key=lambda row: int(row[1]))
    ap = [value for (_, metric), value in aggregates.items() if metric == "AP"]
    assert [row[2] for row in by_ap] == sorted(ap, key=float, reverse=True)
    for run, ap_rank, ap, p_rank, p10, places in ranks:
        assert (ap, p10) == (aggregates[run, "AP"], aggregates[run, "P@10"])
        assert int(places.strip("▲▼ ")) == abs(int(p_rank) - int(ap_rank))
    correlation = {r[4]: r for r in _judgment_rows(history, "correlation")}
    cells = dict(zip(
        opened.page.eval_on_selector_all("table.correlation th", "hs => hs.map(h => h.textContent)"),
        opened.cells("table.correlation")[0], strict=True))  # fmt: skip
    tau = correlation["kendall_tau_b"]
    assert cells["kendall_tau_b"] == f"{format_value(tau[5])}[{tau[6]:.4f}, {tau[7]:.4f}]"
    assert opened.page.locator(".ordering .chart svg").count() == 1
    checks = opened.cells("table.checks")
    assert checks[0][:5] == ["passed", "gates.0", "c~llm", "cohen_kappa", "bounds"]
    opened.close()
