"""The executor's connection: settings that configure DuckDB, not the numbers."""

from __future__ import annotations

from pipeline import evaluate
from pipeline.synthetic import generate, write_qrels, write_run


def _spec(tmp_path, write_spec, settings):
    collection = generate(3, queries=40)
    write_qrels(collection.qrels, tmp_path / "qrels.txt")
    for name, run in collection.runs.items():
        write_run(run, tmp_path / f"{name}.trec")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {name: {"path": f"{name}.trec", "collection": "c"} for name in collection.runs},
        "settings": settings,
        "metrics": ["AP", "P@5", "NumRet", "Unjudged@10", "nDCG"],
    }
    return write_spec(spec, f"spec{len(settings)}.yaml")


def test_memory_limit_configures_duckdb_and_changes_no_number(tmp_path, write_spec):
    limited = evaluate(_spec(tmp_path, write_spec, {"memory_limit": "20MB"}), write=False)
    default = evaluate(_spec(tmp_path, write_spec, {}), write=False)
    setting = "SELECT current_setting('memory_limit')"
    assert (
        limited.con.execute(setting).fetchone()[0] == "19.0 MiB"
    )  # 20 MB is 19.07 MiB, as DuckDB shows it
    assert default.con.execute(setting).fetchone()[0] != "19.0 MiB"
    assert limited.per_query() == default.per_query()
    assert limited.aggregate() == default.aggregate()
