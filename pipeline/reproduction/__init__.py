"""Reproductions: original runs and their reproductions compared as repro_eval compares them.

The flow: `entries.reproduction_plan` resolves the spec's `reproduction:` entries before any
data is read (no numpy there); as each batch of runs is read, the compared runs' rankings are
kept (`sql.kept_rows`, down to the entries' depth); after evaluation `tables.measure_reproductions`
compares the documents' orderings per topic in SQL (Kendall's τ Union, rank-biased overlap) and
the per-query values with numpy (`statistics`: RMSE, nRMSE, the effect ratio, ΔRI, the t-tests'
p-values), and writes the table `reproduction`. numpy and scipy come with `irpipe[compare]`.

Imports: the foundation, the spec, the measures' types, the SQL plan's orderings and the
comparisons' check of the extra; numpy and scipy only to compute.
"""

from pipeline.reproduction.entries import reproduction_plan
from pipeline.reproduction.plan import ReproductionPlan

__all__ = ["ReproductionPlan", "reproduction_plan"]
