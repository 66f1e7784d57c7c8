"""Rubric diagnostics, as RAGDoll reports them beside its rubric scores (castorini/RAGDoll,
src/ragdoll/rubric/metrics.py): the failure rate of each criterion type, the mandatory criteria
an answer fails, and how far binary grading (a partial verdict worth 0) ranks the runs as the
ternary grading (worth half) does, as Kendall's tau over the runs' mean compliance.

A criterion fails when the answer does not fully meet it (RAGDoll: a verdict below satisfied):
for a failure mode (a negative weight, in ResearchRubrics' keys) when the answer shows it
(graded satisfied). Unjudged criteria are left out and counted. A criterion's type is RAGDoll's
(`type`), else read from its ResearchRubrics axis; it is mandatory when its `tier` says so,
else (keys without tiers, e.g. ResearchRubrics') when its weight is at least MANDATORY_WEIGHT
(RAGDoll's mandatory weight). Pure functions over plain rows.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nuggetizer.measures.correlation import kendall_tau
from nuggetizer.measures.rubrics import compliance

MANDATORY_WEIGHT = 5.0
UNJUDGED = "unjudged"
# ResearchRubrics' axes and RAGDoll's criterion types (authoring.py maps them the other way)
TYPE_OF_AXIS = {"Explicit Criteria": "explicit", "Implicit Criteria": "implicit",
                "Synthesis of Information": "synthesis",
                "References & Citation Quality": "references",
                "Communication Quality": "communication",
                "Instruction Following": "instruction"}


@dataclass(frozen=True)
class Graded:
    """One graded criterion of one answer."""

    run_id: str
    qid: str
    kind: str
    mandatory: bool
    weight: float
    label: str


def criterion_type(criterion: Mapping[str, Any]) -> str:
    """RAGDoll's type of a criterion: its `type`, else its axis's, else its axis as written."""
    if criterion.get("type"):
        return str(criterion["type"])
    axis = str(criterion.get("axis") or "")
    return TYPE_OF_AXIS.get(axis, axis or "unknown")


def is_mandatory(criterion: Mapping[str, Any]) -> bool:
    tier = criterion.get("tier")
    if tier:
        return str(tier) == "mandatory"
    return float(criterion.get("weight") or 0) >= MANDATORY_WEIGHT


def failed(graded: Graded) -> bool:
    """The answer did not fully meet the criterion (for a failure mode: it showed it)."""
    if graded.weight < 0:
        return graded.label == "satisfied"
    return graded.label != "satisfied"


@dataclass
class Diagnostics:
    """What `diagnose` found."""

    by_type: dict[str, tuple[int, int]] = field(default_factory=dict)  # type: (judged, failed)
    mandatory: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    # run: (answers, mandatory criteria failed, answers with at least one)
    ternary: dict[str, float] = field(default_factory=dict)  # run: mean compliance
    binary: dict[str, float] = field(default_factory=dict)
    unjudged: int = 0

    @property
    def tau(self) -> float:
        """Kendall's tau between the runs' ternary and binary means (NaN under 2 runs)."""
        runs = sorted(self.ternary)
        if len(runs) < 2:
            return math.nan
        return kendall_tau([self.ternary[r] for r in runs], [self.binary[r] for r in runs])

    def rows(self) -> list[tuple[str, str, str, float]]:
        """(table, name, measure, value) rows, the long TSV `rubric-diagnostics` writes."""
        rows: list[tuple[str, str, str, float]] = []
        for kind, (judged, fails) in sorted(self.by_type.items()):
            rows += [("type", kind, "criteria", judged), ("type", kind, "failed", fails),
                     ("type", kind, "failure_rate", fails / judged if judged else math.nan)]
        for run, (answers, fails, hit) in sorted(self.mandatory.items()):
            rows += [("run", run, "mandatory_failures_per_answer", fails / answers),
                     ("run", run, "answers_failing_a_mandatory", hit / answers),
                     ("run", run, "compliance_ternary", self.ternary.get(run, math.nan)),
                     ("run", run, "compliance_binary", self.binary.get(run, math.nan))]
        rows += [("runs", "ternary_vs_binary", "kendall_tau", self.tau),
                 ("runs", "ternary_vs_binary", "runs", len(self.ternary)),
                 ("criteria", "all", "unjudged", self.unjudged)]
        return rows


def diagnose(answers: Iterable[tuple[str, str, list[Graded]]]) -> Diagnostics:
    """The diagnostics of (run, topic, graded criteria) answers; a run's mean compliance is
    over the answers it has with a judged criterion."""
    found = Diagnostics()
    types: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    mandatory: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    scores: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for run_id, _qid, criteria in answers:
        judged = [g for g in criteria if g.label != UNJUDGED]
        found.unjudged += len(criteria) - len(judged)
        for g in judged:
            types[g.kind][0] += 1
            types[g.kind][1] += failed(g)
        fails = sum(1 for g in judged if g.mandatory and failed(g))
        counts = mandatory[run_id]
        counts[0], counts[1], counts[2] = counts[0] + 1, counts[1] + fails, counts[2] + (fails > 0)
        if judged:
            labelled = [(g.weight, g.label) for g in judged]
            scores[run_id].append((compliance(labelled, "ternary"),
                                   compliance(labelled, "binary")))
    found.by_type = {k: (v[0], v[1]) for k, v in types.items()}
    found.mandatory = {k: (v[0], v[1], v[2]) for k, v in mandatory.items()}
    for run_id, both in scores.items():
        found.ternary[run_id] = sum(t for t, _ in both) / len(both)
        found.binary[run_id] = sum(b for _, b in both) / len(both)
    return found
