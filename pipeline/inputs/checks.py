"""File-level input checks over the loaded tables, and the messages that input errors print.

Pure like the readers: SQL builders and message text; `execute` runs the SQL. In the normal path a
batch of files costs, beyond the load itself, a count per file (`summary`), a sort of one 64-bit hash
per row (`colliding_hashes`; an exact look at the few rows whose hashes collide, `duplicated_files`)
and, for runs, their distinct queries (`record_queries`, which `shared_counts` reads), each one
statement over the loaded table for the whole batch. The reports with line numbers
(`problem_lines`, `duplicates`) read a file again only once it is known to be bad.
"""

from __future__ import annotations

from pipeline.inputs import subtopics, trec_qrels
from pipeline.inputs.format import Load
from pipeline.inputs.loaded_tables import LOADED_TABLES
from pipeline.inputs.rules import REAL_GRADES_HINT
from pipeline.inputs.table_rows import MEMORY, identity, is_table_input
from pipeline.inputs.text_lines import literal_path, numbered_lines
from pipeline.sql import Statement, quote_identifier

__all__ = [
    "MAX_REPORTED",
    "bad_rows_message",
    "input_name",
    "colliding_hashes",
    "duplicated_files",
    "duplicates",
    "duplicate_rows_message",
    "duplicates_message",
    "empty_message",
    "no_shared_queries_message",
    "problems_message",
    "record_queries",
    "shared_counts",
    "shared_queries",
    "summary",
    "unjudged_message",
    "unjudged_rows",
]

MAX_REPORTED = 5


def _where(load: Load) -> str:
    return f"FROM {quote_identifier(load.table)} WHERE {quote_identifier(load.key)} = ?"


def _of_batch(loads: list[Load]) -> tuple[str, str]:
    """(key column, FROM ... WHERE clause) selecting the rows of every file of a batch."""
    key = quote_identifier(loads[0].key)
    return key, f"FROM {quote_identifier(loads[0].table)} WHERE list_contains(?, {key})"


def summary(loads: list[Load]) -> Statement:
    """(name, rows, bad rows) of each loaded file of a batch (a file without data has no row)."""
    key, rows = _of_batch(loads)
    sql = f"SELECT {key}, count(*), count(*) FILTER (WHERE NOT ok) {rows} GROUP BY {key}"
    return Statement(sql, [[load.name for load in loads]])


def _hash(key: str, table: str) -> str:
    """A 32-bit hash of a row's (name, qid, docno) (and subtopic: `identity`): half the memory
    of DuckDB's 64-bit one to sort, and no weaker here, where every collision is checked exactly
    anyway."""
    return f"(hash({key}, {identity(LOADED_TABLES[table])}) >> 32)::UINTEGER"


def colliding_hashes(loads: list[Load]) -> Statement:
    """The (name, qid, docno) hashes that more than one row of a batch has, as one list.

    An empty list proves there is no duplicate: equal triples have equal hashes, which sorting
    makes neighbours. Sorting bare hashes costs less memory than a hash table of string triples
    (or of hashes), and than carrying each row's triple through the sort. Distinct triples share
    a hash now and then (a few thousand pairs among 7M rows), so a hash in the list is only a
    candidate, which `duplicated_files` checks exactly.
    """
    key, rows = _of_batch(loads)
    sql = f"""SELECT coalesce(list(DISTINCT h), []) FROM (
        SELECT h, lag(h) OVER (ORDER BY h) AS previous FROM (SELECT {_hash(key, loads[0].table)} AS h {rows}))
        WHERE h = previous"""
    return Statement(sql, [[load.name for load in loads]])


def duplicated_files(loads: list[Load], hashes: list[int]) -> Statement:
    """The names of a batch's files that hold a (qid, docno) twice, comparing the triples exactly,
    but only those of rows whose hash is one of `hashes` (`colliding_hashes`)."""
    key, rows = _of_batch(loads)
    table = loads[0].table
    sql = f"""SELECT DISTINCT {key} FROM (
        SELECT {key}, {identity(LOADED_TABLES[table])} {rows} AND {_hash(key, table)} IN (SELECT unnest(?::UINTEGER[]))
        GROUP BY ALL HAVING count(*) > 1)"""
    return Statement(sql, [[load.name for load in loads], hashes])


def duplicates(load: Load) -> Statement:
    """The first duplicate (qid, docno) pairs (subtopic qrels: (qid, subtopic, docno)), each
    with its line numbers, how many there are, and a detail: the subtopic (subtopic qrels), or
    how many second fields the lines have (qrels: more than one, and they are subtopics)."""
    key, fmt = identity(load.format.loaded), load.format
    subtopic = "subtopic" in key
    on = " AND TRY_CAST(n.f[2] AS INTEGER) = d.subtopic" if subtopic else ""
    detail = (
        "d.subtopic" if subtopic else "count(DISTINCT n.f[2])" if fmt.name == trec_qrels.NAME
        else "NULL"
    )  # fmt: skip
    # A line's number once per time it holds the pair (a JSON line may hold it twice).
    times = "list_transform(list_filter(n.docnos, lambda x: x = d.docno), lambda x: n.line_no)"
    lines = (
        f"SELECT *, {fmt.qid} AS line_qid, {fmt.line_docnos} AS docnos FROM ({numbered_lines(fmt)})"
    )
    sql = f"""
WITH dup AS (SELECT {key} {_where(load)} GROUP BY {key} HAVING count(*) > 1)
SELECT d.qid, d.docno, flatten(list({times} ORDER BY n.line_no)), (SELECT count(*) FROM dup),
    {detail}
FROM dup d JOIN ({lines}) n ON n.line_qid = d.qid AND list_contains(n.docnos, d.docno){on}
GROUP BY {", ".join(f"d.{c}" for c in key.split(", "))}
ORDER BY min(n.line_no)
LIMIT {MAX_REPORTED}"""
    return Statement(sql, [load.name, literal_path(load.path)])


def unjudged_rows(loads: list[Load]) -> Statement | None:
    """The first row, per run of a batch whose format wants every row judged (`judged_only`), of
    a document a collection it is evaluated under does not judge: (run, collection, qid, docno),
    in spec order. None when no run of the batch is such."""
    names = [load.name for load in loads if load.format.judged_only]
    if not names:
        return None
    sql = """SELECT r.run, c.collection, min(r.qid), arg_min(r.docno, (r.qid, r.docno))
FROM run_rows r JOIN runs c USING (run)
WHERE list_contains(?, r.run) AND r.docno <> '' AND NOT EXISTS (SELECT 1 FROM qrels q
    WHERE q.collection = c.collection AND q.qid = r.qid AND q.docno = r.docno)
GROUP BY r.run, c.collection
ORDER BY list_position(?, r.run), c.collection"""
    return Statement(sql, [names, names])


def unjudged_message(load: Load, collection: str, qid: str, docno: str) -> str:
    """A run's row of a document its collection does not judge, where every row must be judged:
    an answer's assignments of another nugget set."""
    member = load.format.member
    return (
        f"{input_name(load)}: run '{load.name}' has the {member} {docno!r} in query {qid!r}, "
        f"which collection '{collection}' does not hold: are these the {load.format.described} "
        f"of another collection? (`settings: {{input: lenient}}` leaves such {member}s out)"
    )


def record_queries() -> Statement:
    """Record the queries of the loaded runs (`run_rows` holds one batch), and their lengths, in
    `present`."""
    return Statement("INSERT INTO present SELECT run, qid, count(*) FROM run_rows GROUP BY ALL")


def shared_counts(loads: list[Load]) -> Statement:
    """(run, collection, queries the run shares with that collection's qrels) for each run of a
    batch and each collection it is evaluated under."""
    sql = """
WITH judged AS (SELECT DISTINCT collection, qid FROM qrels)
SELECT p.run, runs.collection, count(j.qid)
FROM present p JOIN runs USING (run)
LEFT JOIN judged j ON j.collection = runs.collection AND j.qid = p.qid
WHERE list_contains(?, p.run)
GROUP BY p.run, runs.collection"""
    return Statement(sql, [[load.name for load in loads]])


def shared_queries(load: Load, collection: str) -> Statement:
    """For a run and a collection it is evaluated under: (queries the run shares with the
    collection's qrels, a few of its queries, a few of the qrels' queries)."""
    sql = """
WITH run AS (SELECT qid FROM present WHERE run = ?),
judged AS (SELECT DISTINCT qid FROM qrels WHERE collection = ?)
SELECT (SELECT count(*) FROM run SEMI JOIN judged USING (qid)),
    (SELECT list(qid ORDER BY qid)[1:3] FROM run),
    (SELECT list(qid ORDER BY qid)[1:3] FROM judged)"""
    return Statement(sql, [load.name, collection])


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
        f"{at(row[2][0])}: query {row[0]!r} has {load.format.member} {row[1]!r}"
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
