"""The spec's inputs: a collection (its qrels and their format) and a run (its file and the
collections it is evaluated under), and the paths they name: a file relative to the spec, a URI
the Spark engine reads, or a table given in Python."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    PlainValidator,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from pipeline.inputs.formats import QRELS_FORMATS, RUN_FORMATS, reads_tables
from pipeline.spec import judgment_sets
from pipeline.spec.base import StrictModel, resolve_path
from pipeline.spec.judgment_sets import CollectionNames, Overlay, collection_names

__all__ = [
    "SPELLINGS",
    "Collection",
    "InputPath",
    "Run",
    "RunFile",
    "file_name",
    "is_uri",
    "resolve_input",
    "run_inputs",
]

#: the keys a spec may write instead of another, with a format: `nuggets: PATH` is `qrels: PATH`
#: with `format: nuggets`, `assignments: PATH` is `path: PATH` with `format: assignments`; and so
#: `support:` (generated answers' support judgments) and `answers:` (TREC RAG's answers)
SPELLINGS = {"nuggets": "qrels", "support": "qrels", "assignments": "path", "answers": "path"}


#: `scheme://...`: an input the Spark engine reads where it lives (hdfs://, s3a://, file://)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://.+")


def is_uri(path: Path | str) -> bool:
    """Whether an input path is a URI (kept as text: `Path` would fold its `//`)."""
    return isinstance(path, str) and _URI.fullmatch(path) is not None


def _is_table(path: Path | str | None) -> bool:
    """Whether a qrels input is read as a table (Parquet, an ir_datasets id, a frame)."""
    text = str(path or "")
    return text.startswith(("irds:", "memory://")) or text.lower().endswith(".parquet")


def resolve_input(value: Any, info: ValidationInfo) -> Path | str:
    """An input path: a URI or an ir_datasets id (`irds:...`) stays text, any other string is
    a path relative to the spec."""
    if isinstance(value, Path):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("input_path", "expected a file path (a string)")
    kept = _URI.fullmatch(value) or value.startswith("irds:")
    return value if kept else resolve_path(Path(value), info)


#: A qrels or run path: a `Path`, a URI as given (read only by the Spark engine), or an
#: ir_datasets id (`irds:msmarco-passage/trec-dl-2019/judged`, read by the duckdb engine)
InputPath = Annotated[
    Path | str,
    PlainValidator(resolve_input),
    WithJsonSchema({"type": "string", "format": "path"}),
]


def _run_path(value: Any, info: ValidationInfo) -> Path | str | dict[str, Path | str]:
    """A run's path (`resolve_input`), or one per collection: a mapping of names to paths."""
    if not isinstance(value, dict):
        if not isinstance(value, str | Path):
            raise PydanticCustomError("input_path", "expected a file path (a string), or one "
                                      "per collection ({COLLECTION: PATH})")  # fmt: skip
        return resolve_input(value, info)
    if not value or not all(isinstance(k, str) and isinstance(v, str | Path)
                            for k, v in value.items()):  # fmt: skip
        raise PydanticCustomError("input_path", "expected one file path (a string) per "
                                  "collection: {COLLECTION: PATH, ...}")  # fmt: skip
    return {name: resolve_input(path, info) for name, path in value.items()}


#: A run's path: an input path, or one per collection
RunPath = Annotated[
    Path | str | dict[str, Path | str],
    PlainValidator(_run_path),
    WithJsonSchema({"anyOf": [{"type": "string", "format": "path"},
                              {"type": "object", "minProperties": 1,
                               "additionalProperties": {"type": "string", "format": "path"}}]}),
]  # fmt: skip


def _also_spelt(**descriptions: str):
    """A JSON schema hook: the model's schema also allows each key of `descriptions` (a path),
    which `_spelt_as` reads as the key it spells (`SPELLINGS`) with a format (no field of its
    own: the spec holds one spelling); a required such key is then one of them."""

    def extra(schema: dict[str, Any]) -> None:
        for key, description in descriptions.items():
            schema["properties"][key] = {
                "type": "string",
                "format": "path",
                "description": description,
            }
        path_key = SPELLINGS[next(iter(descriptions))]
        if path_key in schema.get("required", []):
            schema["required"].remove(path_key)
            schema["oneOf"] = [{"required": [key]} for key in (path_key, *descriptions)]

    return extra


def _collections_or_files(extra):
    """A JSON schema hook: `extra`'s, then `collection` required unless `path` is a mapping of
    each collection's file (`per_collection` reads its keys as the collections)."""

    def hook(schema: dict[str, Any]) -> None:
        extra(schema)
        schema["required"] = [key for key in schema.get("required", []) if key != "collection"]
        files = {"properties": {"path": {"type": "object"}}, "required": ["path"]}
        schema["anyOf"] = [{"required": ["collection"]}, files]

    return hook


class Collection(StrictModel):
    """A test collection: its qrels (a file, or built from other collections' qrels) and,
    optionally, its size (for fallout)."""

    model_config = ConfigDict(
        **StrictModel.model_config,
        json_schema_extra=_also_spelt(
            nuggets="nuggetizer's nuggets JSONL: the same as qrels: PATH with format: nuggets",
            support="support judgments of generated answers' citations, run qid sentence docno "
            "support (2 full, 1 partial, 0 none): the same as qrels: PATH with format: support",
        ),
    )

    qrels: judgment_sets.qrels_source(InputPath) | None = Field(  # type: ignore[valid-type]
        None,
        description="TREC qrels file: qid iter docno rel (plain or .gz); with engine spark also "
        "a directory of part files, Parquet, or a URI (hdfs://, s3a://, file://); or {overlay: "
        "[NAME, ...]}, other collections' qrels overlaid (the first set's label where it has "
        "one); absent before judging: its runs can be pooled (`pools`), not evaluated",
    )
    format: Literal[QRELS_FORMATS] | None = Field(  # type: ignore[valid-type]
        None,
        description="how the qrels file is read: trec (qid iter docno rel), beir (BEIR's and "
        "MTEB's TSV: a header line query-id corpus-id score, then one judgment a line) or "
        "subtopics (ndeval's diversity qrels: qid subtopic docno grade; a table: a subtopic "
        "column), nuggets (nuggetizer's nuggets JSONL), assignment_labels (assignments read as "
        "judgments, for `irpipe agree`) or support (generated answers' support judgments: run "
        "qid sentence docno support); by default beir when the file's first line is a BEIR "
        "header, else trec",
    )
    num_docs: int | None = Field(None, ge=0, description="documents in the collection")

    @property
    def qrels_file(self) -> Path | str | None:
        """The qrels input read (a path, a URI, a table's name), or None: not yet judged, or
        an overlay of other collections' qrels."""
        return None if isinstance(self.qrels, Overlay) else self.qrels

    @property
    def overlay(self) -> tuple[str, ...]:
        """The collections an overlay is built from, first winning; () for qrels read."""
        return tuple(self.qrels.overlay) if isinstance(self.qrels, Overlay) else ()

    @model_validator(mode="before")
    @classmethod
    def _nuggets(cls, data: Any) -> Any:
        """`nuggets: PATH` is `qrels: PATH` with `format: nuggets`; and so `support:`."""
        return _spelt_as(_spelt_as(data, "nuggets"), "support")

    @model_validator(mode="after")
    def _text_format(self) -> Collection:
        judgment_sets.check_format(self.format, self.qrels)
        # A table's columns are named (qid, docno, rel): only a text file has such a format.
        if not reads_tables(self.format) and _is_table(self.qrels):
            raise PydanticCustomError(
                "qrels_format",
                f"format: {self.format} reads a text file; this qrels is a table (Parquet or "
                "ir_datasets), read by its columns qid, docno, rel: leave format out",
            )
        return self


class Run(StrictModel):
    """A run file evaluated against one collection, or under each of several."""

    model_config = ConfigDict(
        **StrictModel.model_config,
        json_schema_extra=_collections_or_files(
            _also_spelt(
                assignments="nuggetizer's assignments JSONL of one run's answers: the same as "
                "path: PATH with format: assignments",
                answers="TREC RAG's answers JSONL (2024 or 2025), one topic's answer a line: the "
                "same as path: PATH with format: answers",
            )
        ),
    )

    path: RunPath = Field(
        description="TREC run file: qid Q0 docno rank score tag (plain or .gz); with engine "
        "spark also a directory of part files, Parquet, or a URI (hdfs://, s3a://, file://); "
        "or one file per collection: a mapping {COLLECTION: PATH} (its keys are the run's "
        "collections), or a path holding {collection}, filled with each of `collection`'s"
    )
    collection: CollectionNames = Field(
        description="name of a collection in `collections`, or a list of them: the run is "
        "evaluated under each (its file read once); may be left out where `path` maps each "
        "collection to its file"
    )
    format: Literal[RUN_FORMATS] | None = Field(  # type: ignore[valid-type]
        None,
        description="how the run file is read: trec (qid Q0 docno rank score tag, the default) "
        "assignments (nuggetizer's assignment JSONL of one run's answers; `assignments: PATH` "
        "says the same) or answers (TREC RAG's answers JSONL; `answers: PATH`)",
    )
    latency: InputPath | None = Field(
        None,
        description="the run's per-query times: qid time lines, in milliseconds, or in "
        "microseconds under a first line `qid usec` (PISA's); a query timed several times "
        "counts its median (the Latency and QPS metrics read them)",
    )
    names: Literal["file", "ir_metadata"] = Field(
        "file",
        description="how a glob pattern in `path` names each file's run, <key>/<name>: file (the "
        "file's name without compression and run suffix; input.<tag> by its tag) or ir_metadata "
        "(the tag of the ir_metadata block in the file's opening # lines; a file without one is "
        "an input error)",
    )

    _names = field_validator("collection", mode="before")(judgment_sets.check_collection_names)

    @model_validator(mode="before")
    @classmethod
    def _assignments(cls, data: Any) -> Any:
        """`assignments: PATH` is `path: PATH` with `format: assignments`; and so `answers:`."""
        return per_collection(_spelt_as(_spelt_as(data, "assignments"), "answers"))

    @property
    def per_collection(self) -> bool:
        """Whether the run has one file per collection (`path` a mapping)."""
        return isinstance(self.path, dict)

    def files(self, name: str) -> list[RunFile]:
        """The run's files: one, read once for all its collections; or one per collection,
        each loaded under a name of its own (`file_name`) and renamed `name` once evaluated."""
        if isinstance(self.path, dict):
            return [RunFile(name, file_name(name, c), p, (c,), ("path", c))
                    for c, p in self.path.items()]  # fmt: skip
        return [RunFile(name, name, self.path, self.collections, ("path",))]

    @model_validator(mode="after")
    def _text_format(self) -> Run:
        paths = self.path.values() if isinstance(self.path, dict) else [self.path]
        if not reads_tables(self.format, run=True) and any(_is_table(p) for p in paths):
            raise PydanticCustomError(
                "run_format",
                f"format: {self.format} reads a text file; this run is a table (Parquet or "
                "ir_datasets), read by its columns qid, docno, score: leave format out",
            )
        return self

    @property
    def collections(self) -> tuple[str, ...]:
        """The collections the run is evaluated under, in the spec's order."""
        return collection_names(self.collection)


#: what `path: PATH` holding it is filled with: each of the run's collections
COLLECTION_FIELD = "{collection}"


def per_collection(data: Any) -> Any:
    """A run's mapping with `path` one file per collection: `{COLLECTION: PATH}` gives the run's
    collections when `collection` is left out (and must name the same ones when it is given);
    a path holding `{collection}` becomes that mapping, one file per collection of `collection`."""
    if not isinstance(data, dict):
        return data
    path, given = data.get("path"), data.get("collection")
    if isinstance(path, str) and COLLECTION_FIELD in path:
        if given is None:
            raise PydanticCustomError("run_collections", f"a path holding {COLLECTION_FIELD} "
                                      "is filled with each of the run's collections: give "
                                      "collection: [NAME, ...]")  # fmt: skip
        names = [given] if isinstance(given, str) else given
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            return {**data, "path": {n: path.replace(COLLECTION_FIELD, n) for n in names}}
        return data
    if not isinstance(path, dict):
        return data
    if given is None:
        return {**data, "collection": list(path)}
    names = [given] if isinstance(given, str) else given
    if isinstance(names, list) and set(map(str, names)) != set(map(str, path)):
        raise PydanticCustomError(
            "run_collections",
            "path names the file of each collection ({files}) and collection names others "
            "({names}); leave collection out, or name the same collections",
            {"files": ", ".join(map(str, path)), "names": ", ".join(map(str, names))},
        )
    return data


def file_name(run: str, collection: str) -> str:
    """The name a run's file for one collection is loaded under (its rows', until renamed)."""
    return f"{run}@{collection}"


@dataclass(frozen=True)
class RunFile:
    """One file of a run: the run's name, the name its rows are loaded under (the run's, or
    `file_name`'s for one of several files), its path, the collections it is evaluated under
    and its key under `runs.NAME`."""

    run: str
    loaded_as: str
    path: Path | str
    collections: tuple[str, ...]
    key: tuple[str, ...]


def run_inputs(runs: dict[str, Run]) -> list[RunFile]:
    """Every file of the runs read from files, in spec order."""
    return [file for name, run in runs.items() for file in run.files(name)]


# A metric entry is a string (`nDCG@10`) or a mapping.


def _spelt_as(data: Any, key: str) -> Any:
    """A mapping whose `key: PATH` is read as the key it spells (`SPELLINGS`) with `format: key`;
    naming both paths, or another format, is refused."""
    if not isinstance(data, dict) or key not in data:
        return data
    both = [k for k, spelt in SPELLINGS.items() if spelt == SPELLINGS[key] and k in data]
    if len(both) > 1:
        raise PydanticCustomError(
            "input_format",
            f"{' and '.join(both)} are each one input; give one of them (nugget measures read "
            "assignments and nuggets, support measures answers and support judgments: a "
            "system's two evaluations are two specs)",
        )
    path_key = SPELLINGS[key]
    if path_key in data or data.get("format", key) != key:
        raise PydanticCustomError(
            "input_format",
            f"{key}: PATH is {path_key}: PATH with format: {key}; give one of them",
        )
    found = {k: v for k, v in data.items() if k != key}
    return {**found, path_key: data[key], "format": key}
