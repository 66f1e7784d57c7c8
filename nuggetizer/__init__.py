"""nuggetizer: TREC-style nugget evaluation of retrieval-augmented generation."""

__version__ = "0.1.0"
