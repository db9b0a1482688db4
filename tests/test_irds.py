"""ir_datasets ids as inputs, offline: a dataset registered on local files, and a real id whose
qrels are already in ir_datasets' cache (IR_DATASETS_HOME) as ir_datasets lays it out. Each runs
in a Python of its own, since ir_datasets reads its home when it is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

METRICS = ["AP", "nDCG@10", "P@10", "RR"]

LOCAL = """
import json, sys
import ir_datasets
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import TrecQrels, TrecScoredDocs
from ir_datasets.util import LocalDownload
from pipeline import evaluate
qrels, run = sys.argv[1:3]
ir_datasets.registry.register("irpipe-test/local", Dataset(
    TrecQrels(LocalDownload(qrels), {0: "not", 1: "relevant", 2: "highly"}),
    TrecScoredDocs(LocalDownload(run))))
results = evaluate(qrels="irds:irpipe-test/local", runs={"run0": "irds:irpipe-test/local"},
                   metrics=sys.argv[3].split(","))
rows = results.evaluation.per_query()
print(json.dumps({"rows": rows, "inputs": results.evaluation.recorded["inputs"]}))
"""

CACHED = """
import json, sys
from pipeline import evaluate
results = evaluate(qrels="irds:msmarco-passage/trec-dl-2019/judged", runs={"run0": sys.argv[1]},
                   metrics=sys.argv[2].split(","))
print(json.dumps(results.evaluation.per_query()))
"""


@pytest.fixture
def files(tmp_path: Path):
    data = generate(11, queries=20, runs=1)
    write_qrels(data.qrels, tmp_path / "qrels.txt")
    write_run(data.runs["run0"], tmp_path / "run0.trec", tag="run0")
    expected = evaluate(qrels=tmp_path / "qrels.txt", runs={"run0": tmp_path / "run0.trec"},
                        metrics=METRICS).evaluation.per_query()  # fmt: skip
    return tmp_path, sorted(map(list, expected))


def _python(code: str, home: Path, *args) -> dict | list:
    env = {**os.environ, "IR_DATASETS_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_dataset_registered_on_local_files_gives_the_files_values(files):
    root, expected = files
    found = _python(LOCAL, root / "home", root / "qrels.txt", root / "run0.trec", ",".join(METRICS))
    assert sorted(found["rows"]) == expected
    roles = {(i["role"], i["path"]) for i in found["inputs"]}
    assert roles == {("qrels", "irds:irpipe-test/local"), ("run", "irds:irpipe-test/local")}
    assert all(i["digest"].startswith("xxh3_128:") for i in found["inputs"])


def test_a_real_id_is_read_from_ir_datasets_cache(files):
    root, expected = files
    cache = root / "home" / "msmarco-passage" / "trec-dl-2019"
    cache.mkdir(parents=True)
    (cache / "qrels").write_bytes((root / "qrels.txt").read_bytes())  # as ir_datasets keeps it
    found = _python(CACHED, root / "home", root / "run0.trec", ",".join(METRICS))
    assert sorted(found) == expected


def test_an_unknown_id_is_named(tmp_path):
    code = "from pipeline import evaluate\nevaluate(qrels='irds:no/such/set', runs={'r': {'1': {'a': 1.0}}}, metrics=['AP'])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "IR_DATASETS_HOME": str(tmp_path)})  # fmt: skip
    assert "collections.default.qrels: no ir_datasets dataset 'no/such/set'" in done.stderr


def test_an_id_in_a_yaml_spec_is_read_the_same(files):
    root, expected = files
    spec = root / "spec.yaml"
    spec.write_text(
        "collections: {default: {qrels: 'irds:irpipe-test/local'}}\n"
        f"runs: {{run0: {{path: {root / 'run0.trec'}, collection: default}}}}\n"
        f"metrics: [{', '.join(METRICS)}]\n"
    )
    code = LOCAL.split("results =")[0] + (
        "from pipeline import evaluate\n"
        f"print(json.dumps(evaluate({str(spec)!r}, write=False).per_query(to='rows')))\n"
    )
    found = _python(code, root / "home", root / "qrels.txt", root / "run0.trec")
    assert sorted(found) == expected
