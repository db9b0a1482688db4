"""The documents to judge as a TREC qrels-shaped file: `qid 0 docno -1`, one line per document,
each query's documents in the pool's judging order (assessment tools read this shape)."""

from __future__ import annotations

from pipeline.contract.writer import Writer
from pipeline.hookspecs import hookimpl
from pipeline.outputs import write_space_separated
from pipeline.sql import quote_identifier

__all__ = ["PoolWriter"]


class PoolWriter(Writer):
    """A pool's documents in qrels form, the grade -1 marking each as not yet judged."""

    suffixes = (".txt", ".qrels")
    levels = ("pool",)

    def write(self, con, table, path, manifest):
        write_space_separated(con, f"SELECT qid, 0, docno, -1 FROM {quote_identifier(table)}", path)


@hookimpl
def register_writers() -> list[type[Writer]]:
    return [PoolWriter]
