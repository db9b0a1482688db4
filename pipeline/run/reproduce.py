"""`irpipe verify OUTPUT`: an output evaluated again from its manifest, and compared byte for byte.

The manifest beside every output names the spec (its path and sha256) and every input (its
digest). Verifying reads it, checks that the spec and each input still hold what they held, then
evaluates the spec again with every output written to a directory of its own beside OUTPUT (and
nothing recorded in a history), and compares the new file with OUTPUT. A DuckDB database holds its
manifest, with the time it was written, as a table: its level's table is compared row by row
instead. The first line or row that differs is named.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import InputDataError, SpecError
from pipeline.run.provenance import inputs_of

if TYPE_CHECKING:
    from pipeline.spec import LoadedSpec

__all__ = ["Verdict", "verify"]

#: outputs whose bytes cannot repeat (a database file holds its manifest's time): their level's
#: table is compared instead, as rows
_DATABASES = (".duckdb", ".db")
#: outputs compared as rows of a Parquet file; other tables and reports are text, compared by line
_PARQUET = (".parquet",)
_PICTURES = (".png", ".svg")


@dataclass(frozen=True)
class Verdict:
    """Whether an output was made again to the byte; where not, the first difference."""

    output: Path
    difference: str | None = None

    @property
    def same(self) -> bool:
        return self.difference is None

    def message(self) -> str:
        """One line for the console."""
        if self.same:
            # A database is compared by its table's rows (its manifest table holds a time)
            what = "rows" if self.output.suffix.lower() in _DATABASES else "bytes"
            return f"{self.output}: the same {what}, evaluated again from its manifest"
        return f"{self.output}: evaluated again, it differs: {self.difference}"


def verify(output: str | Path) -> Verdict:
    """Evaluate again the spec that wrote `output` (see the module docstring) and compare."""
    from pipeline.spec import load_spec

    output = Path(output)
    manifest = _manifest(output)
    loaded = load_spec(_unchanged_spec(manifest))
    _check_inputs(loaded, manifest)
    index = _index_of(loaded, output)
    with tempfile.TemporaryDirectory(prefix=".irpipe-verify-", dir=output.parent) as scratch:
        again = _evaluated_again(loaded, Path(scratch))[index]
        return Verdict(output, _first_difference(output, again))


def _manifest(output: Path) -> dict[str, Any]:
    """The manifest beside `output` (a spec error without one: nothing says how it was made)."""
    path = Path(f"{output}.manifest.json")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(
            f"{output}: no manifest beside it ({path.name}); irpipe verifies the outputs it "
            "wrote, each with its manifest"
        ) from None
    except (OSError, ValueError) as exc:
        raise SpecError(f"{path}: not a manifest irpipe can read ({exc})") from None


def _unchanged_spec(manifest: dict[str, Any]) -> Path:
    """The spec the manifest names, if it still holds the bytes it held (sha256)."""
    import hashlib

    spec = Path(manifest["spec"])
    try:
        sha256 = hashlib.sha256(spec.read_bytes()).hexdigest()
    except OSError as exc:
        raise InputDataError(f"the spec {spec} cannot be read: {exc.strerror}") from None
    if sha256 != manifest["spec_sha256"]:
        raise InputDataError(
            f"the spec {spec} changed since the output was written (sha256 "
            f"{manifest['spec_sha256'][:12]} then, {sha256[:12]} now)"
        )
    return spec


def _check_inputs(loaded: LoadedSpec, manifest: dict[str, Any]) -> None:
    """Every input the manifest records still has its digest (a run named by a pattern too)."""
    found = {(i.role, i.name): i for i in inputs_of(loaded)}
    # Files first: a fused run or an overlay changes when a file it reads does, so the file is
    # the one to name.
    recorded = sorted(manifest["inputs"], key=lambda i: not Path(i["path"]).is_file())
    for then in recorded:
        key = (then["role"], then["name"])
        now = found.get(key)
        if now is None:
            raise InputDataError(
                f"{then['role']} {then['name']!r} ({then['path']}) is no longer an input of the "
                "spec (a pattern that no longer matches it?)"
            )
        if now.digest != then["digest"]:
            raise InputDataError(
                f"{then['role']} {then['name']!r} ({then['path']}) changed since the output was "
                f"written (digest {then['digest']} then, {now.digest} now)"
            )


def _outputs(loaded: LoadedSpec) -> list:
    """Every output of the spec: its own, then its pools', in spec order."""
    spec = loaded.spec
    return [*spec.outputs, *(o for pool in spec.pools.values() for o in pool.outputs)]


def _index_of(loaded: LoadedSpec, output: Path) -> int:
    """Which of the spec's outputs `output` is."""
    paths = [Path(o.path).resolve() for o in _outputs(loaded)]
    try:
        return paths.index(output.resolve())
    except ValueError:
        raise SpecError(
            f"{output}: its manifest names the spec {loaded.path}, which writes no such output"
        ) from None


def _evaluated_again(loaded: LoadedSpec, scratch: Path) -> list[Path]:
    """The spec evaluated again, every output written under `scratch` (nothing remembered in a
    history, no dashboard); the new paths, in `_outputs` order."""
    from pipeline.run.evaluation import evaluate

    moved = [scratch / f"{i}-{Path(o.path).name}" for i, o in enumerate(_outputs(loaded))]
    spec = loaded.spec
    own = [o.model_copy(update={"path": p}) for o, p in zip(spec.outputs, moved, strict=False)]
    pooled = iter(moved[len(own) :])
    pools = {
        name: pool.model_copy(
            update={"outputs": [o.model_copy(update={"path": next(pooled)}) for o in pool.outputs]}
        )
        for name, pool in spec.pools.items()
    }
    spec = spec.model_copy(update={"outputs": own, "pools": pools, "history": None})
    evaluate(replace(loaded, spec=spec), remember=False)
    return moved


def _first_difference(output: Path, again: Path) -> str | None:
    """None where the two files say the same; else where they first differ."""
    suffix = output.suffix.lower()
    if suffix not in _DATABASES and output.read_bytes() == again.read_bytes():
        return None
    if suffix in _PICTURES:
        return "the pictures' bytes differ"
    if suffix in _DATABASES:
        return _first_row(output, again, database=True)
    if suffix in _PARQUET:
        rows = _first_row(output, again, database=False)
        return rows or "every row is the same, but not the file's bytes (its layout or metadata)"
    return _first_line(output, again)


def _first_line(output: Path, again: Path) -> str:
    """The first line of two text files that differs."""
    old = output.read_text(encoding="utf-8", errors="replace").splitlines()
    new = again.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {number}: {a!r} written, {b!r} now"
    return f"{len(old)} lines written, {len(new)} now"


def _first_row(output: Path, again: Path, database: bool) -> str | None:
    """The first row of two tables (Parquet files, or DuckDB databases' result tables) that
    differs; None where every row is the same."""
    from pipeline.outputs.rows import table_rows

    old, new = table_rows(output, database), table_rows(again, database)
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"row {number}: {a} written, {b} now"
    return None if len(old) == len(new) else f"{len(old)} rows written, {len(new)} now"
