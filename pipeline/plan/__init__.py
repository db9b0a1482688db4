"""The SQL plan: a validated spec and its measures compiled into the SQL that loads the inputs
(`pipeline.inputs` says how; `batches` groups the runs), ranks every run once (`ranking`), computes every measure
(`measure_sql` in `compile`; the tables around the ranking in `tables`, the result tables in
`per_query`) and builds the tables outputs read (`output_tables`, and the `output_jobs` that
write them). Pure: it builds statements and reads no data; `irpipe compile` prints it.

Imports: the foundation, the spec, the contract and the measures; never an engine.
"""
