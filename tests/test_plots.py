"""Plots (`.png`, `.svg`): precision-recall curves and per-query differences, opened and checked as
the files they are; the same spec gives the same bytes; without matplotlib, a clear spec error
before any data is read."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

ROOT = Path(__file__).resolve().parents[1]
SVG = "{http://www.w3.org/2000/svg}"
DPI = 150


@pytest.fixture
def runs(tmp_path) -> list[str]:
    """Three runs of increasing skill on one generated collection, written to tmp_path."""
    generated = generate(3, queries=30, runs=3, skill=(1.0, 3.0, 6.0), float32_ties=False)
    write_qrels(generated.qrels, tmp_path / "qrels.txt")
    for name, run in generated.runs.items():
        write_run(run, tmp_path / f"{name}.trec", tag=name)
    return list(generated.runs)


def _spec(runs: list[str], outputs: list[dict], names: list[str] | None = None) -> dict:
    names = names or runs
    return {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {
            n: {"path": f"{r}.trec", "collection": "c"} for n, r in zip(names, runs, strict=True)
        },
        "metrics": ["AP", "nDCG@10"],
        "outputs": outputs,
    }


def _colours(path: Path) -> set[tuple[int, int, int]]:
    with Image.open(path) as image:
        return {rgba[:3] for _, rgba in image.convert("RGBA").getcolors(maxcolors=1 << 20)}


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))


TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c"]  # matplotlib's first colours: one per run, in order


def _texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()).strip() for t in root.iter(f"{SVG}text")]


def test_pr_plot_png_is_a_picture_of_one_line_per_run(tmp_path, write_spec, runs):
    evaluate(write_spec(_spec(runs, [{"path": "pr.png", "level": "pr_plot"}])))
    with Image.open(tmp_path / "pr.png") as image:
        assert image.format == "PNG" and image.size == (int(4.8 * DPI), int(4.4 * DPI))
    colours = _colours(tmp_path / "pr.png")
    assert len(colours) > 50  # antialiased lines and text on white, not a blank canvas
    assert {_rgb(c) for c in TAB10} <= colours
    assert _rgb("#d62728") not in colours  # a fourth line's colour: no fourth line


def test_one_axes_per_collection_side_by_side(tmp_path, write_spec, runs):
    spec = _spec(
        runs, [{"path": "pr.png", "level": "pr_plot"}, {"path": "pr.svg", "level": "pr_plot"}]
    )
    spec["collections"]["other"] = {"qrels": "qrels.txt"}
    spec["runs"]["elsewhere"] = {"path": "run0.trec", "collection": "other"}
    evaluate(write_spec(spec))
    with Image.open(tmp_path / "pr.png") as image:
        assert image.size == (int(2 * 4.8 * DPI), int(4.4 * DPI))
    root = ET.parse(tmp_path / "pr.svg").getroot()
    lines = [g.get("id") for g in root.iter(f"{SVG}g") if g.get("id", "").startswith("pr-")]
    assert lines == ["pr-0-0", "pr-0-1", "pr-0-2", "pr-1-0"]
    assert {"c (30 queries)", "other (30 queries)"} <= set(_texts(root))


@pytest.mark.parametrize("levels", [11, 101])
def test_pr_plot_svg_has_a_line_per_run_through_the_curves_points(
    tmp_path, write_spec, runs, levels
):
    names = ["bm25", "_dense", "cost $5 $6"]  # names are text, never mathtext or hidden labels
    output = {"path": "pr.svg", "level": "pr_plot", "recall_levels": levels}
    evaluation = evaluate(write_spec(_spec(runs, [output], names)))
    root = ET.parse(tmp_path / "pr.svg").getroot()
    groups = {g.get("id"): g for g in root.iter(f"{SVG}g") if g.get("id", "").startswith("pr-")}
    assert sorted(groups) == ["pr-0-0", "pr-0-1", "pr-0-2"]
    table = "pr_curve" if levels == 11 else "pr_curve_101"
    for i, name in enumerate(names):
        query = f"SELECT recall, precision FROM {table} WHERE run = ? ORDER BY recall"
        curve = evaluation.con.execute(query, [name]).fetchall()
        assert len(curve) == levels
        line = groups[f"pr-0-{i}"].find(f"{SVG}path")  # the line (markers follow, in <defs>)
        _assert_drawn_through(root, line, curve)
    texts = _texts(root)
    assert set(names) <= set(texts)
    assert {"recall", "interpolated precision", "c (30 queries)"} <= set(texts)


def _assert_drawn_through(root: ET.Element, line: ET.Element, curve: list[tuple]) -> None:
    """The line has one vertex per point of the curve, at the point's place in the frame: the
    axes' background rectangle is recall 0..1 left to right, precision 0..1 bottom to top."""
    axes = root.find(f".//{SVG}g[@id='axes_1']")
    frame = [float(v) for v in re.findall(r"[-\d.]+", axes.find(f"{SVG}g/{SVG}path").get("d"))]
    left, right = min(frame[0::2]), max(frame[0::2])
    top, bottom = min(frame[1::2]), max(frame[1::2])
    vertices = re.findall(r"[ML] ([-\d.]+) ([-\d.]+)", line.get("d"))
    assert len(vertices) == len(curve)
    for (x, y), (recall, precision) in zip(vertices, curve, strict=True):
        assert float(x) == pytest.approx(left + recall * (right - left), abs=1e-5)
        assert float(y) == pytest.approx(bottom - precision * (bottom - top), abs=1e-5)


def test_the_same_spec_gives_byte_identical_svg_and_png_whatever_the_users_matplotlibrc(
    tmp_path, write_spec, runs
):
    outputs = [
        {"path": "pr.svg", "level": "pr_plot"},
        {"path": "pr.png", "level": "pr_plot"},
        {"path": "d.svg", "level": "diff_plot", "metric": "AP", "baseline": "run0"},
    ]
    spec = write_spec(_spec(runs, outputs))
    names = ("pr.svg", "pr.png", "d.svg")
    evaluate(spec)
    first = [(tmp_path / name).read_bytes() for name in names]
    evaluate(spec)
    assert [(tmp_path / name).read_bytes() for name in names] == first
    # Another process, with a matplotlibrc that would change every picture it applied to.
    rc = tmp_path / "matplotlibrc"
    rc.write_text("lines.linewidth: 6\nfont.size: 20\nsvg.hashsalt: other\nsvg.fonttype: path\n")
    env = {**os.environ, "MATPLOTLIBRC": str(rc), "IRPIPE_LOAD_PLUGINS": ""}
    code = (
        "import sys; from pipeline.cli import main; sys.exit(main(['run', '--quiet', sys.argv[1]]))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(spec)], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert [(tmp_path / name).read_bytes() for name in names] == first
    assert b"<dc:date>" not in first[0]


def _diff_rows(evaluation) -> list[tuple]:
    return evaluation.con.execute(
        "SELECT run, count(*) FILTER (WHERE outcome = 'better'), "
        "count(*) FILTER (WHERE outcome = 'worse'), count(*) FILTER (WHERE outcome = 'tied') "
        "FROM diff_plot_0 GROUP BY run ORDER BY run"
    ).fetchall()


def test_diff_plot_svg_has_a_panel_per_run_with_wins_and_losses(tmp_path, write_spec, runs):
    output = {"path": "d.svg", "level": "diff_plot", "metric": "AP", "baseline": "run1"}
    evaluation = evaluate(write_spec(_spec(runs, [output])))
    texts = _texts(ET.parse(tmp_path / "d.svg").getroot())
    assert "AP: per-query difference to run1" in texts
    counts = _diff_rows(evaluation)
    assert [run for run, *_ in counts] == ["run0", "run2"]
    for run, better, worse, tied in counts:
        assert f"{run} vs run1" in texts
        assert better + worse + tied == 30 and better and worse
        # the legends follow the panels in order; each says how many queries went which way
        assert [f"better: {better}", f"worse: {worse}", f"tied: {tied}"] == _legend_of(texts, run)
    assert texts.count("30 queries, sorted by difference") == 2


def _legend_of(texts: list[str], run: str) -> list[str]:
    start = texts.index(f"{run} vs run1")
    return [t for t in texts[start:] if re.fullmatch(r"(better|worse|tied): \d+", t)][:3]


def test_diff_plot_png_shows_gains_and_losses_in_their_colours(tmp_path, write_spec, runs):
    output = {"path": "d.png", "level": "diff_plot", "metric": "nDCG@10", "baseline": "run0"}
    evaluate(write_spec(_spec(runs, [output])))
    with Image.open(tmp_path / "d.png") as image:
        assert image.size == (int(8.0 * DPI), int((0.8 + 2.4 * 2) * DPI))
    colours = _colours(tmp_path / "d.png")
    assert {_rgb("#2ca02c"), _rgb("#d62728")} <= colours and len(colours) > 50


def test_a_spec_without_plots_never_imports_matplotlib(tmp_path, write_spec, runs):
    spec = write_spec(_spec(runs, [{"path": "a.csv"}, {"path": "pr.csv", "level": "pr_curve"}]))
    code = (
        "import sys; from pipeline.cli import main; code = main(['run', '--quiet', sys.argv[1]]); "
        "sys.exit(code or 'matplotlib' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(spec)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


#: runs irpipe's CLI in an interpreter where `import matplotlib` fails, as where it is not installed
WITHOUT_MATPLOTLIB = """
import importlib.abc, sys

class NoMatplotlib(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "matplotlib":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoMatplotlib())
from pipeline.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _without_matplotlib(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "IRPIPE_LOAD_PLUGINS": ""}
    command = [sys.executable, "-c", WITHOUT_MATPLOTLIB, *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)


@pytest.mark.parametrize("command", [["run"], ["validate"], ["validate", "--no-data"]])
def test_without_matplotlib_a_plot_is_a_spec_error_before_any_data_is_read(
    tmp_path, write_spec, runs, command
):
    for name in runs:  # unreadable data: reading it would be exit 3, not a spec error
        (tmp_path / f"{name}.trec").write_text("not a run\n")
    outputs = [{"path": "a.csv"}, {"path": "plots/pr.svg", "level": "pr_plot"}]
    done = _without_matplotlib(*command, str(write_spec(_spec(runs, outputs))))
    assert done.returncode == 2, done.stderr
    assert re.search(
        r"^Error: .*spec.yaml:\d+: outputs.1.path: SVG plots need matplotlib, which cannot be "
        r"imported \(No module named 'matplotlib'\); install it with: pip install 'irpipe\[plot\]'$",
        done.stderr,
        flags=re.MULTILINE,
    ), done.stderr
    assert not (tmp_path / "a.csv").exists() and not (tmp_path / "plots").exists()


def test_without_matplotlib_tables_and_curves_still_evaluate(tmp_path, write_spec, runs):
    outputs = [{"path": "a.csv"}, {"path": "pr.csv", "level": "pr_curve"}]
    done = _without_matplotlib("run", "--quiet", str(write_spec(_spec(runs, outputs))))
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "pr.csv").read_text().splitlines()) == 1 + 3 * 11


def test_the_example_spec_runs(tmp_path):
    import shutil

    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("out"))
    evaluate(tmp_path / "configs" / "pr_curves.yaml")
    out = tmp_path / "configs" / "out"
    assert {p.name for p in out.iterdir() if not p.name.endswith(".json")} == {
        "pr_curve.csv",
        "pr_curve_101.parquet",
        "pr_curve.svg",
        "ap_vs_bm25.png",
    }
    with Image.open(out / "ap_vs_bm25.png") as image:
        assert image.format == "PNG"


def test_the_readme_shows_the_example_spec():
    import yaml

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Precision–recall curves and plots") :]
    block = section[section.index("```yaml\n") + 8 : section.index("```\n", 8)]
    example = (ROOT / "configs" / "pr_curves.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(block) == yaml.safe_load(example)
