"""The searcher a `--search` spec names: `bm25` (a local index of the corpus file) or the URL
of castorini's search API (`http://...`, `https://...`) with the index to search."""

from __future__ import annotations

from pathlib import Path

from nuggetizer.cache import Cache
from nuggetizer.errors import ConfigError
from nuggetizer.names import SEARCH_SPECS
from nuggetizer.search.base import Searcher


def open_searcher(spec: str, *, corpus: Path | None = None, index: str | None = None,
                  cache: Cache | None = None) -> Searcher:
    """The searcher of `spec`. bm25: `corpus` indexed into the folder `index` (default: in the
    cache folder, built on first use), or without `corpus` the index in `index`; a URL: the
    search API's index named `index`, its answers kept in `cache`."""
    if spec == "bm25":
        if corpus is None and index is None:
            raise ConfigError("--search bm25 indexes a corpus file: give --corpus (or --index, "
                              "the folder of an index built before)")
        from nuggetizer.search.bm25 import Bm25Index  # noqa: PLC0415 - bm25s, optional

        return Bm25Index.open(corpus, Path(index) if index else None)
    if spec.startswith(("http://", "https://")):
        from nuggetizer.search.castorini import CastoriniSearch  # noqa: PLC0415 - aiohttp

        return CastoriniSearch(spec, index or "", cache=cache)
    raise ConfigError(f"--search {spec!r}: use {SEARCH_SPECS}")
