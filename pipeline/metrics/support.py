"""Citation support of generated answers (the TREC RAG track's support evaluation, Thakur et al.
2025), and the answer's plain counts: its words, citations and cited sentences.

An answer is read as rows of its citations (`pipeline.inputs.answers`): one per (sentence,
cited document), one per sentence citing nothing, the docno `sentence<TAB>docid<TAB>run`; a
citation's grade is its support judgment (`pipeline.inputs.support`: 2 full, 1 partial, 0 none).
A full support weighs 1, a partial one `partial` (0.5), none 0:

- `SupportPrecision`: the mean weight over the answer's (sentence, cited document) pairs, 0 for
  an answer citing nothing (the track's "weighted proportion of supplied citations that support
  their sentence").
- `SupportRecall`: the mean over all the answer's sentences of each one's support, an uncited
  sentence 0; a sentence's support is the best of its citations' (`reduce: max`, the default)
  or their mean (`reduce: mean`, open-rag-eval's CitationMetric since 0.1.7).

Sums are whole numbers of the weights, divided once: with `partial` 0.5 the values are the
Python arithmetic's to the last bit. The means over topics are `exact_mean` (statistics.mean).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..api import Columns, Measure, MeasureParams, double, hookimpl


def _sentence(c: Columns) -> str:
    """A row's sentence, as text ('' for an answer of no sentence)."""
    return f"split_part({c.docno}, chr(9), 1)"


def _is_citation(c: Columns) -> str:
    """Whether a row is a citation (not a sentence citing nothing)."""
    return f"(split_part({c.docno}, chr(9), 2) <> '')"


def _sentences(c: Columns) -> str:
    """How many sentences the answer has."""
    return f"count(DISTINCT {_sentence(c)}) FILTER (WHERE {_sentence(c)} <> '')"


class SupportParams(MeasureParams):
    partial: float = Field(0.5, ge=0, le=1, description="the weight of a partial support")


class RecallParams(SupportParams):
    reduce: Literal["max", "mean"] = Field(
        "max", description="a sentence's support from its citations': the best, or their mean"
    )


def _share(count: str, of: str) -> str:
    """`count` / `of` as a DOUBLE, 0 where `of` is 0."""
    return f"CASE WHEN {of} = 0 THEN 0.0 ELSE CAST({count} AS DOUBLE) / {of} END"


def _cited(c: Columns, grades: str, sentences: bool = False) -> str:
    """How many citations (or the distinct `sentences` of them) have a support among `grades`."""
    counted = f"DISTINCT {_sentence(c)}" if sentences else "*"
    return f"count({counted}) FILTER (WHERE {_is_citation(c)} AND {c.relv} IN ({grades}))"


class _ReadsAnswers:
    """What every measure of an answer's citations is: it reads answers (`Measure.reads`), and
    judged_only means nothing to it (an uncited sentence is no unjudged document)."""

    reads = "answers"
    judged_only_applies = False


class SupportPrecision(_ReadsAnswers, Measure[SupportParams]):
    """The mean support of the answer's (sentence, cited document) pairs."""

    name = "SupportPrecision"
    description = "mean support of the answer's citations (full 1, partial 0.5, none 0)"
    Params = SupportParams
    aggregator = "exact_mean"

    def per_query(self, p: SupportParams, c: Columns) -> str:
        supported = f"({_cited(c, '2')} + {double(p.partial)} * {_cited(c, '1')})"
        return _share(supported, f"count(*) FILTER (WHERE {_is_citation(c)})")


class SupportRecall(_ReadsAnswers, Measure[RecallParams]):
    """The mean support over all the answer's sentences, an uncited sentence 0."""

    name = "SupportRecall"
    description = "mean support of the answer's sentences (uncited 0; reduce: max or mean)"
    Params = RecallParams
    aggregator = "exact_mean"

    def per_query(self, p: RecallParams, c: Columns) -> str:
        if p.reduce == "mean":
            return _share(_mean_supports(p, c), _sentences(c))
        full = _cited(c, "2", sentences=True)
        partly = f"({_cited(c, '1, 2', sentences=True)} - {full})"  # best support partial
        return _share(f"({full} + {double(p.partial)} * {partly})", _sentences(c))


def _mean_supports(p: RecallParams, c: Columns) -> str:
    """The sum over the cited sentences, in their order, of each one's mean support."""
    weight = f"CASE {c.relv} WHEN 2 THEN 1.0 WHEN 1 THEN {double(p.partial)} ELSE 0.0 END"
    pairs = f"list({{'s': TRY_CAST({_sentence(c)} AS BIGINT), 'w': {weight}}}) FILTER (WHERE {_is_citation(c)})"
    per_sentence = "list_avg(list_transform(list_filter(L, lambda x: x.s = s), lambda x: x.w))"
    sentences = "list_sort(list_distinct(list_transform(L, lambda x: x.s)))"
    summed = f"list_transform([{pairs}], lambda L: list_sum(list_transform({sentences}, lambda s: {per_sentence})))[1]"
    return f"coalesce({summed}, 0.0)"  # no citation: no list


class CitedSentences(_ReadsAnswers, Measure[MeasureParams]):
    """The share of the answer's sentences that cite a document."""

    name = "CitedSentences"
    description = "sentences with a citation / sentences"
    aggregator = "exact_mean"

    def per_query(self, p: MeasureParams, c: Columns) -> str:
        cited = f"count(DISTINCT {_sentence(c)}) FILTER (WHERE {_is_citation(c)})"
        return _share(cited, _sentences(c))


class Citations(_ReadsAnswers, Measure[MeasureParams]):
    """How many (sentence, cited document) pairs the answer has."""

    name = "Citations"
    description = "(sentence, cited document) pairs of the answer"
    better = None

    def per_query(self, p: MeasureParams, c: Columns) -> str:
        return f"CAST(count(*) FILTER (WHERE {_is_citation(c)}) AS DOUBLE)"


class AnswerWords(_ReadsAnswers, Measure[MeasureParams]):
    """How many words the answer has (whitespace-separated, as Python's `str.split` counts)."""

    name = "AnswerWords"
    description = "words of the answer (whitespace-separated)"
    better = None

    def per_query(self, p: MeasureParams, c: Columns) -> str:
        return f"sum({c.score})"  # a sentence's words are on its first row, 0 on the others


@hookimpl
def register_metrics():
    return [SupportPrecision, SupportRecall, CitedSentences, Citations, AnswerWords]
