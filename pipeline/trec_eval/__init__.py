"""`irpipe trec-eval`: trec_eval 10.0's command line on irpipe's registry and executor."""

from .command import main

__all__ = ["main"]
