"""SQL over a JSON line (`line`, read by `text_lines` as every text input is): its object, its
topic id, and the list of nuggets it holds, for the formats of generated answers (`nuggets`,
`assignments`, nuggetizer's JSONL). A line holds one topic and many nuggets: a format's columns
unnest the list (`each`), one row per nugget, and a topic without nuggets keeps one row, a
placeholder (no text), so that the topic is still read. Pure SQL builders."""

from __future__ import annotations

from pipeline.inputs.rules import Rule, quoted

__all__ = ["NUGGETS", "OBJECT", "QID", "TEXT", "TEXTS", "each", "json_rules", "nugget_rule"]

#: the line's JSON object (NULL for a line that is not JSON)
OBJECT = "(CASE WHEN json_valid(line) THEN line::JSON END)"
#: the topic id, text or an integer, as text
QID = f"({OBJECT} ->> '$.qid')"
_LIST = f"CAST(json_extract({OBJECT}, '$.nuggets') AS JSON[])"
#: a nugget's text ('' for the placeholder), over a nugget `n`
TEXT = "coalesce(n ->> '$.text', '')"
#: the nuggets, or one NULL (a placeholder) for a topic without any, or a line without a list
NUGGETS = f"""(CASE WHEN json_type({OBJECT}, '$.nuggets') = 'ARRAY' AND len({_LIST}) > 0
    THEN {_LIST} ELSE [NULL::JSON] END)"""

#: the texts of a line's nuggets, as a list: how the reports of duplicates find its lines
TEXTS = f"list_transform({NUGGETS}, lambda n: {TEXT})"


def each(expr: str) -> str:
    """SQL unnesting `expr` (over a nugget `n`; NULL for the placeholder) over the line's
    nuggets: one row per nugget."""
    return f"unnest(list_transform({NUGGETS}, lambda n: {expr}))"


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
    kind = f"json_type({OBJECT}, '$.qid')"
    return [
        Rule("NOT json_valid(line)", f"'not a JSON line; expected an object {fields}'"),
        Rule(f"json_type({OBJECT}) <> 'OBJECT'", f"'not a JSON object; expected {fields}'"),
        Rule(
            f"{kind} IS NULL OR {kind} NOT IN ('VARCHAR', 'BIGINT', 'UBIGINT')",
            "'the qid is missing, or not text or an integer'",
        ),
        Rule(
            f"json_type({OBJECT}, '$.nuggets') IS DISTINCT FROM 'ARRAY'",
            "'the nuggets are missing, or not a list'",
        ),
        nugget_rule(
            "json_type(n, '$.text') IS DISTINCT FROM 'VARCHAR'",
            f"'a nugget without a text: ' || {quoted('n::VARCHAR')}",
        ),
    ]
