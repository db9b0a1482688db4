"""The stages' names have one source (`StageName`): every stage `pipeline.run.stages` can list
has its function in `pipeline.run.evaluation`, and every function a stage that some plan lists."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pipeline import validate
from pipeline.run import evaluation
from pipeline.run.stages import StageName, by_stage, stages

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.fixture
def every_stage(tmp_path: Path) -> Path:
    """The quickstart's data with every part a stage is for: a tuned fused run, a pool,
    comparisons, two judgment sets compared, a reproduction, checks, outputs, and a history with a dashboard."""
    pytest.importorskip("numpy")  # the tuned run's weights are chosen with numpy
    shutil.copytree(CONFIGS / "data", tmp_path / "data")
    spec = yaml.safe_load((CONFIGS / "compare.yaml").read_text())
    spec["collections"]["other"] = {"qrels": "data/qrels.txt"}
    spec["runs"]["tuned"] = {"fuse": ["bm25", "dense"], "method": "wsum", "tune": {"metric": "AP"}}
    spec["agreement"] = [{"reference": "sample", "other": "other"}]
    spec["outputs"] = [{"path": "out/summary.csv", "level": "aggregate"}]
    spec["expect"] = [{"run": "bm25", "metric": "AP", "value": 0.2179}]
    spec["pools"] = {"round1": {"collection": "sample", "runs": ["dense"]}}
    spec["runs"]["dense_rep"] = {"path": "data/dense.trec", "collection": "sample"}
    spec["reproduction"] = [{"original": ["dense"], "reproduced": ["dense_rep"]}]
    spec["history"] = {"path": "out/history.duckdb", "dashboard": "out/dashboard"}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_a_plan_with_every_part_lists_every_stage_in_order(every_stage):
    """A stage added to the list (or a name added to `StageName`) that no plan lists fails here."""
    listed = [stage.name for stage in stages(validate(every_stage))]
    assert listed == list(StageName)
    assert all(isinstance(name, StageName) for name in listed)


def test_every_stage_has_its_function_of_the_same_name():
    """A stage without its function, or a function for no stage, fails here (and when
    `pipeline.run.evaluation` is imported: `by_stage`)."""
    functions = evaluation._STEPS
    assert list(functions) == list(StageName)
    assert {name: f.__name__ for name, f in functions.items()} == {
        name: f"_{name}" for name in StageName
    }


def test_a_stage_missing_or_not_a_stage_is_refused():
    functions = {name: print for name in StageName}
    assert by_stage(functions) == functions
    del functions[StageName.POOL]
    with pytest.raises(TypeError, match="missing: pool; not a StageName: none"):
        by_stage(functions)
    functions = {**{name: print for name in StageName}, "merge": print}
    with pytest.raises(TypeError, match="missing: none; not a StageName: 'merge'"):
        by_stage(functions)
    # a name written as a string, though equal to the stage's, is not the stage's name
    functions = {**{name: print for name in StageName if name != "pool"}, "pool": print}
    with pytest.raises(TypeError, match="missing: none; not a StageName: 'pool'"):
        by_stage(functions)
