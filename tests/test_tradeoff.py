"""The effectiveness-latency trade-off (`level: tradeoff`): a point per run, the Pareto front
marked, in PNG and SVG opened as the files they are; the preflight's errors naming the key."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import yaml
from conftest import irpipe_inprocess
from PIL import Image

from pipeline.synthetic import generate, write_qrels, write_run
from pipeline.synthetic_latency import generate_latency, write_latency

SVG = "{http://www.w3.org/2000/svg}"
#: each run's ranking (by skill) and typical time: slow is better and slower (on the front),
#: quick is worse and faster (on it too), late ranks as quick and is slower (dominated)
RUNS = {"quick": ("run0", 5.0), "slow": ("run2", 60.0), "late": ("run0", 20.0)}


def _spec(tmp_path, outputs: list[dict], metrics=("nDCG@10", "Latency(stat=p95)")) -> str:
    data = generate(4, queries=30, runs=3, skill=(0.5, 3.0, 8.0), float32_ties=False)
    write_qrels(data.qrels, tmp_path / "qrels.txt")
    runs = {}
    for i, (name, (ranking, typical)) in enumerate(RUNS.items()):
        write_run(data.runs[ranking], tmp_path / f"{ranking}.trec")
        write_latency(
            generate_latency(i, list(data.runs[ranking]), typical), tmp_path / f"{name}.ms"
        )
        runs[name] = {"path": f"{ranking}.trec", "collection": "c", "latency": f"{name}.ms"}
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "runs": runs, "metrics": list(metrics),
            "outputs": outputs}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return "spec.yaml"


def _tradeoff(path: str) -> dict:
    return {"path": path, "level": "tradeoff", "metric": "nDCG@10",
            "latency": "Latency(stat='p95')"}  # fmt: skip


def test_the_front_is_marked_in_svg_and_png(tmp_path):
    """quick and slow are on the front (filled), late is dominated by quick (hollow); the front
    is one step line; the PNG is a picture of that size with the points' colour."""
    spec = _spec(tmp_path, [_tradeoff("t.svg"), _tradeoff("t.png"), {"path": "a.tsv"}])
    result = irpipe_inprocess("run", "--quiet", spec, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = (tmp_path / "a.tsv").read_text().splitlines()[1:]
    values = {(r.split("\t")[0], r.split("\t")[2]): float(r.split("\t")[3]) for r in rows}
    assert values["slow", "nDCG@10"] > values["quick", "nDCG@10"]  # the data is as meant
    assert values["slow", "Latency(stat='p95')"] > values["late", "Latency(stat='p95')"]
    root = ET.parse(tmp_path / "t.svg").getroot()
    gids = [g.get("id") for g in root.iter(f"{SVG}g") if (g.get("id") or "").startswith("point-")]
    assert gids == ["point-0-front", "point-1-front", "point-2-dominated"]
    assert any(g.get("id") == "pareto-front" for g in root.iter(f"{SVG}g"))
    texts = {"".join(t.itertext()).strip() for t in root.iter(f"{SVG}text")}
    assert {"quick", "slow", "late", "Pareto front", "dominated"} <= texts
    with Image.open(tmp_path / "t.png") as image:
        assert image.size == (int(5.2 * 150), int(4.4 * 150))
        colours = {rgba[:3] for _, rgba in image.convert("RGBA").getcolors(maxcolors=1 << 20)}
    assert (0x1F, 0x77, 0xB4) in colours  # C0, the points'


def test_a_tradeoff_names_a_latency_statistic(tmp_path):
    """A latency that is not a Latency or QPS metric, a metric the spec lacks, or no latency
    key: exit 2 naming the output's key, before any data is read."""
    cases = [
        ({**_tradeoff("t.png"), "latency": "nDCG@10"}, "outputs.0.latency: nDCG@10 is not a latency"),
        ({**_tradeoff("t.png"), "metric": "AP"}, "outputs.0.metric: 'AP' is not a metric of this spec"),
        ({"path": "t.png", "level": "tradeoff", "metric": "nDCG@10"}, "level tradeoff needs latency"),
    ]  # fmt: skip
    for output, said in cases:
        result = irpipe_inprocess("validate", _spec(tmp_path, [output]), cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert said in result.stderr


def _front_corners(svg) -> list[tuple[float, float]]:
    """The vertices of the front's step line, in the SVG's coordinates."""
    root = ET.parse(svg).getroot()
    group = next(g for g in root.iter(f"{SVG}g") if g.get("id") == "pareto-front")
    words = next(group.iter(f"{SVG}path")).get("d").replace("M", "").split("L")
    return [tuple(float(n) for n in word.split()) for word in words]


@pytest.mark.parametrize(("latency", "holds"), [("Latency(stat='p95')", "left"), ("QPS", "right")])
def test_the_front_steps_the_way_its_latency_is_better(tmp_path, latency, holds):
    """Between two runs of the front the line holds the value of the run whose latency is the
    better there: the faster-answering left one for a time, the right one for QPS (higher is
    better): the line bounds what the front dominates."""
    metrics = ("nDCG@10", "Latency(stat=p95)", "QPS")
    output = {**_tradeoff("t.svg"), "latency": latency}
    result = irpipe_inprocess("run", "--quiet", _spec(tmp_path, [output], metrics), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    first, corner, last = _front_corners(tmp_path / "t.svg")
    if holds == "left":  # across at the first run's value, then to the second's
        assert corner == (last[0], first[1])
    else:  # to the second run's value at the first run's latency, then across
        assert corner == (first[0], last[1])
