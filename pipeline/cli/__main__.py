"""`python -m pipeline.cli`: the `irpipe` command, for environments without its script."""

from pipeline.cli import irpipe

irpipe()
