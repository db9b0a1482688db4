"""ir_datasets ids as inputs (`irds:msmarco-passage/trec-dl-2019/judged`): a dataset's qrels, or
its scored documents as a run, read through ir_datasets (from its local cache, which it fills on
first use) into the Arrow table irpipe reads. The id stays the input's path in the spec, in the
provenance and in the history, beside the digest of what was read."""

from __future__ import annotations

from typing import Any

from pipeline.errors import InputDataError, SpecError

__all__ = ["IRDS", "irds_table", "is_irds"]

#: how a spec or a call names an ir_datasets id
IRDS = "irds:"


def is_irds(path: Any) -> bool:
    """Whether an input names an ir_datasets id."""
    return isinstance(path, str) and path.startswith(IRDS)


def irds_table(path: str, kind: str, where: str):
    """The qrels (`kind` "qrels") or scored documents ("run") of the dataset `path` names."""
    dataset = _dataset(path, where)
    # A dataset defines `qrels_iter` (`scoreddocs_iter`) only when it has them: ask first.
    has, rows = (
        ("has_qrels", "qrels_iter") if kind == "qrels" else ("has_scoreddocs", "scoreddocs_iter")
    )
    if not getattr(dataset, has)():
        what = "qrels" if kind == "qrels" else "scored documents (a run)"
        raise SpecError(f"{where}: the ir_datasets dataset {path!r} has no {what}")
    try:
        from pipeline.frames.convert import table_of  # pyarrow: only for a dataset

        return table_of(getattr(dataset, rows)(), kind, where)
    except (SpecError, InputDataError):
        raise
    except Exception as exc:  # ir_datasets' own: a download that failed, a broken cache
        raise InputDataError(
            f"{where}: ir_datasets could not read {path!r}: {_first_line(exc)}; it reads its "
            "local cache (IR_DATASETS_HOME, ~/.ir_datasets by default) and downloads what is "
            "missing there"
        ) from None


def _dataset(path: str, where: str):
    try:
        import ir_datasets
    except ImportError:
        raise SpecError(
            f"{where}: {path} is an ir_datasets id, which needs ir_datasets: "
            "pip install 'irpipe[irds]'"
        ) from None
    try:
        return ir_datasets.load(path.removeprefix(IRDS))
    except KeyError:
        raise SpecError(
            f"{where}: no ir_datasets dataset {path.removeprefix(IRDS)!r} (ir_datasets lists "
            "them: https://ir-datasets.com)"
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
