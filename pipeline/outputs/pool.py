"""The documents to judge as a TREC qrels-shaped file: `qid 0 docno -1`, one line per document,
each query's documents in the pool's judging order (assessment tools read this shape)."""

from __future__ import annotations

from pipeline.contract.writer import Writer
from pipeline.hookspecs import hookimpl
from pipeline.sql import quote_identifier

__all__ = ["PoolWriter"]


class PoolWriter(Writer):
    """A pool's documents in qrels form, the grade -1 marking each as not yet judged."""

    suffixes = (".txt", ".qrels")
    levels = ("pool",)

    def write(self, con, table, path, manifest):
        source = quote_identifier(table)
        con.execute(
            f"COPY (SELECT qid, 0, docno, -1 FROM {source}) TO ? "
            "(FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '')",
            [str(path)],
        )


@hookimpl
def register_writers() -> list[type[Writer]]:
    return [PoolWriter]
