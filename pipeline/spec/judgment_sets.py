"""Judgment sets in a spec: a run evaluated under several of them, and sets built from others.

`runs: {bm25: {path: ..., collection: [human, umbrela]}}` evaluates the run under each
collection's qrels (`collection_names` reads the key, a name or a list). `collections: {both:
{qrels: {overlay: [human, umbrela]}}}` is a judgment set built from others: per (qid, docno),
the label of the first set that has one (`pipeline.plan.overlays` builds it in SQL from the sets
already loaded). `overlay_order` checks every overlay against the spec's collections (unknown
names, cycles) and gives the order they are built in: each after the sets it reads.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Discriminator, Field, Tag, WithJsonSchema, field_validator
from pydantic_core import PydanticCustomError

from pipeline import interrupts
from pipeline.spec.base import StrictModel, at_key, did_you_mean

__all__ = [
    "CollectionNames",
    "Overlay",
    "check_collection_names",
    "check_format",
    "collection_names",
    "overlay_order",
    "qrels_source",
]

#: A run's `collection`: a name, or a list of names (the schema says what the validator checks)
CollectionNames = (
    str
    | Annotated[
        list[str],
        WithJsonSchema(
            {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True}
        ),
    ]
)


class Overlay(StrictModel):
    """A judgment set built from other collections' qrels: per (qid, docno), the first set's
    label where it has one, else the next set's (holes filled), and so on."""

    overlay: list[str] = Field(
        description="two or more collections of this spec, the first winning: a pair takes the "
        "label of the first set that judges it (an overlay of an overlay is fine)",
        json_schema_extra={"minItems": 2, "uniqueItems": True},
    )

    @field_validator("overlay")
    @classmethod
    def _sets(cls, value: list[str]) -> list[str]:
        if len(value) < 2:
            raise _invalid(
                f"an overlay is built from two judgment sets or more, found {len(value)}; "
                "give a collection's qrels file instead of an overlay of one"
            )
        if len(set(value)) < len(value):
            raise _invalid("a collection is listed twice; list each once")
        return value


def qrels_source(path_type: Any) -> Any:
    """The type of a collection's qrels: an input (`path_type`), or an overlay of other
    collections' qrels (`{overlay: [...]}`), told apart by their shape."""
    return Annotated[
        Annotated[path_type, Tag("file")] | Annotated[Overlay, Tag("overlay")],
        Discriminator(_qrels_kind),
    ]


@interrupts.deferring  # pydantic-core calls it, as a discriminator
def _qrels_kind(value: Any) -> str:
    """An overlay of other collections' qrels, or an input read."""
    return "overlay" if isinstance(value, Overlay | dict) else "file"


def check_format(format: str | None, qrels: Any) -> None:  # noqa: A002 -- the spec's key
    """A qrels `format` is for a file: an overlay reads none (its sets' files are read by their
    own collections)."""
    if format is not None and isinstance(qrels, Overlay):
        raise PydanticCustomError(
            "qrels_format",
            "format says how a qrels file is read; an overlay reads no file, its sets are read "
            "by their own collections: leave format out",
        )


def collection_names(value: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The collections a run's `collection` key names, in order: one name or a list."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def check_collection_names(value: Any) -> Any:
    """A run's `collection`: a name, or a non-empty list of names without repeats (that each
    name is a collection of the spec is checked with the whole spec, by the loader). Checked
    before the type, so that a wrong value gets one message, not one per member of the union.
    None (a fused run's default) passes."""
    if value is None:
        return value
    names = value if isinstance(value, list) else [value]
    if not all(isinstance(name, str) for name in names):
        raise _invalid(f"expected a collection's name or a list of names, found {value!r}")
    if not names:
        raise _invalid("give a collection's name, or a list of one or more")
    if len(set(names)) < len(names):
        raise _invalid("a collection is listed twice; list each once")
    return value


def _invalid(message: str) -> PydanticCustomError:
    return PydanticCustomError("invalid", "{message}", {"message": message})


def overlay_order(collections: dict[str, Any]) -> list[str]:
    """The overlays among `collections` (name -> Collection), each after the sets it reads; an
    error naming `collections.NAME.qrels.overlay` for an unknown set or a cycle."""
    overlays = {name: c.overlay for name, c in collections.items() if c.overlay}
    for name, sets in overlays.items():
        for i, entry in enumerate(sets):
            key = ("collections", name, "qrels", "overlay", i)
            if entry not in collections:
                known = [c for c in collections if c != name]
                raise at_key(
                    key,
                    f"unknown collection '{entry}'; {did_you_mean(entry, known)}"
                    f"defined: {', '.join(known)}",
                )
            if collections[entry].qrels is None:
                raise at_key(key, f"collection '{entry}' has no qrels yet: nothing to overlay")
    order: list[str] = []
    for name in overlays:
        _visit(name, overlays, order, ())
    return order


def _visit(name: str, overlays: dict, order: list[str], path: tuple[str, ...]) -> None:
    """Depth first: `name` after every overlay it reads; a name met again on `path` is a cycle."""
    if name in order or name not in overlays:
        return
    if name in path:
        cycle = " -> ".join((*path[path.index(name) :], name))
        raise at_key(
            ("collections", path[0], "qrels", "overlay"),
            f"the overlays form a cycle ({cycle}): a judgment set cannot be built from itself",
        )
    for entry in overlays[name]:
        _visit(entry, overlays, order, (*path, name))
    order.append(name)
