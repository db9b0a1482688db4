"""Aggregates that add in one stated order, so that the same rows give the same bits. Pure.

DuckDB adds a group's rows in whatever order its threads deliver them, and floating-point addition
is not associative: the same query's AP could differ in its last bit between two evaluations, or
between one thread and four. An aggregate given `ORDER BY` adds its rows one by one in that order
instead. The measures' SQL is written as plain aggregates (`sum(term) FILTER (WHERE ...)`, by
built-in and third-party measures alike), so the compiler orders them where it groups: a per-query
value adds in rank order (trec_eval's own order, so the bits are trec_eval's), a fact of the qrels
in docno order. Windows with an ORDER BY are already computed per partition in their order, and an
aggregate that already states an order keeps it (the ideal DCG adds in ideal rank order).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["ORDERED_AGGREGATES", "aggregates_in_order"]

#: The aggregates whose result depends on the order their rows arrive in (floating-point sums and
#: moments, products, lists and concatenations, a first or last row). count, min and max do not.
ORDERED_AGGREGATES = frozenset(
    {
        "sum", "fsum", "sumkahan", "kahan_sum", "avg", "mean", "favg", "product",
        "stddev", "stddev_pop", "stddev_samp", "var_pop", "var_samp", "variance",
        "list", "array_agg", "string_agg", "group_concat", "first", "last", "any_value",
    }
)  # fmt: skip

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A name (not one that continues a word or a number: `2e5x`) or a quote: where a scan stops.
_NAME_OR_QUOTE = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*|['\"]")
_BLANK = re.compile(r"\s*")
_OVER = re.compile(r"\s*(FILTER\s*\(|OVER\b)", re.IGNORECASE)
_STATED = re.compile(r"\b(ORDER\s+BY|DISTINCT)\b", re.IGNORECASE)


@lru_cache(maxsize=4096)  # a compile orders each measure's SQL once per probe and ranking
def aggregates_in_order(sql: str, order: str) -> str:
    """`sql` with every order-sensitive aggregate call (`ORDERED_AGGREGATES`) given `ORDER BY
    order`, but window calls (`... OVER`) and calls that state an order or DISTINCT already."""
    out, i = [], 0
    for start, open_paren in _calls(sql):
        close = _closing(sql, open_paren)
        out.append(sql[i : open_paren + 1])
        arguments = aggregates_in_order(sql[open_paren + 1 : close], order)
        if _orderable(sql, start, open_paren, close):
            arguments += f" ORDER BY {order}"
        out.append(arguments + ")")
        i = close + 1
    return "".join(out) + sql[i:]


def _calls(sql: str):
    """(name start, opening parenthesis) of each function call at this level, outside quotes."""
    i = 0
    while (found := _NAME_OR_QUOTE.search(sql, i)) is not None:
        start = found.start()
        if found.group() in ("'", '"'):
            i = _after_quoted(sql, start)
            continue
        end = _BLANK.match(sql, found.end()).end()
        if end < len(sql) and sql[end] == "(":
            yield start, end
            i = _closing(sql, end) + 1
        else:
            i = found.end()


def _orderable(sql: str, start: int, open_paren: int, close: int) -> bool:
    """Whether the call at `start` is an order-sensitive aggregate that states no order and is
    not a window function (an `OVER` after it, maybe after a FILTER clause)."""
    name = _NAME.match(sql, start).group().lower()
    if name not in ORDERED_AGGREGATES or start and sql[start - 1] == ".":
        return False
    if _STATED.search(_outer(sql[open_paren + 1 : close])):
        return False
    after = _OVER.match(sql, close + 1)
    if after and after.group(1).upper().startswith("FILTER"):
        after = _OVER.match(sql, _closing(sql, after.end() - 1) + 1)
    return not (after and after.group(1).upper() == "OVER")


def _outer(arguments: str) -> str:
    """`arguments` with every parenthesised or quoted part blanked: what is left is this call's."""
    out, i = [], 0
    while i < len(arguments):
        c = arguments[i]
        if c in "'\"":
            j = _after_quoted(arguments, i)
        elif c == "(":
            j = _closing(arguments, i) + 1
        else:
            out.append(c)
            i += 1
            continue
        out.append(" ")
        i = j
    return "".join(out)


# The characters that open or close something: the scans jump from one to the next (a compile
# reads every measure's SQL several times; character by character, this was most of its time).
_SIGNIFICANT = re.compile(r"[()'\"]")


def _closing(sql: str, open_paren: int) -> int:
    """The index of the parenthesis closing the one at `open_paren` (quotes skipped)."""
    depth, i = 0, open_paren
    while (found := _SIGNIFICANT.search(sql, i)) is not None:
        c, at = found.group(), found.start()
        if c in "'\"":
            i = _after_quoted(sql, at)
            continue
        depth += 1 if c == "(" else -1
        if depth == 0:
            return at
        i = at + 1
    raise ValueError(f"unbalanced parentheses in SQL: {sql!r}")


def _after_quoted(sql: str, i: int) -> int:
    """The index after the quoted string or identifier starting at `i` (a doubled quote inside
    is one quote)."""
    quote, j = sql[i], i + 1
    while (j := sql.find(quote, j)) != -1:
        if sql.startswith(quote, j + 1):
            j += 2
            continue
        return j + 1
    raise ValueError(f"unclosed quote in SQL: {sql!r}")
