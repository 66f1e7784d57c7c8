"""Where the toolkit keeps what is the user's between runs, in the user's cache folder
($XDG_CACHE_HOME, else ~/.cache): the LLM call cache, and what the methods declare (for a
command line that has not loaded them, interface/index.py)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder() -> Path:
    """$XDG_CACHE_HOME/nuggetizer, else ~/.cache/nuggetizer."""
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base).expanduser() if base else Path.home() / ".cache"
    return root / "nuggetizer"


def default_cache_path() -> Path:
    """$NUGGETIZER_CACHE, else $XDG_CACHE_HOME/nuggetizer/llm-cache.sqlite, else ~/.cache/..."""
    explicit = os.environ.get("NUGGETIZER_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    return cache_folder() / "llm-cache.sqlite"
