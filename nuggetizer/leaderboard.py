"""Score assessments into per-topic and per-run tables; write leaderboard and per-topic TSVs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from nuggetizer.formats.jsonl import write_text_atomic
from nuggetizer.measures import MEASURES, nugget_scores, word_count
from nuggetizer.types import Assessment

SCORED = tuple(m for m in MEASURES if m != "L")


@dataclass
class ScoreTable:
    """Scores of every run on every topic of the universe, with run means."""

    topics: list[str]
    per_topic: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    means: dict[str, dict[str, float]] = field(default_factory=dict)
    unjudged: dict[str, int] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)
    no_vital: list[str] = field(default_factory=list)
    outside: int = 0

    def ranking(self) -> list[str]:
        """Run ids by V_strict descending, then run id."""
        return sorted(self.means, key=lambda r: (-self.means[r]["V_strict"], r))


def _length(assessment: Assessment) -> float:
    if assessment.length is not None:
        return float(assessment.length)
    return float(word_count(assessment.answer_text))


def score(assessments: Iterable[Assessment], universe: Sequence[str] | None = None) -> ScoreTable:
    """Score every (run, topic); a universe topic a run did not answer scores 0 (trec_eval -c).

    Without a universe, it is every topic seen in any assessment. L is averaged over the
    topics a run answered.
    """
    # Each assessment is scored as it streams by and only its scores are kept, so memory does
    # not grow with the answers' texts (150 runs x 301 topics fit in a few MiB).
    by_run: dict[str, dict[str, tuple[dict[str, float], int, bool]]] = {}
    seen: dict[str, None] = {}
    for assessment in assessments:
        labels = [(n.importance, n.assignment) for n in assessment.nuggets]
        row = nugget_scores(labels)
        row["L"] = _length(assessment)
        by_run.setdefault(assessment.run_id, {})[assessment.qid] = (
            row,
            sum(1 for _, a in labels if a == "unjudged"),
            any(i == "vital" for i, _ in labels),
        )
        seen.setdefault(assessment.qid)
    topics = list(universe) if universe is not None else list(seen)
    wanted = set(topics)
    table = ScoreTable(topics=topics)
    no_vital: set[str] = set()
    for run_id, answered in by_run.items():
        table.outside += sum(1 for qid in answered if qid not in wanted)
        rows: dict[str, dict[str, float]] = {}
        lengths: list[float] = []
        unjudged = 0
        for qid in topics:
            entry = answered.get(qid)
            if entry is None:
                rows[qid] = {m: 0.0 for m in SCORED}
                continue
            rows[qid], topic_unjudged, has_vital = entry
            lengths.append(rows[qid]["L"])
            unjudged += topic_unjudged
            if not has_vital:
                no_vital.add(qid)
        table.per_topic[run_id] = rows
        count = len(topics) or 1
        means = {m: sum(r[m] for r in rows.values()) / count for m in SCORED}
        means["L"] = sum(lengths) / len(lengths) if lengths else 0.0
        table.means[run_id] = means
        table.unjudged[run_id] = unjudged
        table.missing[run_id] = len(topics) - len(lengths)
    table.no_vital = [q for q in topics if q in no_vital]
    return table


class Scores(Protocol):
    """What the TSV writers read: this module's ScoreTable and method_flow's MethodTable."""

    per_topic: dict[str, dict[str, dict[str, float]]]
    means: dict[str, dict[str, float]]

    def ranking(self) -> list[str]: ...


def leaderboard_tsv(table: Scores, measures: Sequence[str] = MEASURES) -> str:
    """`run_id` then `measures`, 4 decimals ("-" where a run has no such measure), in ranking
    order (for the AutoNuggetizer `run_id V_strict V W_strict W A_strict A L` by V_strict)."""
    lines = ["\t".join(("run_id", *measures))]
    for run_id in table.ranking():
        means = table.means[run_id]
        cells = [f"{means[m]:.4f}" if m in means else "-" for m in measures]
        lines.append("\t".join([run_id, *cells]))
    return "\n".join(lines) + "\n"


def per_topic_tsv(table: Scores, measures: Sequence[str] = MEASURES) -> str:
    """Long form `run_id topic_id measure value`, with `all` rows holding the run means."""
    lines = ["run_id\ttopic_id\tmeasure\tvalue"]
    for run_id in table.ranking():
        for qid, row in table.per_topic[run_id].items():
            lines += [f"{run_id}\t{qid}\t{m}\t{row[m]:.4f}" for m in measures if m in row]
        means = table.means[run_id]
        lines += [f"{run_id}\tall\t{m}\t{means[m]:.4f}" for m in measures if m in means]
    return "\n".join(lines) + "\n"


def format_leaderboard(table: ScoreTable) -> str:
    """The leaderboard as aligned text for a terminal."""
    rows = [line.split("\t") for line in leaderboard_tsv(table).splitlines()]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def write_tables(table: Scores, leaderboard: Path | None, per_topic: Path | None,
                 measures: Sequence[str] = MEASURES) -> None:
    """Write the requested TSVs atomically."""
    if leaderboard is not None:
        write_text_atomic(leaderboard, leaderboard_tsv(table, measures))
    if per_topic is not None:
        write_text_atomic(per_topic, per_topic_tsv(table, measures))
