"""What a format is (`Format`: how one kind of file is read, into which table) and what is read
(`Load`: one input of a format, under its collection's or run's name)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

from pipeline.inputs.loaded_tables import LOADED_TABLES, LoadedTable
from pipeline.inputs.rules import Rule
from pipeline.sql import Statement

__all__ = ["Format", "Load"]

_SKIP = "line IS NULL OR regexp_matches(line, '^[ \\t\\v\\f]*(#|$)')"


@dataclass(frozen=True)
class Format:
    """How one kind of file is read: its `name` (a collection's `format`, or `run`), the table
    it fills, the SQL of that table's columns over a text line's fields `f`, and the rules a
    line must pass. Its module (`pipeline.inputs.formats` lists them) says the rest."""

    name: str
    table: str
    select: str
    rules: tuple[Rule, ...]
    _: KW_ONLY  # the rest by name: a field added later cannot take another's place
    #: the field holding the docno (a BEIR line has no `iter` field before it)
    docno: str = "f[3]"
    #: what a row of the input is to a person reading a message: a document, a nugget
    member: str = "document"
    #: SQL over `line`: the line parsed once (`j`), which the columns and rules then read, instead
    #: of its whitespace-separated fields (a JSON line)
    parse: str = ""
    #: SQL over a run row `r`: the rows that must name a document their collections judge (an
    #: answer's nuggets must be the collection's: another is a mismatched file, not an unjudged
    #: document); '' for none
    judged_only: str = ""
    #: under `input: lenient`, SQL over a line (its `j` or `f`): it holds a value strict refuses
    #: and lenient reads, which a notice counts; and what lenient reads it as ('' for none)
    lenient: str = ""
    lenient_reads: str = ""
    #: how a message names a row by its docno (a nugget's text and importance), where its docno
    #: is not what the file shows
    shown: Callable[[str], str] = repr
    #: what a message says of such a row left unjudged, given (run, collection, qid, docno),
    #: where the generic words would not tell which line of which file to add
    unjudged: Callable[[str, str, str, str], str] | None = None
    #: SQL over `line`: a line skipped besides blank and comment ones (a BEIR header)
    skip: str = "false"
    #: the `grades` setting a qrels format reads its grades under (`GRADE_TYPES`)
    grades: str = "integer"
    #: what messages call an input of this format, where its table's kind says too little
    called: str = ""
    #: the statements run once inputs of this format are loaded, given their names (subtopic
    #: qrels give `qrels` each document's highest grade)
    after: Callable[[list[str]], Statement] | None = None
    #: SQL over a line: its qid, and the list of its docnos (a JSON line holds several), which
    #: the reports of duplicates find lines by
    qid: str = "f[1]"
    docnos: str = ""

    @property
    def loaded(self) -> LoadedTable:
        """The declaration of the table this format fills."""
        return LOADED_TABLES[self.table]

    @property
    def key(self) -> str:
        """The column naming an input's rows (`collection` or `run`)."""
        return self.loaded.key

    @property
    def kind(self) -> str:
        """What the file is, as messages and registered tables name it: "qrels" or "run"."""
        return self.loaded.kind

    @property
    def described(self) -> str:
        """How messages call an input of this format: "qrels", "run", or more where needed."""
        return self.called or self.kind

    @property
    def line_docnos(self) -> str:
        """SQL over a line: the docnos it holds, as a list."""
        return self.docnos or f"[{self.docno}]"

    @property
    def skipped(self) -> str:
        """Predicate over `line`: the line holds no data."""
        return f"{_SKIP} OR {self.skip}"

    @property
    def bad(self) -> str:
        """Predicate over `line`, `cut` and `f`: the line breaks a rule (an implied rule's lines
        are found by another)."""
        return self.bad_unless(())

    def bad_unless(self, proven: tuple[Rule, ...]) -> str:
        """`bad`, but for the rules of `proven`, which the reading has shown no line breaks."""
        tested = [rule for rule in self.rules if not rule.implied and rule not in proven]
        return "coalesce(" + " OR ".join(f"({r.bad})" for r in tested) + ", true)"


@dataclass(frozen=True)
class Load:
    """One input to load into its format's table, its rows marked `name` in the column `key`.

    A run's `collections` name the collections whose qrels it is evaluated against (its rows
    are loaded once, whatever their number); a qrels file has none.
    """

    path: Path
    name: str
    format: Format
    collections: tuple[str, ...] = ()

    @property
    def table(self) -> str:
        """The table the input is loaded into."""
        return self.format.table

    @property
    def key(self) -> str:
        """The column that names the input's rows (`collection` or `run`)."""
        return self.format.key
