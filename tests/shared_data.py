"""Where the real evaluation data lives: ../shared/data beside the project (never copied in)."""

from __future__ import annotations

from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
RAG24 = SHARED_DATA / "trec-rag-2024"
CRUX_DUC = SHARED_DATA / "crux-duc"
UDCG_SAMPLE = SHARED_DATA / "udcg-sample"
SPOT_CHECK = SHARED_DATA / "autojudge-spot-check"
RAG26_DEV = SHARED_DATA / "trec-rag-2026-dev"

if not RAG24.is_dir():  # the tests need it: fail loudly rather than skip
    raise RuntimeError(f"the shared evaluation data is missing: expected {SHARED_DATA}")
