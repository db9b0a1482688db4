"""`plan.in_order.aggregates_in_order`: every order-sensitive aggregate of a measure's SQL gets
the ranking's order, and nothing else changes (quotes, windows, stated orders, nesting)."""

from __future__ import annotations

import pytest

from pipeline.plan.in_order import aggregates_in_order


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("sum(x)", "sum(x ORDER BY rank)"),
        ("count(*) + sum(x) / avg(y)", "count(*) + sum(x ORDER BY rank) / avg(y ORDER BY rank)"),
        ("sum(x) OVER (ORDER BY rank)", "sum(x) OVER (ORDER BY rank)"),
        ("sum(x) FILTER (WHERE a) OVER w", "sum(x) FILTER (WHERE a) OVER w"),
        ("sum(x) FILTER (WHERE f(a))", "sum(x ORDER BY rank) FILTER (WHERE f(a))"),
        ("list(x ORDER BY docno)", "list(x ORDER BY docno)"),
        ("sum(DISTINCT x)", "sum(DISTINCT x)"),
        ("coalesce(sum(CASE WHEN a THEN 1 END), 0)",
         "coalesce(sum(CASE WHEN a THEN 1 END ORDER BY rank), 0)"),
        ("'sum(x)' || sum(x)", "'sum(x)' || sum(x ORDER BY rank)"),
        ("'it''s (' || sum(\"a)b\")", "'it''s (' || sum(\"a)b\" ORDER BY rank)"),
        ("t.sum(x)", "t.sum(x)"),
        ("sum(list_sum(list(x)))", "sum(list_sum(list(x ORDER BY rank)) ORDER BY rank)"),
        ("1e5 + sum (x)", "1e5 + sum (x ORDER BY rank)"),
    ],
)  # fmt: skip
def test_order_sensitive_aggregates_get_the_order(sql, expected):
    assert aggregates_in_order(sql, "rank") == expected


@pytest.mark.parametrize("sql", ["sum(x", "sum('x)", "sum(x))"])
def test_unbalanced_sql_is_refused_or_left_whole(sql):
    """An unbalanced parenthesis or an unclosed quote is a ValueError naming the SQL, never a
    silent misreading (a stray closing parenthesis is left where it is)."""
    if sql.count("(") > sql.count(")") or sql.count("'") % 2:
        with pytest.raises(ValueError, match="SQL"):
            aggregates_in_order(sql, "rank")
    else:
        assert aggregates_in_order(sql, "rank") == "sum(x ORDER BY rank))"
