"""irpipe's version: one place, which the package, its metadata and the history read."""

__version__ = "0.1.0"
