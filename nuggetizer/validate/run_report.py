"""What the submission checker finds in one run file: each problem (file, line, field,
severity) and the run's summary row. Kept apart from the checker so that the parts it mixes in
(rag26, reports) and the checker itself all import it from below."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Problem:
    """One finding: where (file, line, field), how bad, and what."""

    path: str
    line: int | None
    field: str
    severity: str  # "error" or "warning"
    message: str
    kind: str = ""  # what sort of problem (grouped in the summary): the field, indices dropped

    def __post_init__(self) -> None:
        if not self.kind:
            self.kind = re.sub(r"\[\d+\]", "[]", self.field) or "file"

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        at = f" {self.field}:" if self.field else ""
        return f"{where}: {self.severity}:{at} {self.message}"


@dataclass
class RunReport:
    """What the checker found in one run file, with the summary row."""

    path: str
    run_id: str | None = None
    year: int | None = None
    shape: str | None = None  # "rag24", "rag25", "rag26" or "report"
    track: str | None = None  # the report track whose rules were checked
    topics: int = 0
    over_length: int = 0  # answers over `word_limit`
    word_limit: int | None = None  # the run's year's words per answer (None: no limit known)
    citations: int = 0
    mean_length: float = 0.0
    problems: list[Problem] = field(default_factory=list)
    fixed: str | None = None
    fixes: int = 0  # safe fixes made in the fixed copy (2026 runs: narratives, citations)
    length_tolerance: int = 0
    length_within_tolerance: int = 0  # stated response_length off by 1..tolerance words
    repeated_citations: int = 0  # 2024/2025: citations naming a reference their sentence cites
    first_repeat: str = ""  # where the first one is, in words

    @property
    def errors(self) -> int:
        return sum(1 for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for p in self.problems if p.severity == "warning")

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["errors"], data["warnings"] = self.errors, self.warnings
        return data
