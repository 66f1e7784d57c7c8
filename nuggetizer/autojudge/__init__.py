"""The AutoNuggetizer as a TREC AutoJudge judge (judge) and what it checks before it writes
anything (inputs)."""

from nuggetizer.autojudge.judge import (
    AutoNuggetizerJudge,
    assessor_args,
    corpus_file,
    workflow_path,
)

__all__ = ["AutoNuggetizerJudge", "assessor_args", "corpus_file", "workflow_path"]
