"""Rubric-guided battles (the battles setting `rubrics`): each topic's criteria shown in the
pairwise prompt as RAGDoll's arena shows them (castorini/RAGDoll, src/ragdoll/arena/stages.py
`format_rubric_for_prompt`): one numbered line per criterion, `N. [tier=..., weight=...,
criterion_type=...] text`, each label there only when the criterion has it (a ResearchRubrics
criterion's axis stands for its type)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.methods.rubrics.method import RubricsMethod


def rubric_text(criteria: Sequence[Mapping[str, Any]]) -> str:
    """The criteria as the prompt shows them."""
    lines = []
    for number, criterion in enumerate(criteria, start=1):
        labels = []
        if criterion.get("tier"):
            labels.append(f"tier={criterion['tier']}")
        if criterion.get("weight") is not None:
            labels.append(f"weight={criterion['weight']}")
        kind = criterion.get("type") or criterion.get("axis")
        if kind:
            labels.append(f"criterion_type={kind}")
        shown = f" [{', '.join(labels)}]" if labels else ""
        lines.append(f"{number}.{shown} {criterion['criterion']}")
    return "\n".join(lines)


def load_rubrics(path: str | Path) -> dict[str, str]:
    """{qid: the rubric as the prompt shows it} of a rubrics file (checked as the rubrics
    method checks its key)."""
    return {qid: rubric_text(key["rubrics"])
            for qid, key in RubricsMethod().read_keys(path).items()}


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes (the provenance of the rubrics a battle was judged with)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
