"""Inputs given as tables rather than files: any table a notebook holds (`convert`) and the qrels
or runs of an ir_datasets id (`irds`), as the Arrow table irpipe reads through the same SQL as a
Parquet file (`pipeline.inputs.table_rows`). `column_types` types each column, naming the
column and the row of what it refuses; `python_forms` reads dicts by query and named tuples.

Imports: the foundation (errors), pyarrow, and ir_datasets for `irds:` ids; nothing else of
irpipe.
"""
