"""A run as a TREC run file (`qid Q0 docno rank score tag`, one line per document, each query's
documents in rank order): the fused runs a spec writes (`level: run`), so that other tools can
read them."""

from __future__ import annotations

from pipeline.contract.writer import Writer
from pipeline.hookspecs import hookimpl
from pipeline.sql import quote_identifier

__all__ = ["TrecRunWriter"]


class TrecRunWriter(Writer):
    """A run's rows, space-separated, its name as the tag, scores in full precision."""

    suffixes = (".trec", ".txt", ".run")
    levels = ("run",)

    def write(self, con, table, path, manifest):
        con.execute(
            f"COPY (SELECT qid, 'Q0', docno, rank, score, run FROM {quote_identifier(table)} "
            "ORDER BY qid, rank) TO ? (FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '')",
            [str(path)],
        )


@hookimpl
def register_writers() -> list[type[Writer]]:
    return [TrecRunWriter]
