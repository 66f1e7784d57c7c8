"""The names a command line offers before it has loaded anything: the default assessor and
method, the relevance scales, the leaderboard and nugget-bank formats, the battle schedules and
the re-asks of an unreadable answer. The modules that implement them take their names from
here, so that a command's `--help` (cli/) reads this file and not theirs, which import pydantic
models, prompts and HTTP clients."""

from __future__ import annotations

DEFAULT_ASSESSOR = "local"  # the embedded model: the assessor a command uses when none is named
DEFAULT_METHOD = "nuggets"  # the AutoNuggetizer: the method a command or track names by default
# Re-asks after an unparseable answer: enough that a 20% garbage rate loses nothing in
# practice (0.2**5 per call), still bounded (the guide's Performance page has the measurements).
DEFAULT_REASKS = 4

# UMBRELA's grading scales (relevance/scales.py): the published 0-3 one and the 0-4
# sub-narrative one of TREC RAG 2026
SCALE_NAMES: tuple[str, ...] = ("0-3", "0-4")
DEFAULT_SCALE = "0-3"

# what `score --autojudge-leaderboard` writes (formats/leaderboards.py)
LEADERBOARD_FORMATS: tuple[str, ...] = ("tot", "trec_eval", "ir_measures", "rag4reports",
                                        "ranking", "jsonl")
# what `nugget-bank` writes (formats/autojudge.py)
BANK_FORMATS: tuple[str, ...] = ("nuggetizer", "autojudge")
# how `battles` schedules its battles (methods/battles/step.py)
SCHEDULES: tuple[str, ...] = ("uniform", "active")
# agentic nugget creation (methods/nuggets/agentic.py): model calls and tokens per topic at
# most, and where it searches (search/open.py)
AGENTIC_TURNS = 8
AGENTIC_TOKENS = 60_000
SEARCH_SPECS = "bm25 (a local BM25 index of --corpus) or the URL of castorini's search API"
# how much of each passage resolve-references keeps (search/resolve.py, RAGDoll's limits)
READ_LINES = 200
READ_WORDS = 4096
# what the `workbench` and `serve` extras install, by the names they import (cli/workbench.py
# checks them before a workbench command runs)
SERVE_MODULES: tuple[str, ...] = ("fastapi", "uvicorn")
WORKBENCH_MODULES: tuple[str, ...] = (*SERVE_MODULES, "sqlalchemy", "argon2", "multipart",
                                      "markdown_it")
