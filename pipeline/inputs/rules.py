"""How a line's number fields are read, as SQL over a field `expr` of the fields `f`, with the
rules (`Rule`) a line must pass: integers (grades, ranks) plainly (`strict`) or as C atol
(`lenient`); decimals (scores, and grades under `grades: real`) plainly or as C atof. A grade is
an integer unless the `grades` setting says `real`; then it is read as a score is, and finite.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "GRADE_TYPES",
    "REAL_GRADES_HINT",
    "Rule",
    "atol",
    "grade_field",
    "integer_rules",
    "number",
    "number_rules",
    "quoted",
]

#: the SQL type of the qrels' `rel` column under each value of the `grades` setting
GRADE_TYPES = {"integer": "INTEGER", "real": "DOUBLE"}
#: what a decimal grade read under `grades: integer` adds to its message: the fix
REAL_GRADES_HINT = " (decimal grades are read with settings: {grades: real})"


@dataclass(frozen=True)
class Rule:
    """A condition on a line's fields `f` that makes the line bad, and SQL text saying why.

    An `implied` rule only names more precisely a problem that a later rule finds too (a
    decimal grade is also not an integer): which lines are bad is decided without it, so that
    reading a million lines does not test it on each, and it is the reason given where it holds."""

    bad: str
    problem: str
    implied: bool = False


def quoted(expr: str) -> str:
    """SQL quoting the text `expr` for a message: `'2x'`."""
    return f"'''' || {expr} || ''''"


def grade_field(
    expr: str, mode: str, grades: str, decimals_refused: bool = False
) -> tuple[str, list[Rule]]:
    """The SQL value of the grade field `expr` and its rules, under the `grades` setting: a
    finite decimal, read as a score is (`real`); else an integer, a decimal one refused with
    the setting named (`strict`, or `decimals_refused` where `lenient`'s atol would cut it)."""
    strict = mode == "strict"
    if grades == "real":
        value = number(expr, strict)
        return value, number_rules(expr, value, "the relevance grade", strict, finite=True)
    rel = "TRY_CAST(" + expr + " AS INTEGER)" if strict else atol(expr, "INTEGER")
    rules = integer_rules(expr, rel, "the relevance grade", strict)
    if strict or decimals_refused:  # strict: a decimal is also not plainly digits
        rules.insert(0, _decimal_grade(expr, implied=strict))
    return rel, rules


# A decimal number: what `grades: real` reads in strict mode, and finitely.
_DECIMAL = "[+-]?([0-9]+[.][0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?|[+-]?[0-9]+[eE][+-]?[0-9]+"


def _decimal_grade(expr: str, implied: bool) -> Rule:
    """A decimal grade under `grades: integer`: refused, naming the setting that reads it."""
    return Rule(
        f"regexp_full_match({expr}, '{_DECIMAL}')",
        f"'the relevance grade must be an integer, found ' || {quoted(expr)} || '{REAL_GRADES_HINT}'",
        implied,
    )


def atol(expr: str, sql_type: str) -> str:
    """SQL reading `expr` as C atol: an optional sign and the digits that follow; no digits read as 0."""
    digits = f"coalesce(nullif(regexp_extract({expr}, '^[+-]?[0-9]+'), ''), '0')"
    return f"TRY_CAST({digits} AS {sql_type})"


def integer_rules(expr: str, value: str, what: str, strict: bool) -> list[Rule]:
    """The rules of an integer field `expr` read as `value`: in range; plainly digits if `strict`."""
    # DuckDB's cast rounds "1.7" to 2 and reads "1e2", "0x10" and "1_0"; only plain digits pass.
    rules = [Rule(f"{value} IS NULL", f"'{what} ' || {quoted(expr)} || ' is out of range'")]
    if strict:
        plain = f"NOT regexp_full_match({expr}, '[+-]?[0-9]+')"
        rules.insert(0, Rule(plain, f"'{what} must be an integer, found ' || {quoted(expr)}"))
    return rules


def number(expr: str, strict: bool) -> str:
    """SQL reading the field `expr` as a DOUBLE: plainly (`strict`, NULL unless DuckDB reads it)
    or as C atof (the longest prefix that is a decimal number, inf or nan; no number reads as 0).
    Hexadecimal ("0x1p3") is the one form atof reads that DuckDB cannot: it stays NULL."""
    plain = f"TRY_CAST({expr} AS DOUBLE)"
    if strict:
        return plain
    return f"""CASE WHEN {_plain_number(expr)} THEN {plain}
    WHEN regexp_matches({expr}, '^[+-]?0[xX]') THEN NULL
    ELSE coalesce(TRY_CAST(nullif(regexp_extract({expr}, {_ATOF_PREFIX}), '') AS DOUBLE), 0.0) END"""


def number_rules(
    expr: str, value: str, what: str, strict: bool, finite: bool = False
) -> list[Rule]:
    """The rules of a number field `expr` read as `value` (`number`): plainly a finite number if
    `strict`; else not hexadecimal, and finite if `finite` (atof reads nan and inf)."""
    found = quoted(expr)
    must_be_finite = Rule(
        f"NOT isfinite({value})", f"'{what} must be a finite number, found ' || {found}"
    )
    if strict:
        plain = Rule(
            f"NOT ({_plain_number(expr)})", f"'{what} must be a number, found ' || {found}"
        )
        return [plain, must_be_finite]
    plural = what.removeprefix("the ").split()[-1] + "s"
    hexadecimal = Rule(
        f"({value}) IS NULL", f"'hexadecimal {plural} are not read, found ' || {found}"
    )
    return [hexadecimal, *([must_be_finite] if finite else [])]


def _plain_number(expr: str) -> str:
    # DuckDB also reads "1_000" as 1000, where C reads 1: such a number is not plainly a number.
    return f"TRY_CAST({expr} AS DOUBLE) IS NOT NULL AND NOT contains({expr}, '_')"


_ATOF_PREFIX = "'^[+-]?(([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?|(?i:inf(inity)?|nan))'"
