"""What input errors say: one line per bad line or row (`file:line: problem: 'text'`), the
duplicates with their lines, an empty input, a run sharing no query with its qrels, an answer's
nugget its collection does not hold; each naming the input as the user gave it (`input_name`),
with the hint that fixes it where one does. The checks that find them are `checks`' SQL."""

from __future__ import annotations

from pipeline.inputs import subtopics, trec_qrels
from pipeline.inputs.format import Load
from pipeline.inputs.rules import REAL_GRADES_HINT
from pipeline.inputs.table_rows import MEMORY, is_table_input

__all__ = [
    "MAX_REPORTED",
    "bad_rows_message",
    "duplicate_rows_message",
    "duplicates_message",
    "empty_message",
    "input_name",
    "no_shared_queries_message",
    "problems_message",
    "unjudged_message",
]

#: how many bad lines, rows or duplicates a report shows
MAX_REPORTED = 5


def lenient_message(load: Load, lines: int) -> str:
    """How many lines of a file `input: lenient` read where strict would refuse them, and how."""
    said = "line" if lines == 1 else "lines"
    return (
        f"{load.path}: {lines} {said} read under input: lenient that strict refuses: "
        f"{load.format.lenient_reads}"
    )


def unjudged_message(load: Load, collection: str, qid: str, docno: str) -> str:
    """A run's row of a document its collection does not judge, where every row must be judged:
    an answer's assignments of another nugget set."""
    member = load.format.member
    if load.format.unjudged is not None:
        return f"{input_name(load)}: {load.format.unjudged(load.name, collection, qid, docno)}"
    return (
        f"{input_name(load)}: run '{load.name}' has the {member} {load.format.shown(docno)} in "
        f"query {qid!r}, "
        f"which collection '{collection}' does not hold: are these the {load.format.described} "
        f"of another collection? (`settings: {{input: lenient}}` leaves such {member}s out)"
    )


_BEIR_HEADER = ["query-id", "corpus-id", "score"]  # read as TREC only where `format: trec` says
_LENIENT_HINT = (
    "hint: trec_eval reads a number by its numeric prefix ('1,5' as 1, 'abc' as 0, 'nan' as NaN); "
    "`settings: {input: lenient}` reads them the same way"
)


def problems_message(load: Load, rows: list[tuple], bad_lines: int) -> str:
    """One line per reported bad line (`file:line: problem: 'text'`), then how many more."""
    lines = [
        f"{load.path}:{no}: {_printable(problem)}: {_clip(text)!r}" for no, text, problem in rows
    ]
    more = bad_lines - len(rows)
    if more:
        lines.append(f"{load.path}: {more} more bad line{'s' * (more != 1)}")
    if any(_unread_number(p) for _, _, p in rows):
        lines.append(_LENIENT_HINT)
    if load.format.kind == "qrels" and any(text.split() == _BEIR_HEADER for _, text, _ in rows):
        lines.append("hint: a line is BEIR's qrels header: set the collection's `format: beir`")
    swapped = _swapped(load, [p for _, _, p in rows])
    if swapped:
        lines.append(f"hint: the lines look like a {swapped} file; are the qrels and run swapped?")
    return "\n".join(lines)


def _unread_number(problem: str) -> bool:
    """A number trec_eval reads by its prefix; not a decimal grade, which names its own fix
    (`grades: real`, not atol's cut)."""
    return problem.startswith(("the score must", "the relevance grade must")) and (
        REAL_GRADES_HINT not in problem
    )


def _swapped(load: Load, problems: list[str]) -> str | None:
    """'run' or 'qrels' when every bad line has the other file's field count."""
    found = [p.rpartition("found ")[2] for p in problems if p.startswith("expected ")]
    if not found or len(found) != len(problems) or not all(f.isdigit() for f in found):
        return None
    counts = {int(f) for f in found}
    if load.format.kind == "qrels" and min(counts) >= 6:
        return "run"
    return "qrels" if load.table == "run_rows" and counts == {4} else None


def input_name(load: Load) -> str:
    """How messages name an input: its path, or for a table given in Python its argument
    (`runs['bm25']`, `qrels['robust']`)."""
    path = str(load.path)
    if not path.startswith(MEMORY):
        return path
    argument, _, name = path.removeprefix(MEMORY).partition("/")
    return f"{argument}[{name!r}]"


def bad_rows_message(load: Load, rows: list[tuple], bad_rows: int) -> str:
    """One line per reported bad row of a table input (`input: row N: problem: values`)."""
    where = input_name(load)
    lines = [f"{where}: row {no}: {problem}: {_clip(text)!r}" for no, text, problem in rows]
    more = bad_rows - len(rows)
    if more:
        lines.append(f"{where}: {more} more bad row{'s' * (more != 1)}")
    return "\n".join(lines)


def _clip(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[:width] + "..."


def _printable(text: str) -> str:
    # A field quoted in a message may hold control characters: show them escaped, never raw.
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def duplicates_message(load: Load, rows: list[tuple]) -> str:
    """Each duplicate pair at its first line, with the lines that repeat it (`duplicates`' rows:
    qid, docno, line numbers, total, and maybe its detail); or, when TREC qrels repeat a pair
    with other second fields, the one fix: they are subtopic qrels."""
    if load.table == "qrels" and any(len(row) > 4 and (row[4] or 0) > 1 for row in rows):
        return _subtopics_message(load, rows)
    table = is_table_input(load.path)
    where, unit = (input_name(load), "row") if table else (str(load.path), "line")
    at = (lambda n: f"{where}: row {n}") if table else (lambda n: f"{where}:{n}")
    subtopics = load.table == "subtopic_qrels"
    lines = [
        f"{at(row[2][0])}: query {row[0]!r} has {load.format.member} {load.format.shown(row[1])}"
        f"{f' for subtopic {row[4]}' if subtopics else ''} again on "
        f"{unit}{'s' * (len(row[2]) > 2)} {_numbers(row[2][1:])}"
        for row in rows
    ]
    total = rows[0][3]
    pairs = "(qid, subtopic, docno) triple" if subtopics else "(qid, docno) pair"
    once = (
        "once per query and subtopic"
        if subtopics
        else "once per query (trec_eval stops on duplicates too)"
    )
    lines.append(
        f"{where}: {total} duplicate {pairs}{'s' * (total != 1)}; a {load.format.member} may appear {once}"
    )
    return "\n".join(lines)


def duplicate_rows_message(load: Load, rows: list[tuple], columns: set[str]) -> str:
    """`duplicates_message` for a table input with the `columns`: one of TREC qrels with a
    subtopic column says which format reads it."""
    message = duplicates_message(load, rows)
    if load.format.name == trec_qrels.NAME and "subtopic" in columns:
        message += (
            "\nhint: the table has a subtopic column: for subtopic qrels, set "
            f"collections.{load.name}.format: {subtopics.NAME}"
        )
    return message


def _subtopics_message(load: Load, rows: list[tuple]) -> str:
    """TREC qrels whose repeated (qid, docno) pairs differ in the second field: ndeval's."""
    qid, docno, numbers, *_ = next(row for row in rows if (row[4] or 0) > 1)
    return (
        f"{load.path}:{numbers[0]}: query {qid!r} has document {docno!r} again on line "
        f"{numbers[1]} with another second field: these look like subtopic qrels (ndeval's "
        f"{subtopics.FIELDS}); set collections.{load.name}.format: {subtopics.NAME}"
    )


def _numbers(numbers: list[int]) -> str:
    shown = ", ".join(map(str, numbers[:MAX_REPORTED]))
    more = len(numbers) - MAX_REPORTED
    return f"{shown} and {more} more" if more > 0 else shown


def empty_message(load: Load) -> str:
    """An input with no data line (or no row)."""
    if str(load.path).startswith(MEMORY):
        return f"{input_name(load)}: no data: the table has no row"
    return f"{load.path}: no data: the file is empty or holds only blank and comment lines"


def no_shared_queries_message(load: Load, collection: str, row: tuple) -> str:
    """A run none of whose queries is judged in a collection it is evaluated under: almost
    always the wrong file (or the wrong collection)."""
    _, run_qids, qrels_qids = row
    return (
        f"{input_name(load)}: run '{load.name}' shares no query with collection '{collection}' "
        f"(run queries: {_examples(run_qids)}; qrels queries: {_examples(qrels_qids)}); "
        "is it the right run file, or the right collection?"
    )


def _examples(qids: list[str] | None) -> str:
    return ", ".join(map(repr, qids or [])) + ", ..."
