"""trec_eval 10.0 on irpipe: its measure names and `-m` syntax (`measures`, used by the registry
too), and its command line (`command`, `irpipe trec-eval`)."""
