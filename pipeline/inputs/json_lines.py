"""SQL over a JSON line, for the formats of generated answers (`nuggets`, `assignments`,
nuggetizer's JSONL): the line parsed once into `j` (`parsed`: its `qid` as JSON, its `nuggets`
with each nugget's keys as text), then its topic id and the list of its nuggets. A line holds one topic and
many nuggets: a format's columns unnest the list (`each`), one row per nugget, and a topic without
nuggets keeps one row, a placeholder (no text), so that the topic is still read. Pure SQL
builders."""

from __future__ import annotations

import json

from pipeline.inputs.rules import Rule, quoted

__all__ = [
    "NUGGETS",
    "ONLY_NUGGETS",
    "QID",
    "TEXT",
    "each",
    "field",
    "json_rules",
    "label_rule",
    "nugget_rule",
    "parsed",
]

#: the topic id, text or an integer, as text
QID = "(j.qid ->> '$')"
#: the nuggets, or one NULL (a placeholder) for a topic without any, or a line without a list
NUGGETS = "(CASE WHEN len(j.nuggets) > 0 THEN j.nuggets ELSE [NULL] END)"
#: the nuggets, none for a topic without any (a line that is not read keeps one NULL, so that
#: its row reports it)
ONLY_NUGGETS = "(CASE WHEN j.nuggets IS NULL THEN [NULL] ELSE j.nuggets END)"
#: a nugget's text ('' for the placeholder), over a nugget `n`
TEXT = "coalesce(n.text, '')"


def parsed(keys: tuple[str, ...], line_keys: tuple[str, ...] = ()) -> str:
    """SQL over `line`: the line parsed once, its `qid` as a JSON value, its `line_keys` as text
    and its `nuggets`, each nugget's `keys` as text (a number or an object as its JSON text);
    NULL for a line that is not JSON, and a key of another shape NULL. One parse of each line: a
    check of its validity first, and one of each key after, took four times as long."""
    shape = {"qid": "JSON", **dict.fromkeys(line_keys, "VARCHAR"),
             "nuggets": [dict.fromkeys(keys, "VARCHAR")]}  # fmt: skip
    return f"try(json_transform(line, '{json.dumps(shape)}'))"


def field(key: str) -> str:
    """SQL: a nugget `n`'s `key` (NULL where it has none)."""
    return f"n.{key}"


def each(expr: str, placeholder: bool = True) -> str:
    """SQL unnesting `expr` (over a nugget `n`; NULL for the placeholder) over the line's
    nuggets: one row per nugget; without a `placeholder`, none for a topic without nuggets."""
    nuggets = NUGGETS if placeholder else ONLY_NUGGETS
    return f"unnest(list_transform({nuggets}, lambda n: {expr}))"


def nugget_rule(bad: str, problem: str) -> Rule:
    """A rule over each nugget `n` of a line: the line is bad when a nugget is `bad`; `problem`
    (SQL over the first such nugget `n`) says why."""
    first = f"list_filter({NUGGETS}, lambda n: n IS NOT NULL AND ({bad}))[1]"
    return Rule(
        f"list_bool_or(list_transform({NUGGETS}, lambda n: n IS NOT NULL AND ({bad})))",
        f"list_transform([{first}], lambda n: {problem})[1]",
    )


def json_rules(fields: str) -> list[Rule]:
    """What every such line must be: a JSON object with a `qid` (text or an integer) and a
    `nuggets` list of objects, each with a `text`; `fields`: the keys a line holds, as messages
    name them."""
    kind = "json_type(j.qid)"
    return [
        Rule("j IS NULL", f"'not a JSON line; expected an object {fields}'"),
        Rule(
            f"{kind} IS NULL OR {kind} NOT IN ('VARCHAR', 'BIGINT', 'UBIGINT')",
            "'the qid is missing, or not text or an integer'",
        ),
        Rule("j.nuggets IS NULL", "'the nuggets are missing, or not a list'"),
        nugget_rule(
            "n.text IS NULL",
            f"'a nugget without a text: ' || {quoted('to_json(n)::VARCHAR')}",
        ),
    ]


def label_rule(mode: str, key: str, labels: tuple[str, ...], lenient: str) -> Rule:
    """A rule over each nugget's `key`, a label: under `strict` one of `labels` (the message says
    how `lenient`, which reads another, reads it); in both modes there."""
    value = field(key)
    if mode == "strict":
        return nugget_rule(
            f"{value} IS NULL OR {value} NOT IN ({', '.join(map(repr, labels))})",
            f"'the {key} must be {_one_of(labels)}, found ' || coalesce({quoted(value)}, 'none')"
            f" || ' (input: lenient reads another as {lenient})'",
        )
    return nugget_rule(
        f"{value} IS NULL",
        f"'a nugget without an {key}: ' || {quoted('to_json(n)::VARCHAR')}",
    )


def _one_of(labels: tuple[str, ...]) -> str:
    return " or ".join(labels) if len(labels) == 2 else "one of " + ", ".join(labels)
