"""Comparing runs: paired significance tests, corrections, effect sizes and intervals.

The flow: `plan.compare_plan` resolves the spec's `compare:` section before any data is read (no
numpy there, so validating stays fast); after evaluation `table.compare_runs` pulls the
per-query values out of DuckDB, computes every comparison with numpy and scipy (`block`:
descriptive statistics and each test per group of pairs; `paired`: t, Wilcoxon, sign;
`resampling`: randomization and bootstrap over `streams`' keyed random draws; `tukey`: Tukey's
HSD and its randomised form, over all pairs at once), corrects each family (`corrections`; the
Tukey tests correct themselves) and writes the `comparison` table back. numpy and scipy come with the
optional extra `irpipe[compare]`.

Imports: the foundation, the spec and the measures' types; numpy and scipy only to compute.
"""

from pipeline.compare.plan import ComparePlan, check_compare, compare_plan

__all__ = ["ComparePlan", "check_compare", "compare_plan"]
