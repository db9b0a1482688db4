"""The executor's connection: settings that configure DuckDB, not the numbers."""

from __future__ import annotations

from conftest import collection_spec

from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate


def _spec(tmp_path, write_spec, settings):
    metrics = ["AP", "P@5", "NumRet", "Unjudged@10", "nDCG"]
    spec = collection_spec(tmp_path, generate(3, queries=40), metrics, ".trec", settings=settings)
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
