"""The measure contract: what a plugin subclasses and what irpipe reads from it: `Measure` and
its parameter models (`measure`), the columns a measure's SQL is written over and the needs it
declares (`columns`, `needs`), `PythonMeasure` for measures computed over arrays, the metric-string
grammar (`metric_names`), and `Writer` for output formats. `pipeline.api` re-exports exactly this.

Imports: the foundation (errors, sql) and pydantic; nothing else of irpipe.
"""
