"""The submission checker: TREC RAG 2024/2025 answer runs (checker), 2026 runs (rag26) and
report-shape runs (reports), each problem named with its rule, file and line."""
