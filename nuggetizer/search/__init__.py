"""Search over a corpus, for what reads passages the corpus file cannot give: agentic nugget
creation's tools (methods/nuggets/agentic.py) and reference resolving (search/resolve.py).

Two backends behind one protocol (base.py `Searcher`): a local BM25 index of a corpus file
built with bm25s and kept on disk (bm25.py), and castorini's search API over HTTP
(castorini.py), for corpora that are no file anyone passes around (ClimbMix-400b). `open_searcher`
picks one from a spec; tools.py offers them to a model as OpenAI tools, with word limits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

__all__ = ["Hit", "Searcher", "open_searcher", "search_tools"]

if TYPE_CHECKING:
    from nuggetizer.search.base import Hit, Searcher
    from nuggetizer.search.open import open_searcher
    from nuggetizer.search.tools import search_tools

__getattr__ = lazy_face(__name__)
