"""Inputs as one contract: every format irpipe reads, one module each, below the plan.

A format module (`trec_qrels`, `trec_run`, `beir`, `subtopics`) says its name, how its first line
shows it (`recognises`, where it can), the table it fills and the SQL of that table's columns over
a line's fields, its rules and their messages, and what runs once it is loaded. `formats` lists
them and answers the rest of the house: the spec's names (`QRELS_FORMATS`), the compiler's
`qrels_format` and `run_format`, the preflight's `recognised_name`, the engines' `after_loading`.
What every format shares: the tables they fill (`loaded_tables`, declared once: columns, types,
identity), text read line by line (`text_lines`, the number fields in `rules`), tables read by
column (`table_rows`: Parquet and the Python door's frames), the file-level checks (`checks`)
and what input errors say (`messages`), JSON lines (`json_lines`), and every table's rows as one
stream (`row_stream`, the Spark engine's). Pure SQL
builders, but for `recognise`, the one module that opens a file (the preflight calls it).
Adding a format: pipeline/README.md, "Add an input format".

Imports: the foundation (`pipeline.sql`); nothing else of irpipe.
"""
