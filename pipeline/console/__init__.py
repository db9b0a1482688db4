"""The console: the only user of rich. `draw` prints tables, checks and histories, `layout` lays
a results table out in columns that fit, `progress_bar` shows a long evaluation's progress.

Imports: rich, and the layers below (compare's marks, checks' results, the formatting of values).
"""
