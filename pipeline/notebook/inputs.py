"""The inputs the Python door's keywords give, as the spec's entries: a collection (qrels, an
overlay, a collection spelled out as in a spec, generated answers' nuggets) and runs (each
named, under its collections; a fused run; an answer run's assignments), every table among them
read into Arrow (`reader`) and named by its `memory://` path (`input_path`)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pipeline.frames.convert import by_query, is_path, table_of
from pipeline.frames.irds import is_irds
from pipeline.frames.latency import has_latency, latency_table
from pipeline.inputs.table_rows import MEMORY, memory_view
from pipeline.spec.inputs import file_name
from pipeline.spec.settings import Settings

__all__ = ["collection_entry", "input_path", "reader", "run_entries"]


def _overlay(value: Any) -> bool:
    """A judgment set built from others, as in a spec: `{"overlay": ["llm", "human"]}`."""
    return isinstance(value, Mapping) and list(value) == ["overlay"]


#: the keys of a collection spelled out as in a spec (beside `qrels`, one at least)
_COLLECTION_KEYS = frozenset({"format", "num_docs"})


def collection_entry(name: str, value: Any, tables: dict, read) -> dict[str, Any]:
    """The spec's collection `name` for the value given: an overlay, a collection spelled out
    as in a spec (`{"qrels": "web.txt", "format": "subtopics"}`, the way to say what a text
    file's format is), or qrels alone (a path, a table, a dict)."""
    if _overlay(value):
        return {"qrels": value}
    spelt = _spelt(value, ("nuggets", "support"))  # generated answers' judgments
    if spelt == _SEVERAL:
        return dict(value)
    if spelt:
        return {"qrels": input_path(value[spelt], "qrels", name, tables, read), "format": spelt}
    if _spelled_out(value):
        path = input_path(value["qrels"], "qrels", name, tables, read)
        return {**_collection(path, tables), **value, "qrels": path}
    return _collection(input_path(value, "qrels", name, tables, read), tables)


def _spelled_out(value: Any) -> bool:
    """A collection as a spec writes it: `qrels` and `format` or `num_docs` (qrels as a dict
    of dicts have queries as keys, so a qid named 'format' beside one named 'qrels' would be
    read as this: no such qrels are known)."""
    return (
        isinstance(value, Mapping)
        and "qrels" in value
        and bool(set(value) & _COLLECTION_KEYS)
        and set(value) <= {"qrels", *_COLLECTION_KEYS}
    )


def _collection(path: str, tables: dict) -> dict[str, Any]:
    """A collection of the spec: its qrels, whose format is subtopics when the table given has
    a subtopic column (ndeval's qrels)."""
    table = tables.get(memory_view(path, "qrels"))
    subtopics = table is not None and "subtopic" in table.column_names
    return {"qrels": path, "format": "subtopics"} if subtopics else {"qrels": path}


def run_entries(runs, collections: list[str], tables: dict, read) -> dict[str, Any]:
    """The spec's runs: each named, with its collections (every one, unless it says which: with
    several judgment sets, a run is evaluated under each)."""
    if runs is None:
        return {}
    if isinstance(runs, Mapping) and not by_query(runs):
        named = dict(runs)
    elif isinstance(runs, list | tuple) and not hasattr(next(iter(runs), None), "_fields"):
        named = {_run_name(value, i): value for i, value in enumerate(runs, 1)}
    else:
        named = {_run_name(runs, 1): runs}
    found = {}
    for name, value in named.items():
        collection = collections[0] if len(collections) == 1 else list(collections)
        if isinstance(value, Mapping) and "fuse" in value:  # a fused run, as in a spec
            found[name] = dict(value)
            continue
        if isinstance(value, Mapping) and isinstance(value.get("path"), Mapping):
            found[name] = _per_collection(name, value["path"], tables, read)
            continue
        if isinstance(value, Mapping) and "collection" in value:
            collection, value = value["collection"], value.get("run")
        found[name] = {**_runinput_path(value, name, tables, read), "collection": collection}
    return found


def _per_collection(name: str, files: Mapping, tables: dict, read) -> dict[str, Any]:
    """A run given one input per collection (`{"path": {COLLECTION: input}}`), as in a spec."""
    paths = {c: input_path(v, "runs", file_name(name, c), tables, read) for c, v in files.items()}
    return {"path": paths}


def _runinput_path(value: Any, name: str, tables: dict, read) -> dict[str, Any]:
    """A run's input and, for one spelled as in a spec (`{"assignments": PATH}`: generated
    answers' assignments; `{"answers": PATH}`), its format; its times, where it gives them (a
    frame's `latency_ms` column, or `{"path": RUN, "latency": TIMES}` as in a spec)."""
    spelt = _spelt(value, ("assignments", "answers"))
    if spelt == _SEVERAL:
        return dict(value)  # as a spec's run: the spec's validation says which to give
    if spelt:
        return {"path": input_path(value[spelt], "runs", name, tables, read), "format": spelt}
    if isinstance(value, Mapping) and set(value) == {"path", "latency"}:
        found = {"path": input_path(value["path"], "runs", name, tables, read)}
        return {**found, "latency": _times(value["latency"], name, tables, per_query=False)}
    found = {"path": input_path(value, "runs", name, tables, read)}
    return {**found, "latency": _times(value, name, tables)} if has_latency(value) else found


def _times(value: Any, name: str, tables: dict, per_query: bool = True) -> str:
    """The spec's path of a run's times: a file's own, or `memory://latency/NAME` for a table
    (a run frame's `latency_ms` column, `per_query`; else a table of timings)."""
    if is_path(value):
        return str(Path(value).resolve())
    path = f"{MEMORY}latency/{name}"
    tables[memory_view(path, "latency")] = latency_table(value, f"latency[{name!r}]", per_query)
    return path


#: what `_spelt` says of a mapping holding several of its keys
_SEVERAL = "several"


def _spelt(value: Any, keys: tuple[str, ...]) -> str | None:
    """The one key of `keys` a mapping `value` holds alone (`{"nuggets": PATH}`: an input
    spelled as a spec spells it, the key its format); `_SEVERAL` for one holding only such keys,
    several; else None."""
    if not isinstance(value, Mapping) or not value or not set(value) <= set(keys):
        return None
    return next(iter(value)) if len(value) == 1 else _SEVERAL


def _run_name(value: Any, index: int) -> str:
    """A run given without a name: its file's name, else run1, run2, ..."""
    return Path(value).name.split(".")[0] if is_path(value) else f"run{index}"


def reader(settings: Mapping[str, Any] | None, columns: Mapping[str, str] | None):
    """`table_of` with the call's column names, taking a run's ranks alone under `ordering:
    rank`, and decimal grades under `grades: real`."""
    typed = _settings(settings)
    return partial(table_of, columns=columns, ranked=typed.ordering == "rank", grades=typed.grades)


def _settings(settings: Mapping[str, Any] | None) -> Settings:
    """The call's settings as the spec reads them; the defaults where they are not valid (the
    spec's validation then says why, naming the key)."""
    try:
        return Settings.model_validate(dict(settings or {}))
    except ValidationError:
        return Settings()


def input_path(value: Any, argument: str, name: str, tables: dict, read) -> str:
    """The spec's path of an input: a file's own, or `memory://argument/name` for a table
    (`read` makes it Arrow)."""
    if is_irds(value):  # read by the preflight, as in a spec
        return value
    if is_path(value):
        return str(Path(value).resolve())
    kind = "qrels" if argument == "qrels" else "run"
    path = f"{MEMORY}{argument}/{name}"
    tables[memory_view(path, kind)] = read(value, kind, f"{argument}[{name!r}]")
    return path
