"""A spec's outputs are byte-identical whether its runs are read by Arrow into `run_rows` (a
view of the registered table, engines/duckdb/arrow_rows.py) or by the exact reader, on plans
that read it in parts (the full plan's slices, a run under several collections); and a plan
whose statements change a batch's rows (fused runs, trec_eval -c's rankings, runs read again
from a history only to be fused), or that bounds DuckDB's memory or threads, keeps the exact
reader for it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipeline import evaluate
from pipeline.engines.duckdb import arrow_rows, executor, steps
from pipeline.engines.duckdb.loading import insert_inputs
from pipeline.plan import slices
from pipeline.synthetic import generate, write_qrels, write_run

METRICS = ["AP", "nDCG@10", "P@10", "RR", "R@100", "Bpref", "RelString@5"]


def _files(d: Path) -> dict:
    """Generated qrels (two judgment sets) and three runs in `d`; the spec's collections and
    runs over them."""
    collection = generate(11, queries=30, runs=3)
    write_qrels(collection.qrels, d / "qrels.txt")
    for name, run in collection.runs.items():
        write_run(run, d / f"{name}.txt", tag=name)
    return {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {name: {"path": f"{name}.txt", "collection": "c"} for name in collection.runs},
        "metrics": METRICS,
        "outputs": [{"path": "aggregate.csv", "level": "aggregate"},
                    {"path": "query.csv", "level": "query"}],
    }  # fmt: skip


def _fused(spec: dict, d: Path) -> dict:
    spec["runs"]["f"] = {"fuse": ["run0", "run1"], "method": "rrf"}
    spec["outputs"].append({"path": "f.trec", "level": "run", "run": "f"})
    return spec


def _missing(spec: dict, d: Path) -> dict:
    spec["settings"] = {"missing_queries": "trec_eval_c"}
    return spec


def _several(spec: dict, d: Path) -> dict:
    write_qrels(generate(12, queries=30).qrels, d / "other.txt")
    spec["collections"]["o"] = {"qrels": "other.txt"}
    spec["runs"]["run2"]["collection"] = ["c", "o"]
    return spec


#: a spec's variant -> how it changes the spec: read by Arrow
SPECS = {"plain": lambda spec, d: spec, "several collections": _several}
#: variants whose plan changes a batch's rows: the exact reader's
CHANGING = {"fused": _fused, "trec_eval -c": _missing}


class _Spy:
    """What `read_runs` gave for each batch: Arrow's rows, or None (the exact reading)."""

    def __init__(self, monkeypatch, on: bool) -> None:
        self.read: list[bool] = []
        monkeypatch.setattr(arrow_rows, "WORTH", 0 if on else 1 << 60)
        real = arrow_rows.read_runs

        def spy(con, batch):
            rows = real(con, batch)
            self.read.append(rows is not None)
            return rows

        monkeypatch.setattr(executor, "read_runs", spy)


def _outputs(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.suffix in (".csv", ".trec")}


def _evaluated(tmp_path: Path, monkeypatch, spec: dict, on: bool, name: str) -> dict:
    d = tmp_path / name
    d.mkdir()
    spec = spec(_files(d), d)
    (d / "spec.yaml").write_text(yaml.safe_dump(spec))
    spy = _Spy(monkeypatch, on)
    evaluate(d / "spec.yaml")
    assert spy.read and all(read == on for read in spy.read)
    return _outputs(d)


@pytest.mark.parametrize("variant", CHANGING)
def test_a_plan_that_changes_the_batch_keeps_the_exact_reader(tmp_path, monkeypatch, variant):
    """A view takes no insert: copying it into a table held both at once (a 7M-line run under
    -c peaked 320 MB higher, for no less CPU), so such a batch is read as before."""
    d = tmp_path / "spec"
    d.mkdir()
    (d / "spec.yaml").write_text(yaml.safe_dump(CHANGING[variant](_files(d), d)))
    spy = _Spy(monkeypatch, True)
    evaluate(d / "spec.yaml")
    assert spy.read == []


@pytest.mark.parametrize("variant", SPECS)
def test_outputs_are_byte_identical_either_way(tmp_path, monkeypatch, variant):
    arrow = _evaluated(tmp_path, monkeypatch, SPECS[variant], True, "arrow")
    exact = _evaluated(tmp_path, monkeypatch, SPECS[variant], False, "exact")
    assert arrow == exact and "query.csv" in arrow


def test_the_full_plans_slices_read_the_view(tmp_path, monkeypatch):
    """Slices of a few hundred rows: `run_rows`, a view of Arrow's table, is renamed and read
    through the slices' view as the table is."""
    monkeypatch.setattr(slices, "SLICE_ROWS", 300)
    sliced = []
    real = steps._rank_rows

    def counting(con, ranking, batch):
        sliced.append(len(con.execute(*_bounds(ranking, batch)).fetchone()[0]))
        return real(con, ranking, batch)

    monkeypatch.setattr(steps, "_rank_rows", counting)
    arrow = _evaluated(tmp_path, monkeypatch, SPECS["plain"], True, "arrow")
    exact = _evaluated(tmp_path, monkeypatch, SPECS["plain"], False, "exact")
    assert arrow == exact and max(sliced) > 2


def _bounds(ranking, batch) -> tuple:
    statement = ranking.slices(batch)
    return statement.sql, statement.params


def test_runs_read_again_only_to_be_fused_keep_the_exact_reader(tmp_path, monkeypatch):
    """With a history, a fused run changed since it was recorded reads its (recorded) inputs
    again only to fuse them, then deletes their rows from `run_rows`: the exact reader's."""
    spec = _fused(_files(tmp_path), tmp_path)
    spec["history"] = {"path": "h.duckdb"}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    evaluate(tmp_path / "spec.yaml")
    spec["runs"]["f"]["k"] = 10
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    spy = _Spy(monkeypatch, True)
    reused = evaluate(tmp_path / "spec.yaml").evaluation.keeper.reused.keys()
    assert reused == {"run0", "run1", "run2"} and spy.read == []


@pytest.mark.parametrize("settings", [{"memory_limit": "1GB"}, {"threads": 1}])
def test_a_bound_on_duckdb_keeps_its_reader(tmp_path, monkeypatch, settings):
    """Rows held by pyarrow, and its threads, would escape `memory_limit` and `threads`: with
    either set, the runs are read by DuckDB, which they then bound."""
    spec = _files(tmp_path)
    spec["settings"] = settings
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    spy = _Spy(monkeypatch, True)
    read = []
    monkeypatch.setattr(
        executor, "insert_inputs", lambda con, batch: read.append(batch) or real(con, batch)
    )
    real = insert_inputs
    evaluate(tmp_path / "spec.yaml")
    assert spy.read == [] and len(read) == 1
