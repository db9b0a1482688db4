"""Run paths that are glob patterns: one run per matching file, named `<name>/<run name of the file>`.

`runs: {sys: {path: "runs/*", collection: dl19}}` becomes the runs `sys/bm25`, `sys/aplrob03a`, ...
in sorted file order. A path naming an existing file is never a pattern (`run[1].trec` is a file
name), hidden files never match, and a pattern matching no file is an error naming its key.

The run name of a file (`run_name`), in three steps:
1. a compression suffix is dropped: `.gz`, `.bz2`, `.xz`, `.zst`;
2. TREC's own files, `input.<runtag>`, are named by the run tag, all of it: `input.aplrob03a.gz`
   -> `aplrob03a`, `input.ok8v.2` -> `ok8v.2` (run tags may contain dots, so nothing more is cut);
3. otherwise one run-file suffix is dropped, if it is one of `RUN_SUFFIXES` (any case):
   `bm25.trec` -> `bm25`, `run.txt.gz` -> `run`, `dense.tsv` -> `dense`. Any other suffix is part of
   the name (`bm25.k1_0.9` stays `bm25.k1_0.9`): a dot in a name is more often a parameter or a
   version than a file type.
Two files with the same run name are an error naming both files.

With `names: ir_metadata` beside the pattern, each file's run is named `<name>/<tag>` instead, by
the `tag` of the ir_metadata block that opens it (`pipeline.spec.ir_metadata`): the name its
authors gave it, read from the file's opening comment lines alone. A file without a tag is an
input error naming it; two files with one tag, a spec error naming both.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from pipeline.errors import SpecError
from pipeline.spec import ir_metadata

__all__ = ["COMPRESSION_SUFFIXES", "RUN_SUFFIXES", "expand_run_globs", "run_name"]

COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
RUN_SUFFIXES = (".trec", ".run", ".runs", ".txt", ".tsv", ".res", ".results", ".out", ".parquet")
_TREC_PREFIX = "input."


def run_name(file: str | Path) -> str:
    """The name a pattern gives the run in `file` (see the module's docstring for the rule)."""
    name = _drop_suffix(Path(file).name, COMPRESSION_SUFFIXES)
    if name.startswith(_TREC_PREFIX) and len(name) > len(_TREC_PREFIX):
        return name[len(_TREC_PREFIX) :]
    return _drop_suffix(name, RUN_SUFFIXES)


def _drop_suffix(name: str, suffixes: tuple[str, ...]) -> str:
    for suffix in suffixes:
        # a name that is only a suffix keeps it, so that no run is named ""
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


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
    origins: dict[Any, str] = {}  # run name -> where it came from, to name both sides of a clash
    for name, run in runs.items():
        pattern = run.get("path") if isinstance(run, dict) else None
        where = _where(spec_path, lines, name)
        by_tag = isinstance(run, dict) and run.get("names") == BY_TAG
        if not _is_pattern(pattern, base_dir):
            if by_tag and isinstance(pattern, str):
                raise SpecError(_one_file(spec_path, lines, name))
            _add(expanded, origins, name, run, (where, f"runs.{name}"))
            continue
        files = _matches(pattern, base_dir, where, required)
        if not files:
            _add(expanded, origins, name, run, (where, f"runs.{name}"))
        for file in files:
            new = f"{name}/{_tag(base_dir / file) if by_tag else run_name(file)}"
            _add(expanded, origins, new, {**run, "path": file}, (where, file))
            _copy_lines(lines, name, new)
    return {**data, "runs": expanded}


#: the `names` that names a pattern's runs by their files' ir_metadata tags
BY_TAG = "ir_metadata"


def _tag(file: Path) -> str:
    """The tag of the ir_metadata block that opens `file`."""
    lines = ir_metadata.read_head(file)
    if lines is None:
        raise SpecError(
            f"{file}: names: ir_metadata reads the tag of each file, and this Python cannot "
            "read Zstandard (Python 3.14 can); decompress it, or name its runs by file"
        )
    return ir_metadata.tag_of(ir_metadata.parse(lines, str(file)), str(file))


def _one_file(spec_path: Path, lines: dict[tuple, int], name: Any) -> str:
    line = lines.get(("runs", name, "names")) or lines.get(("runs", name))
    where = f"{spec_path}:{line}: runs.{name}.names" if line else f"{spec_path}: runs.{name}.names"
    return (
        f"{where}: names: ir_metadata names the runs a glob pattern matches, and this path is "
        f"one file, named by its key ({name}); remove names, or give a pattern such as runs/*"
    )


def _is_pattern(path: Any, base_dir: Path) -> bool:
    # A URI's pattern is one input, which Spark reads whole (a run in many part files).
    if not isinstance(path, str) or not any(c in path for c in "*?[") or "://" in path:
        return False
    return not (base_dir / path).is_file()


def _matches(pattern: str, base_dir: Path, where: str, required: bool) -> list[str]:
    names = glob.glob(pattern, root_dir=base_dir, recursive=True)
    files = sorted(n for n in names if (base_dir / n).is_file())
    if not files and required:
        raise SpecError(f"{where}: no file matches the pattern '{pattern}' (in {base_dir})")
    return files


def _add(runs: dict, origins: dict, name: Any, run: Any, source: tuple[str, str]) -> None:
    where, origin = source
    if name in runs:
        raise SpecError(
            f"{where}: {origins[name]} and {origin} are both named '{name}' "
            "(a pattern names each file <run>/<file name without compression and run suffix>, "
            "or <run>/<tag> for TREC's input.<tag>, or with names: ir_metadata <run>/<the tag of "
            "its ir_metadata block>); rename a file or give it its own run"
        )
    runs[name] = run
    origins[name] = origin


def _copy_lines(lines: dict[tuple, int], old: Any, new: str) -> None:
    for key, line in list(lines.items()):
        if key[:2] == ("runs", old):
            lines[("runs", new, *key[2:])] = line


def _where(spec_path: Path, lines: dict[tuple, int], name: Any) -> str:
    line = lines.get(("runs", name, "path")) or lines.get(("runs", name))
    key = f"runs.{name}.path"
    return f"{spec_path}:{line}: {key}" if line else f"{spec_path}: {key}"
