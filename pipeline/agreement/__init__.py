"""Agreement: two judgment sets compared label by label, and orderings of runs compared.

The flow: `entries.agreement_plan` resolves the spec's `agreement:` and `correlation:` entries
before any data is read (no numpy there); after evaluation `tables.compare_judgment_sets` reads the confusion
cells of each agreement entry, counted in one pass of SQL over the qrels (by the engine, or
from the loaded qrels: `sql`), and the runs' aggregates (and per-query values, for a
bootstrap), computes every statistic with numpy (`labels`: agreement, Cohen's kappa, Krippendorff's alpha, precision and recall at thresholds;
`orderings`: Kendall's tau-b, tau_ap, Spearman, Pearson, rank-biased overlap, the largest rank
drop; `bootstrap`: their intervals over queries) and writes the tables `agreement`,
`confusion` and `correlation`. numpy comes with the optional extra `irpipe[compare]`.

Imports: the foundation, the spec, the measures' types, the SQL plan's statement of cells, the
comparisons' plan and random streams; numpy only to compute.
"""

from pipeline.agreement.entries import agreement_plan
from pipeline.agreement.plan import AgreementPlan

__all__ = ["AgreementPlan", "agreement_plan"]
