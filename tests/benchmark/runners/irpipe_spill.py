"""irpipe under a low DuckDB memory limit: it must finish by spilling to disk, not fail.

Usage: irpipe_spill.py SPEC LIMIT TEMP_DIR (e.g. 256MB). The spec's `memory_limit` setting does the
same, spilling to DuckDB's `.tmp`; this runner also names the temporary directory, so that the
benchmark can report what was spilled there.
"""

from __future__ import annotations

import sys

import duckdb

from pipeline import load_spec, validate
from pipeline.engines.duckdb.executor import execute
from pipeline.outputs import write_outputs
from pipeline.run.provenance import manifest


def main(spec: str, limit: str, temp_dir: str) -> None:
    """Validate, execute on a memory-limited connection, write the spec's outputs."""
    loaded = load_spec(spec)
    plan = validate(loaded)
    con = duckdb.connect(config={"memory_limit": limit, "temp_directory": temp_dir})
    execute(plan.sql, con)
    # Temporary files still held at the end (evicted table blocks) show that it spilled.
    spilled = con.execute("SELECT coalesce(sum(size), 0) FROM duckdb_temporary_files()").fetchone()
    print(f"temporary files at the end: {spilled[0] / 2**20:.0f} MB")
    write_outputs(con, list(plan.outputs), manifest(plan))


if __name__ == "__main__":
    main(*sys.argv[1:])
