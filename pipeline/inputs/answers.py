"""TREC RAG's generated answers, JSONL: one topic's answer a line, its sentences each citing
references (`runs.NAME.answers`, the same as `path:` with `format: answers`). Both years' lines:
2024's `{"run_id", "topic_id", "references": [docid, ...], "answer": [{"text", "citations":
[index into references]}]}`, and 2025's, whose topic is `metadata.narrative_id` and whose
citations may be docids (which must then be among the references). The run's name is the spec's.

An answer is read as rows of its citations, for the support measures
(`pipeline.metrics.support`): one row per (sentence, cited document), in the answer's order,
and one per sentence that cites nothing. A row's docno is `sentence<TAB>docid<TAB>run` (the
docid '' for an uncited sentence), what a support judgment of that run names
(`pipeline.inputs.support`); its score is the sentence's words (Python's `str.split`) on the
sentence's first row, 0 on the others, so that a sum over the rows counts the answer's words. An
answer of no sentence keeps its topic: one row, `<TAB><TAB>run`.
"""

from __future__ import annotations

import json

from pipeline.inputs.format import Format
from pipeline.inputs.loaded_tables import RUNS
from pipeline.inputs.rules import Rule, quoted
from pipeline.inputs.text_lines import text_rules
from pipeline.sql import Statement

__all__ = ["READS_TABLES", "RUNS_ARE", "FIELDS", "NAME", "SEPARATOR", "WORD_SEPARATORS", "read"]

#: the name a run's `format` gives it
NAME = "answers"
#: a line's keys, as messages name them
FIELDS = '{"topic_id", "references": [docid], "answer": [{"text", "citations": [index]}]}'
#: what a run of this format is, as a measure reads it (`Measure.reads`)
RUNS_ARE = "answers"
#: what `input: lenient` reads that strict refuses, as a notice says it
LENIENT_READS = "a citation of a docid not among the references, read as cited"
#: whether a table (Parquet, a frame) may hold it, by the columns of its table
READS_TABLES = False
#: what separates a row's sentence, docid and run in its docno
SEPARATOR = "chr(9)"
#: the characters Python's `str.split()` separates words at (`str.isspace`), as an RE2 class:
#: RE2's `\s` is ASCII only, and would count `a\u00a0b` as one word
WORD_SEPARATORS = (
    r"[\t\n\x0B\x0C\r\x1C-\x1F \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}"
    r"\x{205F}\x{3000}]+"
)

_SHAPE = {
    "topic_id": "JSON",
    "metadata": {"narrative_id": "JSON"},
    "references": ["JSON"],
    "answer": [{"text": "VARCHAR", "citations": ["JSON"]}],
}
#: the topic id, text or an integer, as text: 2024's `topic_id`, or 2025's `narrative_id`
_QID = "coalesce(j.topic_id, j.metadata.narrative_id)"
QID = f"({_QID} ->> '$')"
_REFERENCES = "list_transform(j.references, lambda r: r ->> '$')"
_INDEX = "json_type(c) IN ('BIGINT', 'UBIGINT')"
_CITED_TEXT = "(c ->> '$')"
#: a citation `c`'s docid: the reference it indexes (from 0), or the docid it is
_DOCID = f"CASE WHEN {_INDEX} THEN {_REFERENCES}[(c ->> '$')::BIGINT + 1] ELSE c ->> '$' END"
_WORDS = f"len(list_filter(regexp_split_to_array(a.text, '{WORD_SEPARATORS}'), lambda w: w <> ''))"


def _row(sentence: str, docid: str, words: str) -> str:
    return f"{{'docno': CAST({sentence} AS VARCHAR) || {SEPARATOR} || {docid}, 'words': {words}}}"


# Each sentence `a` (numbered `i` from 1): a row per citation `c` (numbered `p`), the words on
# the first; or one row of no docid.
_SENTENCE_ROWS = f"""CASE WHEN len(a.citations) = 0 THEN [{_row("i - 1", "''", _WORDS)}]
    ELSE list_transform(a.citations, lambda c, p: {_row("i - 1", _DOCID, f"CASE WHEN p = 1 THEN {_WORDS} ELSE 0 END")})
    END"""
_ROWS = f"""(CASE WHEN len(j.answer) = 0 THEN [{_row("''", "''", "0")}]
    ELSE flatten(list_transform(j.answer, lambda a, i: {_SENTENCE_ROWS})) END)"""


def _citation_rule(bad: str, problem: str) -> Rule:
    """A rule over each citation `c` of each sentence `a` (numbered `i` from 1): the line is bad
    when a citation is `bad`; `problem` (SQL over the first such `a`, `i` and `c`) says why."""
    found = f"""list_filter(flatten(list_transform(j.answer, lambda a, i:
        list_transform(a.citations, lambda c: CASE WHEN {bad} THEN {problem} END))),
        lambda x: x IS NOT NULL)"""
    return Rule(f"len({found}) > 0", f"{found}[1]")


def _rules(mode: str) -> list[Rule]:
    sentence = "'sentence ' || (i - 1) || ' '"
    rules = [
        Rule("j IS NULL", f"'not a JSON line; expected an object {FIELDS}'"),
        Rule(
            f"json_type({_QID}) IS NULL OR json_type({_QID}) NOT IN ('VARCHAR', 'BIGINT', 'UBIGINT')",
            "'the topic_id (or metadata.narrative_id) is missing, or not text or an integer'",
        ),
        Rule("j.answer IS NULL", "'the answer is missing, or not a list of sentences'"),
        Rule("j.references IS NULL", "'the references are missing, or not a list'"),
        Rule(
            "list_bool_or(list_transform(j.answer, lambda a: a.text IS NULL OR a.citations IS NULL))"
            " AND len(j.answer) > 0",
            "'a sentence without a text or a list of citations'",
        ),
        _citation_rule(
            "json_type(c) NOT IN ('BIGINT', 'UBIGINT', 'VARCHAR')",
            f"{sentence} || 'cites ' || c::VARCHAR || ', neither an index nor a docid'",
        ),
        _citation_rule(
            f"{_INDEX} AND (c ->> '$')::HUGEINT >= len(j.references)",
            f"{sentence} || 'cites reference ' || (c ->> '$') || ', and the answer has '"
            " || len(j.references) || ' (counted from 0)'",
        ),
    ]
    if mode == "strict":
        rules.append(
            _citation_rule(
                f"json_type(c) = 'VARCHAR' AND NOT list_contains({_REFERENCES}, c ->> '$')",
                f"{sentence} || 'cites ' || {quoted(_CITED_TEXT)} || ', not among its references'"
                " || ' (input: lenient reads it as it is)'",
            )
        )
    return rules


def with_run(names: list[str]) -> Statement:
    """Each answer row's docno ends with its run's name (of the runs `names`): the name a
    support judgment gives it. Once the rows are checked, so that a report of a duplicate
    names the docnos as its line holds them."""
    return Statement(
        "UPDATE run_rows SET docno = docno || chr(9) || run WHERE list_contains(?, run)", [names]
    )


def _unjudged(run: str, collection: str, qid: str, docno: str) -> str:
    """What a message says of a citation no support judgment judges."""
    sentence, docid = docno.split("\t")[:2]
    return (
        f"run '{run}', query {qid!r}: sentence {sentence} cites {docid!r}, and collection "
        f"'{collection}' holds no support judgment of it: add the line '{run} {qid} {sentence} "
        f"{docid} SUPPORT' (2 full, 1 partial, 0 none) to its support file, or "
        "`settings: {input: lenient}` reads it as no support"
    )


#: SQL over a run row `r`: it is a citation (under `strict`, one the support judgments must judge)
_CITED = f"split_part(r.docno, {SEPARATOR}, 2) <> ''"


def read(mode: str = "strict", use_rank: bool = False) -> Format:
    """How an answers file is read into `run_rows`: a row per citation and per uncited sentence
    (docno `sentence<TAB>docid`, then the run's name; rank its place; score the words)."""
    select = (
        f"{QID}, unnest(list_transform({_ROWS}, lambda r: r.docno)), "
        f"unnest(range(1, len({_ROWS}) + 1)), unnest(list_transform({_ROWS}, lambda r: r.words::DOUBLE))"
    )
    return Format(NAME, RUNS.name, select, text_rules(*_rules(mode)), called="answers", qid=QID,
                  docnos=f"list_transform({_ROWS}, lambda r: r.docno)", member="citation",
                  judged_only=_CITED if mode == "strict" else "", after=with_run, unjudged=_unjudged,
                  parse=f"try(json_transform(line, '{json.dumps(_SHAPE)}'))")  # fmt: skip
