"""Run paths that are glob patterns: one run per matching file, named `<name>/<file stem>`.

`runs: {sys: {path: "runs/*.trec", collection: dl19}}` becomes the runs `sys/bm25`, `sys/dense`, ...
in sorted file order. A path naming an existing file is never a pattern (`run[1].trec` is a file
name), hidden files never match, and a pattern matching no file is an error naming its key.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from ..errors import SpecError

__all__ = ["expand_run_globs"]


def expand_run_globs(
    data: Any, base_dir: Path, lines: dict[tuple, int], spec_path: Path, required: bool = True
) -> Any:
    """`data` (the parsed YAML) with every run whose path is a pattern replaced by its matches.

    `lines` gains an entry for each new run's keys, copied from its pattern's, so that messages
    about it still name the spec's line. Unless `required`, a pattern matching no file stays one
    run named by its key (`irpipe compile` needs no data).
    """
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, dict):
        return data
    expanded: dict[Any, Any] = {}
    for name, run in runs.items():
        pattern = run.get("path") if isinstance(run, dict) else None
        where = _where(spec_path, lines, name)
        if not _is_pattern(pattern, base_dir):
            _add(expanded, name, run, where)
            continue
        files = _matches(pattern, base_dir, where, required)
        if not files:
            _add(expanded, name, run, where)
        for file in files:
            new = f"{name}/{_stem(file)}"
            _add(expanded, new, {**run, "path": file}, f"{where}: {file}")
            _copy_lines(lines, name, new)
    return {**data, "runs": expanded}


def _is_pattern(path: Any, base_dir: Path) -> bool:
    if not isinstance(path, str) or not any(c in path for c in "*?["):
        return False
    return not (base_dir / path).is_file()


def _matches(pattern: str, base_dir: Path, where: str, required: bool) -> list[str]:
    names = glob.glob(pattern, root_dir=base_dir, recursive=True)
    files = sorted(n for n in names if (base_dir / n).is_file())
    if not files and required:
        raise SpecError(f"{where}: no file matches the pattern '{pattern}' (in {base_dir})")
    return files


def _stem(file: str) -> str:
    """The file name without `.gz` and its last suffix: `bm25.trec.gz` -> `bm25`."""
    name = Path(file).name
    return Path(name[:-3] if name.endswith(".gz") else name).stem


def _add(runs: dict, name: Any, run: Any, where: str) -> None:
    if name in runs:
        raise SpecError(
            f"{where}: two runs are named '{name}' "
            "(a pattern's files are named <run>/<file name without suffix>); rename one"
        )
    runs[name] = run


def _copy_lines(lines: dict[tuple, int], old: Any, new: str) -> None:
    for key, line in list(lines.items()):
        if key[:2] == ("runs", old):
            lines[("runs", new, *key[2:])] = line


def _where(spec_path: Path, lines: dict[tuple, int], name: Any) -> str:
    line = lines.get(("runs", name, "path")) or lines.get(("runs", name))
    key = f"runs.{name}.path"
    return f"{spec_path}:{line}: {key}" if line else f"{spec_path}: {key}"
