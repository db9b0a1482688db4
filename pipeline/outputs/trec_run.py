"""A run as a TREC run file (`qid Q0 docno rank score tag`, one line per document, each query's
documents in rank order): the fused runs a spec writes (`level: run`), so that other tools can
read them."""

from __future__ import annotations

from pipeline.contract.writer import Writer
from pipeline.hookspecs import hookimpl
from pipeline.outputs import write_space_separated
from pipeline.spec.levels import RUN_FILE_LEVELS
from pipeline.sql import quote_identifier

__all__ = ["TrecRunWriter"]


class TrecRunWriter(Writer):
    """A run's rows, space-separated, its name as the tag, scores in full precision."""

    suffixes = (".trec", ".txt", ".run")
    levels = RUN_FILE_LEVELS

    def write(self, con, table, path, manifest):
        source = quote_identifier(table)
        select = f"SELECT qid, 'Q0', docno, rank, score, run FROM {source} ORDER BY qid, rank"
        write_space_separated(con, select, path)


@hookimpl
def register_writers() -> list[type[Writer]]:
    return [TrecRunWriter]
