"""The stages that score judgments into tables and combine several methods' tables: the last
stages of `score` and `evaluate`, run by any executor (a dry run says what they would read
and write instead)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.run.provenance import write_sidecar
from nuggetizer.run.stages import Plan, Stage, local_stage
from nuggetizer.scoring.engine import ScoreTable, combine_tables
from nuggetizer.scoring.files import ScoreFiles, ScoreScope, score_files
from nuggetizer.scoring.tables import write_tables

TABLES = ("leaderboard.tsv", "per_topic.tsv")
MISSING = "missing.tsv"  # the methods a combined board lacks, and why


def _written(files: ScoreFiles) -> str:
    paths = [p for p in (files.output, files.per_topic, files.autojudge, files.diversity)
             if p is not None]
    return ", ".join(str(p) for p in paths) or "nothing (the leaderboard is printed)"


class ShownScores(Protocol):
    """What a command shows of a scoring: that it starts, and its table when it ends."""

    def scoring(self, method: AnswerKeyMethod) -> None: ...

    def scored(self, method: AnswerKeyMethod, table: ScoreTable) -> None: ...


def score_stage(method: AnswerKeyMethod, paths: Sequence[Path], scope: ScoreScope,
                files: ScoreFiles, shown: ShownScores | None = None) -> Stage:
    """Score the judgment files (or folders) `paths` into the tables `files` names, shown
    to `shown` as it starts and ends."""
    read = [p for p in (scope.key, scope.topics) if p is not None] + list(paths)

    def run() -> ScoreTable:
        if shown is not None:
            shown.scoring(method)
        return score_files(method, paths, scope, files)

    def done(table: ScoreTable) -> None:
        if shown is not None:
            shown.scored(method, table)

    return local_stage(
        f"{method.name}-score", run,
        title=lambda: (f"score --method {method.name}: would read "
                       f"{', '.join(str(p) for p in read)}; write {_written(files)}"),
        done=done)


def combine_stage(tables: Callable[[], Sequence[ScoreTable]], out: Path,
                  inputs: Callable[[], list[Path]],
                  done: Callable[[ScoreTable | None], None] | None = None,
                  missing: Callable[[], Mapping[str, str]] = dict) -> Stage:
    """Several methods' tables (`tables()`, scored by the stages before) as one: every
    measure side by side in OUT/leaderboard.tsv and OUT/per_topic.tsv, each with its
    provenance sidecar naming `inputs()` and the methods `missing()` ({method: why it has no
    scores}, also written to OUT/missing.tsv); nothing (None) when no method was scored."""

    def run() -> ScoreTable | None:
        found = list(tables())
        gone = dict(missing())
        report = out / MISSING
        if gone:
            write_text_atomic(report, "method\twhy\n" + "".join(
                f"{name}\t{' '.join(why.split())}\n" for name, why in gone.items()))
        elif report.exists():
            report.unlink()  # an earlier run's, no longer true
        if not found:
            return None
        table = combine_tables(found)
        write_tables(table, out / TABLES[0], out / TABLES[1])
        declared = {"profile": table.profile, **({"missing_methods": gone} if gone else {})}
        write_sidecar([out / name for name in TABLES], inputs(), table.left_out, declared)
        return table

    return local_stage("combine", run, done=done, title=lambda: (
        f"combine: would write {out / TABLES[0]}, {out / TABLES[1]} (every measure side by "
        "side)"))


def score_plan(method: AnswerKeyMethod, paths: Sequence[Path], scope: ScoreScope,
               files: ScoreFiles, shown: ShownScores | None = None) -> Plan:
    """`score`: the judgment files scored into the tables asked for."""
    return Plan([score_stage(method, paths, scope, files, shown)])
