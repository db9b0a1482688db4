"""trec_eval 10.0 on irpipe: its command line (`command`, `irpipe trec-eval`), over the measure
names and `-m` syntax that the registry shares (`pipeline.measures.trec_names`).

Imports: the run layer and the writers; it adds no SQL of its own.
"""
